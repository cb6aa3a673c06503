"""The rule on several systems' answers: ``systems_agree``.

What it flags and with which confidence: :mod:`workbench.quality.checks`.

How it scales (a million turns of eight systems): the rule compares every pair of a turn's wrong
answers with ``answers_match`` both ways. Here each distinct string is read once (plain numbers in
polars by :func:`workbench.io.numbers.read_numbers`, :func:`_fast_readings`; the rest by
``answers_match`` of the string with itself), two plain numbers of one value agree and pairs of
numbers too far apart to agree under any reading disagree, both decided in polars
(:func:`_may_agree`), each remaining distinct pair is compared once, and on the turns where two
answers agree each answer's group, the largest one and its evidence are found in polars
(:func:`_groups`). The flags are those of the rule as written, turn by turn
(``tests/unit/quality/test_agreement.py``).
"""

from __future__ import annotations

import polars as pl

from workbench.grading.compare import MatchPolicy, answers_match, read_number
from workbench.grading.status import MatchReason
from workbench.io.numbers import hundredth, read_numbers
from workbench.quality.flags import AGREEMENT_RULE, CONFIDENCE, as_checks, checks_frame, merge_flags

__all__ = ["agreement_checks"]

#: How two systems' answers are compared: 1e-3 relative tolerance, x100 reading either way.
_AGREE = MatchPolicy(name="agreement", accept_reported_precision=False, use_cues=False, symbolic=False)
#: Grading reasons that say a wrong answer is only a rounding or unit reading away from the gold.
_NEAR_MISS = frozenset({"rounding", "percent_confusion", "scale", "sign_flip"})


#: Slack of :func:`_near`: twice ``_AGREE.rel_tol``, and above the 1e-5 of 5-decimal rounding.
_NEAR_REL, _NEAR_ABS = 2e-3, 2e-5


def _answers_agree(a: str, b: str) -> bool:
    return answers_match(a, b, policy=_AGREE).correct or answers_match(b, a, policy=_AGREE).correct


def _readings(answer: str) -> tuple[bool, tuple[float, float, float] | None]:
    """Whether ``answer`` agrees with itself, and, when it is compared as a number
    (``answers_match`` of it with itself is ``exact``, a reason only the numeric comparison
    gives), its fraction, its value (percent sign not applied) and its value in the units of
    its scale word (``1.2`` for ``1.2 million``)."""
    verdict = answers_match(answer, answer, policy=_AGREE)
    number = read_number(answer) if verdict.reason is MatchReason.EXACT else None
    if number is None or number.scale < 0:
        return verdict.correct, None
    return verdict.correct, (number.fraction, number.value, number.value / 10.0**number.scale)


class _Agreement:
    """``_answers_agree`` on the answers of many turns, each distinct pair of strings decided
    once: a string with itself by one ``answers_match``, a pair :func:`_some_agree` decided (two
    numbers that cannot agree, :func:`_may_agree`) as it says, every other pair as
    ``_answers_agree`` decides it."""

    def __init__(self) -> None:
        self._read: dict[str, tuple[bool, tuple[float, float, float] | None]] = {}
        self._pairs: dict[tuple[str, str], bool] = {}
        self._decided: list[pl.DataFrame] = []  # pairs decided in polars: ``_lo, _hi, _agrees``

    def seed(self, answer: str, reading: tuple[bool, tuple[float, float, float] | None]) -> None:
        """Record a reading found otherwise (:func:`_fast_readings`)."""
        self._read[answer] = reading

    def seed_pairs(self, pairs: pl.DataFrame, agrees: bool) -> None:
        """Record pairs (``answer``, ``answer_b``) decided in polars, all with the verdict
        ``agrees``: apart by :func:`_may_agree`, or two plain numbers of one value."""
        a, b = pl.col("answer"), pl.col("answer_b")
        self._decided.append(
            pairs.select(
                pl.when(a < b).then(a).otherwise(b).alias("_lo"),
                pl.when(a < b).then(b).otherwise(a).alias("_hi"),
                pl.lit(agrees).alias("_agrees"),
            )
        )

    def reading(self, answer: str) -> tuple[bool, tuple[float, float, float] | None]:
        found = self._read.get(answer)
        if found is None:
            found = self._read[answer] = _readings(answer)
        return found

    def decide(self, pairs: pl.DataFrame) -> pl.Series:
        """``self(a, b)`` for each row (``a``, ``b``) of ``pairs``: the pairs decided already are
        read from the caches at once, the others decided here (and kept)."""
        lo = pl.when(pl.col("a") < pl.col("b")).then("a").otherwise("b")
        hi = pl.when(pl.col("a") < pl.col("b")).then("b").otherwise("a")
        distinct = pairs.select("a", "b").unique().with_columns(lo.alias("_lo"), hi.alias("_hi"))
        known = pl.DataFrame(
            {
                "_lo": [*self._read, *(a for a, _ in self._pairs)],
                "_hi": [*self._read, *(b for _, b in self._pairs)],
                "_agrees": [*(r[0] for r in self._read.values()), *self._pairs.values()],
            },
            schema={"_lo": pl.String(), "_hi": pl.String(), "_agrees": pl.Boolean()},
        )
        known = pl.concat([known, *self._decided]).unique(["_lo", "_hi"], keep="first")
        distinct = distinct.join(known, on=["_lo", "_hi"], how="left")
        missing = distinct.filter(pl.col("_agrees").is_null())
        if not missing.is_empty():
            decided = pl.Series("_decided", [self(a, b) for a, b in missing.select("a", "b").iter_rows()])
            distinct = distinct.join(
                missing.select("a", "b").with_columns(decided), on=["a", "b"], how="left"
            ).with_columns(pl.coalesce("_agrees", "_decided").alias("_agrees"))
        return pairs.join(distinct.select("a", "b", "_agrees"), on=["a", "b"], how="left", maintain_order="left")[
            "_agrees"
        ]

    def __call__(self, a: str, b: str) -> bool:
        if a == b:
            return self.reading(a)[0]
        key = (a, b) if a < b else (b, a)
        found = self._pairs.get(key)
        if found is None:
            found = self._pairs[key] = _answers_agree(a, b)
        return found


