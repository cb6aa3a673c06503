"""Math-Verify as a named grading policy (``math-verify``), computed beside ours on every run.

Math-Verify (``math_verify``) is the grader most training pipelines use: ``parse`` reads a model's
output (the last ``\\boxed{}``, an "answer is" phrase, the last formula or number) and the gold,
and ``verify`` compares them with SymPy. The ``math-verify`` policy calls them as Math-Verify's
README does, with default settings, except its alarm-based timeouts, which are off
(``parsing_timeout=None``, ``timeout_seconds=None``): our limits apply instead
(:mod:`workbench.grading.limits`, CPU seconds in a worker process).

One worker round trip per turn costs more than the comparison itself (a round trip is several
milliseconds on a loaded machine, a comparison of two short answers about as much). So
:func:`math_verify_prefetch` grades many pairs in one worker call and keeps the verdicts for
:func:`math_verify_grade`, which hands them out once each. A batch gets the CPU budget of **one**
call: when it runs out (one slow pair is enough), nothing of it is kept and each of its pairs goes
alone later under its own limit, so a verdict is the same whether its pair was batched or not.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from workbench.grading import patterns
from workbench.grading.compare import Verdict, no_answer_verdict
from workbench.grading.limits import DEFAULT_TIME_LIMIT, LimitStatus, call_with_limit
from workbench.grading.memo import memoize
from workbench.grading.normalize import is_no_answer
from workbench.grading.status import GradeStatus, MatchReason
from workbench.grading.symbolic import MAX_SYMBOLIC_CHARS, SymbolicVerdict, preview

__all__ = ["math_verify_grade", "math_verify_match", "math_verify_prefetch", "BATCH_SIZE"]

#: Pairs graded in one worker call by :func:`math_verify_prefetch`.
BATCH_SIZE = 16

#: Verdicts computed ahead by :func:`math_verify_prefetch`, by ``(output, gold, limit)``, for the
#: thread that asked (threads grading rows side by side each prefetch their own); each is handed
#: out once, and the thread's next prefetch drops what was not asked for.
_AHEAD = threading.local()


def _prefetched() -> dict[tuple[str, str, float], SymbolicVerdict]:
    """This thread's verdicts computed ahead."""
    verdicts: dict[tuple[str, str, float], SymbolicVerdict] | None = getattr(_AHEAD, "verdicts", None)
    if verdicts is None:
        verdicts = _AHEAD.verdicts = {}
    return verdicts


#: Math-Verify's readings of single regex matches, by the match's groups and the extraction config
#: (:func:`_remember_extractions`); at most :data:`_KEPT` of them, each kept for the process's life.
_EXTRACTIONS: dict[tuple[Any, ...], Any] = {}
#: The key of each kept reading's value, by the value's ``id``: a kept value lives as long as the
#: process, so no other object has its id (:func:`_reading_key`).
_READING_KEYS: dict[int, tuple[Any, ...]] = {}
#: Math-Verify's ``verify`` of a gold text and an output's readings (:func:`_reading_key`).
_VERIFIED: dict[tuple[str, tuple[Any, ...]], bool] = {}
_KEPT = 1 << 15
#: A key holding more characters than this (a long match, a long gold or fallback text) is not
#: kept: what is kept stays small whatever the outputs (Math-Verify reads up to 100,000 characters).
_KEPT_CHARS = 1_024


def _forget_readings() -> None:
    """Empty what :func:`_remember_extractions` and :func:`_math_verify_default` kept (together:
    a reading's id names it only while it is kept)."""
    _VERIFIED.clear()
    _READING_KEYS.clear()
    _EXTRACTIONS.clear()


def _reading_key(parsed: list[Any]) -> tuple[Any, ...] | None:
    """What ``math_verify.parse`` returned, as a key: each SymPy value by the key of the kept reading
    it is (:data:`_READING_KEYS`), each text as itself; ``None`` when a value is not a kept reading."""
    key: list[tuple[str, Any]] = []
    for value in parsed:
        if isinstance(value, str):
            key.append(("text", value))
            continue
        reading = _READING_KEYS.get(id(value))
        if reading is None:
            return None
        key.append(("read", reading))
    return tuple(key)


