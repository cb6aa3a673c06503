"""The rule on several systems' answers: ``systems_agree``.

What it flags and with which confidence: :mod:`workbench.quality.checks`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from workbench.grading.compare import MatchPolicy, answers_match
from workbench.quality.flags import AGREEMENT_RULE, CONFIDENCE, checks_frame, flag_row, merge_flags

__all__ = ["agreement_checks"]

#: How two systems' answers are compared: 1e-3 relative tolerance, x100 reading either way.
_AGREE = MatchPolicy(name="agreement", accept_reported_precision=False, use_cues=False, symbolic=False)
#: Grading reasons that say a wrong answer is only a rounding or unit reading away from the gold.
_NEAR_MISS = frozenset({"rounding", "percent_confusion", "scale", "sign_flip"})


def _answers_agree(a: str, b: str) -> bool:
    return answers_match(a, b, policy=_AGREE).correct or answers_match(b, a, policy=_AGREE).correct


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
    for row in grouped.iter_rows(named=True):
        key = (*(tuple(row[c]) for c in ("system", "answer", "reason")), row["n_systems"])
        key += (row["gold_answer"], row["gold_executed"])
        if key not in done:
            done[key] = _agreement(row, min_systems)
        found = done[key]
        if found is not None:
            rows.append(flag_row(row["record_id"], row["turn"], "mislabel", AGREEMENT_RULE, *found))
    return merge_flags(checks_frame(rows)) if rows else checks_frame([])


def _agreement(row: Mapping[str, Any], min_systems: int) -> tuple[str, float] | None:
    """The evidence and confidence of a ``systems_agree`` flag on one turn's wrong answers, if any."""
    answers = list(zip(row["system"], row["answer"], row["reason"], strict=True))
    best: list[tuple[str, str, str]] = []
    for _, answer, _ in answers:
        group = [a for a in answers if _answers_agree(answer, a[1])]
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
