"""The matchers of the fast path (issue 21), in polars: plain numbers (read by
:func:`workbench.io.numbers.read_numbers`, as :func:`~workbench.grading.normalize.parse_number`
reads them) compared as :func:`~workbench.grading.policies.exact_string_match`,
:func:`~workbench.grading.policies.official_convfinqa_match` and the numeric cascade
(``compare._compare_numbers``) compare them, rule for rule, with the same reason and the same
detail sentence.

Each matcher adds to a frame of (``answer``, gold) rows its verdict (a struct: ``correct``,
``status``, ``reason``, ``template``, ``f1``, ``f2``, ``text``, ``pred_value``) and whether it is
certain (``..._ok``): a number near a rounding tie of ``round(x, 5)``, or too long to be exact in a
float, is left to the cascade. :func:`details` writes the sentences, the floats with Python's ``:g``.
:mod:`workbench.pipeline.fastpath` chooses the answers and calls these.
"""

from __future__ import annotations

from typing import Final

import polars as pl
from polars.expr.whenthen import ChainedThen, Then

from workbench.grading.compare import MatchPolicy
from workbench.grading.cues import SCALE_WORDS
from workbench.grading.status import GradeStatus, MatchReason
from workbench.io.numbers import MAX_VALUE, hundredth, number_fields

__all__ = [
    "ENGINE",
    "answer_text",
    "cascade",
    "official",
    "exact_string",
    "NO_ANSWER_FIELDS",
    "details",
    "NO_ANSWER_DETAIL",
]

#: The engine the fast path's queries run on. Polars 2 runs ``collect()`` on its streaming engine,
#: which costs about 20 ms a query to set up: most of the fast path's time on a few thousand rows,
#: and slower at a million rows too (issue 21: 7.4 s against 8.0 s for GSM8K's grades).
ENGINE: Final = "in-memory"

#: How near a rounding tie ``round(x, 5)`` is left to Python.
_TIE_BAND = 0.02

NO_ANSWER_DETAIL = "the output gives no answer (None)"
#: The reasons of a correct verdict.
_MATCH_REASONS = frozenset(
    r.value
    for r in (
        MatchReason.EXACT,
        MatchReason.OFFICIAL_ROUND5,
        MatchReason.REL_TOLERANCE,
        MatchReason.REPORTED_PRECISION,
        MatchReason.PERCENT_READING,
    )
)


def _near_tie(x: pl.Expr) -> pl.Expr:
    """``round(x, 5)`` may round differently in Python (exact) and here (``x * 1e5``)."""
    scaled = x * 1e5
    return ((scaled - scaled.floor()) - 0.5).abs() < _TIE_BAND


def _round5(x: pl.Expr) -> pl.Expr:
    return (x * 1e5).round(0)


def _close(a: pl.Expr, b: pl.Expr, rel_tol: float) -> pl.Expr:
    """``math.isclose(a, b, rel_tol=rel_tol, abs_tol=1e-9)``, operation for operation."""
    diff = (b - a).abs()
    return (a == b) | (diff <= (b * rel_tol).abs()) | (diff <= (a * rel_tol).abs()) | (diff <= 1e-9)


def _table(expr: pl.Expr, low: int, high: int, value: object) -> pl.Expr:
    """``value(n)`` for the integer ``expr``, computed in Python for ``low <= n <= high`` (so a float
    power is the one Python computes), null outside."""
    keys = list(range(low, high + 1))
    return expr.replace_strict(keys, [value(n) for n in keys], default=None, return_dtype=pl.Float64)  # type: ignore[operator]


def _half_unit(expr: pl.Expr) -> pl.Expr:
    """``0.5 * 10.0 ** (-n) * (1 + 1e-9)``: half a unit of the n-th decimal, as compare.py computes it."""
    return _table(expr, -30, 30, lambda n: 0.5 * 10.0 ** (-n) * (1 + 1e-9))