def _remember_extractions() -> None:
    """Make Math-Verify read each distinct regex match once in this process: ``parse`` finds the
    candidate answers of an output with its regexes and reads them one by one
    (``math_verify.parser.extract_match``: a number through SymPy's ``sympify``, LaTeX through
    latex2sympy) until one reads. A reading depends on the match's named groups and the
    extraction config alone (and its values, SymPy expressions and strings, are immutable), so the
    reading of ``\\boxed{18}`` at the end of one output is kept for the next: 81,417 GSM8K outputs
    end in 10,104 distinct answers. The verdicts are Math-Verify's own; an extraction that raises
    raises again on each call (never stored). Idempotent. :func:`_forget_readings` empties it."""
    from math_verify import parser

    original = parser.extract_match
    if getattr(original, "__wrapped__", None) is not None:
        return

    def extract_match(match: re.Match[str], target_type: Any) -> Any:
        groups = tuple(match.groupdict().items())
        if sum(len(text) for _, text in groups if text) > _KEPT_CHARS:
            return original(match, target_type)
        key = (target_type, groups)
        found = _EXTRACTIONS.get(key)
        if found is None:
            found = original(match, target_type)
            if len(_EXTRACTIONS) < _KEPT:
                _EXTRACTIONS[key] = found
                if found[0] is not None:
                    _READING_KEYS[id(found[0])] = key
        return found

    extract_match.__wrapped__ = original  # type: ignore[attr-defined]
    parser.extract_match = extract_match


@memoize(max_chars=1_024, maxsize=1 << 15)
def _parse_gold(gold_text: str) -> tuple[Any, ...]:
    """``math_verify.parse(gold_text)`` (default settings, signal timeout off), once per distinct
    gold text in a worker: a gold answer is graded against every system's output (8 checkpoints
    of a 13,190-problem run parse 2,386 distinct golds 81,000 times), and ``parse`` is pure and
    returns immutable values (SymPy expressions, strings). A tuple: the caller makes the list
    ``verify`` takes. An exception is raised again on each call (never stored)."""
    from math_verify import parse

    return tuple(parse(gold_text, parsing_timeout=None))


def _math_verify_default(output: str, gold: str) -> SymbolicVerdict:
    """Math-Verify as its README calls it, ``verify(parse(gold), parse(output))`` with its default
    settings, its signal timeouts off; runs inside a limits worker (the gold parsed once per
    distinct text: :func:`_parse_gold`; an output's readings once per distinct regex match:
    :func:`_remember_extractions`; ``verify`` once per gold text and distinct readings)."""
    from math_verify import parse, verify

    _remember_extractions()
    delimited = patterns.UNESCAPED_DOLLAR.search(gold) or "\\boxed" in gold
    gold_text = gold if delimited else f"${gold}$"  # the README writes "$123$"
    try:
        gold_parsed = list(_parse_gold(gold_text))
        pred_parsed = parse(output, parsing_timeout=None)
    except Exception as exc:  # recorded in the verdict
        return SymbolicVerdict(GradeStatus.UNPARSEABLE, False, f"math-verify failed to parse: {exc}", None, None)
    gold_str = str(gold_parsed[0]) if gold_parsed else None
    pred_str = str(pred_parsed[0]) if pred_parsed else None
    if not gold_parsed:
        return SymbolicVerdict(
            GradeStatus.UNPARSEABLE, False, f"math-verify reads nothing in the gold {preview(gold)}", pred_str, None
        )
    if not pred_parsed:
        return SymbolicVerdict(
            GradeStatus.NO_ANSWER, False, "math-verify finds no answer in the output", None, gold_str
        )
    # verify's answer for this gold and these readings of an output, kept: 9,278 GSM8K outputs of
    # 1,500 problems hold 3,294 distinct (gold, readings) pairs
    reading = _reading_key(pred_parsed)
    texts = len(gold_text) + sum(len(value) for value in pred_parsed if isinstance(value, str))
    kept = None if reading is None or texts > _KEPT_CHARS else (gold_text, reading)
    try:
        equal = _VERIFIED.get(kept) if kept is not None else None
        if equal is None:
            equal = bool(verify(gold_parsed, pred_parsed, timeout_seconds=None))
            if kept is not None and len(_VERIFIED) < _KEPT:
                _VERIFIED[kept] = equal
    except Exception as exc:  # recorded in the verdict
        detail = f"math-verify failed to compare {preview(str(pred_str))} with {preview(str(gold_str))}: {exc}"
        return SymbolicVerdict(GradeStatus.UNPARSEABLE, False, detail, pred_str, gold_str)
    said = f"math-verify reads {preview(str(pred_str))} for the gold {preview(str(gold_str))}"
    return SymbolicVerdict(
        GradeStatus.OK, bool(equal), f"{said}: {'equal' if equal else 'not equal'}", pred_str, gold_str
    )


