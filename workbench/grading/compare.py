"""Compare a predicted answer with a gold answer: a cascade of small named rules.

The numeric cascade, cheapest first, each step a named reason: exact (after
normalisation of currency, separators, percent signs, bold and unicode minus); the
official ConvFinQA rule (equal after rounding to 5 decimals); relative tolerance (1e-3,
integers exact when both are written as integers); equal at the precision the
prediction reports; the percent/decimal reading (decided by the unit the output
declares, then by cues in the question: :mod:`workbench.grading.cues`). LaTeX and expressions that are not plain
numbers go to SymPy (:mod:`workbench.grading.symbolic`) under a time limit.

Scale words are read, never dropped (``48.7 million`` is 48700000, and is not ``48.7
thousand``); a bare number meeting an amount with a scale word is read in the unit the question
or the output states ("in millions"), else in the other side's unit. An explicit ``%`` is never
dropped: only a bare number is read x100 (a ``%`` prediction against a bare gold reads the gold in
percent units, unless a ratio is asked for), and in the units the prediction is written in,
integers are exact ("2017" is not "2018%").

A mismatch is typed: sign flip, scale 10^k, percent confusion, rounding beyond
tolerance, wrong value, no answer, unparseable, timeout.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from workbench.grading import patterns
from workbench.grading.choice import choice_gold, compare_choice
from workbench.grading.cues import SCALE_WORDS, CueOf, UnitCue, percent_cue, scale_cue
from workbench.grading.items import MAX_ITEMS, dedupe, normalize_item, split_items
from workbench.grading.listed import compare_items
from workbench.grading.memo import memoize
from workbench.grading.normalize import (
    ParsedNumber,
    is_no_answer,
    normalize_answer,
    parse_decimal_comma,
    parse_number,
)
from workbench.grading.spans import compare_spans
from workbench.grading.status import GradeStatus, MatchReason
from workbench.grading.symbolic import collection_size, latex_equivalent, latex_number, strip_number_decorations
from workbench.grading.times import compare_colon
from workbench.grading.verdict import Verdict, no_answer_verdict

__all__ = [
    "MatchPolicy",
    "DEFAULT_POLICY",
    "Verdict",
    "AnswerKind",
    "answers_match",
    "answer_text",
    "read_number",
    "percent_cue",
    "UnitCue",
    "no_answer_verdict",
    "scale_cue",
    "MAX_ANSWER_CHARS",
    "non_finite",
]

AnswerKind = Literal["auto", "number", "latex", "text"]
#: Longest answer compared (characters). A final answer is a number or a formula; a longer text is
#: a whole output or garbage, and normalising a megabyte six times per turn costs seconds.
MAX_ANSWER_CHARS = 10_000
_KINDS = ("auto", "number", "latex", "text")


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
    use_cues
        Let the unit an output declares and the question's wording decide the percent
        reading: a declared plain unit or a question asking for a ratio turns a match
        that needs the x100 reading into ``percent_confusion``.
    symbolic
        Send answers that are not plain numbers (LaTeX, expressions) to SymPy.
    time_limit
        Seconds a SymPy comparison may take (``None``: the default of
        :mod:`workbench.grading.limits`).
    rounding_band
        A wrong number within this relative distance of the gold is typed ``rounding``.
    bare_percent_reading
        Accept a x100 reading of a number without a ``%`` sign (``12.57`` for 0.12574). On
        for ConvFinQA, whose gold is an executed ratio while answers come in percent units;
        off for GSM8K and MATH, whose gold is already in the unit the question asks, so
        "4200" for 42 is wrong (``20%`` for 20 still counts: the sign is explicit).
    latex_gold
        The gold is LaTeX (MATH): one that is not a number goes to SymPy (a tuple ``(15,-29)``
        too), and a number glued to a letter (``2k``) is a product, not a number and a unit.
    span_f1
        ``None``, or the reading-comprehension rules: answers are text spans scored by the official
        DROP rules (:mod:`workbench.grading.spans`), credited on an exact match of the normalised
        spans or an F1 of at least this pass mark (:data:`~workbench.grading.spans.DROP_PASS_F1`).
    """

    name: str = "cascade"
    rel_tol: float = 1e-3
    integers_exact: bool = True
    accept_round5: bool = True
    accept_percent_reading: bool = True
    accept_reported_precision: bool = True
    use_cues: bool = True
    symbolic: bool = True
    time_limit: float | None = None
    rounding_band: float = 1e-2
    bare_percent_reading: bool = True
    latex_gold: bool = False
    span_f1: float | None = None


