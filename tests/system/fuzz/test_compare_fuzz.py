"""The numeric matcher and the symbolic check on hostile text: a Verdict with a valid status
within the time limit of limits.py, the same verdict twice, and the metamorphic promises of
the cascade (formatting never changes a numeric verdict)."""

from __future__ import annotations

import dataclasses
import re

import pytest
from fuzzkit import (
    LATEX_FRAGMENTS,
    LOOKALIKE_MINUS,
    formatted_numbers,
    fuzz_settings,
    hostile_text,
    nested_fracs,
    tried,
    with_thousands,
)
from hypothesis import example, given
from hypothesis import strategies as st

from workbench.grading.compare import MatchPolicy, Verdict, answers_match
from workbench.grading.policies import POLICIES, grade_answer
from workbench.grading.status import GradeStatus, MatchReason
from workbench.grading.symbolic import SymbolicVerdict, latex_equivalent

#: Multiplication written with stars between two digits (``2*3``, ``9**9``).
_TIMES = re.compile(r"\d\*{1,2}\d")

_NUMERIC = MatchPolicy(symbolic=False)
#: The symbolic property runs under a shorter limit than the product's default, so that the inputs
#: that time out cost less CI time; the bound asserted is that limit plus the start-up margin.
_SHORT = 0.5
_SYMBOLIC = MatchPolicy(time_limit=_SHORT)


def _check_verdict(verdict: Verdict) -> None:
    assert isinstance(verdict, Verdict)
    assert isinstance(verdict.status, GradeStatus) and isinstance(verdict.reason, MatchReason)
    assert isinstance(verdict.correct, bool) and isinstance(verdict.detail, str) and verdict.detail
    if verdict.correct:
        assert verdict.status is GradeStatus.OK
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.correct = True  # type: ignore[misc]


@fuzz_settings(ci_examples=300)
@given(
    pred=st.none() | hostile_text,
    gold=st.none() | hostile_text,
    kind=st.sampled_from(("auto", "number", "text")),
    question=st.none() | st.sampled_from(("what percentage?", "what is the ratio?", "how many?")),
)
@example(pred="9**9**9**9", gold="9999", kind="auto", question=None)  # was read as 9999: correct
@example(pred="2*3", gold="23", kind="auto", question=None)  # was read as 23: correct
@example(pred="0* AAA2AAA", gold="0 AAA2AAA", kind="auto", question=None)  # a lone "*" is emphasis: exact
def test_numeric_matcher_is_total(pred: str | None, gold: str | None, kind: str, question: str | None) -> None:
    tried("answers_match (numeric)")
    verdict = answers_match(pred, gold, kind=kind, question=question, policy=_NUMERIC)
    _check_verdict(verdict)
    assert answers_match(pred, gold, kind=kind, question=question, policy=_NUMERIC) == verdict
    # a "*" between two digits is multiplication, never markup: "2*3" is not 23 (a lone "*" elsewhere,
    # as in "0* apples", is emphasis and may go)
    if pred is not None and gold is not None and _TIMES.search(pred) and pred.replace("*", "") == gold.replace("*", ""):
        assert not (verdict.correct and verdict.reason is MatchReason.EXACT), verdict.detail


@fuzz_settings(ci_examples=30, fuzz_share=0.02)
@given(
    pred=st.one_of(hostile_text, nested_fracs, st.lists(st.sampled_from(LATEX_FRAGMENTS), max_size=12).map("".join)),
    gold=st.sampled_from(("\\frac{1}{2}", "x+1", "(1, 2]", "\\{1,2\\}", "\\sqrt{2}", "3", "\\infty", "yes")),
)
@example(pred="\\left(2\\right)^{10^{100}}", gold="4")  # times out: status timeout, within the limit
@example(pred="\\frac{1}{0}", gold="\\frac{2}{0}")  # zoo vs zoo: SymPy cannot compare, unparseable
def test_symbolic_matcher_is_total_and_bounded(pred: str, gold: str) -> None:
    tried("answers_match (symbolic) / latex_equivalent")
    verdict = answers_match(pred, gold, kind="latex", policy=_SYMBOLIC)
    _check_verdict(verdict)
    direct = latex_equivalent(pred, gold, time_limit=_SHORT)
    assert isinstance(direct, SymbolicVerdict)
    assert direct.status in (GradeStatus.OK, GradeStatus.UNPARSEABLE, GradeStatus.TIMEOUT)
    assert direct.equivalent is False or direct.status is GradeStatus.OK
    if verdict.status is not GradeStatus.TIMEOUT:  # a timeout depends on the machine's load
        again = answers_match(pred, gold, kind="latex", policy=_SYMBOLIC)
        assert again.status is GradeStatus.TIMEOUT or again == verdict


@fuzz_settings(ci_examples=300)
@given(number=formatted_numbers())
def test_a_number_matches_itself_in_any_formatting(number: tuple[str, float]) -> None:
    tried("answers_match(x, x)")
    text, _ = number
    variants = [text, with_thousands(text), f"**{text}**", f"{text}.0" if "." not in text else text + "0"]
    variants.append("-$" + with_thousands(text)[1:] if text.startswith("-") else "$" + with_thousands(text))
    for pred in variants:
        for gold in (text, with_thousands(text)):
            verdict = answers_match(pred, gold, policy=_NUMERIC)
            assert verdict.correct, (pred, gold, verdict)


@fuzz_settings(ci_examples=300)
@given(pred=formatted_numbers(), gold=formatted_numbers(), percent=st.booleans())
def test_formatting_does_not_change_a_numeric_verdict(
    pred: tuple[str, float], gold: tuple[str, float], percent: bool
) -> None:
    tried("formatting keeps the verdict")
    text, _ = pred
    suffix = "%" if percent else ""
    base = answers_match(text + suffix, gold[0], policy=_NUMERIC)
    dollar = "-$" + with_thousands(text)[1:] if text.startswith("-") else "$" + with_thousands(text)
    for variant in (with_thousands(text), dollar, f"**{text}**"):
        other = answers_match(variant + suffix, gold[0], policy=_NUMERIC)
        assert (other.correct, other.status, other.reason) == (base.correct, base.status, base.reason), variant
    for gold_variant in (with_thousands(gold[0]),):
        other = answers_match(text + suffix, gold_variant, policy=_NUMERIC)
        assert (other.correct, other.status, other.reason) == (base.correct, base.status, base.reason)


@fuzz_settings(ci_examples=200)
@given(number=formatted_numbers(), minus=st.sampled_from(LOOKALIKE_MINUS))
def test_a_look_alike_minus_is_a_minus(number: tuple[str, float], minus: str) -> None:
    tried("look-alike minus matches")
    body = number[0].lstrip("-")
    assert answers_match(minus + body, "-" + body, policy=_NUMERIC).correct
    assert answers_match("-" + body, minus + body, policy=_NUMERIC).correct


@fuzz_settings(ci_examples=200)
@given(pred=st.none() | hostile_text, gold=st.none() | hostile_text, name=st.sampled_from(("exact-string", "official")))
def test_baseline_matchers_are_total(pred: str | None, gold: str | None, name: str) -> None:
    tried("exact-string/official")
    verdict = grade_answer(POLICIES[name], pred, gold)
    _check_verdict(verdict)