def _math_verify_batch(pairs: list[tuple[str, str]]) -> list[SymbolicVerdict]:
    """:func:`_math_verify_default` for each pair, in order; runs inside a limits worker."""
    return [_math_verify_default(output, gold) for output, gold in pairs]


def _refused(output: str, gold: str) -> SymbolicVerdict | None:
    """The verdict for a pair that is not sent to Math-Verify at all, else ``None``."""
    if not gold.strip():
        return SymbolicVerdict(GradeStatus.UNPARSEABLE, False, "the gold is empty", None, None)
    if not output.strip():
        return SymbolicVerdict(GradeStatus.NO_ANSWER, False, "the output is empty", None, None)
    if max(len(output), len(gold)) > MAX_SYMBOLIC_CHARS:
        detail = f"the output or gold is longer than the {MAX_SYMBOLIC_CHARS:,}-character budget for SymPy; not parsed"
        return SymbolicVerdict(GradeStatus.TIMEOUT, False, detail, None, None)
    return None


#: A plain number as Math-Verify reads one without surprises: digits without leading zeros (it
#: finds no answer in an output "-01"), at most one point, a minus.
_PLAIN_NUMBER = re.compile(r"-?(?:0|[1-9]\d{0,14})(?:\.\d{1,15})?")
#: Two plain numbers further apart than this are unequal under Math-Verify (it rounds floats to 6
#: decimals before comparing), whatever their spelling.
_CLEARLY_APART = Decimal("1e-5")


def _plain_numbers(output: str, gold: str) -> SymbolicVerdict | None:
    """Math-Verify's verdict on two plain numbers (``12``, ``-0.14136``) where it is certain without
    SymPy, else ``None``: two integers are equal when their values are; two numbers of equal
    value are equal (``12`` and ``12.0``, ``1.5`` and ``1.50``); two numbers more than ``1e-5``
    apart are not. Numbers of more than 15 significant digits (SymPy's floats keep 15) and
    numbers closer than that (where Math-Verify's rounding decides) go to Math-Verify itself.
    Checked against Math-Verify on generated pairs (tests/unit/grading/test_mathverify.py)."""
    out, ref = output.strip(), gold.strip()
    if not (_PLAIN_NUMBER.fullmatch(out) and _PLAIN_NUMBER.fullmatch(ref)):
        return None
    if sum(c.isdigit() for c in out.lstrip("-0.")) > 15 or sum(c.isdigit() for c in ref.lstrip("-0.")) > 15:
        return None
    a, b = Decimal(out), Decimal(ref)
    if "." not in out and "." not in ref or a == b:
        equal = a == b
    elif abs(a - b) > _CLEARLY_APART:
        equal = False
    else:
        return None
    said = f"math-verify reads the plain numbers {out} and {ref} (no SymPy needed)"
    return SymbolicVerdict(GradeStatus.OK, equal, f"{said}: {'equal' if equal else 'not equal'}", out, ref)


def _limit(time_limit: float | None) -> float:
    return DEFAULT_TIME_LIMIT if time_limit is None else time_limit


