"""Grading policies: the seed examples, Xwin-Math's documented equivalences, the named
policies side by side on one turn, and ``answers_match(x, x)`` over many ways of writing x."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.grading.compare import answers_match
from workbench.grading.policies import (
    DEFAULT_GRADING_POLICY,
    POLICIES,
    exact_string_match,
    get_policy,
    grade_answer,
    official_convfinqa_match,
    select_answer,
)
from workbench.grading.status import GradeStatus, MatchReason
from workbench.grading.turn import grade_turn


# --------------------------------------------------------------------------- the seed examples
def test_seed_percent_with_sign_at_reported_precision() -> None:
    verdict = answers_match("14.1%", "0.14136")
    assert verdict.correct and verdict.reason is MatchReason.REPORTED_PRECISION


def test_seed_decimal_for_a_percent_gold() -> None:
    verdict = answers_match("0.141", "14.1%")
    assert verdict.correct and verdict.reason is MatchReason.EXACT


def test_seed_bare_percent_number_is_read_by_the_question() -> None:
    asked_percent = answers_match("14.1", "14.1%", question="what percentage of sales was it?")
    assert asked_percent.correct and asked_percent.reason is MatchReason.PERCENT_READING
    asked_ratio = answers_match("14.1", "14.1%", question="what is the ratio of sales to costs?")
    assert not asked_ratio.correct and asked_ratio.reason is MatchReason.PERCENT_CONFUSION


def test_seed_scale_error() -> None:
    # dev Single_CDNS/2018/page_31.pdf-1 turn 2 displays "1877" for the executed 18770.0
    verdict = answers_match("1877", "18770")
    assert not verdict.correct and verdict.reason is MatchReason.SCALE


# --------------------------------------------------------------------------- Xwin-Math
# (pred, gold, reason): the equivalences Xwin-Math's evaluation documents, through answers_match
XWIN_EQUIVALENT = [
    ("7(x-3)(x+3)", "7x^2-63", "symbolic"),
    ("7x^2-63", "7(x-3)(x+3)", "symbolic"),
    ("3/7", "\\frac{3}{7}", "exact"),
    ("\\frac{3}{7}", "3/7", "exact"),
    ("0.428571", "\\frac{3}{7}", "official_round5"),
    ("\\frac{3}{7}", "0.428571", "official_round5"),
    ("3/7", "0.428571", "official_round5"),
    ("15.97 ml", "15.9699", "rel_tolerance"),
    ("15.97 \\text{ ml}", "15.9699", "rel_tolerance"),
    ("$1.33", "1.333333", "reported_precision"),
    ("\\$1.33", "1.333333", "reported_precision"),
]


@pytest.mark.parametrize(("pred", "gold", "reason"), XWIN_EQUIVALENT)
def test_xwin_math_equivalences(pred: str, gold: str, reason: str) -> None:
    verdict = answers_match(pred, gold)
    assert verdict.correct, verdict.detail
    assert verdict.reason is MatchReason(reason)


@pytest.mark.parametrize(
    ("pred", "gold", "reason"),
    [
        # integers are exact, even within the 1e-3 tolerance
        ("1000", "1001", "rounding"),
        ("16750000", "16750002", "rounding"),  # dev Double_ABMD/2009/page_88.pdf turn 0
        # precision is the prediction's: the gold written with fewer decimals is not a rounding of it
        ("1.333333", "$1.33", "rounding"),
    ],
)
def test_xwin_math_non_equivalences(pred: str, gold: str, reason: str) -> None:
    verdict = answers_match(pred, gold)
    assert not verdict.correct
    assert verdict.reason is MatchReason(reason), verdict.detail


# --------------------------------------------------------------------------- side by side
QUESTION = "what percentage of revenue was it?"
NAMES = ("exact-string", "official", "cascade", "strict", "flex", "math-verify", "symbolic")

# (predicted_answer, raw_output, gold, question, {policy: (correct, reason, answer source)})
SIDE_BY_SIDE = [
    # ConvFinQA-style: an answer field in percent units for a ratio gold
    (
        "12.57",
        None,
        "0.12574",
        QUESTION,
        {
            "exact-string": (False, "wrong_value", "answer"),
            "official": (False, "wrong_value", "answer"),
            "cascade": (True, "percent_reading", "answer"),
            "strict": (True, "percent_reading", "answer"),
            "flex": (True, "percent_reading", "answer"),
            "symbolic": (True, "percent_reading", "answer"),
            "math-verify": (False, "wrong_value", "answer"),
        },
    ),
    # the same answer when the question asks for a ratio
    (
        "12.57",
        None,
        "0.12574",
        "what is the ratio of revenue to costs?",
        {
            "exact-string": (False, "wrong_value", "answer"),
            "official": (False, "wrong_value", "answer"),
            "cascade": (False, "percent_confusion", "answer"),
            "strict": (False, "percent_confusion", "answer"),
            "flex": (False, "percent_confusion", "answer"),
            "symbolic": (False, "percent_confusion", "answer"),
            "math-verify": (False, "wrong_value", "answer"),
        },
    ),
    # raw output only, no marker: strict finds nothing, flex and the answer policies take 12.57
    (
        None,
        "Revenue went from 206588 to 232565, so it grew by 12.57",
        "0.12574",
        QUESTION,
        {
            "exact-string": (False, "wrong_value", "flex"),
            "official": (False, "wrong_value", "flex"),
            "cascade": (True, "percent_reading", "flex"),
            "strict": (False, "no_answer", "strict"),
            "flex": (True, "percent_reading", "flex"),
            "symbolic": (True, "percent_reading", "flex"),
            "math-verify": (False, "wrong_value", "raw"),
        },
    ),
    # raw output with a marker and a % sign: within the relative tolerance
    (
        None,
        "Revenue went from 206588 to 232565. The answer is 12.57%.",
        "0.12574",
        QUESTION,
        {
            "exact-string": (False, "wrong_value", "flex"),
            "official": (False, "wrong_value", "flex"),
            "cascade": (True, "rel_tolerance", "flex"),
            "strict": (True, "rel_tolerance", "strict"),
            "flex": (True, "rel_tolerance", "flex"),
            "symbolic": (True, "rel_tolerance", "flex"),
            "math-verify": (False, "wrong_value", "raw"),
        },
    ),
    # ToRA-70B, GSM8K test line 12: "It takes Carla $\boxed{160.0}$ minutes" for gold 160
    (
        None,
        "It takes Carla $\\boxed{160.0}$ minutes to download the file.",
        "160",
        None,
        {
            "exact-string": (False, "wrong_value", "flex"),
            "official": (True, "official_round5", "flex"),
            "cascade": (True, "exact", "flex"),
            "strict": (True, "exact", "strict"),
            "flex": (True, "exact", "flex"),
            "symbolic": (True, "exact", "flex"),
            "math-verify": (True, "symbolic", "raw"),
        },
    ),
    # OpenAI 6B fine-tuned, GSM8K test line 1: a wrong answer is wrong under every policy
    (
        None,
        "She has 13 ducks eggs and she sells 2 each day so she makes 13 * 2 = $<<13*2=26>>26\nA: 26",
        "18",
        None,
        {name: (False, "wrong_value", {"strict": "strict", "math-verify": "raw"}.get(name, "flex")) for name in NAMES},
    ),
]


@pytest.mark.parametrize(("predicted", "raw", "gold", "question", "expected"), SIDE_BY_SIDE)
def test_policies_side_by_side_on_one_turn(
    predicted: str | None, raw: str | None, gold: str, question: str | None, expected: dict
) -> None:
    grade = grade_turn(
        predicted_answer=predicted,
        predicted_program=None,
        gold_executed=gold,
        gold_program=None,
        raw_output=raw,
        question=question,
        policy=DEFAULT_GRADING_POLICY,
        also=list(POLICIES.values()),
    )
    found = {g.policy: (g.verdict.correct, g.verdict.reason.value, g.answer_source) for g in grade.policies}
    assert found == expected
    assert grade.verdict == grade.policies[0].verdict  # the main policy fills the turn
    # select_answer + grade_answer, called directly, agree with grade_turn
    for name in NAMES:
        policy = POLICIES[name]
        answer, source, _ = select_answer(policy, predicted_answer=predicted, raw_output=raw)
        assert source == expected[name][2]
        assert grade_answer(policy, answer, gold, question=question).correct == expected[name][0]


def test_policy_names_in_report_order() -> None:
    assert tuple(POLICIES) == NAMES
    assert get_policy("symbolic") is DEFAULT_GRADING_POLICY
    with pytest.raises(ValueError, match="known: exact-string, official"):
        get_policy("lenient")


@pytest.mark.parametrize(
    ("pred", "gold", "exact", "official"),
    [
        ("18", "18", True, True),
        ("18.0", "18", False, True),
        (" 18 ", "18", True, True),
        ("14.1%", "0.141", False, True),  # official str_to_num divides a trailing % by 100
        ("1,875", "1875", False, True),
        ("yes", "yes", True, True),
        ("N/A", "3", False, False),
    ],
)
def test_baseline_matchers(pred: str, gold: str, exact: bool, official: bool) -> None:
    assert exact_string_match(pred, gold).correct is exact
    assert official_convfinqa_match(pred, gold).correct is official


def test_baseline_matchers_without_gold() -> None:
    for verdict in (exact_string_match("3", None), official_convfinqa_match("3", "  ")):
        assert verdict.status is GradeStatus.NO_GOLD and not verdict.correct


# --------------------------------------------------------------------------- properties
_INTEGER_FORMATS = ("{}", "{:,}", "${:,}", "$ {:,}", "{}%", "{:,}%", "**{}**", "\\${:,}", "{}\\%")
_DECIMAL_FORMATS = ("{:f}", "{:,f}", "${:,f}", "{:f}%", "**{:f}**")
_decimals = st.integers(min_value=0, max_value=6).flatmap(
    lambda places: st.decimals(min_value=-(10**9), max_value=10**9, places=places, allow_nan=False)
)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(min_value=-(10**15), max_value=10**15), fmt=st.sampled_from(_INTEGER_FORMATS))
def test_an_integer_in_any_form_matches_itself(n: int, fmt: str) -> None:
    text = fmt.format(n)
    verdict = answers_match(text, text)
    assert verdict.correct and verdict.reason is MatchReason.EXACT, (text, verdict)


@settings(max_examples=100, deadline=None)
@given(d=_decimals, fmt=st.sampled_from(_DECIMAL_FORMATS))
def test_a_decimal_in_any_form_matches_itself(d: Decimal, fmt: str) -> None:
    text = fmt.format(d)
    verdict = answers_match(text, text)
    assert verdict.correct and verdict.reason is MatchReason.EXACT, (text, verdict)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(min_value=-(10**12), max_value=10**12), fmt=st.sampled_from(("{:,}", "${:,}", "$ {:,}")))
def test_separators_and_currency_do_not_change_a_number(n: int, fmt: str) -> None:
    assert answers_match(fmt.format(n), str(n)).correct
    assert answers_match(str(n), fmt.format(n)).correct


@settings(max_examples=30, deadline=None)
@given(word=st.sampled_from(["yes", "no", "Yes", "NO", "True", "false", "**yes**", "no."]))
def test_yes_no_matches_itself(word: str) -> None:
    verdict = answers_match(word, word)
    assert verdict.correct and verdict.reason is MatchReason.YES_NO


@settings(max_examples=60, deadline=None)
@given(
    a=st.integers(min_value=-50, max_value=50),
    b=st.integers(min_value=1, max_value=50),
    fmt=st.sampled_from(["\\frac{{{}}}{{{}}}", "\\dfrac{{{}}}{{{}}}", "{}/{}"]),
)
def test_a_simple_fraction_matches_itself_and_its_other_forms(a: int, b: int, fmt: str) -> None:
    text = fmt.format(a, b)
    assert answers_match(text, text).correct
    assert answers_match(text, f"\\frac{{{a}}}{{{b}}}").correct
    assert answers_match(f"{a}/{b}", text).correct
