"""How a prediction file's columns fill the canonical ones: :class:`ColumnMap` and ``--map``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from workbench.errors import InputError, UsageError
from workbench.grading import patterns
from workbench.schema import PREDICTION_TARGETS

__all__ = ["ColumnMap", "parse_column_map", "check_map", "ANSWER_COLUMNS", "MAP_NAMES", "MAP_HELP"]

#: Columns of which a prediction file needs at least one: something to grade.
ANSWER_COLUMNS = ("predicted_answer", "predicted_program", "raw_output")

#: Every name ``--map`` accepts, as the help and the errors list them.
MAP_NAMES = ", ".join(PREDICTION_TARGETS)

#: What ``--help`` says of ``--map``.
MAP_HELP = (
    f"column map for a file of another shape: NAME=COLUMN,... (one for all files, or one per file); "
    f"NAME is one of {MAP_NAMES}. record_id and one of {', '.join(ANSWER_COLUMNS)} are required; "
    "turn=COLUMN:0 or turn=COLUMN:1 says whether turns count from 0 or 1; without turn= every row is "
    "turn 0 (a single-turn benchmark: GSM8K, MATH, a plain table)"
)


@dataclass(frozen=True)
class ColumnMap:
    """Which source column fills each canonical column, and how turns are counted.

    Attributes
    ----------
    columns
        Canonical name to source column, e.g. ``{"record_id": "report_id_x"}``.
    turn_base
        0 when the source's first turn is 0, 1 when it is 1.
    """

    columns: Mapping[str, str] = field(default_factory=dict)
    turn_base: int = 0


def parse_column_map(spec: str) -> ColumnMap:
    """Parse ``record_id=COL,turn=COL:1,predicted_answer=COL,...``.

    The names are those of :data:`workbench.schema.PREDICTION_TARGETS` (:data:`MAP_NAMES`).
    The turn column must say whether it counts from 0 or from 1 (``turn=q_order:1``); a map
    without ``turn=`` reads every row as turn 0 (single-turn benchmarks).

    Raises
    ------
    UsageError
        For an unknown canonical name, a missing ``=``, or a turn without its base.

    Examples
    --------
    >>> parse_column_map("record_id=report_id_x,turn=q_order:1,predicted_answer=ans")
    ColumnMap(columns={'record_id': 'report_id_x', 'turn': 'q_order', 'predicted_answer': 'ans'}, turn_base=1)
    >>> parse_column_map("record_id=id,raw_output=response,gold_answer=gold").columns
    {'record_id': 'id', 'raw_output': 'response', 'gold_answer': 'gold'}
    """
    columns: dict[str, str] = {}
    base = 0
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        target, sep, source = part.partition("=")
        target, source = target.strip(), source.strip()
        if not sep or not source:
            raise UsageError(
                f"--map: '{part}' is not NAME=COLUMN. Fix: write e.g. record_id=report_id_x (NAME is one of {MAP_NAMES})"
            )
        if target not in PREDICTION_TARGETS:
            raise UsageError(f"--map: unknown name '{target}'. Fix: use one of {MAP_NAMES}")
        if target == "turn":
            match = patterns.MAP_TURN_BASE.match(source)
            if match is None:
                raise UsageError(
                    f"--map: say whether '{source}' counts turns from 0 or 1. "
                    f"Fix: write turn={source}:0 or turn={source}:1"
                )
            source, base = match.group("column"), int(match.group("base"))
        columns[target] = source
    return ColumnMap(columns=columns, turn_base=base)


def check_map(path: Path, column_map: ColumnMap, columns: Sequence[str]) -> None:
    """Raise :class:`InputError` when the map names a column the file lacks, or lacks the record id
    or an answer (a map without a turn reads every row as turn 0)."""
    for target, source in column_map.columns.items():
        if source not in columns:
            raise InputError(
                str(path),
                f"column '{source}' named by --map for {target} does not exist "
                f"(columns found: {', '.join(columns[:12])}{', ...' if len(columns) > 12 else ''})",
                field=source,
                fix="name one of the columns found in --map",
            )
    if "record_id" not in column_map.columns:
        raise InputError(
            str(path),
            f"--map does not say which column is record_id (names: {MAP_NAMES})",
            field="record_id",
            fix="add record_id=COL to --map",
        )
    if not set(ANSWER_COLUMNS) & set(column_map.columns):
        raise InputError(
            str(path),
            f"--map names none of {', '.join(ANSWER_COLUMNS)} (names: {MAP_NAMES})",
            field="predicted_answer",
            fix="add predicted_answer=COL, predicted_program=COL or raw_output=COL",
        )
