"""The outcome of one comparison: :class:`Verdict`, shared by every comparing module
(:mod:`workbench.grading.compare` re-exports it)."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.grading.status import GradeStatus, MatchReason

__all__ = ["Verdict", "no_answer_verdict"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of one comparison.

    Attributes
    ----------
    correct
        Whether the prediction counts as right.
    status
        Whether the comparison could be made (``ok``) or why not.
    reason
        The rule that decided: a match rule when ``correct``, a mismatch type otherwise.
    pred_value, gold_value
        The numbers compared (``None`` when a side is not numeric).
    detail
        One readable sentence explaining the verdict.
    kind
        How the answers were compared: ``number``, ``latex``, ``text`` or ``yes_no``.
    """

    correct: bool
    status: GradeStatus
    reason: MatchReason
    pred_value: float | None
    gold_value: float | None
    detail: str
    kind: str = "number"


def no_answer_verdict(pred: str | None) -> Verdict:
    """The verdict on a prediction that states no answer (``None``, empty, ``N/A``)."""
    return Verdict(
        False, GradeStatus.NO_ANSWER, MatchReason.NO_ANSWER, None, None, f"the output gives no answer ({pred!r})"
    )