DEFAULT_POLICY = MatchPolicy()


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


def non_finite(value: object) -> bool:
    """Whether ``value`` is a number that is not finite: ``inf``/``nan``, a whole number past the
    float range, or text that reads as one (``"inf"``, ``"NaN"``, ``"1e999999"``, ``"-Infinity%"``).

    Examples
    --------
    >>> non_finite(float("inf")), non_finite("NaN"), non_finite("1e999999"), non_finite(10**400)
    (True, True, True, True)
    >>> non_finite("1e308"), non_finite("x"), non_finite(True)
    (False, False, False)
    """
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return False
    try:
        number = float(value.strip().replace(",", "").removesuffix("%") if isinstance(value, str) else value)
    except ValueError:
        return False
    except OverflowError:  # a whole number past the float range
        return True
    return not math.isfinite(number)


def _close(a: float, b: float, rel_tol: float) -> bool:
    return math.isclose(a, b, rel_tol=rel_tol, abs_tol=1e-9)


def _is_integer_text(number: ParsedNumber) -> bool:
    return number.decimals == 0 and not number.is_percent and "e" not in number.text and not number.scale


def _written_integer(number: ParsedNumber) -> bool:
    """The digits are written as an integer, percent sign or not (``2017``, ``2018%``)."""
    return number.decimals == 0 and "e" not in number.text and not number.scale


def _integral(value: float) -> bool:
    return abs(value - round(value)) <= 1e-9 * max(1.0, abs(value))


def significant_digits(number: ParsedNumber) -> int:
    """Significant digits as written (``0.0140`` has 3).

    Examples
    --------
    >>> from workbench.grading.normalize import parse_number
    >>> significant_digits(parse_number("0.0140")), significant_digits(parse_number("1,200"))
    (3, 4)
    """
    digits = number.text.lower().split("e")[0]
    return len("".join(ch for ch in digits if ch.isdigit()).lstrip("0"))


def _at_reported_precision(pred: ParsedNumber, value: float) -> bool:
    if pred.decimals == 0 or significant_digits(pred) < 2:
        return False
    # "48.7 million" reports 1 decimal of millions: 10^5 units
    return abs(pred.value - value) <= 0.5 * 10.0 ** (pred.scale - pred.decimals) * (1 + 1e-9)


def _boolean(text: str) -> bool | None:
    match = patterns.YES_NO.match(normalize_answer(text))
    if match is None:
        return None
    return match.group("word").lower() in ("yes", "true")


@memoize(max_chars=256)
def read_number(text: str) -> ParsedNumber | None:
    r"""Read an answer that is one number, in any of the ways answers write numbers.

    Tries, in order: a plain number (currency, separators, percent, accounting negatives, scale
    words); the same after removing LaTeX wrappers (``\text{}``, ``\$``, ``\%``); a number followed
    by a short unit word (``15.97 ml``); a LaTeX number (``\frac{3}{7}``, ``3/7``), with a percent
    sign after it applied as after a plain number (``\frac{3}{4}\%`` is 0.0075).

    Examples
    --------
    >>> read_number("15.97 ml").value, read_number(r"\$1.33").value, read_number(r"12\%").fraction
    (15.97, 1.33, 0.12)
    >>> round(read_number(r"\frac{3}{7}").value, 6), read_number("x + 1") is None
    (0.428571, True)
    >>> read_number(r"\frac{3}{4}\%").fraction, read_number("48.7 million").value
    (0.0075, 48700000.0)
    """
    number = parse_number(text)
    if number is not None:
        return number
    cleaned = strip_number_decorations(normalize_answer(text)) or normalize_answer(text)
    number = parse_number(cleaned)
    if number is not None:
        return number
    with_unit = patterns.NUMBER_WITH_UNIT.match(cleaned)
    if with_unit is not None and not patterns.YES_NO.match(with_unit.group("unit").strip()):
        number = parse_number(with_unit.group("number"))
        if number is not None:
            return number
    percent = patterns.TRAILING_PERCENT.search(cleaned)
    if percent is not None and percent.start() > 0:  # \frac{3}{4}\%, 3/4 percent: the sign counts
        value = latex_number(cleaned[: percent.start()])
    else:
        percent, value = None, latex_number(text)
    if value is None or not math.isfinite(value):
        return None
    integral = value == int(value)
    return ParsedNumber(
        value=value, is_percent=percent is not None, decimals=0 if integral else 12, text=normalize_answer(text)
    )


