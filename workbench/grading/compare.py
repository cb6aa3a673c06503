"""Compare a predicted answer with a gold answer: a cascade of small named rules.

Version 1 of the cascade (the grading issue deepens it): no-answer, yes/no, exact,
the official ConvFinQA rule (equal after rounding to 5 decimals), relative tolerance
(integers exact when both are integers), and the percent/decimal reading. A mismatch is
typed: sign flip, scale 10^k, percent confusion, wrong value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workbench.grading import patterns
from workbench.grading.normalize import ParsedNumber, is_no_answer, normalize_answer, parse_number
from workbench.grading.status import GradeStatus, MatchReason

__all__ = ["MatchPolicy", "DEFAULT_POLICY", "Verdict", "answers_match", "answer_text"]


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchPolicy:
    """How lenient numeric matching is. Frozen and hashable, so usable as a cache key.

    Attributes
    ----------
    name
        Shown in reports next to the figures it produced.
    rel_tol
        Relative tolerance (Xwin-Math's 1e-3 by default).
    integers_exact
        When gold and prediction are both written as integers, require equality.
    accept_round5
        Accept equality after rounding both sides to 5 decimals (official ConvFinQA rule).
    accept_percent_reading
        Accept a prediction given in percent units for a ratio gold, and the reverse
        (``12.57`` for 0.12574, ``0.1082`` for 10.82).
    accept_reported_precision
        Accept a prediction equal to the gold rounded to the decimals the prediction shows
        (``1.74`` for 1.743), when it shows at least two significant digits.
    """

    name: str = "cascade-v1"
    rel_tol: float = 1e-3
    integers_exact: bool = True
    accept_round5: bool = True
    accept_percent_reading: bool = True
    accept_reported_precision: bool = True


DEFAULT_POLICY = MatchPolicy()


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
    """

    correct: bool
    status: GradeStatus
    reason: MatchReason
    pred_value: float | None
    gold_value: float | None
    detail: str


def answer_text(value: object) -> str:
    """Write an executed gold value as the string :func:`answers_match` reads.

    Examples
    --------
    >>> answer_text(0.14136), answer_text(18770.0), answer_text("yes")
    ('0.14136', '18770', 'yes')
    """
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        text = repr(float(value))  # shortest round-trip form: no digits lost
        return text[:-2] if text.endswith(".0") else text
    return str(value).strip()


def _close(a: float, b: float, rel_tol: float) -> bool:
    return math.isclose(a, b, rel_tol=rel_tol, abs_tol=1e-9)


def _is_integer_text(number: ParsedNumber) -> bool:
    return number.decimals == 0 and not number.is_percent and "e" not in number.text


def _significant_digits(number: ParsedNumber) -> int:
    digits = number.text.lower().split("e")[0]
    return len("".join(ch for ch in digits if ch.isdigit()).lstrip("0"))


def _at_reported_precision(pred: ParsedNumber, value: float) -> bool:
    if pred.decimals == 0 or _significant_digits(pred) < 2:
        return False
    return abs(pred.value - value) <= 0.5 * 10.0 ** (-pred.decimals) * (1 + 1e-9)


def _boolean(text: str) -> bool | None:
    match = patterns.YES_NO.match(normalize_answer(text))
    if match is None:
        return None
    return match.group("word").lower() in ("yes", "true")


def answers_match(pred: str | None, gold: str | None, *, policy: MatchPolicy = DEFAULT_POLICY) -> Verdict:
    """Decide whether a predicted answer matches the gold answer.

    Parameters
    ----------
    pred
        The model's answer text (``"12.57"``, ``"14.1%"``, ``"no"``, ``"N/A"``).
    gold
        The gold answer text: an executed value written with :func:`answer_text`, or
        a display answer.
    policy
        Tolerances and which readings count.

    Returns
    -------
    Verdict

    Notes
    -----
    Asymmetric: ``gold`` decides the kind of comparison (yes/no or number), and the
    percent reading rescales the prediction only. A prediction that states no answer is
    never correct, whatever the gold.

    Examples
    --------
    >>> answers_match("12.57", "0.12574").reason.value
    'percent_reading'
    >>> answers_match("0.1082", "0.10826").reason.value
    'rel_tolerance'
    >>> v = answers_match("-42.9%", "0.429")
    >>> v.correct, v.reason.value
    (False, 'sign_flip')
    >>> answers_match("N/A", "3").status.value
    'no_answer'
    """
    if gold is None or not str(gold).strip():
        return Verdict(False, GradeStatus.NO_GOLD, MatchReason.NO_GOLD, None, None, "no gold answer")
    if pred is None or is_no_answer(pred):
        return Verdict(
            False,
            GradeStatus.NO_ANSWER,
            MatchReason.NO_ANSWER,
            None,
            None,
            f"the output gives no answer ({pred!r})",
        )
    gold_bool = _boolean(gold)
    if gold_bool is not None:
        pred_bool = _boolean(pred)
        if pred_bool is None:
            return Verdict(
                False,
                GradeStatus.OK,
                MatchReason.WRONG_VALUE,
                None,
                None,
                f"gold is {'yes' if gold_bool else 'no'}; the prediction {pred!r} is not yes/no",
            )
        ok = pred_bool == gold_bool
        return Verdict(
            ok,
            GradeStatus.OK,
            MatchReason.YES_NO if ok else MatchReason.WRONG_VALUE,
            None,
            None,
            f"gold {'yes' if gold_bool else 'no'}, predicted {'yes' if pred_bool else 'no'}",
        )
    gold_number = parse_number(gold)
    if gold_number is None:
        return _compare_text(pred, gold)
    pred_number = parse_number(pred)
    g = gold_number.fraction
    if pred_number is None:
        return Verdict(
            False,
            GradeStatus.UNPARSEABLE,
            MatchReason.UNPARSEABLE,
            None,
            g,
            f"no number could be read from {pred!r}",
        )
    return _compare_numbers(pred_number, gold_number, policy)


def _compare_text(pred: str, gold: str) -> Verdict:
    ok = normalize_answer(pred) == normalize_answer(gold)
    return Verdict(
        ok,
        GradeStatus.OK,
        MatchReason.NORMALISED if ok else MatchReason.WRONG_VALUE,
        None,
        None,
        f"text comparison of {pred!r} with {gold!r}",
    )


def _compare_numbers(pred: ParsedNumber, gold: ParsedNumber, policy: MatchPolicy) -> Verdict:
    p, g = pred.fraction, gold.fraction

    def verdict(correct: bool, reason: MatchReason, detail: str) -> Verdict:
        return Verdict(correct, GradeStatus.OK, reason, p, g, detail)

    if p == g:
        return verdict(True, MatchReason.EXACT, f"{p:g} equals {g:g}")
    if policy.accept_round5 and round(p, 5) == round(g, 5):
        return verdict(True, MatchReason.OFFICIAL_ROUND5, f"{p:g} and {g:g} agree to 5 decimals")
    both_integers = _is_integer_text(pred) and _is_integer_text(gold) and g == int(g)
    if not (policy.integers_exact and both_integers) and _close(p, g, policy.rel_tol):
        return verdict(
            True,
            MatchReason.REL_TOLERANCE,
            f"{p:g} is within {policy.rel_tol:g} relative tolerance of {g:g}",
        )
    # the prediction's decimals count in its own units: a "%" prediction shows g * 100
    g_as_written = g * 100.0 if pred.is_percent else g
    if policy.accept_reported_precision and _at_reported_precision(pred, g_as_written):
        return verdict(
            True,
            MatchReason.REPORTED_PRECISION,
            f"{g_as_written:g} rounded to {pred.decimals} decimals is {pred.text}",
        )
    # (prediction rescaled to gold units, gold in the prediction's units, how it was read)
    readings = (
        (pred.value / 100.0, g * 100.0, "as a percent"),
        (pred.value * 100.0, g / 100.0, "as a ratio x100"),
    )
    if pred.is_percent:
        readings = ((pred.value, g, "without its % sign"),)
    for value, gold_in_pred_units, how in readings:
        if g == 0:
            break
        precise = policy.accept_reported_precision and _at_reported_precision(pred, gold_in_pred_units)
        if _close(value, g, policy.rel_tol) or precise:
            if policy.accept_percent_reading:
                return verdict(True, MatchReason.PERCENT_READING, f"{pred.text} read {how} is {value:g} = {g:g}")
            return verdict(False, MatchReason.PERCENT_CONFUSION, f"{pred.text} matches {g:g} only read {how}")
    return _mismatch(pred, gold, policy, verdict)


def _mismatch(pred: ParsedNumber, gold: ParsedNumber, policy: MatchPolicy, verdict):  # type: ignore[no-untyped-def]
    p, g = pred.fraction, gold.fraction
    if g != 0 and p != 0:
        candidates = [p] if pred.is_percent else [p, pred.value / 100.0, pred.value * 100.0]
        if any(_close(-c, g, policy.rel_tol) for c in candidates):
            return verdict(False, MatchReason.SIGN_FLIP, f"{pred.text} has the opposite sign of {g:g}")
        ratio = abs(p / g)
        k = round(math.log10(ratio))
        if k != 0 and _close(ratio, 10.0**k, policy.rel_tol):
            reason = MatchReason.PERCENT_CONFUSION if abs(k) == 2 else MatchReason.SCALE
            return verdict(False, reason, f"{pred.text} is {g:g} scaled by 10^{k}")
    return verdict(False, MatchReason.WRONG_VALUE, f"{pred.text} ({p:g}) is not {g:g}")
