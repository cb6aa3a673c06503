"""Program equivalence: do two programs compute the same thing, symbolically?

Both programs are parsed and their ``#n`` references resolved into one expression tree
per step. Literals become symbols keyed by their value, so ``add(a, b)`` and ``add(b, a)``
agree and ``13.4%`` is the same symbol as ``0.134``; named constants (``const_100``),
powers of ten and small integers stay numbers, so ``divide(x, 100)`` equals
``multiply(x, 0.01)`` and ``multiply(const_100, const_1000)`` folds to ``100000``.
Operations that are not arithmetic (``greater``, ``table_*``, ``exp`` with a symbolic
exponent) are uninterpreted functions of their arguments.

The decision takes three steps, cheapest first:

1. equal canonical trees (``add``/``multiply`` flattened and sorted): equivalent;
2. exact rational evaluation at two pseudo-random points: a difference proves the
   programs differ (no SymPy needed, and most pairs stop here);
3. otherwise SymPy confirms that the difference cancels to zero, under the time limit
   of :mod:`workbench.grading.limits`; a timeout is reported as a status.

Step-level partial credit is the fraction of the gold program's steps whose value, as a
function of the document's numbers, some sub-expression of the predicted program
reproduces.

Size caps, decided before the work, so that a comparison costs at most about one time limit
whatever its input (the CPU limit of :mod:`workbench.grading.limits` covers the SymPy step; the
steps in this process are bounded by size):

* the text of each program is parsed under :data:`~workbench.grading.program.MAX_PROGRAM_CHARS`
  and :data:`~workbench.grading.program.MAX_PROGRAM_DEPTH` (status ``parse_error``);
* with every ``#n`` reference written out, a program may hold at most :data:`MAX_COMPARED_NODES`
  nodes over all its steps and nest at most :data:`MAX_COMPARED_DEPTH` levels; these are counted
  from the parsed steps without writing anything out (a chain of ``add(#n, 1)`` steps grows
  quadratically, a chain of ``add(#n, #n)`` exponentially), and a larger program gets status
  ``too_large``, ``partial_credit`` ``None`` and a detail naming the cap. Real programs are far
  below both (ConvFinQA dev and two model runs: at most 27 nodes, 8 levels).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from workbench.grading.limits import call_with_limit
from workbench.grading.memo import memoize
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

__all__ = [
    "ProgramMatch",
    "EquivalenceStatus",
    "programs_equivalent",
    "compare_programs",
    "step_credit",
    "final_operation",
    "MAX_COMPARED_NODES",
    "MAX_COMPARED_DEPTH",
]

_Canon = tuple[object, ...]
_FLATTEN = frozenset({"add", "multiply"})
_POINTS = (1, 2)
#: Literals kept as numbers rather than symbols: structural constants of programs.
_SMALL_INTEGER = 12
_POWERS_OF_TEN = frozenset(Fraction(10) ** k for k in range(-6, 13))
#: Exact evaluation stops when numbers grow past this many digits (a hostile ``exp``).
_MAX_DIGITS = 2000

#: Most nodes a program may hold, over all its steps, with every ``#n`` reference written out.
MAX_COMPARED_NODES = 2_000
#: Deepest nesting of a program's step with every ``#n`` reference written out.
MAX_COMPARED_DEPTH = 100

EquivalenceStatus = str  # "ok" | "parse_error" | "too_large" | "timeout" | "error"


@dataclass(frozen=True, slots=True)
class ProgramMatch:
    """Outcome of comparing two programs.

    Attributes
    ----------
    equivalent
        Whether they compute the same thing.
    detail
        One readable sentence saying why.
    status
        ``ok``; ``parse_error`` when a side does not parse; ``too_large`` when a side is over
        :data:`MAX_COMPARED_NODES` or :data:`MAX_COMPARED_DEPTH`; ``timeout`` when SymPy ran out
        of time (``equivalent`` is then ``False`` and must not be read as a verdict).
    rule
        What decided: ``canonical``, ``evaluation`` (differs at a test point), ``symbolic``
        (SymPy), or ``none``.
    partial_credit
        Fraction of the gold steps the prediction reproduces (``None`` when a side does
        not parse).
    """

    equivalent: bool
    detail: str
    status: EquivalenceStatus = "ok"
    rule: str = "none"
    partial_credit: float | None = None


# --------------------------------------------------------------------------- trees
class _TooLarge(Exception):
    """A program over :data:`MAX_COMPARED_NODES` or :data:`MAX_COMPARED_DEPTH` once resolved."""


def _check_resolved_size(program: Program) -> None:
    """Count the nodes and depth of the program's steps with references written out, from the
    parsed steps (each node visited once), and refuse a program over the caps."""
    sizes: list[int] = []
    depths: list[int] = []

    def measure(node: Node) -> tuple[int, int]:  # a step's own nesting is capped by the parser
        if isinstance(node, Ref):
            if node.index >= len(sizes):
                raise ProgramSyntaxError(f"#{node.index} refers to a later step", 0)
            return sizes[node.index], depths[node.index]
        if isinstance(node, Call):
            size, depth = 1, 0
            for arg in node.args:
                arg_size, arg_depth = measure(arg)
                size, depth = size + arg_size, max(depth, arg_depth)
            return size, depth + 1
        return 1, 1

    total = 0
    for step in program.steps:
        size, depth = measure(step)
        total += size
        sizes.append(size)
        depths.append(depth)
        if total > MAX_COMPARED_NODES:
            raise _TooLarge(
                f"with its #n references written out, its first {len(sizes):,} steps hold {total:,} nodes, "
                f"more than {MAX_COMPARED_NODES:,} (equivalence.MAX_COMPARED_NODES)"
            )
        if depth > MAX_COMPARED_DEPTH:
            raise _TooLarge(
                f"with its #n references written out, step #{len(sizes) - 1} nests {depth:,} levels deep, "
                f"more than {MAX_COMPARED_DEPTH} (equivalence.MAX_COMPARED_DEPTH)"
            )


def _resolve_steps(program: Program) -> list[Node]:
    """Each top-level step with ``#n`` references replaced by the steps they name."""
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
    return resolved