def answers_match(
    pred: str | None,
    gold: str | None,
    *,
    kind: AnswerKind = "auto",
    question: str | None = None,
    unit: str | None = None,
    policy: MatchPolicy = DEFAULT_POLICY,
) -> Verdict:
    """Decide whether a predicted answer matches the gold answer.

    Parameters
    ----------
    pred
        The model's answer text (``"12.57"``, ``"14.1%"``, ``"no"``, ``"\\frac{3}{7}"``, ``"N/A"``).
    gold
        The gold answer text: an executed value written with :func:`answer_text`, a
        display answer, or LaTeX.
    kind
        ``auto`` (decided by the gold), ``number``, ``latex`` (numbers first, then SymPy), or
        ``text`` (choice letters, yes/no, normalised strings).
    question
        The question, when known: "what percentage" or "what is the ratio" decides a
        prediction that matches only when read as a percent.
    unit
        The unit the output declares for its answer (``percent``, ``raw``...), when it does.
    policy
        Tolerances and which readings count.

    Returns
    -------
    Verdict

    Notes
    -----
    Asymmetric: ``gold`` decides the kind of comparison (yes/no, number, LaTeX or text),
    the number of decimals in ``pred`` sets the precision it is held to, and the percent
    reading rescales the prediction only. A prediction that states no answer is never
    correct, whatever the gold.

    Examples
    --------
    >>> answers_match("14.1%", "0.14136").reason.value
    'reported_precision'
    >>> answers_match("0.141", "14.1%").reason.value
    'exact'
    >>> answers_match("14.1", "14.1%", question="what percentage of sales was it?").correct
    True
    >>> v = answers_match("14.1", "14.1%", question="what is the ratio of sales to costs?")
    >>> v.correct, v.reason.value
    (False, 'percent_confusion')
    >>> v = answers_match("1877", "18770")
    >>> v.correct, v.reason.value
    (False, 'scale')
    >>> answers_match("12.57", "0.12574", unit="percent").reason.value
    'percent_reading'
    >>> answers_match("N/A", "3").status.value
    'no_answer'
    """
    if kind not in _KINDS:
        raise ValueError(f"unknown answer kind {kind!r}; use one of {', '.join(_KINDS)}")
    return _answers_match(pred, gold, kind, question, unit, policy)


