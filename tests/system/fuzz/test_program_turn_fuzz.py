"""The program engine and turn grading on hostile input: a ProgramResult (or a
ProgramSyntaxError from the parser, the one documented error), a valid status, a finite value
when ok, the same answer twice; parse -> render -> parse round trips; compare_programs gives a
status with a reason; and grade_turn returns a TurnGrade under every policy. No test here
times anything (bench/hostile_inputs.py prints what such inputs cost)."""

from __future__ import annotations

import math

from fuzzkit import fuzz_settings, hostile_text, tried
from hypothesis import example, given
from hypothesis import strategies as st

from workbench.grading.compare import Verdict
from workbench.grading.equivalence import ProgramMatch, compare_programs
from workbench.grading.policies import POLICIES
from workbench.grading.program import (
    Call,
    Const,
    Node,
    Num,
    ProgramResult,
    ProgramSyntaxError,
    Ref,
    execute_program,
    format_node,
    join_token_list,
    parse_program,
)
from workbench.grading.status import GradeStatus, ProgramStatus
from workbench.grading.turn import TurnGrade, grade_turn

_PROGRAM_PIECES = (
    "add(", "subtract(", "multiply(", "divide(", "exp(", "greater(", "table_max(", "table_sum(",
    "negate(", "unknown_op(", ")", "(", ", ", ",", "#0", "#1", "#9", "#99999999999999999999",
    "const_100", "const_m1", "1", "0", "13.4%", "1e309", "1e-5", "-", "+", "*", "/", "**", "^",
    "\u2212", "none", " ", "EOF", "1,000", "9" * 40,
)  # fmt: skip
programs_text = st.one_of(
    st.lists(st.sampled_from(_PROGRAM_PIECES), max_size=30).map("".join),
    hostile_text,
    st.integers(min_value=0, max_value=3000).map(lambda n: "(" * n + "1" + ")" * n),
    st.integers(min_value=0, max_value=3000).map(lambda n: "add(" * n + "1" + ", 1)" * n),
)
_TABLE = {"revenue": [1.0, 2.0, None], "empty": [None]}


@fuzz_settings(ci_examples=400)
@given(text=programs_text, with_table=st.booleans())
@example(text="divide(1, 0)", with_table=False)
@example(text="exp(10, 100000)", with_table=False)
@example(text="add(#1, 1), add(#0, 1)", with_table=False)  # a reference cycle: bad_reference
@example(text="(" * 10_000 + "1" + ")" * 10_000, with_table=False)
def test_execute_program_is_total(text: str, with_table: bool) -> None:
    tried("execute_program")
    result = execute_program(text, table=_TABLE if with_table else None)
    assert isinstance(result, ProgramResult) and isinstance(result.status, ProgramStatus)
    if result.ok:
        assert isinstance(result.value, bool) or (isinstance(result.value, float) and math.isfinite(result.value))
        assert result.answer is not None and result.message == ""
    else:
        assert result.value is None and result.message
    again = execute_program(text, table=_TABLE if with_table else None)
    assert (again.status, again.value, again.message) == (result.status, result.value, result.message)


@fuzz_settings(ci_examples=200)
@given(text=programs_text)
def test_parse_program_raises_only_its_syntax_error(text: str) -> None:
    tried("parse_program")
    try:
        parse_program(text)
    except ProgramSyntaxError:  # deep nesting too (MAX_PROGRAM_DEPTH): never a RecursionError
        pass


@fuzz_settings(ci_examples=200)
@given(tokens=st.lists(st.one_of(st.sampled_from(_PROGRAM_PIECES), st.text(max_size=5)), max_size=20))
def test_token_lists_execute_without_raising(tokens: list[str]) -> None:
    tried("execute_program(token list)")
    assert isinstance(join_token_list(tokens), str)
    assert isinstance(execute_program(tokens), ProgramResult)


# --------------------------------------------------------------------------- round trip
_numbers = st.decimals(min_value=0, max_value=10**6, places=3, allow_nan=False, allow_infinity=False).map(
    lambda d: Num(float(f"{d:f}"), f"{d:f}")
)
_leaves = st.one_of(_numbers, st.sampled_from((Const("const_100", 100.0), Const("const_m1", -1.0))))
_trees = st.recursive(
    _leaves,
    lambda inner: st.builds(
        lambda op, a, b: Call(op, (a, b)),
        st.sampled_from(("add", "subtract", "multiply", "divide", "exp", "greater")),
        inner,
        inner,
    ),
    max_leaves=12,
)


@st.composite
def _programs(draw: st.DrawFn) -> tuple[Node, ...]:
    steps: list[Node] = []
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        tree = draw(_trees)
        if steps and draw(st.booleans()) and isinstance(tree, Call):
            tree = Call(tree.op, (Ref(draw(st.integers(min_value=0, max_value=len(steps) - 1))), tree.args[1]))
        steps.append(tree)
    return tuple(steps)


@fuzz_settings(ci_examples=300)
@given(steps=_programs())
def test_parse_render_parse_round_trips(steps: tuple[Node, ...]) -> None:
    tried("parse -> render -> parse")
    text = ", ".join(format_node(step) for step in steps)
    parsed = parse_program(text)
    assert parsed.steps == steps
    rendered = ", ".join(format_node(step) for step in parsed.steps)
    assert rendered == text and parse_program(rendered).steps == steps


@fuzz_settings(ci_examples=100, fuzz_share=0.25)
@given(pred=programs_text, gold=programs_text)
def test_compare_programs_is_total(pred: str, gold: str) -> None:
    tried("compare_programs")
    match = compare_programs(pred, gold)
    assert isinstance(match, ProgramMatch)
    assert match.status in ("ok", "parse_error", "too_large", "timeout", "error")
    assert match.detail
    if match.status != "ok":
        assert not match.equivalent
    if match.status in ("parse_error", "too_large"):
        assert match.partial_credit is None


# --------------------------------------------------------------------------- turns
_maybe = st.none() | hostile_text


@fuzz_settings(ci_examples=100, fuzz_share=0.1)
@given(
    answer=_maybe,
    program=st.none() | programs_text,
    gold=st.none() | st.sampled_from(("18", "0.14136", "yes", "\\frac{1}{2}", "1,875", "14.1%")) | hostile_text,
    gold_program=st.none() | st.sampled_from(("subtract(206588, 181001), divide(#0, 181001)", "add(1, 2)")),
    raw=_maybe,
    question=st.none() | st.sampled_from(("what percentage?", "what is the ratio?")),
)
@example(answer=None, program=None, gold="1", gold_program=None, raw="\\boxed{" * 4000, question=None)
def test_grade_turn_is_total(
    answer: str | None,
    program: str | None,
    gold: str | None,
    gold_program: str | None,
    raw: str | None,
    question: str | None,
) -> None:
    tried("grade_turn")
    also = tuple(POLICIES.values())
    grade = grade_turn(
        predicted_answer=answer,
        predicted_program=program,
        gold_executed=gold,
        gold_program=gold_program,
        raw_output=raw,
        question=question,
        also=also,
    )
    assert isinstance(grade, TurnGrade) and isinstance(grade.verdict, Verdict)
    assert {p.policy for p in grade.policies} == set(POLICIES)
    for each in grade.policies:
        assert isinstance(each.verdict.status, GradeStatus)
        assert not each.verdict.correct or each.verdict.status is GradeStatus.OK
    assert grade.program_correct in (True, False, None)