def agreement_checks(turns: pl.DataFrame, *, min_systems: int = 2) -> pl.DataFrame:
    """Flag turns where at least ``min_systems`` systems agree on one answer the gold contradicts.

    Parameters
    ----------
    turns
        Graded turns (:data:`workbench.schema.GRADED_TURNS`; needs ``system, record_id, turn,
        correct, status, reason, answer, gold_answer, gold_executed``).
    min_systems
        How many systems must agree.

    Returns
    -------
    pl.DataFrame
        :data:`workbench.schema.CHECKS` rows of rule ``systems_agree``, category ``mislabel``.

    Examples
    --------
    >>> turns = pl.DataFrame({"system": ["a", "b", "c"], "record_id": ["r"] * 3, "turn": [0] * 3,
    ...     "correct": [False, False, True], "status": ["ok"] * 3, "reason": ["wrong_value", "wrong_value", "exact"],
    ...     "answer": ["12.5", "0.125", "7"], "gold_answer": ["7"] * 3, "gold_executed": ["7"] * 3})
    >>> flags = agreement_checks(turns)
    >>> flags["confidence"].to_list(), flags["evidence"][0][:60]
    ([0.6], "2 of 3 systems agree on 12.5 (a: '12.5', b: '0.125') but the")
    """
    if turns.is_empty() or min_systems < 1:
        return checks_frame([])
    read = ["system", "record_id", "turn", "correct", "status", "reason", "answer", "gold_answer", "gold_executed"]
    wrong = turns.select(read).filter(  # the columns read: a filter copies every column it carries
        pl.col("status").cast(pl.String) == "ok", pl.col("correct").not_(), pl.col("answer").is_not_null()
    )
    grouped = (
        wrong.group_by("record_id", "turn")
        .agg(
            pl.col("system"),
            pl.col("answer"),
            pl.col("reason").cast(pl.String),
            pl.col("gold_answer").first(),
            pl.col("gold_executed").first(),
        )
        .filter(pl.col("system").list.len() >= min_systems)
        .sort("record_id", "turn")
    )
    agree = _Agreement()
    if min_systems >= 2:  # a turn where no two answers agree has no group of two
        grouped = grouped.filter(_some_agree(grouped, agree))
    # how many systems answered each turn left, counted on those turns only (not on every turn)
    keys = ["record_id", "turn"]
    answered = (
        turns.select(*keys, "system", "status")
        .join(grouped.select(keys), on=keys, how="semi")
        .filter(pl.col("status").cast(pl.String) != "no_prediction")
        .group_by(keys)
        .agg(pl.col("system").n_unique().alias("n_systems"))
    )
    grouped = grouped.join(answered, on=keys, how="left", maintain_order="left")
    flags = _groups(grouped, agree, min_systems)
    if flags.is_empty():
        return checks_frame([])
    return merge_flags(
        as_checks(flags.with_columns(pl.lit("mislabel").alias("category"), pl.lit(AGREEMENT_RULE).alias("rule")))
    )


