"""The FinQA / ConvFinQA program language: tokenize, parse, execute.

One parser reads the three forms programs come in and builds one tree:

* the DSL, as steps separated by commas: ``subtract(60.94, 25.14), divide(#0, 25.14)``;
* nested calls: ``divide(72, multiply(6, 210))``;
* plain arithmetic: ``(26.7 - 30.5) / 30.5``;

and leaderboard token lists (``["subtract(", "5829", "5735", ")", "EOF"]``) are joined
into the DSL form first. Execution returns a :class:`ProgramResult` with the value, a
step-by-step trace, and a typed status when it fails; it never raises for a bad program.

Size caps, decided before the work (real programs are far below them: in the ConvFinQA dev set
and two model runs, at most 120 characters and 8 levels of nesting):

* :data:`MAX_PROGRAM_CHARS`: a longer program (or token list) is not parsed;
* :data:`MAX_PROGRAM_DEPTH`: a step nested deeper (calls, parentheses, unary signs, or a chain
  of infix operators) stops the parser at that point.

Both raise :class:`ProgramSyntaxError` (status ``parse_error`` when executed), so parsing is
linear in the capped length and no later tree walk can exceed Python's recursion limit.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from workbench.grading import patterns
from workbench.grading.status import ProgramStatus
from workbench.grading.table import TableRows, cell_value, row_key, table_grid, table_rows

__all__ = [
    "Num",
    "Ref",
    "Const",
    "Call",
    "TableArg",
    "Node",
    "Program",
    "Step",
    "trace_lines",
    "ProgramResult",
    "ProgramSyntaxError",
    "MAX_PROGRAM_CHARS",
    "MAX_PROGRAM_DEPTH",
    "OPERATIONS",
    "parse_program",
    "execute_program",
    "join_token_list",
    "table_grid",
    "table_rows",
    "cell_value",
    "format_node",
    "walk",
    "literal_numbers",
    "operations",
    "TableRows",
]

Value = float | bool

#: Longest program text (or joined token list) that is parsed, in characters.
MAX_PROGRAM_CHARS = 10_000
#: Deepest nesting of one step: calls, parentheses, unary signs and chained infix operators.
MAX_PROGRAM_DEPTH = 50


# --------------------------------------------------------------------------- tree
@dataclass(frozen=True, slots=True)
class Num:
    """A literal number; ``text`` keeps how it was written (``13.4%``)."""

    value: float
    text: str


@dataclass(frozen=True, slots=True)
class Ref:
    """``#n``: the result of top-level step ``n``."""

    index: int


@dataclass(frozen=True, slots=True)
class Const:
    """A named constant such as ``const_100`` or ``const_m1``."""

    name: str
    value: float


@dataclass(frozen=True, slots=True)
class TableArg:
    """The raw argument of a table operation: a row label, or ``none``."""

    text: str


@dataclass(frozen=True, slots=True)
class Call:
    """An operation applied to arguments."""

    op: str
    args: tuple[Node, ...]


Node = Num | Ref | Const | Call | TableArg


@dataclass(frozen=True, slots=True)
class Program:
    """A parsed program: its top-level steps, in order."""

    steps: tuple[Node, ...]
    source: str