#: A verdict is a pure function of its inputs: a run grades the same (answer, gold, question)
#: for many systems ("18" for "18"), so each distinct comparison is made once per process.
@memoize(max_chars=4096, maxsize=1 << 17)
def _answers_match(
    pred: str | None, gold: str | None, kind: AnswerKind, question: str | None, unit: str | None, policy: MatchPolicy
) -> Verdict:
    if gold is None or not str(gold).strip():
        return Verdict(False, GradeStatus.NO_GOLD, MatchReason.NO_GOLD, None, None, "no gold answer", kind)
    if pred is not None and len(pred) > MAX_ANSWER_CHARS:
        detail = (
            f"the answer is {len(pred):,} characters long; an answer is read up to {MAX_ANSWER_CHARS:,} "
            "(compare.MAX_ANSWER_CHARS): give the final answer alone, or the whole output as raw_output"
        )
        return Verdict(False, GradeStatus.UNPARSEABLE, MatchReason.UNPARSEABLE, None, None, detail, kind)
    if len(str(gold)) > MAX_ANSWER_CHARS:  # a gold answer is capped like a prediction, before any work
        detail = (
            f"the gold answer is {len(str(gold)):,} characters long; an answer is read up to {MAX_ANSWER_CHARS:,} "
            "(compare.MAX_ANSWER_CHARS): check the gold file"
        )
        return Verdict(False, GradeStatus.UNPARSEABLE, MatchReason.UNPARSEABLE, None, None, detail, kind)
    if pred is None or is_no_answer(pred):
        return no_answer_verdict(pred)
    if non_finite(pred):  # never correct, even against a gold written the same way
        detail = f"the prediction {pred[:40]!r} is not a finite number"
        return Verdict(False, GradeStatus.UNPARSEABLE, MatchReason.UNPARSEABLE, None, None, detail, kind)
    if policy.span_f1 is not None:  # reading comprehension: text spans, DROP's rules
        return compare_spans(pred, gold, policy.span_f1)
    if kind in ("auto", "text"):
        gold_bool = _boolean(gold)
        if gold_bool is not None:
            return _compare_boolean(pred, gold_bool)
    if kind != "number":
        letter = choice_gold(gold, latex=kind == "latex" or policy.latex_gold)
        if letter is not None:
            return compare_choice(pred, letter)
    if kind == "text":
        return _compare_text(pred, gold)
    colon = compare_colon(pred, gold)
    if colon is not None:  # a time or a ratio: "12:00", "3:2"
        return colon
    cue = CueOf(question, unit, policy.use_cues)
    gold_number = None if policy.latex_gold and patterns.NUMBER_TIMES_VARIABLE.match(gold) else read_number(gold)
    if gold_number is not None:
        pred_number = read_number(pred)
        if pred_number is None:  # "12,75" against one number: a decimal comma, not a list of two
            pred_number = parse_decimal_comma(pred, bare=True)
        if pred_number is not None:
            return _compare_numbers(pred_number, gold_number, policy, cue)
        if policy.symbolic and patterns.MATH_MARKUP.search(pred):
            items = collection_size(pred)
            if items > 1:  # decided without SymPy: several values are not one number
                detail = f"the prediction lists {items} values; the gold is one number ({gold_number.text})"
                return Verdict(
                    False, GradeStatus.OK, MatchReason.WRONG_VALUE, None, gold_number.fraction, detail, "latex"
                )
            whole = _compare_symbolic(pred, gold, policy, gold_number.fraction)
        elif collection_size(pred) > 1:  # "(160, 300)": several values, not an unreadable one
            detail = f"the prediction lists {collection_size(pred)} values; the gold is one number ({gold_number.text})"
            return Verdict(False, GradeStatus.OK, MatchReason.WRONG_VALUE, None, gold_number.fraction, detail)
        else:
            whole = Verdict(
                False,
                GradeStatus.UNPARSEABLE,
                MatchReason.UNPARSEABLE,
                None,
                gold_number.fraction,
                f"no number could be read from {pred!r}",
            )
        return _or_listed(whole, pred, gold, policy, cue)
    if kind == "number":
        return Verdict(
            False,
            GradeStatus.UNPARSEABLE,
            MatchReason.UNPARSEABLE,
            None,
            None,
            f"the gold {gold!r} is not a number (kind='number'); use kind='latex' or 'text'",
        )
    if kind == "latex" or policy.latex_gold or patterns.MATH_MARKUP.search(gold):
        if policy.symbolic:
            return _or_listed(_compare_symbolic(pred, gold, policy, None), pred, gold, policy, cue)
        verdict = _compare_text(pred, gold)
        verdict = Verdict(verdict.correct, verdict.status, verdict.reason, None, None, verdict.detail, "latex")
        return _or_listed(verdict, pred, gold, policy, cue)
    return _or_listed(_compare_text(pred, gold), pred, gold, policy, cue)


