"""Program equivalence, version 1: compare canonical program trees.

Both programs are parsed, ``#n`` references are resolved by substituting the steps they
name, and the final step is put in a canonical form: numbers and constants become their
values, ``add`` and ``multiply`` are flattened (associativity) and their arguments sorted
(commutativity). Two programs are equivalent when their canonical forms are equal, so
``add(a, b)`` equals ``add(b, a)`` and ``(128 / 1018) * 100`` equals
``divide(128, 1018), multiply(#0, const_100)``. The grading issue replaces this with a
symbolic check; the interface stays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workbench.grading.program import (
    Call,
    Const,
    Node,
    Num,
    Program,
    ProgramSyntaxError,
    Ref,
    TableArg,
    parse_program,
)

__all__ = ["ProgramMatch", "programs_equivalent", "compare_programs", "final_operation"]

_Canon = tuple[object, ...]
_FLATTEN = frozenset({"add", "multiply"})


@dataclass(frozen=True, slots=True)
class ProgramMatch:
    """Outcome of comparing two programs: ``equivalent`` and a readable ``detail``."""

    equivalent: bool
    detail: str


def _resolve(program: Program) -> Node:
    resolved: list[Node] = []

    def substitute(node: Node) -> Node:
        if isinstance(node, Ref):
            if node.index >= len(resolved):
                raise ProgramSyntaxError(f"#{node.index} refers to a later step", 0)
            return resolved[node.index]
        if isinstance(node, Call):
            return Call(node.op, tuple(substitute(a) for a in node.args))
        return node

    for step in program.steps:
        resolved.append(substitute(step))
    return resolved[-1]


def _canon(node: Node) -> _Canon:
    if isinstance(node, Num | Const):
        return ("n", round(node.value, 9))
    if isinstance(node, TableArg):
        return ("t", " ".join(node.text.lower().split()))
    if isinstance(node, Ref):  # unresolved references do not survive _resolve
        return ("r", node.index)
    args = [_canon(a) for a in node.args]
    if node.op in _FLATTEN:
        flat: list[_Canon] = []
        for arg in args:
            flat.extend(arg[1] if arg[0] == node.op else (arg,))  # type: ignore[arg-type]
        return (node.op, tuple(sorted(flat, key=repr)))
    return (node.op, tuple(args))


def compare_programs(pred: str | Sequence[str], gold: str | Sequence[str]) -> ProgramMatch:
    """Compare two programs and say why they are or are not equivalent.

    Examples
    --------
    >>> compare_programs("add(2, 3)", "add(3, 2)").equivalent
    True
    >>> compare_programs("(128 / 1018) * 100", "divide(128, 1018), multiply(#0, const_100)").equivalent
    True
    >>> compare_programs("subtract(1, 2)", "subtract(2, 1)").detail
    'different final computation'
    """
    try:
        pred_tree = _resolve(parse_program(pred))
    except (ProgramSyntaxError, RecursionError) as exc:
        return ProgramMatch(False, f"predicted program does not parse: {exc}")
    try:
        gold_tree = _resolve(parse_program(gold))
    except (ProgramSyntaxError, RecursionError) as exc:
        return ProgramMatch(False, f"gold program does not parse: {exc}")
    if _canon(pred_tree) == _canon(gold_tree):
        return ProgramMatch(True, "same computation up to order of add/multiply arguments")
    return ProgramMatch(False, "different final computation")


def programs_equivalent(a: str | Sequence[str], b: str | Sequence[str]) -> bool:
    """Tell whether two programs compute the same thing (see :func:`compare_programs`).

    Examples
    --------
    >>> programs_equivalent("multiply(2, add(3, 4))", "multiply(add(4, 3), 2)")
    True
    """
    return compare_programs(a, b).equivalent


def final_operation(program: str | None) -> str:
    """Name the operation of a program's last step: ``lookup`` for a bare number.

    Examples
    --------
    >>> final_operation("subtract(60.94, 25.14), divide(#0, 25.14)"), final_operation("60.94")
    ('divide', 'lookup')
    """
    if program is None or not program.strip():
        return "none"
    try:
        last = parse_program(program).steps[-1]
    except (ProgramSyntaxError, RecursionError):
        return "unparsed"
    return last.op if isinstance(last, Call) else "lookup"