# --------------------------------------------------------------------------- grading
def _verdict(
    correct: pl.Expr | bool,
    reason: MatchReason,
    template: str,
    f1: pl.Expr | None = None,
    f2: pl.Expr | None = None,
    text: pl.Expr | None = None,
    status: GradeStatus = GradeStatus.OK,
    value: pl.Expr | None = None,
) -> pl.Expr:
    """One verdict as a struct; ``template`` names the detail's wording (see :func:`details`), with
    the floats ``f1``, ``f2`` (written ``:g`` later, in Python) and the text pieces ``text``;
    ``value`` is the verdict's ``pred_value``; ``prefix`` (null here) goes before the detail."""

    def floats(expr: pl.Expr | None) -> pl.Expr:
        return (expr if expr is not None else pl.lit(None, pl.Float64)).cast(pl.Float64)

    return pl.struct(
        pl.lit(correct).alias("correct") if isinstance(correct, bool) else correct.alias("correct"),
        pl.lit(status.value).alias("status"),
        pl.lit(reason.value).alias("reason"),
        pl.lit(template).alias("template"),
        floats(f1).alias("f1"),
        floats(f2).alias("f2"),
        (text if text is not None else pl.lit(None, pl.String)).cast(pl.String).alias("text"),
        floats(value).alias("pred_value"),
        pl.lit(None, pl.String).alias("prefix"),
    )


#: The fields of the verdict on no answer that the grades keep (``correct, status, reason, pred_value``).
NO_ANSWER_FIELDS: dict[str, object] = {
    "correct": False,
    "status": GradeStatus.NO_ANSWER.value,
    "reason": MatchReason.NO_ANSWER.value,
    "pred_value": None,
}


def _allowed(pct: pl.Expr, gold_pct: pl.Expr | None, cue: pl.Expr, upward: bool, bare: bool) -> tuple[pl.Expr, pl.Expr]:
    """``compare._percent_allowed``: whether the other unit's reading is allowed, and why."""
    if gold_pct is not None:
        pct_allowed = pl.when(gold_pct).then(False).when(cue == "ratio").then(False).otherwise(True)
        pct_why = (
            pl.when(gold_pct)
            .then(pl.lit("both carry a % sign, so neither is read in the other unit"))
            .when(cue == "ratio")
            .then(pl.lit("a ratio is asked for, so the bare gold is not read in percent units"))
            .otherwise(pl.lit("the % sign says it is a percentage"))
        )
    else:
        pct_allowed, pct_why = pl.lit(True), pl.lit("")  # unused: a % prediction is not shifted
    if not bare:
        bare_allowed = pl.lit(False)
        bare_why = pl.lit("the gold is in the unit the question asks, so a bare number is not read x100")
    else:
        asked = pl.format("a {} is asked for", cue)
        bare_allowed = (
            pl.when(cue.is_null()).then(True).when(cue == "plain").then(False).otherwise((cue == "percent") == upward)
        )
        bare_why = (
            pl.when(cue.is_null())
            .then(pl.lit("neither the question nor the output says which unit"))
            .when(cue == "plain")
            .then(pl.lit("the output declares a raw number, not a percentage or ratio"))
            .otherwise(asked)
        )
    return (
        pl.when(pct).then(pct_allowed).otherwise(bare_allowed),
        pl.when(pct).then(pct_why).otherwise(bare_why),
    )


def answer_text(answer: pl.Expr) -> pl.Expr:
    """The normalised text of an answer :data:`~workbench.grading.patterns.FAST_ANSWER` reads
    (:func:`~workbench.grading.normalize.normalize_answer`: the whitespace around it goes), which
    the cascade's details and ``exact_string_match`` (``pred.strip()``) show."""
    return answer.str.strip_chars(" \t\n\r")


def _repr(text: pl.Expr) -> pl.Expr:
    """Python's ``repr`` of a :data:`~workbench.grading.patterns.FAST_ANSWER` answer or a plain
    gold (no quote, no backslash; tab, newline, carriage return escaped)."""
    escaped = text.str.replace_all("\t", "\\t", literal=True).str.replace_all("\n", "\\n", literal=True)
    return pl.concat_str(pl.lit("'"), escaped.str.replace_all("\r", "\\r", literal=True), pl.lit("'"))