# --------------------------------------------------------------------------- several answers (issue 31)
def _or_listed(whole: Verdict, pred: str, gold: str, policy: MatchPolicy, cue: CueOf) -> Verdict:
    """``whole``, the verdict on the answers compared whole, unless one of them lists several items
    (``-2, 1``, ``200 ml and 400 ml``, boxes read together) and they match one to one: then that
    verdict (reason ``items``). When the items do not match either, ``whole`` stays, unless it could
    not compare at all and the items could."""
    if whole.correct or whole.status is GradeStatus.TIMEOUT:
        return whole
    pred_listed, gold_listed = split_items(pred), split_items(gold)
    if max(len(pred_listed), len(gold_listed)) < 2 or max(len(pred_listed), len(gold_listed)) > MAX_ITEMS:
        return whole
    pred_items, gold_items = dedupe(pred_listed), dedupe(gold_listed)  # sets: a repeat counts once
    known = tuple(tuple(_items_equal(p, g, policy, cue) for g in gold_items) for p in pred_items)
    listed, read_whole = compare_items(
        pred_items, gold_items, known, symbolic=policy.symbolic, time_limit=policy.time_limit
    )
    if listed.correct or (whole.status is not GradeStatus.OK and read_whole):
        return listed  # "200 ml and 400 ml" for 400: two values, not an unreadable answer
    return whole


def _item_number(item: str, policy: MatchPolicy) -> ParsedNumber | None:
    if policy.latex_gold and patterns.NUMBER_TIMES_VARIABLE.match(item):
        return None
    return read_number(item)


def _items_equal(pred: str, gold: str, policy: MatchPolicy, cue: CueOf) -> bool | None:
    """Whether two items are equal, when that is known without SymPy: the same text, the same time
    or ratio, equal numbers; ``None`` when only SymPy can tell (``x = 5`` and ``5``)."""
    if normalize_item(pred) == normalize_item(gold):
        return True
    colon = compare_colon(pred, gold)
    if colon is not None:
        return colon.correct
    p, g = _item_number(pred, policy), _item_number(gold, policy)
    if p is not None and g is not None:
        return _compare_numbers(p, g, policy, cue).correct
    if p is None and g is None and not (patterns.MATH_MARKUP.search(pred) or patterns.MATH_MARKUP.search(gold)):
        return normalize_answer(pred) == normalize_answer(gold)  # words: "Tom" and "Jerry"
    return None


def _compare_boolean(pred: str, gold_bool: bool) -> Verdict:
    pred_bool = _boolean(pred)
    gold_word = "yes" if gold_bool else "no"
    if pred_bool is None:
        detail = f"gold is {gold_word}; the prediction {pred!r} is not yes/no"
        return Verdict(False, GradeStatus.OK, MatchReason.WRONG_VALUE, None, None, detail, "yes_no")
    ok = pred_bool == gold_bool
    reason = MatchReason.YES_NO if ok else MatchReason.WRONG_VALUE
    detail = f"gold {gold_word}, predicted {'yes' if pred_bool else 'no'}"
    return Verdict(ok, GradeStatus.OK, reason, None, None, detail, "yes_no")


def _compare_symbolic(pred: str, gold: str, policy: MatchPolicy, gold_value: float | None) -> Verdict:
    result = latex_equivalent(pred, gold, time_limit=policy.time_limit)
    if result.status is GradeStatus.TIMEOUT:
        return Verdict(False, GradeStatus.TIMEOUT, MatchReason.TIMEOUT, None, gold_value, result.detail, "latex")
    if result.status is not GradeStatus.OK:
        return Verdict(False, result.status, MatchReason.UNPARSEABLE, None, gold_value, result.detail, "latex")
    reason = MatchReason.SYMBOLIC if result.equivalent else MatchReason.WRONG_VALUE
    return Verdict(result.equivalent, GradeStatus.OK, reason, None, gold_value, result.detail, "latex")


def _compare_text(pred: str, gold: str) -> Verdict:
    ok = normalize_answer(pred) == normalize_answer(gold)
    return Verdict(
        ok,
        GradeStatus.OK,
        MatchReason.NORMALISED if ok else MatchReason.WRONG_VALUE,
        None,
        None,
        f"text comparison of {pred!r} with {gold!r}",
        "text",
    )


def _precision(number: ParsedNumber) -> int:
    """Decimals the writer reported; an integer with trailing zeros reports fewer (``16750000``: -4),
    and so does a scale word (``48.7 million``: -5)."""
    if number.scale:
        return number.decimals - number.scale
    if number.decimals or not _is_integer_text(number):
        return number.decimals
    digits = str(abs(int(number.value)))
    return -(len(digits) - len(digits.rstrip("0"))) if digits != "0" else 0