def _canon(node: Node) -> _Canon:
    if isinstance(node, Num | Const):
        return ("n", round(node.value, 9))
    if isinstance(node, TableArg):
        return ("t", " ".join(node.text.lower().split()))
    if isinstance(node, Ref):  # unresolved references do not survive _resolve_steps
        return ("r", node.index)
    args = [_canon(a) for a in node.args]
    if node.op in _FLATTEN:
        flat: list[_Canon] = []
        for arg in args:
            flat.extend(arg[1] if arg[0] == node.op else (arg,))  # type: ignore[arg-type]
        return (node.op, tuple(sorted(flat, key=repr)))
    return (node.op, tuple(args))


def _is_structural(node: Num | Const) -> bool:
    return isinstance(node, Const) or _structural_number(node.value)


@memoize(max_chars=0, maxsize=1 << 14)
def _structural_number(number: float) -> bool:
    value = Fraction(repr(number)) if number == number else Fraction(0)
    return (value.denominator == 1 and abs(value) <= _SMALL_INTEGER) or abs(value) in _POWERS_OF_TEN


def _symbol_key(node: Num | TableArg) -> str:
    if isinstance(node, TableArg):
        return "t:" + " ".join(node.text.lower().split())
    return f"n:{node.value:.9g}"


# --------------------------------------------------------------------------- evaluation
class _Undefined(Exception):
    """Evaluation at a test point divided by zero or grew too large."""


@memoize(max_chars=4096)
def _point_value(key: str, point: int) -> Fraction:
    digest = hashlib.blake2b(f"{point}|{key}".encode(), digest_size=8).digest()
    numerator = int.from_bytes(digest[:5], "big") % 1_000_003 + 1_009
    denominator = (1, 3, 7, 11, 13, 17, 19, 23)[digest[5] % 8]
    return Fraction(numerator, denominator)


def _check_size(value: Fraction) -> Fraction:
    if value.numerator.bit_length() > _MAX_DIGITS * 3.33 or value.denominator.bit_length() > _MAX_DIGITS * 3.33:
        raise _Undefined("value too large")
    return value


def _evaluate(node: Node, point: int, memo: dict[int, Fraction]) -> Fraction:
    cached = memo.get(id(node))
    if cached is not None:
        return cached
    if isinstance(node, Num | Const):
        if node.value != node.value or node.value in (float("inf"), float("-inf")):
            raise _Undefined("not finite")
        value = Fraction(repr(node.value)) if _is_structural(node) else _point_value(_symbol_key(node), point)  # type: ignore[arg-type]
    elif isinstance(node, TableArg):
        value = _point_value(_symbol_key(node), point)
    elif isinstance(node, Ref):
        raise _Undefined("unresolved reference")
    else:
        args = [_evaluate(a, point, memo) for a in node.args if not isinstance(a, TableArg)]
        value = _apply(node, args, point)
    memo[id(node)] = value
    return _check_size(value)


