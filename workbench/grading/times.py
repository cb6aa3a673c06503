"""Times and ratios written with a colon (``12:00``, ``3:2``, ``1 : 2 : 3``): compared part by part,
never read as a division (Math-Verify and SymPy read ``3:2`` as 3/2 and ``12:00`` as 12/0)."""

from __future__ import annotations

from workbench.grading import patterns
from workbench.grading.status import GradeStatus, MatchReason
from workbench.grading.verdict import Verdict

__all__ = ["colon_parts", "compare_colon"]


def colon_parts(text: str) -> tuple[int, ...] | None:
    """The parts of a time or ratio, ``None`` for anything else.

    Examples
    --------
    >>> colon_parts("12:00"), colon_parts("$3 : 2$"), colon_parts("3/2")
    ((12, 0), (3, 2), None)
    """
    if ":" not in text:
        return None
    body = patterns.MATH_DELIMITER.sub(" ", text.replace("\\colon", ":"))
    match = patterns.COLON_NUMBER.match(body)
    if match is None:
        return None
    return tuple(int(part) for part in match.group("parts").split(":"))


def compare_colon(pred: str, gold: str) -> Verdict | None:
    """A time or a ratio (``12:00``, ``3:2``) compared part by part, never as a division; ``None``
    when neither side is one.

    Examples
    --------
    >>> compare_colon("12:00", "12:00").correct, compare_colon("3:2", "1.5").correct, compare_colon("5", "5")
    (True, False, None)
    """
    gold_parts, pred_parts = colon_parts(gold), colon_parts(pred)
    if gold_parts is None and pred_parts is None:
        return None
    if gold_parts is not None and pred_parts is not None:
        ok = gold_parts == pred_parts
        detail = (
            f"the times or ratios {pred.strip()!r} and {gold.strip()!r} {'agree' if ok else 'differ'} "
            "part by part (a colon is not a division)"
        )
        return Verdict(
            ok, GradeStatus.OK, MatchReason.EXACT if ok else MatchReason.WRONG_VALUE, None, None, detail, "text"
        )
    if gold_parts is not None:
        detail = f"the gold {gold.strip()!r} is a time or ratio; the prediction {pred.strip()!r} is not one"
    else:
        detail = f"the prediction {pred.strip()!r} is a time or ratio; the gold {gold.strip()!r} is not one"
    return Verdict(
        False, GradeStatus.OK, MatchReason.WRONG_VALUE, None, None, f"{detail} (a colon is not a division)", "text"
    )