def _percent_allowed(
    pred: ParsedNumber, cue_of: CueOf, upward: bool, bare: bool = True, gold: ParsedNumber | None = None
) -> tuple[bool, str]:
    """Whether reading ``pred`` in the other unit is allowed, and why. ``upward``: the
    prediction is in percent units for a ratio gold; otherwise a ratio for a percent gold.
    A prediction with a ``%`` sign is never read without it: the reading is of a bare gold,
    taken in percent units, and not when the gold carries a sign too or a ratio is asked for."""
    if pred.is_percent:
        if gold is not None and gold.is_percent:
            return False, "both carry a % sign, so neither is read in the other unit"
        if cue_of() == "ratio":
            return False, "a ratio is asked for, so the bare gold is not read in percent units"
        return True, "the % sign says it is a percentage"
    if not bare:
        return False, "the gold is in the unit the question asks, so a bare number is not read x100"
    cue = cue_of()
    if cue is None:
        return True, "neither the question nor the output says which unit"
    if cue == "plain":
        return False, "the output declares a raw number, not a percentage or ratio"
    if (cue == "percent") is upward:
        return True, f"a {cue} is asked for"
    return False, f"a {cue} is asked for"


def _compare_numbers(
    pred: ParsedNumber,
    gold: ParsedNumber,
    policy: MatchPolicy,
    cue: CueOf | None = None,
    unit_readings: bool = True,
) -> Verdict:
    cue = cue if cue is not None else CueOf(use=False)
    p, g = pred.fraction, gold.fraction

    def verdict(correct: bool, reason: MatchReason, detail: str) -> Verdict:
        return Verdict(correct, GradeStatus.OK, reason, p, g, detail, "number")

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
    if not unit_readings:  # the comparison inside a scale reading: no further reading
        return _mismatch(pred, gold, policy, verdict, cue)
    if bool(pred.scale) != bool(gold.scale) and not (pred.is_percent or gold.is_percent):
        scaled = _scale_reading(pred, gold, policy, cue)
        if scaled is not None:
            return scaled
    # (prediction rescaled to gold units, gold in the prediction's units, how it was read, upward)
    readings: tuple[tuple[float, float, str, bool], ...] = (
        (pred.value / 100.0, g * 100.0, "as a percent", True),
        (pred.value * 100.0, g / 100.0, "as a ratio x100", False),
    )
    if pred.is_percent:
        readings = ((pred.value, g, "without its % sign", True),)
    for value, gold_in_pred_units, how, upward in readings:
        if g == 0:
            break
        if policy.integers_exact and _written_integer(pred) and _integral(gold_in_pred_units):
            # integers exact in the units the prediction is written in: "2017" is not "2018%"
            hit = pred.value == round(gold_in_pred_units)
        else:
            precise = policy.accept_reported_precision and _at_reported_precision(pred, gold_in_pred_units)
            hit = _close(value, g, policy.rel_tol) or precise
        if hit:
            allowed, why = _percent_allowed(pred, cue, upward, policy.bare_percent_reading, gold)
            if policy.accept_percent_reading and allowed:
                return verdict(True, MatchReason.PERCENT_READING, f"{pred.text} read {how} is {value:g} = {g:g}: {why}")
            why = why if not allowed else "the policy does not accept unit readings"
            return verdict(False, MatchReason.PERCENT_CONFUSION, f"{pred.text} matches {g:g} only read {how}; {why}")
    return _mismatch(pred, gold, policy, verdict, cue)


def _rescaled(number: ParsedNumber, exponent: int, word: str) -> ParsedNumber | None:
    """``number`` read in units of 10^exponent (a bare ``48.7`` read in millions); ``None`` past
    the float range."""
    value = float(Decimal(repr(number.value)).scaleb(exponent))
    if not math.isfinite(value):
        return None
    return ParsedNumber(value, False, number.decimals, number.text, exponent, word)