def _apply(node: Call, args: list[Fraction], point: int) -> Fraction:
    op = node.op
    try:
        if op == "add" and args:
            return sum(args, Fraction(0))
        if op == "subtract" and len(args) == 2:
            return args[0] - args[1]
        if op == "multiply" and args:
            out = Fraction(1)
            for a in args:
                out *= a
            return out
        if op == "divide" and len(args) == 2:
            return args[0] / args[1]
        if op == "negate" and len(args) == 1:
            return -args[0]
        if op == "exp" and len(args) == 2 and args[1].denominator == 1 and abs(args[1]) <= 64:
            return args[0] ** int(args[1])
    except ZeroDivisionError:
        raise _Undefined("division by zero") from None
    # not arithmetic: an uninterpreted function of its arguments (row labels included)
    labels = [_symbol_key(a) for a in node.args if isinstance(a, TableArg)]
    return _point_value(f"f:{op}|{labels}|{[str(a) for a in args]}", point)


@memoize(max_chars=0, maxsize=1 << 15)  # a node is frozen: the same sub-computation recurs across turns and runs
def _signature(node: Node) -> tuple[Fraction, ...] | None:
    try:
        return tuple(_evaluate(node, point, {}) for point in _POINTS)
    except (_Undefined, RecursionError, OverflowError, ValueError):
        return None


def _subtrees(node: Node) -> list[Node]:
    out = [node]
    if isinstance(node, Call):
        for arg in node.args:
            out.extend(_subtrees(arg))
    return out


# --------------------------------------------------------------------------- SymPy
def _to_sympy(node: Node):  # type: ignore[no-untyped-def]
    import sympy

    if isinstance(node, Num | Const):
        if _is_structural(node):
            return sympy.Rational(repr(node.value))
        return sympy.Symbol("v_" + hashlib.blake2b(_symbol_key(node).encode(), digest_size=6).hexdigest())  # type: ignore[arg-type]
    if isinstance(node, TableArg):
        return sympy.Symbol("t_" + hashlib.blake2b(_symbol_key(node).encode(), digest_size=6).hexdigest())
    if isinstance(node, Ref):
        raise ValueError("unresolved reference")
    args = [_to_sympy(a) for a in node.args]
    if node.op == "add":
        return sympy.Add(*args)
    if node.op == "subtract" and len(args) == 2:
        return args[0] - args[1]
    if node.op == "multiply":
        return sympy.Mul(*args)
    if node.op == "divide" and len(args) == 2:
        return args[0] / args[1]
    if node.op == "negate" and len(args) == 1:
        return -args[0]
    if node.op == "exp" and len(args) == 2:
        return sympy.Pow(args[0], args[1], evaluate=False) if args[1].is_Symbol else args[0] ** args[1]
    return sympy.Function(node.op)(*args)


def sympy_difference_is_zero(a: Node, b: Node) -> bool:
    """Whether ``a - b`` simplifies to zero (run through :func:`~workbench.grading.limits.call_with_limit`)."""
    import sympy

    difference = sympy.cancel(sympy.together(_to_sympy(a) - _to_sympy(b)))
    return bool(difference == 0 or sympy.simplify(difference) == 0)


# --------------------------------------------------------------------------- public
def _parse(program: str | Sequence[str] | Program) -> list[Node]:
    parsed = program if isinstance(program, Program) else parse_program(program)
    _check_resolved_size(parsed)
    return _resolve_steps(parsed)


def _credit(pred_steps: list[Node], gold_steps: list[Node]) -> float | None:
    """Share of the gold's operations reproduced; ``None`` for a gold with no operation
    (a lookup), whose credit is then all or nothing."""
    operations = [step for step in gold_steps if isinstance(step, Call)]
    if not operations:
        return None
    available = set()
    for step in pred_steps:
        for sub in _subtrees(step):
            if isinstance(sub, Call):
                signature = _signature(sub)
                if signature is not None:
                    available.add(signature)
    hits = sum(1 for step in operations if _signature(step) in available)
    return hits / len(operations)


def _match(equivalent: bool, detail: str, status: str, rule: str, credit: float | None) -> ProgramMatch:
    if credit is None and status == "ok":
        credit = 1.0 if equivalent else 0.0
    elif equivalent:
        credit = 1.0
    return ProgramMatch(equivalent, detail, status, rule, credit)


def compare_programs(
    pred: str | Sequence[str] | Program, gold: str | Sequence[str] | Program, *, time_limit: float | None = None
) -> ProgramMatch:
    """Compare two programs and say why they are or are not equivalent.

    Examples
    --------
    >>> m = compare_programs("add(2.5, 3.5)", "add(3.5, 2.5)")
    >>> m.equivalent, m.rule
    (True, 'canonical')
    >>> compare_programs("(128 / 1018) * 100", "divide(128, 1018), multiply(#0, const_100)").equivalent
    True
    >>> m = compare_programs("subtract(divide(52, 40), 1)", "subtract(52, 40), divide(#0, 40)")
    >>> m.equivalent, m.rule
    (True, 'symbolic')
    >>> m = compare_programs("subtract(52, 40)", "subtract(52, 40), divide(#0, 40)")
    >>> m.equivalent, m.partial_credit
    (False, 0.5)
    >>> chain = ", ".join(["add(1, 1)"] + [f"add(#{i}, 1)" for i in range(499)])  # 500 steps
    >>> m = compare_programs(chain, "add(1, 1)")
    >>> m.status, m.partial_credit
    ('too_large', None)
    >>> m.detail
    'predicted program is too large to compare: with its #n references written out, its first 44 steps hold 2,024 nodes, more than 2,000 (equivalence.MAX_COMPARED_NODES)'
    """
    if isinstance(pred, str) and isinstance(gold, str):
        return _compare_texts(pred, gold, time_limit)  # each distinct pair once per process
    return _compare(pred, gold, time_limit)


