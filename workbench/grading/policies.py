"""Named grading policies: frozen configs computed side by side on the same outputs.

The choice of grader alone moves published scores by many points, so every run is
graded under each of these and the report shows them next to each other:

==================  ======================================================================
``exact-string``    the answer text equals the gold text (the baseline of many scripts)
``official``        the official ConvFinQA rule: ``str_to_num`` then equal to 5 decimals
``cascade``         the finance-aware numeric cascade (:func:`~workbench.grading.compare.answers_match`) without SymPy
``strict``          the cascade on the answer found by strict extraction (explicit markers)
``flex``            the cascade on the answer found by flexible extraction (last number)
``math-verify``     Math-Verify's own ``verify(parse(gold), parse(output))``, defaults, its
                    timeouts off, under our limits: the grader most training pipelines use
``symbolic``        the cascade with SymPy for LaTeX and expressions (the default)
==================  ======================================================================

Which answer is compared: ``exact-string``, ``official``, ``cascade`` and ``symbolic`` take
the system's own answer (its structured answer field, else its program's value, else the
answer its harness extracted, else flexible extraction from the raw output). ``strict``
and ``flex`` take a structured answer field when the system gave one (a tool call is an
explicit marker) and otherwise extract from the raw output themselves. ``math-verify`` reads
the system's own answer field or its program's value when there is one, and otherwise the whole
raw output, which Math-Verify's ``parse`` searches itself (never the answer our harness or the
system's harness extracted).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from workbench.grading.compare import (
    DEFAULT_POLICY,
    AnswerKind,
    MatchPolicy,
    Verdict,
    answers_match,
    no_answer_verdict,
)
from workbench.grading.extract import Expectation, Extraction, ExtractionPolicy, extract_answer, without_sign_off
from workbench.grading.mathverify import math_verify_match
from workbench.grading.normalize import is_no_answer, normalize_answer
from workbench.grading.spans import DROP_PASS_F1
from workbench.grading.status import GradeStatus, MatchReason

__all__ = [
    "GradingPolicy",
    "PolicyGrade",
    "POLICIES",
    "DEFAULT_GRADING_POLICY",
    "get_policy",
    "for_benchmark",
    "READING_COMPREHENSION",
    "select_answer",
    "grade_answer",
    "exact_string_match",
    "official_convfinqa_match",
    "math_verify_match",
]

AnswerSource = Literal["answer", "strict", "flex", "raw"]
Matcher = Literal["exact_string", "official", "cascade", "math_verify"]


@dataclass(frozen=True, slots=True, kw_only=True)
class GradingPolicy:
    """One way of grading: where the answer comes from and how it is matched.

    Attributes
    ----------
    name
        Shown in reports next to the figures it produced.
    description
        One line for reports.
    source
        ``answer`` (the system's own answer), ``strict`` or ``flex`` (extraction policy), or
        ``raw`` (the system's own answer, else the whole raw output, for a grader that extracts).
    matcher
        ``exact_string``, ``official`` (ConvFinQA's rule), ``cascade``, or ``math_verify``
        (Math-Verify's ``parse`` and ``verify``, :func:`~workbench.grading.mathverify.math_verify_grade`).
    numbers
        Tolerances and readings of the cascade (its ``symbolic`` flag sends LaTeX to SymPy).
    """

    name: str
    description: str
    source: AnswerSource = "answer"
    matcher: Matcher = "cascade"
    numbers: MatchPolicy = field(default=DEFAULT_POLICY)


_NUMERIC = MatchPolicy(name="cascade", symbolic=False)

#: The named policies, in the order reports show them.
POLICIES: dict[str, GradingPolicy] = {
    p.name: p
    for p in (
        GradingPolicy(name="exact-string", description="answer text equals gold text", matcher="exact_string"),
        GradingPolicy(name="official", description="official ConvFinQA rule: equal to 5 decimals", matcher="official"),
        GradingPolicy(name="cascade", description="finance-aware numeric cascade", numbers=_NUMERIC),
        GradingPolicy(name="strict", description="cascade on strict extraction (explicit markers)", source="strict"),
        GradingPolicy(name="flex", description="cascade on flexible extraction (last number)", source="flex"),
        GradingPolicy(
            name="math-verify",
            description="Math-Verify's parse and verify, defaults (its timeouts off, under our limits)",
            source="raw",
            matcher="math_verify",
        ),
        GradingPolicy(name="symbolic", description="cascade, then SymPy for LaTeX and expressions"),
    )
}

#: The policy whose verdict fills the graded turns table.
DEFAULT_GRADING_POLICY = POLICIES["symbolic"]


#: Benchmarks whose answers are not in percent units by default (a x100 reading needs a cue).
_NO_PERCENT_UNITS = frozenset({"gsm8k", "math"})

#: Reading-comprehension benchmarks, whose answers are text spans graded by DROP's official rules.
READING_COMPREHENSION = frozenset({"drop"})


def for_benchmark(policy: GradingPolicy, benchmark: str) -> GradingPolicy:
    """The policy as it applies to a benchmark: on GSM8K and MATH a number without a ``%``
    sign is never read x100 ("4200" for 42 is wrong; the gold is in the unit asked); on MATH
    the gold is LaTeX (``latex_gold``: ``2k`` is a product, a tuple goes to SymPy); on a
    reading-comprehension benchmark (DROP) the cascade's answers are text spans, scored by DROP's
    official rules and credited on an exact match or an F1 of at least
    :data:`~workbench.grading.spans.DROP_PASS_F1` (``span_f1``); the baselines and Math-Verify keep
    their own rules.

    Examples
    --------
    >>> for_benchmark(POLICIES["symbolic"], "gsm8k").numbers.bare_percent_reading
    False
    >>> for_benchmark(POLICIES["symbolic"], "math").numbers.latex_gold
    True
    >>> for_benchmark(POLICIES["symbolic"], "convfinqa") is POLICIES["symbolic"]
    True
    >>> round(for_benchmark(POLICIES["flex"], "drop").numbers.span_f1, 2)
    0.67
    """
    if benchmark in READING_COMPREHENSION:
        if policy.matcher != "cascade" or policy.numbers.span_f1 is not None:
            return policy
        return replace(policy, numbers=replace(policy.numbers, span_f1=DROP_PASS_F1))
    if benchmark not in _NO_PERCENT_UNITS:
        return policy
    latex = benchmark == "math"
    if not policy.numbers.bare_percent_reading and policy.numbers.latex_gold == latex:
        return policy
    return replace(policy, numbers=replace(policy.numbers, bare_percent_reading=False, latex_gold=latex))


def get_policy(name: str | GradingPolicy) -> GradingPolicy:
    """Look a policy up by name.

    Examples
    --------
    >>> get_policy("flex").source
    'flex'
    """
    if isinstance(name, GradingPolicy):
        return name
    try:
        return POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown grading policy {name!r}; known: {', '.join(POLICIES)}") from None


@dataclass(frozen=True, slots=True)
class PolicyGrade:
    """A turn graded under one policy.

    Attributes
    ----------
    policy
        The policy's name.
    verdict
        The comparison's outcome.
    answer
        The answer text that was compared (``None`` when none was found).
    answer_source
        ``answer``, ``program``, ``upstream`` (the harness's extraction), ``strict`` or
        ``flex`` (found by extraction), or ``none``.
    extraction
        The extraction, when the answer came from one.
    """

    policy: str
    verdict: Verdict
    answer: str | None
    answer_source: str
    extraction: Extraction | None


def _given(text: str | None) -> bool:
    return text is not None and not is_no_answer(text)


def _extract(
    text: str | None,
    source: ExtractionPolicy,
    extractions: dict[tuple[str | None, str], Extraction] | None,
    expect: Expectation = "any",
) -> Extraction:
    if extractions is None:
        return extract_answer(text, policy=source, expect=expect)
    key = (text, source if expect == "any" else f"{source}/{expect}")
    if key not in extractions:
        extractions[key] = extract_answer(text, policy=source, expect=expect)
    return extractions[key]


def select_answer(
    policy: GradingPolicy,
    *,
    predicted_answer: str | None,
    program_answer: str | None = None,
    upstream_answer: str | None = None,
    raw_output: str | None = None,
    extractions: dict[tuple[str | None, str], Extraction] | None = None,
    expect: Expectation = "any",
) -> tuple[str | None, str, Extraction | None]:
    """Choose the answer a policy compares: ``(answer, source, extraction)``.

    ``extractions``, when given, keeps each extraction made for a text and policy, so that the
    policies of one turn read a long output once. ``expect`` says what the gold asks for (a choice
    letter, text spans: :data:`~workbench.grading.extract.Expectation`), which extraction reads.

    Examples
    --------
    >>> select_answer(POLICIES["strict"], predicted_answer=None, raw_output="so 9 * 2 = 18")[:2]
    (None, 'strict')
    >>> select_answer(POLICIES["flex"], predicted_answer=None, raw_output="so 9 * 2 = 18")[:2]
    ('18', 'flex')
    >>> select_answer(POLICIES["symbolic"], predicted_answer="N/A", program_answer="0.5")[:2]
    ('0.5', 'program')

    A system that declares it has no answer ("N/A" in its answer field) is taken at its
    word: no number is fished out of its reasoning.

    >>> select_answer(POLICIES["symbolic"], predicted_answer="N/A", raw_output="in 2014 it was")[:2]
    ('N/A', 'answer')
    """
    if policy.source in ("strict", "flex"):
        if _given(predicted_answer):
            return predicted_answer, "answer", None
        text = raw_output if raw_output and raw_output.strip() else predicted_answer
        extraction = _extract(text, policy.source, extractions, expect)
        return extraction.answer, policy.source, extraction
    if _given(predicted_answer):
        return predicted_answer, "answer", None
    if _given(program_answer):
        return program_answer, "program", None
    if policy.source == "raw" and raw_output and raw_output.strip():
        return raw_output, "raw", None
    if upstream_answer is not None and _given(upstream_answer):
        return without_sign_off(upstream_answer).strip() or upstream_answer, "upstream", None
    if predicted_answer is not None and predicted_answer.strip():
        return predicted_answer, "answer", None  # declared "no answer"
    if raw_output and raw_output.strip():
        extraction = _extract(raw_output, "flex", extractions, expect)
        return extraction.answer, "flex", extraction
    return predicted_answer, "none", None


def grade_answer(
    policy: GradingPolicy,
    answer: str | None,
    gold: str | None,
    *,
    question: str | None = None,
    unit: str | None = None,
    kind: AnswerKind = "auto",
) -> Verdict:
    """Compare an answer with the gold under ``policy``'s matcher.

    Examples
    --------
    >>> [grade_answer(POLICIES[n], "12.57", "0.12574", question="what percentage?").correct
    ...  for n in ("exact-string", "official", "cascade")]
    [False, False, True]
    """
    if policy.matcher == "exact_string":
        return exact_string_match(answer, gold)
    if policy.matcher == "official":
        return official_convfinqa_match(answer, gold)
    if policy.matcher == "math_verify":
        return math_verify_match(answer, gold, time_limit=policy.numbers.time_limit)
    return answers_match(answer, gold, kind=kind, question=question, unit=unit, policy=policy.numbers)


def exact_string_match(pred: str | None, gold: str | None) -> Verdict:
    """The baseline: the answer text equals the gold text after stripping whitespace.

    Examples
    --------
    >>> exact_string_match("18", "18").correct, exact_string_match("18.0", "18").correct
    (True, False)
    """
    if gold is None or not str(gold).strip():
        return Verdict(False, GradeStatus.NO_GOLD, MatchReason.NO_GOLD, None, None, "no gold answer", "text")
    if pred is None or not pred.strip():
        return no_answer_verdict(pred)
    ok = pred.strip() == str(gold).strip()
    reason = MatchReason.EXACT if ok else MatchReason.WRONG_VALUE
    return Verdict(ok, GradeStatus.OK, reason, None, None, f"string {pred.strip()!r} vs {str(gold).strip()!r}", "text")


def _official_number(text: str) -> float | None:
    """The official FinQA/ConvFinQA ``str_to_num``: drop commas, a trailing ``%`` divides by 100."""
    text = text.replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        if text.endswith("%"):
            try:
                return float(text[:-1]) / 100.0
            except ValueError:
                return None
        return None


def official_convfinqa_match(pred: str | None, gold: str | None) -> Verdict:
    """The official ConvFinQA execution-accuracy rule: both sides read with the official
    ``str_to_num`` and equal after rounding to 5 decimals; yes/no compared as words.

    Examples
    --------
    >>> official_convfinqa_match("14.1%", "0.141").correct, official_convfinqa_match("12.57", "0.12574").correct
    (True, False)
    """
    if gold is None or not str(gold).strip():
        return Verdict(False, GradeStatus.NO_GOLD, MatchReason.NO_GOLD, None, None, "no gold answer", "number")
    if pred is None or is_no_answer(pred):
        return no_answer_verdict(pred)
    g, p = _official_number(str(gold)), _official_number(pred)
    if g is None or p is None:
        ok = normalize_answer(pred) == normalize_answer(str(gold))
        reason = MatchReason.EXACT if ok else (MatchReason.WRONG_VALUE if g is None else MatchReason.UNPARSEABLE)
        status = GradeStatus.OK if ok or g is None else GradeStatus.UNPARSEABLE
        return Verdict(ok, status, reason, p, g, f"official rule: text {pred!r} vs {gold!r}", "text")
    ok = round(p, 5) == round(g, 5)
    reason = MatchReason.OFFICIAL_ROUND5 if ok else MatchReason.WRONG_VALUE
    return Verdict(ok, GradeStatus.OK, reason, p, g, f"official rule: round({p:g}, 5) vs round({g:g}, 5)", "number")
