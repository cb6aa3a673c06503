"""Program equivalence (version 1: canonical trees) and the final-operation label."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.grading.equivalence import compare_programs, final_operation, programs_equivalent
from workbench.grading.program import Call, Num, execute_program, format_node
from workbench.grading.status import ProgramStatus


@pytest.mark.parametrize(
    ("pred", "gold"),
    [
        ("add(2, 3)", "add(3, 2)"),  # commutativity
        ("add(1, add(2, 3))", "add(add(3, 1), 2)"),  # associativity
        ("multiply(2, multiply(3, 4))", "multiply(4, multiply(2, 3))"),
        # plain arithmetic against the DSL with a #n reference (module docstring)
        ("(128 / 1018) * 100", "divide(128, 1018), multiply(#0, const_100)"),
        # references resolved: the gold writes in two steps what the model nests
        ("subtract(5, 3), add(#0, 1)", "add(1, subtract(5, 3))"),
        ("100", "const_100"),  # constants compare by value
        ("13.4%", "0.134"),  # percent literals compare by value
        ("table_max(Net Sales, none)", "table_max(net  sales, none)"),  # row label case/space
        ("add(1, 2), 7", "7"),  # only the final computation counts
    ],
)
def test_equivalent_programs(pred: str, gold: str) -> None:
    match = compare_programs(pred, gold)
    assert match.equivalent, match.detail
    assert "same computation" in match.detail
    assert programs_equivalent(gold, pred)


@pytest.mark.parametrize(
    ("pred", "gold", "detail"),
    [
        ("subtract(1, 2)", "subtract(2, 1)", "different computation"),
        ("divide(4, 2)", "divide(2, 4)", "different computation"),
        # same value, different computation: 0.5 is a number from the document (a symbol), not folded
        ("multiply(2, 0.5)", "divide(2, 2)", "different computation"),
        ("add(1,", "add(1, 2)", "predicted program does not parse"),
        ("add(1, 2)", "add(1,", "gold program does not parse"),
        ("add(#1, 2)", "3", "predicted program does not parse: #1 refers to a later step"),
        ("", "3", "predicted program does not parse: empty program"),
    ],
)
def test_programs_that_differ(pred: str, gold: str, detail: str) -> None:
    match = compare_programs(pred, gold)
    assert not match.equivalent
    assert detail in match.detail


@pytest.mark.parametrize(
    ("program", "operation"),
    [
        ("subtract(60.94, 25.14), divide(#0, 25.14)", "divide"),
        ("60.94", "lookup"),
        ("greater(1, 2)", "greater"),
        ("(1 + 2) * 3", "multiply"),
        ("table_sum(revenue, none)", "table_sum"),
        ("add(1,", "unparsed"),
        ("", "none"),
        (None, "none"),
    ],
)
def test_final_operation(program: str | None, operation: str) -> None:
    assert final_operation(program) == operation


# --------------------------------------------------------------------------- properties
_OPS = ("add", "subtract", "multiply", "divide")
trees = st.recursive(
    st.integers(1, 30).map(lambda i: Num(float(i), str(i))),
    lambda kids: st.builds(lambda op, a, b: Call(op, (a, b)), st.sampled_from(_OPS), kids, kids),
    max_leaves=10,
)


@st.composite
def commuted(draw: st.DrawFn, node):  # type: ignore[no-untyped-def]
    """The same tree with the arguments of some add/multiply nodes swapped."""
    if isinstance(node, Num):
        return node
    a, b = draw(commuted(node.args[0])), draw(commuted(node.args[1]))
    if node.op in ("add", "multiply") and draw(st.booleans()):
        a, b = b, a
    return Call(node.op, (a, b))


@settings(max_examples=200, deadline=None)
@given(st.data(), trees)
def test_commuting_add_and_multiply_keeps_equivalence_and_value(data: st.DataObject, tree) -> None:  # type: ignore[no-untyped-def]
    other = data.draw(commuted(tree))
    assert programs_equivalent(format_node(tree), format_node(other))
    a, b = execute_program(format_node(tree)), execute_program(format_node(other))
    assert a.status == b.status
    if a.status is ProgramStatus.OK:
        assert a.value == b.value  # IEEE addition and multiplication are commutative


@settings(max_examples=200, deadline=None)
@given(trees)
def test_every_program_is_equivalent_to_itself(tree) -> None:  # type: ignore[no-untyped-def]
    text = format_node(tree)
    assert programs_equivalent(text, text)
    expected = tree.op if isinstance(tree, Call) else "lookup"
    assert final_operation(text) == expected
