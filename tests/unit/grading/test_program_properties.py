"""Properties of the program engine on generated programs: printing and parsing, execution
against a reference evaluator, and symbolic equivalence.

Programs are trees of ``add``/``subtract``/``multiply``/``divide`` calls, up to depth 3, over
positive decimals written plainly (``12.5``) and the constants ``const_100``, ``const_1000`` and
``const_m1``; some are split into DSL steps that refer to earlier steps with ``#n``.
"""

from __future__ import annotations

import math
from decimal import Decimal

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from workbench.grading.equivalence import compare_programs, programs_equivalent, step_credit
from workbench.grading.program import Call, Const, Node, Num, Ref, execute_program, format_node, parse_program
from workbench.grading.status import ProgramStatus

_OPS = ("add", "subtract", "multiply", "divide")
_CONSTS = (Const("const_100", 100.0), Const("const_1000", 1000.0), Const("const_m1", -1.0))


def _num(d: Decimal) -> Num:
    text = f"{d:f}"  # plainly: "12.5", "0.07", "300" -- the parser keeps this text
    return Num(float(text), text)


_decimals = st.integers(min_value=0, max_value=3).flatmap(
    lambda places: st.decimals(min_value=Decimal("0.01"), max_value=Decimal("99999"), places=places)
)
leaves = st.one_of(_decimals.map(_num), st.sampled_from(_CONSTS))


def trees(depth: int = 3) -> st.SearchStrategy[Node]:
    """Calls nested at most ``depth`` deep over ``leaves``."""
    if depth == 0:
        return leaves
    smaller = trees(depth - 1)
    calls = st.builds(lambda op, a, b: Call(op, (a, b)), st.sampled_from(_OPS), smaller, smaller)
    return st.one_of(leaves, calls)


@st.composite
def split_into_steps(draw: st.DrawFn, tree: Node, *, every: bool = False) -> tuple[Node, ...]:
    """The same computation as DSL steps: the root and some (or ``every``) inner calls become
    steps of their own, referred to by ``#n``, in the order they are computed."""
    steps: list[Node] = []

    def visit(node: Node, top: bool) -> Node:
        if not isinstance(node, Call):
            return node
        call = Call(node.op, tuple(visit(arg, False) for arg in node.args))
        if top or every or draw(st.booleans()):
            steps.append(call)
            return Ref(len(steps) - 1)
        return call

    root = visit(tree, True)
    return tuple(steps) if steps else (root,)


@st.composite
def commuted(draw: st.DrawFn, node: Node) -> Node:
    """The same tree with the arguments of some add/multiply calls swapped."""
    if not isinstance(node, Call):
        return node
    a, b = draw(commuted(node.args[0])), draw(commuted(node.args[1]))
    if node.op in ("add", "multiply") and draw(st.booleans()):
        a, b = b, a
    return Call(node.op, (a, b))


def _text(steps: tuple[Node, ...]) -> str:
    return ", ".join(format_node(step) for step in steps)


def _reference(node: Node, results: list[float] | None = None) -> float:
    """A tiny evaluator, independent of the engine: plain float arithmetic over the tree, in
    the same order, so values agree to the last bit; raises ZeroDivisionError."""
    if isinstance(node, Num | Const):
        return node.value
    if isinstance(node, Ref):
        assert results is not None
        return results[node.index]
    assert isinstance(node, Call)
    a, b = (_reference(arg, results) for arg in node.args)
    if node.op == "add":
        return a + b
    if node.op == "subtract":
        return a - b
    if node.op == "multiply":
        return a * b
    return a / b


def _reference_value(tree: Node) -> float | None:
    try:
        return _reference(tree)
    except ZeroDivisionError:
        return None


_INFIX = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}
_small_ints = st.integers(min_value=-20, max_value=20).map(lambda i: Num(float(i), str(i)))
arithmetic_trees = st.recursive(
    _small_ints,
    lambda kids: st.builds(lambda op, a, b: Call(op, (a, b)), st.sampled_from(tuple(_INFIX)), kids, kids),
    max_leaves=12,
)


def _infix(node) -> str:  # type: ignore[no-untyped-def]
    if isinstance(node, Num):
        return node.text
    return f"({_infix(node.args[0])} {_INFIX[node.op]} {_infix(node.args[1])})"