def cascade(lf: pl.LazyFrame, numbers: MatchPolicy) -> pl.LazyFrame:
    """``compare._compare_numbers`` of the plain numbers ``_p_*`` (the answer) and ``_g_*`` (the
    gold), with the unit cue ``_cue``: adds ``_cascade_ok`` (decided) and ``_cascade`` (verdict)."""
    pred, gold = number_fields("_p_"), number_fields("_g_")
    pv, ppct, pdec = pred["value"], pred["pct"], pred["dec"]
    gv, gpct, gdec = gold["value"], gold["pct"], gold["dec"]
    cue = pl.col("_cue") if numbers.use_cues else pl.lit(None, pl.String)
    pscale = pred["scale"]
    # the scale a question or output states ("in millions": 6, compare.CueOf.scale), for scaled answers
    stated = pl.col("_stated") if numbers.use_cues else pl.lit(None, pl.Int64)
    lf = lf.with_columns(
        pl.when(ppct).then(hundredth(pv)).otherwise(pv).alias("_P"),
        pl.when(gpct).then(hundredth(gv)).otherwise(gv).alias("_G"),
        # compare._precision: "48.7 million" reports 10^5
        pl.when(pscale != 0)
        .then(pdec - pscale)
        .when((pdec != 0) | ppct)
        .then(pdec)
        .otherwise(-pred["tz"])
        .alias("_p_prec"),
        (pl.when((gdec != 0) | gpct).then(gdec).otherwise(-gold["tz"]) + pl.when(gpct).then(2).otherwise(0)).alias(
            "_g_prec"
        ),
    )
    # compare._scale_reading of an answer with a scale word and a gold without: the gold read in the
    # stated scale, else in the answer's (Decimal(repr(gold)).scaleb(...): the gold's digits with an
    # exponent, read exactly when they are at most 15 significant digits)
    reads = (pscale != 0) & ~gpct
    exponent = pl.when(stated.is_not_null()).then(stated).otherwise(pscale)
    lf = lf.with_columns(
        reads.alias("_reads"),
        (reads & stated.is_not_null()).fill_null(False).alias("_says"),
        exponent.alias("_E"),
        (
            pl.when(gv < 0).then(-1.0).otherwise(1.0)
            * pl.concat_str(gold["digits"], pl.lit("e"), exponent.cast(pl.String)).cast(pl.Float64, strict=False)
        ).alias("_G2"),
    )
    p, g = pl.col("_P"), pl.col("_G")
    g2, says = pl.col("_G2"), pl.col("_says")
    # where a unit is stated the reading always decides: its mismatch types are of the gold so read,
    # and the unit readings are not made (compare: unit_readings=False)
    gm = pl.when(says).then(g2).otherwise(g)
    g_prec = pl.when(says).then(gdec - pl.col("_E")).otherwise(pl.col("_g_prec"))  # compare._precision
    # most answers equal their gold: those are decided here, the cascade's other rules run on the rest
    frame = lf.collect(engine=ENGINE)
    exact = frame.filter((p == g).fill_null(False))
    exact = exact.with_columns(
        (pred["ok"] & gold["ok"]).fill_null(False).alias("_cascade_ok"),
        _verdict(True, MatchReason.EXACT, "exact", p, g, value=p).alias("_cascade"),
    )
    lf = frame.filter(~(p == g).fill_null(False)).lazy()
    rel = numbers.rel_tol
    reports = pl.lit(numbers.accept_reported_precision)

    def precise(value: pl.Expr) -> pl.Expr:  # compare._at_reported_precision ("48.7 million": 10^5)
        return (pdec != 0) & (pred["sig"] >= 2) & ((pv - value).abs() <= _half_unit(pdec - pred["scale"]))

    def hit(value: pl.Expr, gold_in_units: pl.Expr) -> pl.Expr:  # a unit reading matches
        integral = (gold_in_units - gold_in_units.round(0)).abs() <= pl.max_horizontal(
            pl.lit(1.0), gold_in_units.abs()
        ) * 1e-9
        near = _close(value, g, rel) | (reports & precise(gold_in_units))
        exact_integers = pl.lit(numbers.integers_exact) & (pdec == 0) & ~pred["e"] & (pscale == 0) & integral
        return pl.when(exact_integers).then(pv == gold_in_units.round(0)).otherwise(near)

    def rounding(gold_in_units: pl.Expr, g_decimals: pl.Expr) -> pl.Expr:  # compare._is_rounding
        diff = (pv - gold_in_units).abs()
        coarser = pl.min_horizontal(pl.col("_p_prec"), g_decimals)
        beyond = diff > numbers.rounding_band * gold_in_units.abs()
        return (gold_in_units != 0) & ~beyond & (diff <= _half_unit(coarser))

    bare = numbers.bare_percent_reading
    # the unit readings, in compare's order: (value, gold in the prediction's units, how, upward)
    readings = (
        (pv, g, "without its % sign", True),
        (hundredth(pv), g * 100.0, "as a percent", True),
        (pv * 100.0, hundredth(g), "as a ratio x100", False),
    )
    flags: dict[str, pl.Expr] = {
        "_exact": p == g,
        "_round5": pl.lit(numbers.accept_round5) & (_round5(p) == _round5(g)),
        "_tol": ~(
            pl.lit(numbers.integers_exact)
            & (pdec == 0)
            & ~ppct
            & (pred["scale"] == 0)
            & (gdec == 0)
            & ~gpct
            & (g == g.floor())
        )
        & _close(p, g, rel),
        "_g_written": pl.when(ppct).then(g * 100.0).otherwise(g),
        "_nonzero": (gm != 0) & (p != 0),
        "_flip": _close(-p, gm, rel) | (~ppct & (_close(-(hundredth(pv)), gm, rel) | _close(-(pv * 100.0), gm, rel))),
        "_ties": (p != g) & pl.lit(numbers.accept_round5) & (_near_tie(p) | _near_tie(g)),
        "_k": (p / gm).abs().log10().round(0).cast(pl.Int64, strict=False),
    }
    for i, (value, gold_in_units, _, upward) in enumerate(readings):
        applies = (ppct if i == 0 else ~ppct) & ~says
        flags[f"_hit{i}"] = applies & (g != 0) & hit(value, gold_in_units)
        allowed, why = _allowed(ppct, gpct, cue, upward, bare)
        flags[f"_allowed{i}"] = pl.lit(numbers.accept_percent_reading) & allowed
        flags[f"_why{i}"] = why
    shifts = (
        (ppct, gm * 100.0, g_prec - 2, ""),
        (~ppct, gm, g_prec, ""),
        (~ppct & _allowed(ppct, None, cue, True, bare)[0], gm * 100.0, g_prec - 2, " read as a percent"),
        (~ppct & _allowed(ppct, None, cue, False, bare)[0], gm * 0.01, g_prec + 2, " read as a ratio"),
    )
    for i, (applies, gold_in_units, g_decimals, _) in enumerate(shifts):
        flags[f"_round{i}"] = applies & rounding(gold_in_units, g_decimals)
    flags["_reported"] = reports & precise(pl.when(ppct).then(g * 100.0).otherwise(g))
    lf = lf.with_columns(**flags)
    reads = pl.col("_reads")
    # a gold read in millions is often past MAX_VALUE, where x * 1e5 does not show a rounding tie:
    # there round(x, 5) moves x by at most 1e-5 (or not at all), so answers 1e-4 apart differ
    big = g2.abs() >= MAX_VALUE
    lf = lf.with_columns(
        (reads & (p == g2)).alias("_s_exact"),
        (reads & pl.lit(numbers.accept_round5) & ~big & (_round5(p) == _round5(g2))).alias("_s_round5"),
        (reads & _close(p, g2, rel)).alias("_s_tol"),
        (reads & reports & precise(g2)).alias("_s_reported"),
        # the scale reading is decided where the gold read in that scale is exact and away from ties
        (
            ~reads
            | (
                (gold["sig"] <= 15)
                & g2.is_finite()
                & pl.when(big)
                .then((p == g2) | ((p - g2).abs() >= 1e-4))
                .otherwise(~((p != g2) & pl.lit(numbers.accept_round5) & _near_tie(g2)))
            )
        ).alias("_reads_ok"),
    )
    k = pl.col("_k")
    lf = lf.with_columns(
        ((k != 0) & _close((p / gm).abs(), _table(k, -40, 40, lambda n: 10.0**n), rel)).alias("_scaled")
    )

    # which rule decides, then the verdict's fields by rule (a chain of literals, not of structs)
    nonzero = pl.col("_nonzero")
    scaled = nonzero & pl.col("_scaled")
    which = pl.when("_exact").then(pl.lit("exact")).when("_round5").then(pl.lit("round5"))
    which = which.when("_tol").then(pl.lit("tolerance")).when("_reported").then(pl.lit("reported"))
    for name in ("exact", "round5", "tol", "reported"):
        which = which.when(f"_s_{name}").then(pl.lit(f"s_{name}"))
    for i in range(len(readings)):
        hits = pl.col(f"_hit{i}")
        which = which.when(hits & pl.col(f"_allowed{i}")).then(pl.lit(f"reading{i}"))
        which = which.when(hits).then(pl.lit(f"confusion{i}"))
    which = which.when(nonzero & pl.col("_flip")).then(pl.lit("sign_flip"))
    for i in range(len(shifts)):
        which = which.when(nonzero & pl.col(f"_round{i}")).then(pl.lit(f"rounding{i}"))
    which = which.when(scaled & (k.abs() == 2)).then(pl.lit("scaled_pc")).when(scaled).then(pl.lit("scaled"))
    lf = lf.with_columns(which.otherwise(pl.lit("wrong")).alias("_rule"))
    rule = pl.col("_rule")
    reasons = {
        "exact": MatchReason.EXACT,
        "round5": MatchReason.OFFICIAL_ROUND5,
        "tolerance": MatchReason.REL_TOLERANCE,
        "reported": MatchReason.REPORTED_PRECISION,
        "s_exact": MatchReason.EXACT,
        "s_round5": MatchReason.OFFICIAL_ROUND5,
        "s_tol": MatchReason.REL_TOLERANCE,
        "s_reported": MatchReason.REPORTED_PRECISION,
        **{f"reading{i}": MatchReason.PERCENT_READING for i in range(len(readings))},
        **{f"confusion{i}": MatchReason.PERCENT_CONFUSION for i in range(len(readings))},
        "sign_flip": MatchReason.SIGN_FLIP,
        **{f"rounding{i}": MatchReason.ROUNDING for i in range(len(shifts))},
        "scaled_pc": MatchReason.PERCENT_CONFUSION,
        "scaled": MatchReason.SCALE,
        "wrong": MatchReason.WRONG_VALUE,
    }
    numbered = ("reading", "confusion", "rounding")  # reading0 is worded as every reading
    templates = {name: next((n for n in numbered if name.startswith(n)), name).removesuffix("_pc") for name in reasons}
    templates.update({"s_exact": "exact", "s_round5": "round5", "s_tol": "tolerance", "s_reported": "reported"})
    correct = [name for name, reason in reasons.items() if reason.value in _MATCH_REASONS]
    f1 = (
        pl.when(rule.is_in(["exact", "round5", "tolerance", "wrong", "s_exact", "s_round5", "s_tol"]))
        .then(p)
        .when(rule == "reported")
        .then(pl.col("_g_written"))
        .when(rule == "s_reported")
        .then(g2)
    )
    f2 = pl.when(rule.is_in(["exact", "round5", "tolerance"])).then(g).when(rule == "wrong").then(gm)
    f2 = f2.when(rule.is_in(["s_exact", "s_round5", "s_tol"])).then(g2)
    said: Then | ChainedThen = pl.when(rule.is_in(["reported", "s_reported"])).then(pdec.cast(pl.String))
    for i, (value, _, how, _) in enumerate(readings):
        f1 = f1.when(rule == f"reading{i}").then(value)
        f2 = f2.when(rule == f"reading{i}").then(g)
        how_why = pl.concat_str(pl.lit(how), pl.col(f"_why{i}"), separator="\x00")
        said = said.when(rule.is_in([f"reading{i}", f"confusion{i}"])).then(how_why)
    for i, (_, gold_in_units, _, how) in enumerate(shifts):
        f1 = f1.when(rule == f"rounding{i}").then(gold_in_units)
        said = said.when(rule == f"rounding{i}").then(pl.lit(how))
    unit = pl.col("_E").replace_strict(SCALE_WORDS, default=None, return_dtype=pl.String)
    # "... scaled by 10^3: the prediction says thousand, the gold no scale word" (the words decided it;
    # a gold read in a stated unit says "in millions")
    gold_scale = pl.when(says).then(pl.col("_E")).otherwise(0)
    gold_word = pl.when(says).then(pl.concat_str(pl.lit("in "), unit)).otherwise(pl.lit("no scale word"))
    words = pl.when((pscale != 0) & (pscale != gold_scale) & (k == pscale - gold_scale)).then(
        pl.concat_str(pl.lit(": the prediction says "), pred["sword"], pl.lit(", the gold "), gold_word)
    )
    said = said.when(rule.is_in(["scaled", "scaled_pc"])).then(pl.concat_str(k.cast(pl.String), words.fill_null("")))
    why = pl.when(says).then(pl.concat_str(pl.lit("the question or the output says in "), unit))
    prefix = (
        pl.when(rule.is_in(["exact", "round5", "tolerance", "reported"]))
        .then(pl.lit(None, pl.String))
        .when(rule.str.starts_with("s_") | says)
        .then(
            pl.concat_str(
                pl.lit("the gold "),
                pl.col("gold_executed"),
                pl.lit(" read in "),
                unit,
                pl.lit(" ("),
                why.otherwise(pl.lit("the unit of the prediction")),
                pl.lit("): "),
            )
        )
    )
    verdict = pl.struct(
        rule.is_in(correct).alias("correct"),
        pl.lit(GradeStatus.OK.value).alias("status"),
        rule.replace_strict({k: r.value for k, r in reasons.items()}, return_dtype=pl.String).alias("reason"),
        rule.replace_strict(templates, return_dtype=pl.String).alias("template"),
        f1.otherwise(gm).cast(pl.Float64).alias("f1"),  # confusion, sign flip, scaled: the gold
        f2.cast(pl.Float64).alias("f2"),
        said.cast(pl.String).alias("text"),
        p.cast(pl.Float64).alias("pred_value"),
        prefix.cast(pl.String).alias("prefix"),
    )
    # an answer with a scale word: past the rules before the scale reading, only where it is modelled
    early = rule.is_in(["exact", "round5", "tolerance", "reported"])
    decided = (
        pred["ok"] & gold["ok"] & ~pl.col("_ties") & (~nonzero | k.is_between(-40, 40)) & (early | pl.col("_reads_ok"))
    )
    rest = lf.with_columns(decided.fill_null(False).alias("_cascade_ok"), verdict.alias("_cascade")).collect(
        engine=ENGINE
    )
    return pl.concat([exact, rest.select(exact.columns)]).lazy()


