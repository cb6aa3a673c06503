"""The rules on a gold turn's display answer: ``display_vs_executed`` and ``question_unit``.

What each rule flags and with which confidence: :mod:`workbench.quality.checks`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.grading import patterns
from workbench.grading.compare import answers_match, percent_cue, read_number, significant_digits
from workbench.grading.normalize import ParsedNumber, normalize_answer, parse_number
from workbench.grading.program import Call, Node, Num, Ref
from workbench.grading.status import MatchReason
from workbench.quality.flags import CONFIDENCE, NEAR, flag_row, gold_value, show

__all__ = ["display_flags", "question_flags"]

#: Powers of ten a display answer may be off by (unit_inconsistency).
_UNIT_SHIFTS = (2, -2, 1, -1, 3, -3, 6, -6, 9, -9)


def _shows(display: ParsedNumber, value: float, *, loose: bool = True) -> bool:
    """Whether ``display`` (in its own units, ``%`` not applied) shows ``value`` at the precision
    it writes: rounded, truncated, within 1e-3 relative, or equal to 5 decimals. ``loose=False``
    asks for two significant digits before rounding or truncation count.

    Examples
    --------
    >>> d = parse_number("14.1%")
    >>> _shows(d, 14.136), _shows(d, 14.19), _shows(d, 14.2), _shows(parse_number("2"), 2.4, loose=False)
    (True, True, False, False)
    """
    shown = display.value
    if math.isclose(shown, value, rel_tol=1e-3, abs_tol=1e-9) or round(shown, 5) == round(value, 5):
        return True
    if not loose and significant_digits(display) < 2:
        return False
    unit = 10.0 ** (-display.decimals)
    if abs(shown - value) <= 0.5 * unit * (1 + 1e-9):
        return True
    return abs(shown) <= abs(value) and abs(shown - value) < unit * (1 - 1e-6) and (shown >= 0) == (value >= 0)


def _magnitude(display: ParsedNumber, value: float, of: str) -> tuple[str, str, float] | None:
    """Compare a display number with an executed value of the same sign; ``of`` names the
    program (`` of subtract(...)``).

    Returns ``None`` when consistent, else ``(category, what the display is, confidence)``.

    Examples
    --------
    >>> _magnitude(parse_number("14.1%"), 0.14136, "") is None
    True
    >>> _magnitude(parse_number("1877"), 18770.0, " of p")[1]
    'is 10x smaller than the executed value 18770 of p'
    >>> _magnitude(parse_number("-30"), -0.29898, " of p")[1]
    'is 100x the executed value -0.29898 of p: a percentage without its % sign, or a unit slip'
    """
    base = value * 100.0 if display.is_percent else value
    if _shows(display, base) or (display.is_percent and _shows(display, value)):
        return None  # "14.1%" for 0.141, or "1.11%" labelling 1.11111 already in percent units
    for shift in _UNIT_SHIFTS:
        if _shows(display, base * 10.0**shift, loose=False):
            if shift == 2 and not display.is_percent:
                how = f"is 100x the executed value {show(value)}{of}: a percentage without its % sign, or a unit slip"
                return "unit_inconsistency", how, CONFIDENCE["percent_without_sign"]
            size = "larger" if shift > 0 else "smaller"
            how = f"is {show(10.0 ** abs(shift))}x {size} than the executed value {show(value)}{of}"
            return "unit_inconsistency", how, CONFIDENCE["scale"]
    near = base != 0 and abs(display.value - base) <= NEAR * abs(base)
    how = f"is not the executed value {show(value)}{of}" + (", though within 2% of it" if near else "")
    return "mislabel", how, CONFIDENCE["display_near" if near else "display_far"]


def display_flags(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``display_vs_executed`` flags of one gold turn."""
    display, executed = row["gold_answer"], row["gold_executed"]
    if (
        not display
        or not display.strip()
        or executed is None
        or normalize_answer(display) == normalize_answer(executed)
    ):
        return []  # no display answer (the original layout has one for the last turn only), or the same text
    key = (row["record_id"], row["turn"])
    program = row.get("gold_program")
    of = f" of {program}" if program else ""
    display_yes_no = patterns.YES_NO.match(normalize_answer(display)) is not None
    executed_yes_no = patterns.YES_NO.match(normalize_answer(executed)) is not None
    if display_yes_no or executed_yes_no:
        if answers_match(display, executed, kind="text").correct:
            return []
        how = f"display answer '{display}' is not the executed answer '{executed}'{of}"
        return [flag_row(*key, "mislabel", "display_vs_executed", how, CONFIDENCE["yes_no"])]
    verdict = answers_match(display, executed, question=row.get("question"))
    number, value = read_number(display), gold_value(row)
    if verdict.correct and (verdict.reason is not MatchReason.PERCENT_READING or number is None or number.is_percent):
        return []  # of the matches, only a bare display read x100 ("8.8" for 0.0875) needs a second look
    if number is None or value is None or not math.isfinite(value):
        if value is not None and _prose_states(display, value):
            return []  # "... had a 62.63% greater return ..." for 62.63
        how = f"display answer '{display}' is not a number, but the executed answer is '{executed}'{of}"
        return [flag_row(*key, "mislabel", "display_vs_executed", how, CONFIDENCE["display_not_number"])]
    flags = []
    shown, subject = number.value, f"display answer '{display}'"
    if shown != 0 and value != 0 and (shown > 0) != (value > 0):
        signs = ("positive", "negative") if shown > 0 else ("negative", "positive")
        how = f"{subject} is {signs[0]} but the executed value {show(value)}{of} is {signs[1]}"
        flags.append(flag_row(*key, "sign_inconsistency", "display_vs_executed", how, CONFIDENCE["sign"]))
        number = ParsedNumber(abs(shown), number.is_percent, number.decimals, number.text)
        value, subject = abs(value), f"apart from the sign, {subject}"
    found = _magnitude(number, value, of)
    if found is not None:
        category, how, confidence = found
        flags.append(flag_row(*key, category, "display_vs_executed", f"{subject} {how}", confidence))
    return flags


