"""Features of gold turns that slices group by: the operations of the gold program, the
rare ones, the answer's format, and which earlier turns a turn builds on.

They depend on the gold set only (not on any system), are computed once per dataset and
joined onto the graded ``turns`` table (see :data:`workbench.schema.GRADED_TURNS`).

*Dependency.* Turn ``k`` builds on an earlier turn ``j`` of the same conversation when
turn ``j``'s executed answer is a literal number of turn ``k``'s gold program or the value
of one of its intermediate steps: ``subtract(206588, 181001)`` builds on the turns that
looked up 206588 and 181001, and ``subtract(206588, 181001), divide(#0, 181001)`` builds on
the turn that computed the difference. The dependency distance is how far back the
furthest such turn lies (``k - min(j)``), 0 for a turn that builds on none.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from workbench.grading.compare import percent_cue
from workbench.grading.equivalence import final_operation
from workbench.grading.program import (
    ProgramSyntaxError,
    TableRows,
    execute_program,
    literal_numbers,
    operations,
    parse_program,
)
from workbench.parallel import distinct, same_tables
from workbench.schema import KEY_DTYPE

__all__ = [
    "RARE_OPERATIONS",
    "ANSWER_FORMATS",
    "FEATURES",
    "TurnFeatures",
    "answer_format",
    "turn_dependencies",
    "gold_features",
]

#: Operations few gold programs use; a slice of their own.
RARE_OPERATIONS = frozenset({"exp", "greater", "table_max", "table_min", "table_sum", "table_average"})
#: What kind of answer a turn asks for.
ANSWER_FORMATS = ("percent", "ratio", "yes/no", "plain")

#: Columns :func:`gold_features` adds, keyed by ``record_id, turn``.
FEATURES: dict[str, pl.DataType] = {
    "record_id": KEY_DTYPE,
    "turn": pl.Int32(),
    "gold_operations": pl.List(pl.String()),
    "rare_operation": pl.String(),  # the rare operation the gold program uses, or "none"
    "answer_format": pl.String(),  # one of ANSWER_FORMATS
    "depends_on": pl.List(pl.Int32()),  # earlier turns this turn's gold program builds on
    "dependency_distance": pl.Int32(),  # turn - earliest turn in depends_on; 0 when none
}

_REL_TOL = 1e-4  # executed answers are rounded (to 5 decimals); step values are not


@dataclass(frozen=True, slots=True)
class TurnFeatures:
    """What :func:`gold_features` knows about one gold turn."""

    operations: tuple[str, ...]
    rare_operation: str
    answer_format: str
    depends_on: tuple[int, ...]

    def distance(self, turn: int) -> int:
        return turn - min(self.depends_on) if self.depends_on else 0


def answer_format(display: str | None, executed: str | None, question: str | None, final_operation: str) -> str:
    """``percent``, ``ratio``, ``yes/no`` or ``plain``: what kind of answer the turn asks for.

    A ``%`` in the display answer or a percentage cue in the question makes it
    ``percent``; a ratio cue, or a division without a percent, ``ratio``.

    Examples
    --------
    >>> answer_format("14.1%", "0.14136", "what was the change?", "divide")
    'percent'
    >>> answer_format(".0751", "0.0751", "and the ratio?", "divide"), answer_format("yes", "yes", None, "greater")
    ('ratio', 'yes/no')
    >>> answer_format("206588", "206588", "what was revenue in 2009?", "lookup")
    'plain'
    """
    return _format(_yes_no(executed), "%" in (display or ""), percent_cue(question, None), final_operation)


def _yes_no(executed: str | None) -> bool:
    return (executed or "").strip().lower() in ("yes", "no")


def _format(yes_no: bool, percent_sign: bool, cue: str | None, final_operation: str) -> str:
    """:func:`answer_format` from what it reads of the display, executed answer and question."""
    if yes_no:
        return "yes/no"
    if percent_sign or cue == "percent":
        return "percent"
    if cue == "ratio" or final_operation == "divide":
        return "ratio"
    return "plain"


def _close(a: float, b: float) -> bool:
    """Equal as executed answers are written (5 decimals) or within a relative tolerance."""
    return a == b or round(a, 5) == round(b, 5) or abs(a - b) <= _REL_TOL * max(abs(a), abs(b))


def _program_values(program: str | None, table: TableRows | None) -> list[float]:
    """Literal numbers and intermediate step values of a program (not its final value)."""
    if not program or not program.strip():
        return []
    try:
        parsed = parse_program(program)
    except (ProgramSyntaxError, RecursionError):
        return []
    values = [n.value for n in literal_numbers(parsed)]
    result = execute_program(parsed, table=table)
    if result.ok:
        values.extend(float(s.result) for s in result.steps[:-1] if not isinstance(s.result, bool))
    return values


def turn_dependencies(
    programs: Sequence[str | None], answers: Sequence[float | None], tables: TableRows | None = None
) -> list[tuple[int, ...]]:
    """For each turn of one conversation, the earlier turns its gold program builds on.

    Examples
    --------
    >>> turn_dependencies(["206588", "181001", "subtract(206588, 181001)",
    ...                    "subtract(206588, 181001), divide(#0, 181001)"],
    ...                   [206588.0, 181001.0, 25587.0, 0.14136])
    [(), (), (0, 1), (0, 1, 2)]
    """
    out: list[tuple[int, ...]] = []
    for k, program in enumerate(programs):
        values = _program_values(program, tables)
        used = tuple(
            j
            for j in range(k)
            if answers[j] is not None
            and math.isfinite(answers[j])  # type: ignore[arg-type]
            and any(_close(v, answers[j]) for v in values)  # type: ignore[arg-type]
        )
        out.append(used)
    return out


def _operations(program: str | None) -> tuple[str, ...]:
    if not program or not program.strip():
        return ()
    try:
        return tuple(operations(parse_program(program)))
    except (ProgramSyntaxError, RecursionError):
        return ()


def gold_features(turns: pl.DataFrame, tables: Mapping[str, TableRows] | None = None) -> pl.DataFrame:
    """One row per gold turn with the columns of :data:`FEATURES`.

    Parameters
    ----------
    turns
        Gold turns (:data:`workbench.schema.GOLD_TURNS`).
    tables
        Document tables by ``doc_id``, for programs with ``table_*`` operations.

    Examples
    --------
    >>> gold = pl.DataFrame({"record_id": ["r"] * 2, "turn": [0, 1], "question": ["q?", "what percent?"],
    ...     "gold_answer": ["5", "25%"], "gold_executed": ["5", "0.25"], "gold_value": [5.0, 0.25],
    ...     "gold_program": ["5", "divide(5, 20)"], "doc_id": ["d", "d"]})
    >>> gold_features(gold).select("answer_format", "depends_on", "dependency_distance").rows()
    [('plain', [], 0), ('percent', [0], 1)]
    """
    tables = tables or {}
    canonical = same_tables(tables)
    has_doc = "doc_id" in turns.columns
    # a turn's features read its display only for a % sign, its executed answer only for yes/no,
    # its question only for the percent cue, and the gold values only through programs: each
    # distinct conversation of those is computed once (GSM8K copies share their questions)
    ordered = turns.sort("record_id", "turn").with_columns(
        pl.col("gold_answer").str.contains("%", literal=True).fill_null(False).alias("_percent_sign"),
        _per_value(turns, "gold_executed", _yes_no, pl.Boolean()).alias("_yes_no"),
        _per_value(turns, "question", lambda q: percent_cue(q, None), pl.String()).alias("_cue"),
        _per_value(turns, "gold_program", _has_program, pl.Boolean()).alias("_has_program"),
    )
    ordered = ordered.with_columns(
        pl.when(pl.col("_has_program").any().over("record_id")).then(pl.col("gold_value")).alias("gold_value")
    )
    content = ("turn", "gold_program", "gold_value", "_percent_sign", "_yes_no", "_cue")
    doc_id = pl.col("doc_id").first() if has_doc else pl.lit(None, dtype=pl.String)
    conversations = ordered.group_by("record_id", maintain_order=True).agg(
        *content,
        doc_id.replace_strict(canonical, default=None, return_dtype=pl.String).alias("_table")
        if canonical
        else pl.lit(None, dtype=pl.String).alias("_table"),
    )
    unique, which = distinct(conversations, [*content, "_table"])
    columns: dict[str, list[object]] = {name: [] for name in FEATURES if name != "record_id"}
    contents: list[int] = []
    for number, conv in enumerate(unique.iter_rows(named=True)):
        table_id = conv["_table"]
        for values in _conversation_features(conv, tables.get(table_id) if table_id else None):
            contents.append(number)
            for name, value in zip(columns, values, strict=True):
                columns[name].append(value)
    schema = {name: dtype for name, dtype in FEATURES.items() if name != "record_id"}
    features = pl.DataFrame(columns, schema=schema).with_columns(pl.Series("_content", contents, dtype=pl.Int64))
    return (
        conversations.select(pl.col("record_id").cast(KEY_DTYPE), which.cast(pl.Int64).alias("_content"))
        .join(features, on="_content", how="inner", maintain_order="left_right")
        .select(list(FEATURES))
    )


def _has_program(program: str | None) -> bool:
    return bool(program and program.strip())


def _per_value(frame: pl.DataFrame, column: str, fn: Callable[[Any], object], dtype: pl.DataType) -> pl.Expr:
    """``fn`` of each value of ``column`` as an expression, ``fn`` called once per distinct value."""
    values = frame.get_column(column).unique()
    found = pl.DataFrame({column: values, "_out": pl.Series([fn(v) for v in values.to_list()], dtype=dtype)})
    keys = found.filter(pl.col(column).is_not_null())
    out = pl.col(column).replace_strict(keys[column], keys["_out"], default=None, return_dtype=dtype)
    null = found.filter(pl.col(column).is_null())["_out"]
    return pl.when(pl.col(column).is_null()).then(pl.lit(null[0] if null.len() else None, dtype=dtype)).otherwise(out)


def _conversation_features(conv: Mapping[str, Any], table: TableRows | None) -> list[tuple[object, ...]]:
    """The :data:`FEATURES` values (but ``record_id``) of each turn of one conversation."""
    deps = turn_dependencies(conv["gold_program"], conv["gold_value"], table)
    out: list[tuple[object, ...]] = []
    for k, used in enumerate(deps):
        program = conv["gold_program"][k]
        ops = _operations(program)
        feature = TurnFeatures(
            operations=ops,
            rare_operation=next((op for op in ops if op in RARE_OPERATIONS), "none"),
            answer_format=_format(
                conv["_yes_no"][k], conv["_percent_sign"][k], conv["_cue"][k], final_operation(program)
            ),
            depends_on=used,
        )
        turn = conv["turn"][k]
        out.append(
            (
                turn,
                list(feature.operations),
                feature.rare_operation,
                feature.answer_format,
                list(feature.depends_on),
                feature.distance(turn),
            )
        )
    return out