@settings(max_examples=200, deadline=None)
@given(arithmetic_trees)
def test_execute_agrees_with_reference_evaluator(tree) -> None:  # type: ignore[no-untyped-def]
    try:
        expected = _reference(tree)
    except ZeroDivisionError:
        expected = None
    for text in (format_node(tree), _infix(tree)):
        result = execute_program(text)
        if expected is None:
            assert result.status is ProgramStatus.DIVISION_BY_ZERO, text
        elif not math.isfinite(expected):
            assert result.status is ProgramStatus.NUMERIC_ERROR, text
        else:
            assert result.status is ProgramStatus.OK, (text, result.message)
            assert result.value == expected, text


# --------------------------------------------------------------------------- print and parse
@settings(max_examples=100, deadline=None)
@given(st.data(), trees())
def test_printing_then_parsing_gives_the_same_program(data: st.DataObject, tree: Node) -> None:
    for steps in ((tree,), data.draw(split_into_steps(tree))):
        assert parse_program(_text(steps)).steps == steps


# --------------------------------------------------------------------------- execute
@settings(max_examples=100, deadline=None)
@given(st.data(), trees())
def test_execution_agrees_with_the_reference_evaluator(data: st.DataObject, tree: Node) -> None:
    expected = _reference_value(tree)
    steps = data.draw(split_into_steps(tree))
    for text in (format_node(tree), _text(steps)):
        result = execute_program(text)
        if expected is None:
            assert result.status is ProgramStatus.DIVISION_BY_ZERO, text
            assert "divides by zero" in result.message
        else:
            assert result.status is ProgramStatus.OK, (text, result.message)
            assert isinstance(result.value, float)
            assert math.isclose(result.value, expected, rel_tol=1e-9, abs_tol=0.0), text
    if expected is not None:
        # each step's value is what #n refers to
        results: list[float] = []
        for step in steps:
            results.append(_reference(step, results))
        assert execute_program(_text(steps)).step_values == tuple(results)


@settings(max_examples=50, deadline=None)
@given(numerator=trees(2), zero_of=leaves)
def test_division_by_zero_is_a_status(numerator: Node, zero_of: Node) -> None:
    program = Call("divide", (numerator, Call("subtract", (zero_of, zero_of))))
    result = execute_program(format_node(program))
    assert result.status is ProgramStatus.DIVISION_BY_ZERO
    assert result.value is None and result.message


# --------------------------------------------------------------------------- equivalence
@settings(max_examples=60, deadline=None)
@given(st.data(), trees())
def test_equivalence_is_reflexive_and_sees_through_steps(data: st.DataObject, tree: Node) -> None:
    nested = format_node(tree)
    steps = _text(data.draw(split_into_steps(tree)))
    every = _text(data.draw(split_into_steps(tree, every=True)))
    for a, b in ((nested, nested), (steps, steps), (nested, steps), (steps, nested), (nested, every)):
        match = compare_programs(a, b)
        assert match.equivalent and match.rule == "canonical", (a, b, match.detail)


@settings(max_examples=40, deadline=None)
@given(a=trees(2), b=trees(2))
def test_equivalence_is_symmetric(a: Node, b: Node) -> None:
    forward, backward = (
        compare_programs(format_node(a), format_node(b)),
        compare_programs(format_node(b), format_node(a)),
    )
    assert (forward.status, backward.status) == ("ok", "ok"), (forward.detail, backward.detail)
    assert forward.equivalent == backward.equivalent


@settings(max_examples=60, deadline=None)
@given(st.data(), trees())
def test_commuted_add_and_multiply_are_equivalent(data: st.DataObject, tree: Node) -> None:
    other = data.draw(commuted(tree))
    assert programs_equivalent(format_node(tree), format_node(other))
    assert programs_equivalent(_text(data.draw(split_into_steps(other))), format_node(tree))


@settings(max_examples=60, deadline=None)
@given(a=trees(2), b=trees(2))
def test_swapped_subtract_arguments_are_not_equivalent(a: Node, b: Node) -> None:
    va, vb = _reference_value(a), _reference_value(b)
    assume(va is not None and vb is not None and not math.isclose(va, vb, rel_tol=1e-9))
    forward, backward = Call("subtract", (a, b)), Call("subtract", (b, a))
    match = compare_programs(format_node(forward), format_node(backward))
    assert match.status == "ok" and not match.equivalent, match.detail


@settings(max_examples=60, deadline=None)
@given(st.data(), trees())
def test_a_program_earns_full_step_credit_against_itself(data: st.DataObject, tree: Node) -> None:
    nested = format_node(tree)
    steps = _text(data.draw(split_into_steps(tree)))
    assert step_credit(nested, nested) == 1.0
    assert step_credit(steps, steps) == 1.0
    assert step_credit(nested, steps) == 1.0