def _scale_reading(pred: ParsedNumber, gold: ParsedNumber, policy: MatchPolicy, cue: CueOf) -> Verdict | None:
    """Compare a bare number with an amount that has a scale word, the bare one read in the unit
    the question or the output states ("in millions"), else in the other side's unit. ``None``
    when nothing states a unit and the reading does not match: the cascade goes on."""
    stated = cue.scale()
    scaled_side = gold if gold.scale else pred
    exponent = stated if stated is not None else scaled_side.scale
    unit = SCALE_WORDS.get(exponent, f"units of 10^{exponent}")
    why = (
        f"the question or the output says in {unit}"
        if stated is not None
        else f"the unit of the {'gold' if gold.scale else 'prediction'}"
    )
    word = f"in {unit}"
    read = _rescaled(pred if gold.scale else gold, exponent, word)
    if read is None:
        return None
    if gold.scale:
        result = _compare_numbers(read, gold, policy, cue, unit_readings=False)
        how = f"{pred.text} read {word} ({why})"
    else:
        result = _compare_numbers(pred, read, policy, cue, unit_readings=False)
        how = f"the gold {gold.text} read {word} ({why})"
    if not result.correct and stated is None:
        return None
    detail = f"{how}: {result.detail}"
    return Verdict(result.correct, result.status, result.reason, result.pred_value, result.gold_value, detail)


def _is_rounding(p: float, p_decimals: int, g: float, g_decimals: int, band: float) -> bool:
    """One side is the other rounded to the coarser side's precision, within ``band``."""
    if g == 0 or abs(p - g) > band * abs(g):
        return False
    coarser = min(p_decimals, g_decimals)
    return abs(p - g) <= 0.5 * 10.0 ** (-coarser) * (1 + 1e-9)


def _mismatch(
    pred: ParsedNumber,
    gold: ParsedNumber,
    policy: MatchPolicy,
    verdict: Callable[[bool, MatchReason, str], Verdict],
    cue: CueOf,
) -> Verdict:
    p, g = pred.fraction, gold.fraction
    g_decimals = _precision(gold) + (2 if gold.is_percent else 0)  # decimals of the fraction: 14.1% is 0.141
    if g != 0 and p != 0:
        candidates = [p] if pred.is_percent else [p, pred.value / 100.0, pred.value * 100.0]
        if any(_close(-c, g, policy.rel_tol) for c in candidates):
            return verdict(False, MatchReason.SIGN_FLIP, f"{pred.text} has the opposite sign of {g:g}")
        # rounding, in the prediction's own units (a percent prediction shows g * 100)
        p_decimals = _precision(pred)
        unit_shifts = [(0, "")] if pred.is_percent else [(0, ""), (2, " read as a percent"), (-2, " read as a ratio")]
        if pred.is_percent:
            unit_shifts = [(2, "")]  # the prediction's own units, not a reading
        for shift, how in unit_shifts:
            if (
                shift
                and not pred.is_percent
                and not _percent_allowed(pred, cue, shift > 0, policy.bare_percent_reading)[0]
            ):
                continue  # that reading is the one the question or the output rules out
            value, gold_in_units = pred.value, g * 10.0**shift
            if _is_rounding(value, p_decimals, gold_in_units, g_decimals - shift, policy.rounding_band):
                return verdict(
                    False,
                    MatchReason.ROUNDING,
                    f"{pred.text}{how} is {gold_in_units:g} rounded differently, beyond the tolerance",
                )
        ratio = abs(p / g)  # 0.0 or inf when the quotient underflows or overflows ("5e-324" vs "2")
        k = round(math.log10(ratio)) if 0.0 < ratio < math.inf else 0
        if k != 0 and _close(ratio, 10.0**k, policy.rel_tol):
            reason = MatchReason.PERCENT_CONFUSION if abs(k) == 2 else MatchReason.SCALE
            words = ""
            if pred.scale != gold.scale and k == pred.scale - gold.scale:  # the scale words decided it
                said, gold_said = pred.scale_word or "no scale word", gold.scale_word or "no scale word"
                words = f": the prediction says {said}, the gold {gold_said}"
            return verdict(False, reason, f"{pred.text} is {g:g} scaled by 10^{k}{words}")
    return verdict(False, MatchReason.WRONG_VALUE, f"{pred.text} ({p:g}) is not {g:g}")
