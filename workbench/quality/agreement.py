"""The rule on several systems' answers: ``systems_agree``.

What it flags and with which confidence: :mod:`workbench.quality.checks`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import polars as pl

from workbench.grading.compare import MatchPolicy, answers_match, read_number
from workbench.grading.status import MatchReason
from workbench.quality.flags import AGREEMENT_RULE, CONFIDENCE, checks_frame, flag_row, merge_flags

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


def _near(x: float, y: float) -> bool:
    return abs(x - y) <= _NEAR_REL * max(abs(x), abs(y)) + _NEAR_ABS


def _may_agree(a: tuple[float, float, float], b: tuple[float, float, float]) -> bool:
    """False only when two numbers cannot agree under ``_AGREE``: every reading that can make
    ``answers_match(pred, gold)`` correct compares the gold's fraction with the prediction's
    fraction (exact, 5 decimals, tolerance), its value /100 or x100 (percent readings) or its
    value (a ``%`` prediction read without its sign), or the two values in the units of the
    scale word one of them has (scale reading), each within 1e-3 relative or 1e-5 absolute;
    :func:`_near` is looser than all of them."""
    (fa, va, ma), (fb, vb, mb) = a, b
    return (
        _near(ma, mb)
        or any(_near(x, fb) for x in (fa, va, va / 100.0, va * 100.0))
        or any(_near(x, fa) for x in (fb, vb, vb / 100.0, vb * 100.0))
    )


class _Agreement:
    """``_answers_agree`` on the answers of many turns, each distinct pair of strings decided
    once: a string with itself by one ``answers_match``, two numbers that cannot agree
    (:func:`_may_agree`) without any, every other pair as ``_answers_agree`` decides it."""

    def __init__(self) -> None:
        self._read: dict[str, tuple[bool, tuple[float, float, float] | None]] = {}
        self._pairs: dict[tuple[str, str], bool] = {}

    def reading(self, answer: str) -> tuple[bool, tuple[float, float, float] | None]:
        found = self._read.get(answer)
        if found is None:
            found = self._read[answer] = _readings(answer)
        return found

    def __call__(self, a: str, b: str) -> bool:
        if a == b:
            return self.reading(a)[0]
        key = (a, b) if a < b else (b, a)
        found = self._pairs.get(key)
        if found is None:
            ra, rb = self.reading(a)[1], self.reading(b)[1]
            found = (ra is None or rb is None or _may_agree(ra, rb)) and _answers_agree(a, b)
            self._pairs[key] = found
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
    wrong = turns.filter(
        pl.col("status").cast(pl.String) == "ok", pl.col("correct").not_(), pl.col("answer").is_not_null()
    )
    answered = (
        turns.filter(pl.col("status").cast(pl.String) != "no_prediction")
        .group_by("record_id", "turn")
        .agg(pl.col("system").n_unique().alias("n_systems"))
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
        .join(answered, on=["record_id", "turn"], how="left")
        .sort("record_id", "turn")
    )
    rows = []
    done: dict[tuple[Any, ...], tuple[str, float] | None] = {}  # by the answers and the gold
    agree = _Agreement()
    for row in grouped.iter_rows(named=True):
        key = (*(tuple(row[c]) for c in ("system", "answer", "reason")), row["n_systems"])
        key += (row["gold_answer"], row["gold_executed"])
        if key not in done:
            done[key] = _agreement(row, min_systems, agree)
        found = done[key]
        if found is not None:
            rows.append(flag_row(row["record_id"], row["turn"], "mislabel", AGREEMENT_RULE, *found))
    return merge_flags(checks_frame(rows)) if rows else checks_frame([])


def _agreement(
    row: Mapping[str, Any], min_systems: int, agree: Callable[[str, str], bool] = _answers_agree
) -> tuple[str, float] | None:
    """The evidence and confidence of a ``systems_agree`` flag on one turn's wrong answers, if any."""
    answers = list(zip(row["system"], row["answer"], row["reason"], strict=True))
    best: list[tuple[str, str, str]] = []
    for _, answer, _ in answers:
        group = [a for a in answers if agree(answer, a[1])]
        if len(group) > len(best):
            best = group
    if len(best) < min_systems:
        return None
    share = len(best) / row["n_systems"]
    confidence = min(0.2 + 0.7 * share, 0.95)
    if len(best) < 3:  # two runs of one model often repeat one mistake
        confidence = min(confidence, CONFIDENCE["agree_cap_few"])
    if all(reason in _NEAR_MISS for _, _, reason in best):  # a sign, scale or rounding convention
        confidence = min(confidence, CONFIDENCE["agree_near_miss"])
    listed = ", ".join(f"{system}: '{answer}'" for system, answer, _ in best)
    reasons = ", ".join(sorted({reason for _, _, reason in best}))
    how = (
        f"{len(best)} of {row['n_systems']} systems agree on {best[0][1]} ({listed}) but the gold display "
        f"answer is '{row['gold_answer']}' and the executed answer '{row['gold_executed']}' (graded: {reasons})"
    )
    return how, round(confidence, 3)