@memoize(max_chars=16_384, maxsize=1 << 14)
def math_verify_grade(output: str, gold: str, time_limit: float | None = None) -> SymbolicVerdict:
    r"""Grade ``output`` against ``gold`` as Math-Verify does by default, under our time limit.

    ``math_verify.parse`` reads the output and the gold (written ``$gold$`` when it has no
    delimiters, as in Math-Verify's README), and ``math_verify.verify`` compares them, with default
    settings except its alarm-based timeouts (``parsing_timeout=None``, ``timeout_seconds=None``):
    :func:`workbench.grading.limits.call_with_limit` limits the whole call instead. A verdict
    :func:`math_verify_prefetch` computed ahead is used once instead of a call. It never raises.

    Examples
    --------
    >>> math_verify_grade("so the answer is $\\boxed{\\frac{1}{2}}$", "0.5").equivalent
    True
    >>> math_verify_grade("no idea", "3").status
    <GradeStatus.NO_ANSWER: 'no_answer'>
    """
    refused = _refused(output, gold) or _plain_numbers(output, gold)
    if refused is not None:
        return refused
    limit = _limit(time_limit)
    ready = _prefetched().pop((output, gold, limit), None)
    if ready is not None:
        return ready
    result = call_with_limit(_math_verify_default, output, gold, time_limit=limit)
    if result.status is LimitStatus.OK and result.value is not None:
        return result.value
    status = GradeStatus.TIMEOUT if result.status is LimitStatus.TIMEOUT else GradeStatus.UNPARSEABLE
    return SymbolicVerdict(status, False, f"math-verify: {result.message}", None, None)


def math_verify_prefetch(pairs: Iterable[tuple[str, str]], time_limit: float | None = None) -> int:
    """Grade ``(output, gold)`` pairs with Math-Verify in batches of :data:`BATCH_SIZE` per worker
    call, ahead of :func:`math_verify_grade`; how many verdicts are now waiting.

    Each batch runs under the time limit of one call; a batch that runs out keeps nothing (its
    pairs are graded one by one when asked for). A pair given twice is sent once; a pair refused
    without parsing (empty, too long) or two plain numbers decided without SymPy are not sent.
    Verdicts left from an earlier prefetch are dropped.

    Examples
    --------
    >>> math_verify_prefetch([("The answer is $\\frac{3}{4}$.", "0.75"), ("$x = 7$", "8"), ("7", "8"), ("", "8")])
    2
    >>> math_verify_grade("7", "8").equivalent
    False
    """
    limit = _limit(time_limit)
    ahead = _prefetched()
    ahead.clear()
    todo = list(
        dict.fromkeys(
            (output, gold)
            for output, gold in pairs
            if _refused(output, gold) is None and _plain_numbers(output, gold) is None
        )
    )
    for start in range(0, len(todo), BATCH_SIZE):
        batch = todo[start : start + BATCH_SIZE]
        result = call_with_limit(_math_verify_batch, batch, time_limit=limit)
        if result.status is LimitStatus.OK and result.value is not None:
            ahead.update(
                ((output, gold, limit), verdict) for (output, gold), verdict in zip(batch, result.value, strict=True)
            )
    return len(ahead)


def math_verify_match(output: str | None, gold: str | None, *, time_limit: float | None = None) -> Verdict:
    """Math-Verify's verdict as a :class:`~workbench.grading.compare.Verdict`: ``output`` (a whole
    model output or an answer) read by ``math_verify.parse``, compared by ``math_verify.verify``
    (:func:`math_verify_grade`).

    Examples
    --------
    >>> v = math_verify_match("Final Answer: The final answer is $9$. I hope it is correct.", "9")
    >>> v.correct, v.reason.value
    (True, 'symbolic')
    >>> math_verify_match("N/A", "3").status.value
    'no_answer'
    """
    if gold is None or not str(gold).strip():
        return Verdict(False, GradeStatus.NO_GOLD, MatchReason.NO_GOLD, None, None, "no gold answer", "latex")
    if output is None or is_no_answer(output):
        return no_answer_verdict(output)
    result = math_verify_grade(output, str(gold), time_limit)
    if result.status is GradeStatus.OK:
        reason = MatchReason.SYMBOLIC if result.equivalent else MatchReason.WRONG_VALUE
        return Verdict(result.equivalent, GradeStatus.OK, reason, None, None, result.detail, "latex")
    reasons = {GradeStatus.NO_ANSWER: MatchReason.NO_ANSWER, GradeStatus.TIMEOUT: MatchReason.TIMEOUT}
    return Verdict(
        False, result.status, reasons.get(result.status, MatchReason.UNPARSEABLE), None, None, result.detail, "latex"
    )