def _prose_states(text: str, value: float) -> bool:
    """Whether a display answer written as a sentence states ``value`` (as written or as a percentage).

    Examples
    --------
    >>> _prose_states("advance auto parts had a 62.63% greater return than the market", 62.63)
    True
    >>> _prose_states("it grew by 14.1%", 0.14136), _prose_states("it grew by 12%", 0.14136)
    (True, False)
    """
    for match in patterns.TEXT_NUMBER.finditer(text):
        number = parse_number(match.group("number"))
        if number is not None and (_shows(number, value) or (number.is_percent and _shows(number, value * 100.0))):
            return True
    return False


def question_flags(row: Mapping[str, Any], parsed: Sequence[Node] | None) -> list[dict[str, Any]]:
    display, value = row["gold_answer"], gold_value(row)
    number = read_number(display) if display else None
    if number is None or value is None or value == 0:
        return []
    cue = percent_cue(row.get("question"), None)
    key = (row["record_id"], row["turn"])
    if cue == "percent" and not number.is_percent and _shows(number, value):
        if not parsed or not _is_ratio(parsed):
            return []
        how = (
            f"the question asks for a percentage ('{row['question']}') but the display answer '{display}' "
            f"is the ratio {show(value)} without a % sign"
        )
        return [flag_row(*key, "unit_inconsistency", "question_unit", how, CONFIDENCE["question_unit"])]
    if cue == "ratio" and number.is_percent:
        how = f"the question asks for a ratio ('{row['question']}') but the display answer '{display}' is a percentage"
        return [flag_row(*key, "unit_inconsistency", "question_unit", how, CONFIDENCE["question_unit"])]
    return []


def _is_ratio(steps: Sequence[Node]) -> bool:
    """Whether a program's last step computes a ratio: a division (not by a percentage or by
    another ratio, which gives an amount back), or a sum or difference of ratios; a step that
    multiplies by 100 gives percent units.

    Examples
    --------
    >>> from workbench.grading.program import parse_program
    >>> _is_ratio(parse_program("subtract(5, 4), divide(#0, 4)").steps)
    True
    >>> _is_ratio(parse_program("divide(1, 4), multiply(#0, const_100)").steps), _is_ratio(parse_program("subtract(26.3, 19.5)").steps)
    (False, False)
    >>> _is_ratio(parse_program("divide(7.1, 32%)").steps), _is_ratio(parse_program("divide(1, 5), divide(2, 5), subtract(#1, #0)").steps)
    (False, True)
    """
    return bool(steps) and _node_is_ratio(steps[-1], steps, depth=0)


def _node_is_ratio(node: Node, steps: Sequence[Node], depth: int) -> bool:
    if depth > len(steps) + 8:  # references only point backwards; this is a guard, not a case
        return False
    if isinstance(node, Ref):
        return node.index < len(steps) and _node_is_ratio(steps[node.index], steps, depth + 1)
    if not isinstance(node, Call) or len(node.args) != 2:
        return False
    if node.op == "divide":
        divisor = node.args[1]
        percent_divisor = isinstance(divisor, Num) and divisor.text.endswith("%")
        return not percent_divisor and not _node_is_ratio(divisor, steps, depth + 1)
    if node.op in ("add", "subtract"):
        inner = [a for a in node.args if isinstance(a, Ref | Call)]
        return bool(inner) and all(_node_is_ratio(a, steps, depth + 1) for a in inner)
    return False
