"""Size caps of the program parser and of program comparison (issue 15, item 3).

Every program path that grows with its input is bounded before the work: the parser by
:data:`~workbench.grading.program.MAX_PROGRAM_CHARS` and
:data:`~workbench.grading.program.MAX_PROGRAM_DEPTH`, the comparison by
:data:`~workbench.grading.equivalence.MAX_COMPARED_NODES` and
:data:`~workbench.grading.equivalence.MAX_COMPARED_DEPTH`. These tests assert the status and the
reason a capped input gets; what it costs is printed by ``bench/hostile_inputs.py``.
"""

from __future__ import annotations

import pytest

from workbench.grading.equivalence import (
    MAX_COMPARED_DEPTH,
    MAX_COMPARED_NODES,
    compare_programs,
    final_operation,
    step_credit,
)
from workbench.grading.program import (
    MAX_PROGRAM_CHARS,
    MAX_PROGRAM_DEPTH,
    ProgramSyntaxError,
    execute_program,
    parse_program,
)
from workbench.grading.status import GradeStatus, ProgramStatus
from workbench.grading.turn import grade_turn

GOLD = "subtract(206588, 181001), divide(#0, 181001)"


def chain(steps: int, start: int = 1) -> str:
    """``add(start, 1), add(#0, 1), add(#1, 1), ...``: step ``i`` holds ``2i + 3`` nodes written out."""
    return ", ".join([f"add({start}, 1)"] + [f"add(#{i}, 1)" for i in range(steps - 1)])


# --------------------------------------------------------------------------- the parser
@pytest.mark.parametrize(
    "text",
    [
        "(" * 4_000 + "1" + ")" * 4_000,  # each was a RecursionError
        "add(" * 1_000 + "1" + ", 1)" * 1_000,
        "-" * 9_000 + "1",  # unary signs
        "2**" * 3_000 + "2",  # right-nested powers
        "+".join(["1"] * 4_000),  # a left-deep chain of infix operators, built without recursion
    ],
    ids=["parentheses", "calls", "unary-minus", "powers", "infix-chain"],
)
def test_deep_nesting_is_a_syntax_error_not_a_recursion_error(text: str) -> None:
    with pytest.raises(ProgramSyntaxError, match=f"nests deeper than {MAX_PROGRAM_DEPTH} levels"):
        parse_program(text)
    result = execute_program(text)
    assert result.status is ProgramStatus.PARSE_ERROR and "MAX_PROGRAM_DEPTH" in result.message
    assert final_operation(text) == "unparsed"


def test_very_deep_nesting_is_refused_before_parsing() -> None:
    text = "(" * 100_000 + "1" + ")" * 100_000
    with pytest.raises(ProgramSyntaxError, match="MAX_PROGRAM_CHARS"):
        parse_program(text)
    assert execute_program(text).status is ProgramStatus.PARSE_ERROR


def test_nesting_up_to_the_cap_parses_and_runs() -> None:
    text = "add(" * (MAX_PROGRAM_DEPTH - 1) + "1" + ", 1)" * (MAX_PROGRAM_DEPTH - 1)
    assert execute_program(text).answer == str(MAX_PROGRAM_DEPTH)
    assert compare_programs(text, text).equivalent


def test_a_program_over_the_length_cap_is_not_read() -> None:
    text = chain(100_000)  # 1.6 MB
    assert len(text) > MAX_PROGRAM_CHARS
    with pytest.raises(ProgramSyntaxError, match="MAX_PROGRAM_CHARS"):
        parse_program(text)
    result = execute_program(text)
    assert result.status is ProgramStatus.PARSE_ERROR
    assert result.message.startswith(f"the program is {len(text):,} characters long, more than {MAX_PROGRAM_CHARS:,}")
    tokens = ["add(", "1", "1", ")"] * (MAX_PROGRAM_CHARS // 4 + 1)
    with pytest.raises(ProgramSyntaxError, match="tokens"):
        parse_program(tokens)


# --------------------------------------------------------------------------- comparison
def test_three_500_step_chains_are_too_large_with_a_reason() -> None:
    """The report's case: three 500-step chains against a gold took about 60 s, all in this process."""
    for start in (1, 2, 3):
        match = compare_programs(chain(500, start), GOLD)
        assert (match.status, match.equivalent, match.partial_credit, match.rule) == ("too_large", False, None, "none")
        assert match.detail.startswith("predicted program is too large to compare: with its #n references written out")
        assert f"more than {MAX_COMPARED_NODES:,} (equivalence.MAX_COMPARED_NODES)" in match.detail
        assert step_credit(chain(500, start), GOLD) is None


def test_three_100000_step_chains_are_unparseable_with_a_reason() -> None:
    for start in (1, 2, 3):
        match = compare_programs(chain(100_000, start), GOLD)
        assert (match.status, match.equivalent, match.partial_credit) == ("parse_error", False, None)
        assert "MAX_PROGRAM_CHARS" in match.detail


def test_the_gold_side_is_capped_too() -> None:
    match = compare_programs(GOLD, chain(500))
    assert match.status == "too_large" and match.detail.startswith("gold program is too large to compare")


def test_exponential_growth_through_references_is_counted_without_writing_it_out() -> None:
    # each step doubles the written-out tree: 2**60 nodes, counted from 60 parsed steps
    doubling = ", ".join(["add(1, 2)"] + [f"add(#{i}, #{i})" for i in range(59)])
    match = compare_programs(doubling, GOLD)
    assert match.status == "too_large" and "MAX_COMPARED_NODES" in match.detail


def test_depth_through_references_is_capped() -> None:
    # three steps nested 40 deep, each with the previous one at the bottom: 120 levels, 123 nodes
    nested = "negate(" * 40 + "{} " + ")" * 40
    deep = ", ".join([nested.format(1), nested.format("#0"), nested.format("#1")])
    match = compare_programs(deep, "negate(1)")
    assert match.status == "too_large"
    assert f"more than {MAX_COMPARED_DEPTH} (equivalence.MAX_COMPARED_DEPTH)" in match.detail


def test_a_chain_just_under_the_caps_is_still_compared() -> None:
    steps = 1
    while sum(2 * i + 3 for i in range(steps + 1)) <= MAX_COMPARED_NODES:
        steps += 1
    match = compare_programs(chain(steps), chain(steps))
    assert (match.status, match.equivalent, match.rule) == ("ok", True, "canonical")
    assert compare_programs(chain(steps + 1), chain(steps)).status == "too_large"


def test_a_turn_with_a_huge_program_is_graded_and_its_program_check_says_why() -> None:
    grade = grade_turn(predicted_answer=None, predicted_program=chain(500), gold_executed="501", gold_program=GOLD)
    assert grade.verdict.status is GradeStatus.OK and grade.verdict.correct  # the program runs: 501
    assert grade.program_correct is None  # not compared: not a verdict
    assert "too large to compare" in grade.program_detail
    huge = grade_turn(predicted_answer=None, predicted_program=chain(100_000), gold_executed="1", gold_program=GOLD)
    assert huge.verdict.status is GradeStatus.UNPARSEABLE and "MAX_PROGRAM_CHARS" in huge.verdict.detail
    assert huge.program_correct is None and "MAX_PROGRAM_CHARS" in huge.program_detail
