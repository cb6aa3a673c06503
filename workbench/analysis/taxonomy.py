"""Error types: why a wrong turn is wrong, one type per wrong turn.

The type is decided from the strongest evidence first:

1. the grade's own status: no prediction, no answer found (extraction failure), timeout;
2. the predicted program, when there is one (a DSL program, or the arithmetic a system
   wrote, such as ``(128.0 / 1018.0) * 100``): equivalent to the gold program but the answer
   is wrong is an *arithmetic slip*;
3. *carried error*: the turn builds on an earlier turn (see :mod:`workbench.analysis.features`)
   that the same system got wrong;
4. the mismatch the grader found between the answer and the gold: sign, scale, percent,
   rounding (an arithmetic slip);
5. the predicted program again: the same operations as the gold with other numbers is a
   *wrong operand* (for a lookup: another number read), other operations a *wrong
   operator* (a final ``* 100`` that writes a ratio as a percentage does not count);
6. with an answer only: the answer equals the gold program with one operation swapped
   (``a - b`` for ``a / b``): a *wrong operator*; otherwise a *wrong value*.

Correct turns have no error type (null).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from workbench.grading.program import (
    Call,
    Const,
    Node,
    Num,
    Program,
    ProgramSyntaxError,
    TableRows,
    execute_program,
    operations,
    parse_program,
)
from workbench.grading.status import GradeStatus, MatchReason
from workbench.parallel import distinct, same_tables
from workbench.schema import ERROR_TYPE_DTYPE, ErrorType

__all__ = ["ErrorType", "ERROR_TYPE_DTYPE", "ErrorEvidence", "classify_error", "error_types"]


_STATUS_TYPES: Mapping[str, ErrorType] = {
    GradeStatus.NO_PREDICTION.value: ErrorType.MISSING_PREDICTION,
    GradeStatus.NO_ANSWER.value: ErrorType.EXTRACTION_FAILURE,
    GradeStatus.UNPARSEABLE.value: ErrorType.EXTRACTION_FAILURE,
    GradeStatus.TIMEOUT.value: ErrorType.TIMEOUT,
    GradeStatus.NO_GOLD.value: ErrorType.NO_GOLD,
}
_REASON_TYPES: Mapping[str, ErrorType] = {
    MatchReason.SIGN_FLIP.value: ErrorType.SIGN,
    MatchReason.SCALE.value: ErrorType.SCALE,
    MatchReason.PERCENT_CONFUSION.value: ErrorType.PERCENT,
    MatchReason.ROUNDING.value: ErrorType.ARITHMETIC_SLIP,
}
_SWAPPABLE = ("add", "subtract", "multiply", "divide")
_REL_TOL = 1e-3


@dataclass(frozen=True, slots=True)
class ErrorEvidence:
    """What :func:`classify_error` looks at for one wrong turn."""

    status: str
    reason: str
    program_correct: bool | None = None
    predicted_program: str | None = None
    gold_program: str | None = None
    pred_value: float | None = None
    gold_value: float | None = None
    carried: bool = False


def _parse(program: str | None) -> Program | None:
    if not program or not program.strip():
        return None
    try:
        return parse_program(program)
    except (ProgramSyntaxError, RecursionError):
        return None


def _is_hundred(node: Node) -> bool:
    return isinstance(node, Num | Const) and node.value == 100.0


def _core_operations(program: Program) -> Counter[str]:
    """Operations of a program, without a final ``* 100`` (a percent written as a number)."""
    ops = Counter(operations(program))
    last = program.steps[-1]
    if isinstance(last, Call) and last.op == "multiply" and any(_is_hundred(a) for a in last.args):
        ops["multiply"] -= 1
    return +ops


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= _REL_TOL * max(abs(a), abs(b), 1e-12)


def _swapped_operator_matches(gold: Program, value: float, table: TableRows | None) -> bool:
    """Whether some gold program with one operation swapped for another gives ``value``."""
    if not gold.steps:
        return False

    def replace(node: Node, target: int, counter: list[int], op: str) -> Node:
        if not isinstance(node, Call):
            return node
        args = tuple(replace(a, target, counter, op) for a in node.args)
        index = counter[0]
        counter[0] += 1
        return Call(op if index == target and node.op in _SWAPPABLE else node.op, args)

    n_calls = len(operations(gold))
    for target in range(n_calls):
        for op in _SWAPPABLE:
            counter = [0]
            steps = tuple(replace(s, target, counter, op) for s in gold.steps)
            if steps == gold.steps:
                continue
            result = execute_program(Program(steps, gold.source), table=table)
            if result.ok and not isinstance(result.value, bool) and _close(float(result.value), value):  # type: ignore[arg-type]
                return True
    return False


def classify_error(evidence: ErrorEvidence, *, table: TableRows | None = None) -> ErrorType:
    """The error type of one wrong turn (see the module docstring for the order of rules).

    Examples
    --------
    >>> classify_error(ErrorEvidence(status="no_answer", reason="no_answer")).value
    'extraction_failure'
    >>> classify_error(ErrorEvidence("ok", "wrong_value", True, "divide(5, 2)", "divide(5, 2)", 2.6, 2.5)).value
    'arithmetic_slip'
    >>> classify_error(ErrorEvidence("ok", "wrong_value", False, "subtract(5, 3)", "subtract(5, 2)", 2.0, 3.0)).value
    'wrong_operand'
    >>> classify_error(ErrorEvidence("ok", "wrong_value", False, "add(5, 3)", "subtract(5, 3)", 8.0, 2.0)).value
    'wrong_operator'
    >>> classify_error(ErrorEvidence("ok", "wrong_value", None, None, "divide(6, 3)", 3.0, 2.0)).value
    'wrong_operator'
    >>> classify_error(ErrorEvidence("ok", "sign_flip", None, None, "subtract(5, 3)", -2.0, 2.0)).value
    'sign'
    """
    by_status = _STATUS_TYPES.get(evidence.status)
    if by_status is not None:
        return by_status
    if evidence.program_correct:
        return ErrorType.ARITHMETIC_SLIP
    if evidence.carried:
        return ErrorType.CARRIED_ERROR
    by_reason = _REASON_TYPES.get(evidence.reason)
    if by_reason is not None:
        return by_reason
    gold = _parse(evidence.gold_program)
    predicted = _parse(evidence.predicted_program)
    if predicted is not None and gold is not None:
        return (
            ErrorType.WRONG_OPERAND
            if _core_operations(predicted) == _core_operations(gold)
            else ErrorType.WRONG_OPERATOR
        )
    if (
        gold is not None
        and evidence.pred_value is not None
        and _swapped_operator_matches(gold, evidence.pred_value, table)
    ):
        return ErrorType.WRONG_OPERATOR
    return ErrorType.WRONG_VALUE


def _carried(turns: pl.DataFrame) -> pl.Series:
    """Per row of ``turns``, whether the turn builds on an earlier wrong turn (``carried``). Only
    the turns that build on some earlier turn are looked up: a benchmark of single questions has
    none, and a join of a million turns on their keys holds hash tables of their ids."""
    keys = ["system", "record_id"]
    builds_on = (pl.col("depends_on").list.len() > 0).fill_null(False)
    rows = turns.select(pl.int_range(pl.len(), dtype=pl.UInt32).alias("_row"), *keys, "depends_on").filter(builds_on)
    carried = pl.repeat(False, turns.height, dtype=pl.Boolean, eager=True).alias("carried")
    if rows.is_empty():
        return carried
    records = rows.get_column("record_id").unique().implode()
    earlier = turns.select(  # the columns read first: a filter copies every column it carries
        *keys, pl.col("turn").alias("depends_on"), pl.col("correct").alias("earlier_correct")
    ).filter(pl.col("record_id").is_in(records))
    flags = (
        rows.explode("depends_on")
        .join(earlier, on=[*keys, "depends_on"], how="left")
        .group_by("_row")
        .agg((pl.col("earlier_correct") == False).any().alias("carried"))  # noqa: E712 (null is not wrong)
    )
    return carried.scatter(flags.get_column("_row"), flags.get_column("carried"))


def error_types(turns: pl.DataFrame, tables: Mapping[str, TableRows] | None = None) -> pl.Series:
    """The ``error_type`` column for a graded ``turns`` table (null for correct turns).

    ``turns`` needs ``system, record_id, turn, correct, status, reason, program_correct,
    predicted_program, gold_program, pred_value, gold_value, depends_on`` (and ``doc_id``
    for table operations).
    """
    tables = tables or {}
    canonical = same_tables(tables)
    columns = (
        "status",
        "reason",
        "program_correct",
        "predicted_program",
        "gold_program",
        "pred_value",
        "gold_value",
        "carried",
    )
    keys = ["system", "record_id", "turn"]
    read = [c for c in (*columns, "correct", "doc_id") if c in turns.columns and c not in keys]
    # the columns read, not the whole table: a join copies every column it carries
    frame = turns.select(*keys, *read).with_columns(_carried(turns))
    present = [c for c in columns if c in frame.columns]
    table = (
        pl.col("doc_id").replace_strict(canonical, default=None, return_dtype=pl.String)
        if canonical and "doc_id" in frame.columns
        else pl.lit(None, dtype=pl.String)
    )
    # classify_error reads the values only for a gold program (a swapped operator), and never the
    # gold value: without one they are left out of the evidence, so far fewer are distinct
    unread = {
        "pred_value": pl.when(pl.col("gold_program").is_not_null()).then("pred_value")
        if "gold_program" in present
        else pl.lit(None, pl.Float64),
        "gold_value": pl.lit(None, pl.Float64),
    }
    wrong = (
        frame.with_row_index("_row")
        .filter(pl.col("correct").fill_null(False).not_())
        .select("_row", *[unread[c].alias(c) if c in unread else c for c in present], table.alias("_table"))
    )
    unique, index = distinct(wrong, [*present, "_table"])
    types = []  # once per distinct evidence
    for row in unique.iter_rows(named=True):
        evidence = ErrorEvidence(
            status=str(row["status"]),
            reason=str(row["reason"]),
            program_correct=row.get("program_correct"),
            predicted_program=row.get("predicted_program"),
            gold_program=row.get("gold_program"),
            pred_value=row.get("pred_value"),
            gold_value=row.get("gold_value"),
            carried=bool(row.get("carried")),
        )
        types.append(classify_error(evidence, table=tables.get(row["_table"] or "")).value)
    values = pl.Series("error_type", types, dtype=pl.String)[index] if types else pl.Series([], dtype=pl.String)
    column = (
        pl.repeat(None, frame.height, dtype=pl.String, eager=True).alias("error_type").scatter(wrong["_row"], values)
    )
    return column.cast(ERROR_TYPE_DTYPE)