def official(lf: pl.LazyFrame) -> pl.LazyFrame:
    """``policies.official_convfinqa_match`` of the plain numbers ``_p_*`` and ``_g_*``: adds
    ``_official_ok`` and ``_official``."""
    pred, gold = number_fields("_p_"), number_fields("_g_")

    def official(number: dict[str, pl.Expr]) -> pl.Expr:  # str_to_num: a currency sign or word is no number
        value = pl.when(number["pct"]).then(hundredth(number["value"])).otherwise(number["value"])
        return pl.when(~number["cur"] & ~number["word"]).then(value)

    lf = lf.with_columns(official(pred).alias("_po"), official(gold).alias("_go"))
    p, g = pl.col("_po"), pl.col("_go")
    answer, gold_text = pl.col("answer"), pl.col("gold_executed")
    quoted = pl.concat_str(_repr(answer), pl.lit(" vs "), _repr(gold_text))
    verdict = (
        pl.when(p.is_null() | g.is_null())
        .then(
            pl.when(answer_text(answer) == gold_text)
            .then(_verdict(True, MatchReason.EXACT, "official_text", p, None, quoted, value=p))
            .when(g.is_null())
            .then(_verdict(False, MatchReason.WRONG_VALUE, "official_text", p, None, quoted, value=p))
            .otherwise(
                _verdict(
                    False, MatchReason.UNPARSEABLE, "official_text", p, None, quoted, GradeStatus.UNPARSEABLE, value=p
                )
            )
        )
        .when(_round5(p) == _round5(g))
        .then(_verdict(True, MatchReason.OFFICIAL_ROUND5, "official", p, g, value=p))
        .otherwise(_verdict(False, MatchReason.WRONG_VALUE, "official", p, g, value=p))
    )
    ties = (p != g) & (_near_tie(p) | _near_tie(g))
    decided = pred["ok"] & gold["ok"] & ~ties.fill_null(False)
    return lf.with_columns(decided.fill_null(False).alias("_official_ok"), verdict.alias("_official"))