class ProgramSyntaxError(ValueError):
    """Raised by :func:`parse_program` with the position of the problem."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} at character {position}")
        self.position = position


# --------------------------------------------------------------------------- ops
@dataclass(frozen=True, slots=True)
class Operation:
    """One operation of the language: its name, arity and how it computes."""

    name: str
    arity: int
    symbol: str
    compute: Callable[..., Value]
    is_table: bool = False


def _divide(a: float, b: float) -> float:
    return a / b


def _exp(a: float, b: float) -> float:
    return math.pow(a, b)


def _greater(a: float, b: float) -> bool:
    return a > b


OPERATIONS: Mapping[str, Operation] = {
    op.name: op
    for op in (
        Operation("add", 2, "+", operator.add),
        Operation("subtract", 2, "-", operator.sub),
        Operation("multiply", 2, "*", operator.mul),
        Operation("divide", 2, "/", _divide),
        Operation("exp", 2, "**", _exp),
        Operation("greater", 2, ">", _greater),
        Operation("negate", 1, "-", operator.neg),
        Operation("table_max", 1, "max", max, is_table=True),
        Operation("table_min", 1, "min", min, is_table=True),
        Operation("table_sum", 1, "sum", math.fsum, is_table=True),
        Operation("table_average", 1, "avg", lambda v: math.fsum(v) / len(v), is_table=True),
    )
}
"""Operations of the language, by name. ``negate`` is unary minus in plain arithmetic."""

_INFIX: Mapping[str, str] = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide"}


# --------------------------------------------------------------------------- parse
def join_token_list(tokens: Sequence[str]) -> str:
    """Join a leaderboard token list into DSL text.

    Examples
    --------
    >>> join_token_list(["subtract(", "5829", "5735", ")", "divide(", "#0", "5735", ")", "EOF"])
    'subtract(5829, 5735), divide(#0, 5735)'
    """
    out: list[str] = []
    need_sep = False
    depth = 0
    for raw in tokens:
        tok = str(raw).strip()
        if tok == "EOF":
            break
        if tok == ")":
            out.append(")")
            depth -= 1
            need_sep = True
            continue
        if need_sep:
            out.append(", ")
        out.append(tok)
        if tok.endswith("("):
            depth += 1
            need_sep = False
        else:
            need_sep = True
    return "".join(out)


class _Parser:
    """Recursive-descent parser over characters (table row labels are free text)."""

    def __init__(self, text: str) -> None:
        self.text = patterns.UNICODE_MINUS.sub("-", text)
        self.pos = 0
        # the token at ``_token_at`` (the grammar looks at one token several times)
        self._token_at = -1
        self._token: tuple[str, str] | None = None
        self._token_end = 0
        self.nesting = 0  # unary() frames on the parser's stack
        self.depths: dict[int, int] = {}  # id of each Call built -> depth of its tree

    def _too_deep(self) -> ProgramSyntaxError:
        return ProgramSyntaxError(
            f"the program nests deeper than {MAX_PROGRAM_DEPTH} levels (program.MAX_PROGRAM_DEPTH)", self.pos
        )

    def _call(self, op: str, args: tuple[Node, ...]) -> Call:
        """A :class:`Call`, refused when its tree would be deeper than :data:`MAX_PROGRAM_DEPTH`."""
        depth = 1 + max((self.depths.get(id(a), 1) for a in args), default=0)
        if depth > MAX_PROGRAM_DEPTH:
            raise self._too_deep()
        node = Call(op, args)
        self.depths[id(node)] = depth
        return node

    # tokens ------------------------------------------------------------------
    def _skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def _peek(self) -> tuple[str, str] | None:
        if self.pos == self._token_at:
            return self._token
        self._skip_ws()
        if self.pos >= len(self.text):
            return None
        if self.pos == self._token_at:
            return self._token
        match = patterns.PROGRAM_TOKEN.match(self.text, self.pos)
        if match is None or match.end() == self.pos:
            raise ProgramSyntaxError(f"unexpected character {self.text[self.pos]!r}", self.pos)
        kind = match.lastgroup or ""
        self._token_at, self._token, self._token_end = self.pos, (kind, match.group(kind)), match.end()
        return self._token

    def _next(self) -> tuple[str, str]:
        tok = self._peek()
        if tok is None:
            raise ProgramSyntaxError("unexpected end of program", self.pos)
        self.pos = self._token_end
        return tok

    def _expect(self, punct: str) -> None:
        kind, value = self._next()
        if kind != "punct" or value != punct:
            raise ProgramSyntaxError(f"expected {punct!r} but found {value!r}", self.pos)

    def _at(self, punct: str) -> bool:
        tok = self._peek()
        return tok is not None and tok[0] == "punct" and tok[1] == punct

    # grammar -----------------------------------------------------------------
    def program(self) -> tuple[Node, ...]:
        steps = [self.expression()]
        while self._at(","):
            self._next()
            steps.append(self.expression())
        if self._peek() is not None:
            raise ProgramSyntaxError(f"unexpected {self._peek()[1]!r}", self.pos)  # type: ignore[index]
        return tuple(steps)

    def expression(self) -> Node:
        node = self.term()
        while self._at("+") or self._at("-"):
            _, sym = self._next()
            node = self._call(_INFIX[sym], (node, self.term()))
        return node

    def term(self) -> Node:
        node = self.unary()
        while self._at("*") or self._at("/"):
            _, sym = self._next()
            node = self._call(_INFIX[sym], (node, self.unary()))
        return node

    def unary(self) -> Node:
        self.nesting += 1
        if self.nesting > MAX_PROGRAM_DEPTH:
            raise self._too_deep()
        try:
            return self._unary()
        finally:
            self.nesting -= 1

    def _unary(self) -> Node:
        if self._at("-"):
            self._next()
            inner = self.unary()
            if isinstance(inner, Num):
                return Num(-inner.value, "-" + inner.text)
            return self._call("negate", (inner,))
        if self._at("+"):
            self._next()
            return self.unary()
        return self.power()

    def power(self) -> Node:
        base = self.atom()
        if self._at("**") or self._at("^"):
            self._next()
            return self._call("exp", (base, self.unary()))
        return base

    def atom(self) -> Node:
        start = self.pos
        kind, value = self._next()
        if kind == "number":
            is_pct = value.endswith("%")
            number = float(value.rstrip("%").replace(",", ""))
            return Num(number / 100.0 if is_pct else number, value)
        if kind == "ref":
            return Ref(int(value[1:]))
        if kind == "punct" and value == "(":
            node = self.expression()
            self._expect(")")
            return node
        if kind == "name":
            const = patterns.CONST_NAME.match(value)
            if const is not None:
                number = float(const.group("digits"))
                return Const(value.lower(), -number if const.group("neg") else number)
            op = value.lower()
            if not self._at("("):
                raise ProgramSyntaxError(f"unknown name {value!r}", start)
            self._next()
            if op.startswith("table_"):
                return self._call(op, self._table_args())
            args: list[Node] = [self.expression()]
            while self._at(","):
                self._next()
                args.append(self.expression())
            self._expect(")")
            return self._call(op, tuple(args))
        raise ProgramSyntaxError(f"unexpected {value!r}", start)

    def _table_args(self) -> tuple[Node, ...]:
        close = self.text.find(")", self.pos)
        if close < 0:
            raise ProgramSyntaxError("table operation without ')'", self.pos)
        inner = self.text[self.pos : close]
        self.pos = close + 1
        label, _, rest = inner.rpartition(",")
        if not label:
            label, rest = rest, "none"
        return (TableArg(label.strip()), TableArg(rest.strip()))


def parse_program(program: str | Sequence[str]) -> Program:
    """Parse a program in any of its forms into a :class:`Program`.

    Raises
    ------
    ProgramSyntaxError
        When the text is not a program, is longer than :data:`MAX_PROGRAM_CHARS`, or nests
        deeper than :data:`MAX_PROGRAM_DEPTH`; the message gives the character position.

    Examples
    --------
    >>> parse_program("divide(#0, 13.4%)").steps
    (Call(op='divide', args=(Ref(index=0), Num(value=0.134, text='13.4%'))),)
    >>> format_node(parse_program("(26.7 - 30.5) / 30.5").steps[0])
    'divide(subtract(26.7, 30.5), 30.5)'
    >>> parse_program("(" * 100 + "1" + ")" * 100)
    Traceback (most recent call last):
    ...
    workbench.grading.program.ProgramSyntaxError: the program nests deeper than 50 levels (program.MAX_PROGRAM_DEPTH) at character 50
    """
    if not isinstance(program, str) and len(program) > MAX_PROGRAM_CHARS:
        raise ProgramSyntaxError(
            f"the program has {len(program):,} tokens, more than {MAX_PROGRAM_CHARS:,} "
            "(program.MAX_PROGRAM_CHARS); it is not read",
            0,
        )
    text = program if isinstance(program, str) else join_token_list(program)
    if len(text) > MAX_PROGRAM_CHARS:
        raise ProgramSyntaxError(
            f"the program is {len(text):,} characters long, more than {MAX_PROGRAM_CHARS:,} "
            "(program.MAX_PROGRAM_CHARS); it is not read",
            0,
        )
    if len(text) <= _CACHED_TEXT:
        return _parse_cached(text)
    return _parse_text(text)


#: Programs up to this length are parsed once per process: grading parses the same gold
#: program for every system and policy, and a :class:`Program` is immutable.
_CACHED_TEXT = 4096


def _parse_text(text: str) -> Program:
    if not text.strip():
        raise ProgramSyntaxError("empty program", 0)
    return Program(steps=_Parser(text).program(), source=text)


_parse_cached = functools.lru_cache(maxsize=1 << 16)(_parse_text)


def format_node(node: Node) -> str:
    """Write a node back in DSL form (nested calls for nested nodes).

    Examples
    --------
    >>> format_node(Call("add", (Num(1.0, "1"), Const("const_100", 100.0))))
    'add(1, const_100)'
    """
    if isinstance(node, Num):
        return node.text
    if isinstance(node, Ref):
        return f"#{node.index}"
    if isinstance(node, Const):
        return node.name
    if isinstance(node, TableArg):
        return node.text
    return f"{node.op}({', '.join(format_node(a) for a in node.args)})"


def walk(program: Program) -> list[Node]:
    """Every node of a program, depth first, steps in order.

    Examples
    --------
    >>> [type(n).__name__ for n in walk(parse_program("divide(#0, 13.4%)"))]
    ['Call', 'Ref', 'Num']
    """
    out: list[Node] = []
    stack: list[Node] = list(reversed(program.steps))
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, Call):
            stack.extend(reversed(node.args))
    return out


def literal_numbers(program: Program) -> list[Num]:
    """The literal numbers a program uses (not constants, not ``#n`` references), in order.

    Examples
    --------
    >>> [n.text for n in literal_numbers(parse_program("subtract(60.94, const_100), divide(#0, 25.14)"))]
    ['60.94', '25.14']
    """
    return [node for node in walk(program) if isinstance(node, Num)]


def operations(program: Program) -> list[str]:
    """The operations a program applies, in order (``negate`` included; none for a lookup).

    Examples
    --------
    >>> operations(parse_program("(26.7 - 30.5) / 30.5"))
    ['divide', 'subtract']
    """
    return [node.op for node in walk(program) if isinstance(node, Call)]


# --------------------------------------------------------------------------- execute
@dataclass(frozen=True, slots=True)
class Step:
    """One executed operation of the trace.

    ``top_level`` is the index of the top-level step (``#n``) this operation belongs to.
    """

    top_level: int
    op: str
    args: tuple[str, ...]
    values: tuple[Value, ...]
    result: Value

    def describe(self) -> str:
        """One line such as ``#0 subtract(60.94, 25.14) = 35.8``."""
        shown = ", ".join(_show(v) for v in self.values)
        return f"#{self.top_level} {self.op}({shown}) = {_show(self.result)}"


def trace_lines(steps: Sequence[Step]) -> tuple[str, ...]:
    """The trace as lines, each operation labelled once: ``#n`` for top-level step ``n`` (what
    ``#n`` in a program refers to), ``#n.1``, ``#n.2``... for the operations nested inside it.

    Examples
    --------
    >>> trace_lines(execute_program("divide(subtract(60.94, 25.14), 25.14)").steps)
    ('#0.1 subtract(60.94, 25.14) = 35.8', '#0 divide(35.8, 25.14) = 1.424025457')
    """
    last = {step.top_level: index for index, step in enumerate(steps)}
    nested: dict[int, int] = {}
    lines = []
    for index, step in enumerate(steps):
        line = step.describe()
        if last[step.top_level] != index:  # an operation inside the step, not the step itself
            nested[step.top_level] = nested.get(step.top_level, 0) + 1
            line = f"#{step.top_level}.{nested[step.top_level]}" + line[len(f"#{step.top_level}") :]
        lines.append(line)
    return tuple(lines)


def _show(value: Value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"{value:.10g}"


@dataclass(frozen=True, slots=True)
class ProgramResult:
    """The outcome of executing a program.

    Attributes
    ----------
    status
        :class:`ProgramStatus`; ``ok`` when ``value`` is meaningful.
    value
        The last step's value: a float, or a bool for ``greater``; ``None`` on failure.
    steps
        The trace, one :class:`Step` per operation in execution order.
    message
        Why execution failed (empty when ``status`` is ``ok``).
    step_values
        The value of each top-level step (what ``#0``, ``#1``... refer to), when ``ok``.
    """

    status: ProgramStatus
    value: Value | None
    steps: tuple[Step, ...] = ()
    message: str = ""
    step_values: tuple[Value, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.status is ProgramStatus.OK

    @property
    def answer(self) -> str | None:
        """The value as an answer string (``yes``/``no`` for booleans), rounded to 5 decimals."""
        if self.value is None:
            return None
        if isinstance(self.value, bool):
            return "yes" if self.value else "no"
        return f"{round(self.value, 5):.10g}"


class _ExecutionError(Exception):
    def __init__(self, status: ProgramStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Executor:
    def __init__(self, table: TableRows | None) -> None:
        self.table = table
        self.results: list[Value] = []
        self.trace: list[Step] = []

    def run(self, node: Node, top: int) -> Value:
        if isinstance(node, Num | Const):
            if not math.isfinite(node.value):  # a literal such as 1e999
                raise _ExecutionError(ProgramStatus.NUMERIC_ERROR, f"{format_node(node)} is not finite")
            return node.value
        if isinstance(node, Ref):
            if node.index >= len(self.results):
                raise _ExecutionError(
                    ProgramStatus.BAD_REFERENCE,
                    f"#{node.index} refers to a step that does not come before step #{top}",
                )
            return self.results[node.index]
        if isinstance(node, TableArg):
            raise _ExecutionError(ProgramStatus.BAD_ARGUMENT, f"{node.text!r} is not a number")
        operation = OPERATIONS.get(node.op)
        if operation is None:
            raise _ExecutionError(
                ProgramStatus.UNKNOWN_OPERATION,
                f"unknown operation {node.op!r}; known: {', '.join(sorted(OPERATIONS))}",
            )
        if operation.is_table:
            return self._table(node, operation, top)
        if len(node.args) != operation.arity:
            raise _ExecutionError(
                ProgramStatus.BAD_ARITY,
                f"{node.op} takes {operation.arity} arguments, got {len(node.args)}",
            )
        values = tuple(self.run(arg, top) for arg in node.args)
        if node.op != "greater" and any(isinstance(v, bool) for v in values):
            raise _ExecutionError(ProgramStatus.BAD_ARGUMENT, f"{node.op} got a yes/no value")
        try:
            result = operation.compute(*values)
        except ZeroDivisionError:
            raise _ExecutionError(ProgramStatus.DIVISION_BY_ZERO, f"{format_node(node)} divides by zero") from None
        except (OverflowError, ValueError) as exc:
            raise _ExecutionError(ProgramStatus.NUMERIC_ERROR, f"{format_node(node)}: {exc}") from None
        if isinstance(result, float) and not math.isfinite(result):
            raise _ExecutionError(ProgramStatus.NUMERIC_ERROR, f"{format_node(node)} is not finite")
        self._record(top, node, values, result)
        return result

    def _table(self, node: Call, operation: Operation, top: int) -> Value:
        label = node.args[0].text if node.args and isinstance(node.args[0], TableArg) else ""
        if self.table is None:
            raise _ExecutionError(ProgramStatus.NEEDS_TABLE, f"{node.op}({label}) needs the document's table")
        row = self.table.get(row_key(label))
        if row is None:
            raise _ExecutionError(ProgramStatus.TABLE_ROW_NOT_FOUND, f"no table row named {label!r}")
        numbers = [v for v in row if v is not None]
        if not numbers:
            raise _ExecutionError(ProgramStatus.BAD_ARGUMENT, f"table row {label!r} has no numbers")
        result = float(operation.compute(numbers))
        self._record(top, node, tuple(numbers), result)
        return result

    def _record(self, top: int, node: Call, values: tuple[Value, ...], result: Value) -> None:
        args = tuple(format_node(a) for a in node.args)
        self.trace.append(Step(top, node.op, args, values, result))


def execute_program(program: str | Sequence[str] | Program, *, table: TableRows | None = None) -> ProgramResult:
    """Parse and execute a program; never raises for a bad program.

    Parameters
    ----------
    program
        DSL text, nested calls, plain arithmetic, a leaderboard token list, or a parsed
        :class:`Program`.
    table
        Rows of the document's table (label to cell values) for ``table_*`` operations;
        see :func:`~workbench.grading.table.table_rows`.

    Returns
    -------
    ProgramResult
        Status, value, and the step trace.

    Examples
    --------
    >>> r = execute_program("subtract(60.94, 25.14), divide(#0, 25.14)")
    >>> r.status.value, r.answer, [s.describe() for s in r.steps]
    ('ok', '1.42403', ['#0 subtract(60.94, 25.14) = 35.8', '#1 divide(35.8, 25.14) = 1.424025457'])
    >>> execute_program(["subtract(", "5829", "5735", ")", "EOF"]).answer  # a leaderboard token list
    '94'
    >>> execute_program("divide(72, multiply(6, 210))").answer  # nested calls
    '0.05714'
    >>> execute_program("(26.7 - 30.5) / 30.5").answer  # plain arithmetic
    '-0.12459'
    >>> execute_program("divide(1, 0)").status.value
    'division_by_zero'
    >>> execute_program("greater(5, 3)").answer
    'yes'
    """
    if isinstance(program, Program):
        parsed = program
    else:
        try:
            parsed = parse_program(program)
        except ProgramSyntaxError as exc:
            status = ProgramStatus.EMPTY if str(exc).startswith("empty") else ProgramStatus.PARSE_ERROR
            return ProgramResult(status, None, (), str(exc))
        except RecursionError:
            return ProgramResult(ProgramStatus.PARSE_ERROR, None, (), "program nests too deeply")
    executor = _Executor(table)
    try:
        for index, step in enumerate(parsed.steps):
            executor.results.append(executor.run(step, index))
    except _ExecutionError as exc:
        return ProgramResult(exc.status, None, tuple(executor.trace), str(exc))
    except RecursionError:
        return ProgramResult(ProgramStatus.NUMERIC_ERROR, None, tuple(executor.trace), "program nests too deeply")
    return ProgramResult(
        ProgramStatus.OK,
        executor.results[-1],
        tuple(executor.trace),
        "",
        tuple(executor.results),
    )
