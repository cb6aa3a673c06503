"""The vectorised fast path of grading (issue 21): plain-number answers decided in polars.

Most real outputs end in a plain number ("#### 18", "A: 26", ``\\boxed{18}``, a structured answer
``12.57``) compared with a plain-number gold. For those, :func:`decide` finds the answer each
policy compares and grades it with polars expressions, filling the same columns with the same
values as :func:`~workbench.grading.turn.grade_turn`: answer, answer source, extraction rule,
verdict, status, reason, detail and the predicted value. It models

* answer selection (:func:`~workbench.grading.policies.select_answer`) without a program; a
  system's own answer may have whitespace around it (program-of-thoughts prints ``'5\\n\\n'``)
  and ``percent``/``pct`` or a scale word (``3.303 thousand``) after it
  (:data:`~workbench.grading.patterns.FAST_ANSWER`);
* strict extraction by one kind of marker (the last ``####``, "answer is", ``A:`` line or a
  single simple ``\\boxed{}``), whose answer is a plain number or one followed by words
  (``4 percent``: the number), and flexible extraction's last-number rule, outside fenced code
  blocks (an ``output`` block is read, :data:`~workbench.grading.patterns.FAST_FENCED_CODE`);
* the matchers ``exact_string``, ``official`` and the numeric cascade's exact, 5-decimal,
  tolerance, reported-precision and percent rules, and its mismatch types (sign flip, rounding,
  scale, percent confusion, wrong value), with the cues of the question and the declared unit; for
  an answer with a scale word, also the cascade's scale reading: the gold read in the unit the
  question or the output states ("in millions"), else in the answer's ("1.5 thousand" for 1.5).

Everything else falls through, per row, to the cascade: non-ASCII text, LaTeX and any other box,
several kinds of marker in one output, expressions, fractions, exponents, scale abbreviations
(``$48.7m``), a scale word on a gold, currency words, programs, yes/no and text golds, numbers
near a rounding tie, and every policy it does not model (``math-verify``). A row is decided only
when every modelled policy is: accepting fewer rows is allowed, a different verdict, reason or
detail is a bug (``tests/unit/pipeline/test_fastpath.py`` compares both on hypothesis inputs and
on every bundled output).

The switch :data:`ENABLED` turns it off for :func:`~workbench.pipeline.grade.grade_predictions`
(tests and benchmarks compare both ways); so does its ``fast_path=False``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl

from workbench.grading import patterns
from workbench.grading.compare import DEFAULT_POLICY, AnswerKind
from workbench.grading.cues import percent_cue, scale_cue
from workbench.grading.policies import GradingPolicy
from workbench.grading.status import ExtractionRule
from workbench.io.numbers import read_numbers
from workbench.parallel import distinct
from workbench.pipeline import fastmatch
from workbench.schema import REASON_DTYPE, STATUS_DTYPE

__all__ = ["ENABLED", "INPUTS", "OUTPUTS", "models", "decide"]

#: Whether :func:`~workbench.pipeline.grade.grade_predictions` uses the fast path.
ENABLED = True

#: The columns :func:`decide` reads (a missing one counts as null).
INPUTS = (
    "predicted_answer",
    "predicted_program",
    "raw_output",
    "upstream_answer",
    "gold_executed",
    "gold_answer",
    "question",
    "predicted_unit",
)

#: The columns of one decided (row, policy), as :func:`decide` returns them: categories (or the
#: grades' enums), the answers and details too (equal across policies and systems), a row per
#: policy being several million rows: 0.27 GB less at the peak of a million distinct inputs.
OUTPUTS: dict[str, pl.DataType] = {
    "_row": pl.UInt32(),
    "_p": pl.UInt16(),
    "policy": pl.Categorical(),
    "correct": pl.Boolean(),
    "status": STATUS_DTYPE,
    "reason": REASON_DTYPE,
    "answer": pl.Categorical(),
    "answer_source": pl.Categorical(),
    "extraction_rule": pl.Categorical(),
    "detail": pl.Categorical(),
    "pred_value": pl.Float64(),
}

#: Longest output the fast path reads (characters); a longer one goes to the cascade.
_MAX_TEXT = 200_000


def models(policy: GradingPolicy) -> bool:
    """Whether the fast path grades under ``policy`` (the others always go to the cascade).

    Examples
    --------
    >>> from workbench.grading.policies import POLICIES
    >>> [name for name, p in POLICIES.items() if models(p)]
    ['exact-string', 'official', 'cascade', 'strict', 'flex', 'symbolic']
    """
    if policy.source not in ("answer", "strict", "flex"):
        return False
    if policy.matcher in ("exact_string", "official"):
        return policy.source == "answer"
    if policy.matcher != "cascade":
        return False
    numbers = policy.numbers
    same = replace(
        numbers,
        name=DEFAULT_POLICY.name,
        symbolic=DEFAULT_POLICY.symbolic,
        time_limit=DEFAULT_POLICY.time_limit,
        bare_percent_reading=DEFAULT_POLICY.bare_percent_reading,
        latex_gold=DEFAULT_POLICY.latex_gold,
    )
    return same == DEFAULT_POLICY


# --------------------------------------------------------------------------- extraction
def _tidy(span: pl.Expr) -> pl.Expr:
    """What :func:`~workbench.grading.extract.clean_answer_text` makes of a marker's answer when it
    is a plain number, perhaps with one period after it, or a plain number followed by words
    (``4 percent``, ``2.314 thousand``: the number alone); null otherwise (the cascade reads it)."""
    text = span.str.strip_chars()
    cut = pl.when(text.str.ends_with(".")).then(text.str.slice(0, text.str.len_chars() - 1)).otherwise(text)
    return (
        pl.when(cut.str.contains(patterns.FAST_NUMBER))
        .then(cut)
        .otherwise(cut.str.extract(patterns.FAST_NUMBER_WORDS, 1))
    )


def _on(
    frame: pl.DataFrame, where: pl.Expr, columns: dict[str, pl.Expr], dtypes: dict[str, pl.DataType]
) -> pl.DataFrame:
    """``frame`` with ``columns`` computed on the rows ``where`` holds (null elsewhere): a costly
    regex runs only on the outputs it can change. The rows' values are put back in place by
    position (each row's place among them), not by a join."""
    held = where.fill_null(False)
    at = frame.select(pl.when(held).then(held.cast(pl.UInt32).cum_sum() - 1)).to_series()
    part = frame.filter(at.is_not_null())
    if part.is_empty():
        return frame.with_columns(*[pl.lit(None, dtypes[name]).alias(name) for name in columns])
    found = (  # lazily: an expression the columns share (the text after the last number) is computed once
        part.lazy().select(*[expr.cast(dtypes[name]).alias(name) for name, expr in columns.items()]).collect()
    )
    return frame.with_columns(found.get_column(name).gather(at) for name in columns)


def _last_marker(raw: pl.Expr, pattern: str, group: int) -> tuple[pl.Expr, pl.Expr]:
    """The last match of ``pattern`` (as ``finditer`` finds them) and its group ``group``."""
    last = raw.str.extract_all(pattern).list.last()
    return last, last.str.extract(pattern, group)


def _unsafe(scan: pl.Expr, after: pl.Expr) -> pl.Expr:
    """Whether the last number of ``scan`` may be another to Python (``TEXT_NUMBER``) than to
    polars (``TEXT_NUMBER_AFTER``, read with a space in front; ``after`` is the text after its last
    match). The two read alike from a character no number holds (neither pattern's match runs
    across one; both read on from it as from the start of a text) up to the first place where they
    may not (:data:`~workbench.grading.patterns.FAST_NUMBER_UNSAFE`), and Python reads no number
    in ``after`` that polars does not, but one right after a match ending in ``%``. So only the run
    of number characters around the last match is looked at: from the last such character before
    the number (the character polars matched in front of it, or one before) to the first after
    it. Calculator annotations (``<<80/26.666666666666668=3.0>>``) put a fraction before decimals
    in a tenth of GSM8K outputs, far from the last number."""
    spaced = pl.lit(" ") + scan
    match = spaced.str.extract_all(patterns.TEXT_NUMBER_AFTER).list.last()  # with the character in front
    head = spaced.str.slice(0, spaced.str.len_chars() - after.str.len_chars() - match.str.len_chars())
    lead_holds = match.str.slice(0, 1).str.contains(f"^{patterns.NUMBER_CHAR}$")
    before = pl.when(lead_holds).then(head.str.extract(f"({patterns.NUMBER_CHAR}*)$", 1)).otherwise(pl.lit(""))
    number = pl.when(lead_holds).then(match).otherwise(match.str.slice(1))
    window = pl.concat_str(before, number, after.str.extract(f"^({patterns.NUMBER_CHAR}*)", 1))
    # no number at all: Python finds none either (it differs only next to a number polars reads)
    return match.is_not_null() & window.str.contains(patterns.FAST_NUMBER_UNSAFE)


def _extract(frame: pl.DataFrame) -> pl.DataFrame:
    """Strict and flexible extraction of readable, non-blank outputs (``_row``, ``raw_output``): for
    each, ``ok`` (decided), ``answer`` (null: none found) and ``rule``; one row per row of ``frame``."""
    raw = pl.col("raw_output")
    text, flag = pl.String(), pl.Boolean()
    answer_is = "(?i)" + patterns.ANSWER_IS.pattern
    frame = frame.select("_row", "raw_output").with_columns(
        raw.str.count_matches(r"\boxed", literal=True).alias("_boxes"),
        raw.str.contains(r"\fbox", literal=True).alias("_fbox"),
        raw.str.contains("####", literal=True).alias("_has_hash"),
        raw.str.contains("(?i)answer").alias("_has_answer"),
        raw.str.contains(patterns.ANSWER_LINE.pattern).alias("_has_line"),
    )
    no_box = (pl.col("_boxes") == 0) & ~pl.col("_fbox")
    after_box = raw.str.split_exact(r"\boxed", 1).struct.field("field_1")  # the only box on
    frame = _on(
        frame,
        (pl.col("_boxes") == 1) & ~pl.col("_fbox"),
        {
            "_box": after_box.str.extract(patterns.FAST_BOX, 1),
            "_box_wins": ~(
                after_box.str.contains("####", literal=True)
                | after_box.str.contains("(?i)answer")
                | after_box.str.contains("A:", literal=True)
            ),
        },
        {"_box": text, "_box_wins": flag},
    )
    frame = _on(frame, pl.col("_has_answer") & no_box, {"_has_is": raw.str.contains(answer_is)}, {"_has_is": flag})
    has_is = pl.col("_has_is").fill_null(False)
    has_hash, has_line = pl.col("_has_hash"), pl.col("_has_line")
    kinds = has_hash.cast(pl.Int32) + has_is.cast(pl.Int32) + has_line.cast(pl.Int32)
    frame = frame.with_columns(kinds.alias("_kinds"))
    one_kind = no_box & (pl.col("_kinds") == 1)
    is_match, is_answer = _last_marker(raw, answer_is, 2)
    frame = _on(
        frame,
        one_kind,
        {
            "_marker": pl.when(has_hash)
            .then(_last_marker(raw, patterns.HASH_ANSWER.pattern, 1)[1])
            .when(has_is)
            .then(is_answer)
            .otherwise(_last_marker(raw, patterns.ANSWER_LINE.pattern, 1)[1]),
            "_final": pl.when(has_is).then(is_match.str.extract(answer_is, 1).is_not_null()),
        },
        {"_marker": text, "_final": flag},
    )
    one_box = (pl.col("_boxes") == 1) & ~pl.col("_fbox") & pl.col("_box").is_not_null() & pl.col("_box_wins")
    found_marker = (one_box | one_kind).fill_null(False)
    marker = pl.when(one_box).then(_tidy(pl.col("_box"))).when(one_kind).then(_tidy(pl.col("_marker")))
    marker_rule = (
        pl.when(one_box)
        .then(pl.lit(ExtractionRule.BOXED.value))
        .when(has_hash)
        .then(pl.lit(ExtractionRule.HASHES.value))
        .when(has_is & pl.col("_final"))
        .then(pl.lit(ExtractionRule.FINAL_ANSWER_IS.value))
        .when(has_is)
        .then(pl.lit(ExtractionRule.ANSWER_IS.value))
        .otherwise(pl.lit(ExtractionRule.ANSWER_LINE.value))
    )
    no_marker = no_box & (pl.col("_kinds") == 0)
    # flexible extraction without a marker: an output that is one short line could be an answer by
    # itself (extract._bare_answer): only a plain number is read here; then the last number
    body = raw.str.strip_chars()
    not_bare = (
        body.str.contains("\n", literal=True) | (body.str.len_chars() > 200) | body.str.contains(patterns.FAST_NUMBER)
    )
    # the last number and formula are read outside code blocks (extract._blank_code): a block of
    # code becomes two spaces (a number on either side of it stays apart, as after Python's run of
    # spaces), an ``output`` block stays; positions keep their order, which is all that is compared
    scan = pl.col("_scan")
    blanked = raw.str.replace_all(patterns.FAST_FENCED_CODE, "${keep}  ")
    has_code = raw.str.contains("```", literal=True)
    plain = ~raw.str.contains("\\", literal=True) & not_bare
    frame = frame.with_columns(
        found_marker.alias("_found"),
        marker.alias("_cleaned"),
        marker_rule.alias("_marker_rule"),
        no_marker.fill_null(False).alias("_no_marker"),
    )
    frame = _on(frame, pl.col("_no_marker") & has_code, {"_blanked": blanked}, {"_blanked": text})
    frame = frame.with_columns(pl.when("_no_marker").then(pl.coalesce("_blanked", raw)).alias("_scan"))
    frame = _on(frame, pl.col("_no_marker"), {"_plain": plain}, {"_plain": flag})
    # the last number, with the character in front of it
    matched = (pl.lit(" ") + scan).str.extract_all(patterns.TEXT_NUMBER_AFTER).list.last()
    last = matched.str.slice(1).str.replace_all(" ", "", literal=True)
    # the last number is the answer unless an inline formula ($...$) ends after it: how much text
    # follows the last match of each (its end, counted from the end; NUL and SOH are not in the text)
    formula = "(?s)" + patterns.INLINE_MATH.pattern
    after_number = (pl.lit(" ") + scan).str.replace_all(patterns.TEXT_NUMBER_AFTER, "\x01").str.split("\x01")
    after_formula = scan.str.replace_all(formula, "\x00").str.split("\x00")
    frame = _on(
        frame,
        pl.col("_plain").fill_null(False),
        {
            "_last": last,
            "_number_wins": after_number.list.last().str.len_chars() <= after_formula.list.last().str.len_chars(),
            "_formulas": after_formula.list.len() > 1,
            "_maybe_apart": scan.str.contains(patterns.FAST_NUMBER_UNSAFE),
            # a digit, a colon and the last number, or the last number, a colon and a digit: it may be
            # a time or ratio ("at 12:00", extract._colon_group); "== 19:" in code is not
            "_colon": after_number.list.last().str.contains("^:[0-9]")
            | (
                matched.str.starts_with(":")
                & (pl.lit(" ") + scan)
                .str.slice(
                    0,
                    (pl.lit(" ") + scan).str.len_chars()
                    - after_number.list.last().str.len_chars()
                    - matched.str.len_chars(),
                )
                .str.contains("[0-9]$")
            ),
        },
        {"_last": text, "_number_wins": flag, "_formulas": flag, "_maybe_apart": flag, "_colon": flag},
    )
    # where the two patterns may read apart somewhere, whether they may at the last number
    frame = _on(
        frame,
        pl.col("_maybe_apart").fill_null(False),
        {"_apart": _unsafe(scan, after_number.list.last())},
        {"_apart": flag},
    ).with_columns((pl.col("_plain") & ~pl.col("_apart").fill_null(False)).alias("_plain"))
    found, cleaned, last = pl.col("_found"), pl.col("_cleaned"), pl.col("_last")
    none = pl.lit(ExtractionRule.NONE.value)
    plain_last = pl.col("_plain").fill_null(False) & (
        (last.is_null() & ~pl.col("_formulas"))
        | (last.str.contains(patterns.FAST_NUMBER) & pl.col("_number_wins") & ~pl.col("_colon").fill_null(False))
    )
    return frame.select(
        "_row",
        ((found & cleaned.is_not_null()) | pl.col("_no_marker")).alias("_strict_ok"),
        pl.when(found).then(cleaned).alias("_strict_answer"),
        pl.when(found).then(pl.col("_marker_rule")).otherwise(none).alias("_strict_rule"),
        ((found & cleaned.is_not_null()) | (pl.col("_no_marker") & plain_last)).alias("_flex_ok"),
        pl.when(found).then(cleaned).otherwise(last).alias("_flex_answer"),
        pl.when(found)
        .then(pl.col("_marker_rule"))
        .when(last.is_not_null())
        .then(pl.lit(ExtractionRule.LAST_NUMBER.value))
        .otherwise(none)
        .alias("_flex_rule"),
    )


def _cues(frame: pl.DataFrame) -> pl.Series:
    """``percent_cue(question, unit)`` of each row, read once per distinct pair: in polars where no
    unit is declared and the question is :data:`~workbench.grading.patterns.FAST_TEXT` (on which
    the two regex engines match alike), in Python for the rest."""
    question = pl.col("question")
    in_polars = pl.col("predicted_unit").is_null() & (question.is_null() | question.str.contains(patterns.FAST_TEXT))
    pairs = frame.select("question", "predicted_unit").unique().with_columns(in_polars.fill_null(False).alias("_fast"))
    read = (
        pl.when(question.str.contains("(?i)" + patterns.PERCENT_CUE.pattern))
        .then(pl.lit("percent"))
        .when(question.str.contains("(?i)" + patterns.RATIO_CUE.pattern))
        .then(pl.lit("ratio"))
    )
    fast = pairs.filter("_fast").with_columns(read.alias("_cue"))
    rest = pairs.filter(~pl.col("_fast"))
    rest = rest.with_columns(pl.Series("_cue", [percent_cue(q, u) for q, u, _ in rest.iter_rows()], dtype=pl.String))
    table = pl.concat([fast, rest]).drop("_fast")
    return frame.select("question", "predicted_unit").join(
        table, on=["question", "predicted_unit"], how="left", nulls_equal=True, maintain_order="left"
    )["_cue"]


def _stated(frame: pl.DataFrame) -> pl.Series:
    """The scale the question or the declared unit states (``scale_cue``: "in millions" is 6), for
    the rows whose answer carries a scale word (null for the rest), read once per distinct pair."""
    keys = ["question", "predicted_unit"]
    scaled = pl.col("answer").str.contains(patterns.FAST_SCALE_WORD)
    rows = frame.select(*keys, scaled.fill_null(False).alias("_scaled")).with_row_index("_i").filter("_scaled")
    if rows.is_empty():
        return pl.repeat(None, frame.height, dtype=pl.Int64, eager=True).alias("_stated")
    pairs = rows.select(keys).unique()
    said = [scale_cue(q, u) for q, u in pairs.iter_rows()]
    table = pairs.with_columns(pl.Series("_stated", said, dtype=pl.Int64))
    read = rows.join(table, on=keys, how="left", nulls_equal=True).select("_i", "_stated")
    every = pl.DataFrame({"_i": pl.int_range(frame.height, dtype=pl.UInt32, eager=True)})
    return every.join(read, on="_i", how="left", maintain_order="left")["_stated"]


def decide(
    frame: pl.DataFrame, policies: Sequence[GradingPolicy], kind: AnswerKind = "auto"
) -> tuple[pl.Series, pl.DataFrame]:
    """Grade the rows of ``frame`` that the fast path can decide under every modelled policy.

    Parameters
    ----------
    frame
        Rows of grading inputs (:data:`INPUTS`; a missing column counts as null), each with a
        prediction.
    policies
        The policies in the order :func:`~workbench.grading.turn.grade_turn` grades them (the
        main one first); those :func:`models` rejects are left to the cascade.
    kind
        As for :func:`~workbench.grading.compare.answers_match`; ``text`` decides nothing.

    Returns
    -------
    tuple
        The indices of the decided rows (``UInt32``, ascending), and one row per decided row and
        modelled policy (:data:`OUTPUTS`; ``_p`` is the policy's position in ``policies``), policy
        after policy (``_p`` ascending), each policy's rows in row order.

    Examples
    --------
    >>> from workbench.grading.policies import POLICIES
    >>> rows = pl.DataFrame({"raw_output": ["2 + 3 = 5\\n#### 5", "so $\\\\frac{1}{2}$"],
    ...                      "gold_executed": ["5", "0.5"]})
    >>> decided, grades = decide(rows, [POLICIES["symbolic"], POLICIES["strict"]])
    >>> decided.to_list()
    [0]
    >>> grades.select("policy", "answer", "extraction_rule", "reason").rows()
    [('symbolic', '5', 'hashes', 'exact'), ('strict', '5', 'hashes', 'exact')]
    """
    chosen = [(i, p) for i, p in enumerate(policies) if models(p)]
    if kind == "text" or not chosen or frame.is_empty():
        return pl.Series("_row", [], dtype=pl.UInt32), pl.DataFrame(schema=OUTPUTS)
    missing = [pl.lit(None, pl.String).alias(c) for c in INPUTS if c not in frame.columns]
    df = frame.select([pl.col(c).cast(pl.String) for c in INPUTS if c in frame.columns] + missing)
    df = df.with_columns(pl.int_range(pl.len(), dtype=pl.UInt32).alias("_row"))

    pa, ua, raw = pl.col("predicted_answer"), pl.col("upstream_answer"), pl.col("raw_output")
    df = df.with_columns(
        (pl.col("predicted_program").is_null() | pl.col("predicted_program").str.contains(r"^\s*$")).alias(
            "_no_program"
        ),
        # a system's own answer: a plain number, whitespace around it, a percent word after it
        pa.str.contains(patterns.FAST_ANSWER).fill_null(False).alias("_pa"),
        ua.str.contains(patterns.FAST_ANSWER).fill_null(False).alias("_ua"),
    )
    # the raw output is read only when the system gives no answer of its own
    readable = (
        (raw.str.len_bytes() <= _MAX_TEXT)
        & raw.str.contains(patterns.FAST_TEXT)
        & ~raw.str.contains("<|begin_of_solution|>", literal=True)
    )
    df = _on(df, pa.is_null(), {"_readable": readable}, {"_readable": pl.Boolean()})
    readable = pl.col("_readable").fill_null(False)
    df = df.with_columns(readable.alias("_readable"))
    df = _on(
        df,
        pa.is_null(),
        {"_blank": raw.is_null() | (readable & ~raw.str.contains(r"\S"))},
        {"_blank": pl.Boolean()},
    ).with_columns(pl.col("_blank").fill_null(False))
    # extraction, on the outputs some policy extracts from
    pa_given, blank = pl.col("_pa"), pl.col("_blank")
    sources = {"answer" if p.source == "answer" else p.source for _, p in chosen}
    extracts = pa.is_null() & readable & ~blank & (pl.lit(sources != {"answer"}) | ua.is_null())
    todo = df.filter(extracts)
    if not todo.is_empty():
        df = df.join(_extract(todo), on="_row", how="left", maintain_order="left")
    else:
        df = df.with_columns(
            *[pl.lit(None, pl.Boolean).alias(f"_{n}_ok") for n in ("strict", "flex")],
            *[pl.lit(None, pl.String).alias(f"_{n}_{f}") for n in ("strict", "flex") for f in ("answer", "rule")],
        )
    none = pl.lit(None, pl.String)

    def selected(name: str) -> pl.LazyFrame:
        """``select_answer`` of every row for the policies whose source is ``name``: ``_sel_ok``
        (decided), ``answer``, ``answer_source``, ``extraction_rule``."""
        if name in ("strict", "flex"):
            ok = pa_given | (pa.is_null() & (blank | pl.col(f"_{name}_ok").fill_null(False)))
            answer = pl.when(pa_given).then(pa).when(blank).then(none).otherwise(pl.col(f"_{name}_answer"))
            where = pl.when(pa_given).then(pl.lit("answer")).otherwise(pl.lit(name))
            rule = (
                pl.when(pa_given)
                .then(none)
                .when(blank)
                .then(pl.lit(ExtractionRule.NONE.value))
                .otherwise(pl.col(f"_{name}_rule"))
            )
        else:
            flex = pl.col("_flex_ok").fill_null(False)
            ok = pa_given | (pa.is_null() & (pl.col("_ua") | (ua.is_null() & (blank | flex))))
            answer = (
                pl.when(pa_given)
                .then(pa)
                .when(ua.is_not_null())
                .then(fastmatch.answer_text(ua))  # select_answer strips the harness's answer
                .when(blank)
                .then(none)
                .otherwise(pl.col("_flex_answer"))
            )
            where = (
                pl.when(pa_given)
                .then(pl.lit("answer"))
                .when(ua.is_not_null())
                .then(pl.lit("upstream"))
                .when(blank)
                .then(pl.lit("none"))
                .otherwise(pl.lit("flex"))
            )
            rule = pl.when(pa_given | ua.is_not_null() | blank).then(none).otherwise(pl.col("_flex_rule"))
        return df.lazy().select(
            "_row",
            # a program's value is an answer only for the system's own answer, when it gives none
            (ok & (pl.lit(name != "answer") | pa_given | pl.col("_no_program"))).fill_null(False).alias("_sel_ok"),
            answer.alias("answer"),
            where.cast(pl.Categorical()).alias("answer_source"),
            rule.cast(pl.Categorical()).alias("extraction_rule"),
            "gold_executed",
            pl.when(pl.col("gold_answer").is_not_null())
            .then("gold_answer")
            .otherwise("gold_executed")
            .alias("_display"),
            "question",
            "predicted_unit",
            "_cue",
        )

    df = df.with_columns(_cues(df).alias("_cue"))  # once per row, not per row and source
    # one block of df's rows, in df's order, per source
    blocks = sorted(sources)
    long = pl.concat([selected(name) for name in blocks]).collect(engine=fastmatch.ENGINE)
    long = long.with_columns(_stated(long).alias("_stated"))
    # each distinct comparison is made once: systems give the same answers to the same questions
    compared = ["answer", "gold_executed", "_display", "_cue", "_stated"]
    unique_pairs, pair_of = distinct(long.select(compared), compared)
    pairs = unique_pairs.with_row_index("_pair").lazy()
    pairs = read_numbers(pairs, "answer", "_p_", patterns.FAST_ANSWER)
    pairs = read_numbers(pairs, "gold_executed", "_g_")
    matchers = {p.matcher for _, p in chosen}
    cascades = {p.numbers.bare_percent_reading: p.numbers for _, p in chosen if p.matcher == "cascade"}
    if len(cascades) > 1:  # one reading of bare numbers per run (for_benchmark gives all the same)
        chosen = [(i, p) for i, p in chosen if p.matcher != "cascade" or p.numbers is next(iter(cascades.values()))]
    if cascades:
        pairs = fastmatch.cascade(pairs, next(iter(cascades.values())))
    if "official" in matchers:
        pairs = fastmatch.official(pairs)
    if "exact_string" in matchers:
        pairs = fastmatch.exact_string(pairs)
    compared_pairs = pairs.collect(engine=fastmatch.ENGINE).sort("_pair")  # the matchers reorder rows
    rel_tol = next((p.numbers.rel_tol for _, p in chosen if p.matcher == "cascade"), DEFAULT_POLICY.rel_tol)
    verdicts = ["_g_ok"]
    enums = (pl.field("status").cast(STATUS_DTYPE), pl.field("reason").cast(REASON_DTYPE))
    for name in ("_cascade", "_official", "_string"):  # each distinct comparison is worded once
        if name in compared_pairs.columns:
            worded = compared_pairs.select(pl.col(name).struct.unnest(), "answer")
            compared_pairs = compared_pairs.with_columns(
                fastmatch.details(worded, rel_tol).alias(f"{name}_detail"),
                pl.col(name).struct.with_fields(*enums),
            )
            verdicts += [name, f"{name}_ok", f"{name}_detail"]
    long = long.hstack(compared_pairs.select(verdicts).gather(pair_of))

    parts = []
    for position, policy in chosen:
        name = {"exact_string": "_string", "official": "_official", "cascade": "_cascade"}[policy.matcher]
        answer = pl.col("answer")
        if policy.matcher == "exact_string":
            gold_given = pl.col("_display").str.contains(r"^[ -~]*[!-~][ -~]*$").fill_null(False)
        else:
            gold_given = pl.col("_g_ok").fill_null(False)  # no gold is not a verdict the fast path gives
        decided = (
            pl.col("_sel_ok")
            & pl.col("_g_ok")
            & pl.when(answer.is_null()).then(gold_given).otherwise(pl.col(f"{name}_ok"))
        )
        # the verdict fields the grades keep; with no answer, those of the verdict on no answer
        none_given = fastmatch.NO_ANSWER_FIELDS
        verdict = [
            pl.when(answer.is_null())
            .then(pl.lit(none_given[f], dtype=OUTPUTS[f]))
            .otherwise(pl.col(name).struct.field(f))
            .alias(f)
            for f in ("correct", "status", "reason", "pred_value")
        ]
        detail = pl.when(answer.is_null()).then(pl.lit(fastmatch.NO_ANSWER_DETAIL)).otherwise(pl.col(f"{name}_detail"))
        src = "answer" if policy.source == "answer" else policy.source
        parts.append(
            long.slice(blocks.index(src) * df.height, df.height).select(
                "_row",
                pl.lit(position, OUTPUTS["_p"]).alias("_p"),
                pl.lit(policy.name, dtype=pl.Categorical()).alias("policy"),
                "answer",
                "answer_source",
                "extraction_rule",
                decided.fill_null(False).alias("_decided"),
                *verdict,
                detail.alias("detail"),
            )
        )
    # every part has df's rows in df's order: a row is decided when every part decides it
    decided_all = pl.DataFrame([part.get_column("_decided").alias(f"_{i}") for i, part in enumerate(parts)])
    ok = decided_all.select(pl.all_horizontal(pl.all()).alias("_ok")).get_column("_ok")
    rows = df.get_column("_row").filter(ok)
    if rows.is_empty():
        return pl.Series("_row", [], dtype=pl.UInt32), pl.DataFrame(schema=OUTPUTS)
    return rows, pl.concat([part.filter(ok).select([pl.col(c).cast(t) for c, t in OUTPUTS.items()]) for part in parts])