def exact_string(lf: pl.LazyFrame) -> pl.LazyFrame:
    """``policies.exact_string_match`` of ``answer`` against the gold as the dataset writes it,
    when its ``repr`` is plain (printable ASCII, no quote or backslash): adds ``_string_ok`` and
    ``_string``."""
    answer, display = answer_text(pl.col("answer")), pl.col("_display")
    gold = display.str.strip_chars(" ")
    safe = display.str.contains(r"^[ -~]*$") & ~display.str.contains(r"['\\]") & (gold.str.len_chars() > 0)
    quoted = pl.concat_str(pl.lit("'"), answer, pl.lit("' vs '"), gold, pl.lit("'"))
    verdict = (
        pl.when(answer == gold)
        .then(_verdict(True, MatchReason.EXACT, "string", None, None, quoted))
        .otherwise(_verdict(False, MatchReason.WRONG_VALUE, "string", None, None, quoted))
    )
    decided = safe & pl.col("_p_ok")
    return lf.with_columns(decided.fill_null(False).alias("_string_ok"), verdict.alias("_string"))


def _g(value: float) -> str:
    return f"{value:g}"


def details(verdicts: pl.DataFrame, rel_tol: float) -> pl.Series:
    """The detail sentence of each verdict (``template``, ``f1``, ``f2``, ``text``, ``prefix`` and
    the ``answer`` it is of), worded as compare.py and policies.py word it; floats are written with
    Python's ``:g`` (once per distinct value). Each verdict is worded by its template's wording
    alone (a chain of ``when`` would build every wording for every row); the fast path words its
    distinct comparisons, so each verdict is worded once."""
    columns = ["template", "f1", "f2", "text", "prefix", "answer"]
    # polars holds -0.0 equal to 0.0, Python's :g does not ("-0"): the sign of a zero is read apart
    negative_zero = {f"_{f}_neg0": (pl.col(f) == 0) & (1.0 / pl.col(f) < 0) for f in ("f1", "f2")}
    keyed = verdicts.select(*columns, **negative_zero)
    floats = pl.concat([keyed["f1"], keyed["f2"]]).drop_nulls()
    floats = floats.filter(floats != 0).unique()
    written = [_g(x) for x in floats.to_list()]

    def fmt(name: str) -> pl.Expr:
        zero = pl.when(pl.col(f"_{name}_neg0")).then(pl.lit("-0")).otherwise(pl.lit("0"))
        nonzero = pl.col(name).replace_strict(floats, written, default=None, return_dtype=pl.String)
        return pl.when(pl.col(name) == 0).then(zero).otherwise(nonzero)

    f1, f2, text, answer = fmt("f1"), fmt("f2"), pl.col("text"), answer_text(pl.col("answer"))
    how = text.str.split_exact("\x00", 1).struct.field("field_0")
    why = text.str.split_exact("\x00", 1).struct.field("field_1")
    wordings = {
        "no_answer": pl.lit(NO_ANSWER_DETAIL),
        "exact": pl.concat_str(f1, pl.lit(" equals "), f2),
        "round5": pl.concat_str(f1, pl.lit(" and "), f2, pl.lit(" agree to 5 decimals")),
        "tolerance": pl.concat_str(f1, pl.lit(f" is within {rel_tol:g} relative tolerance of "), f2),
        "reported": pl.concat_str(f1, pl.lit(" rounded to "), text, pl.lit(" decimals is "), answer),
        "reading": pl.concat_str(
            answer, pl.lit(" read "), how, pl.lit(" is "), f1, pl.lit(" = "), f2, pl.lit(": "), why
        ),
        "confusion": pl.concat_str(answer, pl.lit(" matches "), f1, pl.lit(" only read "), how, pl.lit("; "), why),
        "sign_flip": pl.concat_str(answer, pl.lit(" has the opposite sign of "), f1),
        "rounding": pl.concat_str(
            answer, text, pl.lit(" is "), f1, pl.lit(" rounded differently, beyond the tolerance")
        ),
        "scaled": pl.concat_str(answer, pl.lit(" is "), f1, pl.lit(" scaled by 10^"), text),
        "wrong": pl.concat_str(answer, pl.lit(" ("), f1, pl.lit(") is not "), f2),
        "official": pl.concat_str(pl.lit("official rule: round("), f1, pl.lit(", 5) vs round("), f2, pl.lit(", 5)")),
        "official_text": pl.concat_str(pl.lit("official rule: text "), text),
        "string": pl.concat_str(pl.lit("string "), text),
    }
    numbered = keyed.with_row_index("_i")
    parts = []
    for template, wording in wordings.items():
        part = numbered.filter(pl.col("template") == template)
        if not part.is_empty():
            detail = pl.concat_str(pl.col("prefix").fill_null(""), wording.cast(pl.String))
            parts.append(part.select("_i", detail.alias("detail")))
    unworded = numbered.filter(~pl.col("template").is_in(list(wordings)).fill_null(False))  # no rule, no detail
    parts.append(unworded.select("_i", pl.lit(None, pl.String).alias("detail")))
    return pl.concat(parts).sort("_i")["detail"]