@memoize(max_chars=8192, maxsize=1 << 15)
def _compare_texts(pred: str, gold: str, time_limit: float | None) -> ProgramMatch:
    return _compare(pred, gold, time_limit)


def _compare(
    pred: str | Sequence[str] | Program, gold: str | Sequence[str] | Program, time_limit: float | None
) -> ProgramMatch:
    try:
        pred_steps = _parse(pred)
    except (ProgramSyntaxError, RecursionError) as exc:
        return ProgramMatch(False, f"predicted program does not parse: {exc}", "parse_error")
    except _TooLarge as exc:
        return ProgramMatch(False, f"predicted program is too large to compare: {exc}", "too_large")
    try:
        gold_steps = _parse(gold)
    except (ProgramSyntaxError, RecursionError) as exc:
        return ProgramMatch(False, f"gold program does not parse: {exc}", "parse_error")
    except _TooLarge as exc:
        return ProgramMatch(False, f"gold program is too large to compare: {exc}", "too_large")
    if not pred_steps or not gold_steps:
        return ProgramMatch(False, "a program is empty", "parse_error")
    try:
        credit = _credit(pred_steps, gold_steps)
        pred_tree, gold_tree = pred_steps[-1], gold_steps[-1]
        if _canon(pred_tree) == _canon(gold_tree):
            return _match(True, "same computation up to the order of add/multiply arguments", "ok", "canonical", credit)
        pred_sig, gold_sig = _signature(pred_tree), _signature(gold_tree)
    except RecursionError:
        return ProgramMatch(False, "a program nests too deeply to compare", "error")
    if pred_sig is not None and gold_sig is not None and pred_sig != gold_sig:
        return _match(False, "different computation: the programs disagree at a test point", "ok", "evaluation", credit)

    outcome = call_with_limit(sympy_difference_is_zero, pred_tree, gold_tree, time_limit=time_limit)
    if outcome.status.value == "timeout":
        return _match(False, f"symbolic comparison timed out ({outcome.message})", "timeout", "symbolic", credit)
    if not outcome.ok:
        return _match(False, f"symbolic comparison failed: {outcome.message}", "error", "symbolic", credit)
    if outcome.value:
        return _match(True, "same computation: SymPy reduces the difference to zero", "ok", "symbolic", credit)
    return _match(False, "different computation: SymPy leaves a non-zero difference", "ok", "symbolic", credit)


def programs_equivalent(a: str | Sequence[str], b: str | Sequence[str]) -> bool:
    """Tell whether two programs compute the same thing: symbolically, not by string
    equality (commutativity, associativity, constant folding, ``#n`` references resolved).

    A symbolic comparison that runs out of time gives ``False``; use
    :func:`compare_programs` to see its status.

    Examples
    --------
    >>> programs_equivalent("multiply(2, add(3, 4))", "multiply(add(4, 3), 2)")
    True
    >>> programs_equivalent("subtract(60.94, 25.14), divide(#0, 25.14)", "(60.94 - 25.14) / 25.14")
    True
    >>> programs_equivalent("divide(52.3, const_100)", "multiply(52.3, 0.01)")
    True
    >>> programs_equivalent("subtract(5829, 5735)", "subtract(5735, 5829)")
    False
    >>> programs_equivalent(["subtract(", "5829", "5735", ")", "EOF"], "5829 - 5735")
    True
    """
    return compare_programs(a, b).equivalent


def step_credit(pred: str | Sequence[str], gold: str | Sequence[str]) -> float | None:
    """The fraction of the gold program's steps that the predicted program reproduces
    (some sub-expression of the prediction computes the same function of the document's
    numbers); ``None`` when a side does not parse.

    Examples
    --------
    >>> step_credit("divide(subtract(206588, 181001), 181001)", "subtract(206588, 181001), divide(#0, 181001)")
    1.0
    >>> step_credit("subtract(206588, 181001)", "subtract(206588, 181001), divide(#0, 181001)")
    0.5
    """
    return compare_programs(pred, gold).partial_credit


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