def _confidence(agreeing: int, systems: int, near_misses: bool) -> float:
    """How likely a ``systems_agree`` flag is a real data problem: ``agreeing`` of ``systems``
    systems agree, all of them graded a near miss (``near_misses``) or not."""
    confidence = min(0.2 + 0.7 * (agreeing / systems), 0.95)  # of the share of systems
    if agreeing < 3:  # two runs of one model often repeat one mistake
        confidence = min(confidence, CONFIDENCE["agree_cap_few"])
    if near_misses:  # a sign, scale or rounding convention
        confidence = min(confidence, CONFIDENCE["agree_near_miss"])
    return round(confidence, 3)


def _groups(grouped: pl.DataFrame, agree: _Agreement, min_systems: int) -> pl.DataFrame:
    """``record_id, turn, evidence, confidence`` of each row of ``grouped`` (a turn's wrong
    answers, in order) that the rule flags, all rows at once. An answer's group is the answers
    that agree with it (itself too when it agrees with itself); the turn's is the largest group,
    the first of equal ones in the order of the answers, and is flagged when it has at least
    ``min_systems`` answers. The evidence names its systems and answers in that order."""
    grouped = grouped.with_row_index("_row")
    long = (
        grouped.select("_row", "system", "answer", "reason")
        .explode("system", "answer", "reason")
        .with_columns(pl.int_range(pl.len(), dtype=pl.UInt32).over("_row").alias("_i"))
    )
    pairs = long.select("_row", "_i", pl.col("answer").alias("a")).join(
        long.select("_row", pl.col("_i").alias("_j"), pl.col("answer").alias("b")), on="_row"
    )
    pairs = pairs.filter(agree.decide(pairs))
    sizes = pairs.group_by("_row", "_i").agg(pl.len().alias("_n")).sort("_row", "_i")
    best = sizes.group_by("_row").agg(pl.col("_i").get(pl.col("_n").arg_max()))  # the first largest
    members = (
        pairs.join(best, on=["_row", "_i"])
        .select("_row", pl.col("_j").alias("_i"))
        .join(long, on=["_row", "_i"])
        .sort("_row", "_i")
    )
    near = pl.col("reason").is_in(list(_NEAR_MISS)).all()
    found = (
        members.group_by("_row", maintain_order=True)
        .agg(
            pl.len().alias("_n"),
            pl.col("answer").first().alias("_first"),
            pl.concat_str(pl.col("system"), pl.lit(": '"), pl.col("answer"), pl.lit("'"))
            .str.join(", ")
            .alias("_listed"),
            pl.col("reason").unique().sort().str.join(", ").alias("_reasons"),
            near.alias("_near"),
        )
        .filter(pl.col("_n") >= min_systems)
        .join(
            grouped.select("_row", "record_id", "turn", "gold_answer", "gold_executed", "n_systems"),
            on="_row",
        )
        .sort("_row")
    )
    kinds = found.select("_n", "n_systems", "_near").unique()
    kinds = kinds.with_columns(
        pl.Series("confidence", [_confidence(*kind) for kind in kinds.iter_rows()], dtype=pl.Float64)
    )
    evidence = pl.format(
        "{} of {} systems agree on {} ({}) but the gold display answer is '{}' and the executed answer '{}' "
        "(graded: {})",
        "_n",
        "n_systems",
        "_first",
        "_listed",
        pl.col("gold_answer").fill_null("None"),
        pl.col("gold_executed").fill_null("None"),
        "_reasons",
    )
    return found.join(kinds, on=["_n", "n_systems", "_near"], how="left", maintain_order="left").select(
        "record_id", "turn", evidence.alias("evidence"), "confidence"
    )


def _fast_readings(strings: pl.Series) -> pl.DataFrame:
    """``answer, value, fraction, pct`` of the distinct answers that are plain numbers
    (:func:`workbench.io.numbers.read_numbers` of the answer without the whitespace around it; at
    most 64 characters): each agrees with itself and reads as its value (``%`` not applied; no
    scale word), as :func:`_readings` finds; ``pct`` says it has a ``%`` sign."""
    text = pl.col("answer").str.strip_chars(" \t\n\r")
    candidates = (
        strings.to_frame("answer").filter(pl.col("answer").str.len_chars() <= 64).with_columns(text.alias("_text"))
    )
    found = read_numbers(candidates.lazy(), "_text", "_n_").filter(pl.col("_n_ok")).collect(engine="in-memory")
    value, percent = pl.col("_n_value"), pl.col("_n_pct")
    return found.select(
        "answer",
        value.alias("value"),
        pl.when(percent).then(hundredth(value)).otherwise(value).alias("fraction"),
        percent.alias("pct"),
    )


