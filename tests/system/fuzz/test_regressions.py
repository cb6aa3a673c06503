"""One plain test per bug the fuzz suite found (issue 8), with the input that showed it."""

from __future__ import annotations

import pytest
from fuzzkit import LIMIT

from workbench.grading import compare
from workbench.grading.compare import answers_match
from workbench.grading.extract import extract_answer
from workbench.grading.normalize import normalize_answer, parse_number
from workbench.grading.policies import POLICIES
from workbench.grading.status import GradeStatus
from workbench.grading.symbolic import SymbolicVerdict
from workbench.grading.turn import grade_turn


@pytest.mark.parametrize(
    "text",
    [
        "\\boxed{" * (1 << 17),  # 1 MB of unclosed boxes: each was matched by its own scan (hours)
        "\\boxed{" * 100_000 + "}" * 100_000,  # an empty box nested 100,000 deep: quadratic cleaning
        "\\boxed{" * 100_000 + "18" + "}" * 100_000,  # every nested box's content was copied: gigabytes
    ],
    ids=["unclosed-1mb", "nested-empty", "nested-content"],
)
def test_boxes_are_matched_without_blowing_up(text: str) -> None:
    # what these cost is printed by bench/hostile_inputs.py (extract.*): linear, well under a limit
    expected = "18" if "18" in text else None
    for policy in ("strict", "flex"):
        found = extract_answer(text, policy=policy)
        assert found.answer == expected, (policy, found)


@pytest.mark.parametrize(
    ("pred", "gold"),
    [("2*3", "23"), ("9**9", "99"), ("9**9**9**9", "9999"), ("3__4", "34")],
)
def test_an_operator_between_operands_is_not_bold_markup(pred: str, gold: str) -> None:
    # "**" and "__" between two operands were removed as Markdown: 2*3 was credited for 23
    assert normalize_answer(pred) == pred
    assert not answers_match(pred, gold).correct


@pytest.mark.parametrize("text", ["**18**", "**18**.", "*18*", "__18__", "**$18**", "_**_18"])
def test_bold_markup_around_an_answer_still_goes(text: str) -> None:
    assert answers_match(text, "18").correct


def test_a_number_in_exponent_notation_is_extracted_whole() -> None:
    # flex took the "1" of "1e309" and credited it for gold 1
    assert extract_answer("it is about 1e309", policy="flex").answer == "1e309"
    assert not answers_match(extract_answer("it is about 1e309").answer, "1").correct
    assert extract_answer("the rate is 1e-05", policy="flex").answer == "1e-05"


@pytest.mark.parametrize("minus", ["\u2212", "\u2012", "\u2013", "\u2014", "\u2015", "\ufe63", "\uff0d"])
def test_look_alike_minus_signs(minus: str) -> None:
    # U+2015 was not a minus anywhere; flex extraction dropped every look-alike minus (a sign flip)
    assert parse_number(f"{minus}18") is not None and parse_number(f"{minus} 18").value == -18  # type: ignore[union-attr]
    found = extract_answer(f"The change is {minus}18 in total", policy="flex")
    assert answers_match(found.answer, "-18").correct, found


@pytest.mark.parametrize("invisible", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"])
def test_zero_width_characters_are_invisible(invisible: str) -> None:
    # "1\u200b8" was unparseable as an answer, and flex extraction read "8"
    assert answers_match(f"1{invisible}8", "18").correct
    found = extract_answer(f"so she has 1{invisible}8 apples left", policy="flex")
    assert found.answer == "18" and found.span == (11, 14)


def test_policies_share_one_symbolic_comparison_per_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    # each of the symbolic, strict and flex policies ran its own SymPy comparison of the same
    # answer: an input that times out cost three time limits (20 s for a 2 s limit, with restarts)
    calls: list[tuple[str, str]] = []

    def fake(pred: str, gold: str, *, time_limit: float | None = None) -> SymbolicVerdict:
        calls.append((pred, gold))
        return SymbolicVerdict(GradeStatus.TIMEOUT, False, f"gave up after {LIMIT} s of CPU", None, None)

    monkeypatch.setattr(compare, "latex_equivalent", fake)
    pred = "(" * 3000 + "1+1" + ")" * 3000  # longer than the verdict memo keeps
    grade = grade_turn(
        predicted_answer=pred,
        predicted_program=None,
        gold_executed="18",
        gold_program=None,
        also=tuple(POLICIES.values()),
    )
    assert grade.verdict.status is GradeStatus.TIMEOUT
    assert len(calls) == 1


@pytest.mark.parametrize("text", ["(" * 10_000 + "1+1" + ")" * 10_000, "(" * (1 << 19) + ")" * (1 << 19)])
def test_collection_size_peels_a_bounded_number_of_brackets(text: str) -> None:
    # one scan per bracket layer: 10,000 nested parentheses took 9 s, a megabyte of them hours
    from workbench.grading.symbolic import collection_size

    assert collection_size(text) == 1  # the cost: bench/hostile_inputs.py (collection_size.*)