def _near(x: pl.Expr, y: pl.Expr) -> pl.Expr:
    return (x - y).abs() <= pl.lit(_NEAR_REL) * pl.max_horizontal(x.abs(), y.abs()) + pl.lit(_NEAR_ABS)


def _may_agree() -> pl.Expr:
    """False only when two numbers (``fraction``, ``value``, ``_mant`` and the same with ``_b``)
    cannot agree under ``_AGREE``: every reading that can make ``answers_match(pred, gold)`` correct
    compares the gold's fraction with the prediction's fraction (exact, 5 decimals, tolerance), its
    value /100 or x100 (percent readings) or its value (a ``%`` prediction read without its sign),
    or the two values in the units of the scale word one of them has (scale reading), each within
    1e-3 relative or 1e-5 absolute; :func:`_near` is looser than all of them. True for a side that
    is not a number."""
    fa, va, ma = pl.col("fraction"), pl.col("value"), pl.col("_mant")
    fb, vb, mb = pl.col("fraction_b"), pl.col("value_b"), pl.col("_mant_b")
    return (
        fa.is_null()
        | fb.is_null()
        | _near(ma, mb)
        | pl.any_horizontal(*(_near(x, fb) for x in (fa, va, va / 100.0, va * 100.0)))
        | pl.any_horizontal(*(_near(x, fa) for x in (fb, vb, vb / 100.0, vb * 100.0)))
    )


def _some_agree(grouped: pl.DataFrame, agree: _Agreement) -> pl.Series:
    """Per row of ``grouped`` (lists of ``answer``), whether two of its answers agree: a string
    given twice that agrees with itself, or two strings that do. Pairs of numbers are filtered
    by :func:`_may_agree` in polars; the rest are decided by ``agree`` (which keeps them)."""
    answers = grouped.select(pl.int_range(pl.len(), dtype=pl.UInt32).alias("_row"), "answer").explode("answer")
    counts = answers.group_by("_row", "answer").agg(pl.len().alias("_n"))
    strings = counts.get_column("answer").unique()
    fast = _fast_readings(strings)
    for answer, value, fraction in fast.select("answer", "value", "fraction").iter_rows():
        agree.seed(answer, (True, (fraction, value, value)))
    others = strings.filter(~strings.is_in(fast.get_column("answer").implode()))
    read = [(a, *agree.reading(a)) for a in others.to_list()]
    readings = pl.concat(
        [
            fast.select("answer", pl.lit(True).alias("_self"), "fraction", "value", pl.col("value").alias("_mant"),
                        pl.col("pct").alias("_pct")),
            pl.DataFrame(
                [(a, ok, *(r if r is not None else (None, None, None)), None) for a, ok, r in read],
                schema={"answer": pl.String(), "_self": pl.Boolean(), "fraction": pl.Float64(),
                        "value": pl.Float64(), "_mant": pl.Float64(), "_pct": pl.Boolean()},
                orient="row",
            ),
        ]
    )  # fmt: skip
    twice = counts.filter(pl.col("_n") >= 2).join(readings, on="answer").filter("_self").get_column("_row")
    left = counts.select("_row", "answer").join(readings, on="answer")
    pairs = left.join(left, on="_row", suffix="_b").filter(pl.col("answer") < pl.col("answer_b"))
    may = _may_agree()
    # two plain numbers of one value, both with a % sign or neither, agree (the cascade's exact rule)
    same = ((pl.col("_pct") == pl.col("_pct_b")) & (pl.col("value") == pl.col("value_b"))).fill_null(False)
    equal = pairs.filter(same).select("_row", "answer", "answer_b")
    candidates = pairs.filter(may, same.not_()).select("_row", "answer", "answer_b")
    decided = candidates.select("answer", "answer_b").unique()
    agreeing = decided.filter(pl.Series([agree(a, b) for a, b in decided.iter_rows()], dtype=pl.Boolean()))
    paired = candidates.join(agreeing, on=["answer", "answer_b"]).get_column("_row")
    rows = pl.concat([twice, paired, equal.get_column("_row")]).unique()
    # the turns read row by row compare their other pairs too: those decided here are kept
    agree.seed_pairs(equal.select("answer", "answer_b").unique(), True)
    apart = pairs.filter(may.not_(), pl.col("_row").is_in(rows.implode())).select("answer", "answer_b").unique()
    agree.seed_pairs(apart, False)
    return pl.int_range(grouped.height, dtype=pl.UInt32, eager=True).is_in(rows.implode())
