"""Canonical prediction rows: columns named as :data:`workbench.schema.PREDICTIONS` (``turn`` 0-based)."""

from __future__ import annotations

from collections.abc import Sequence

from workbench.io.predictions.base import ColumnShape
from workbench.io.predictions.columnmap import ANSWER_COLUMNS, ColumnMap
from workbench.schema import PREDICTION_TARGETS

__all__ = ["SHAPE", "KEYS", "detect", "column_map"]

#: The keys that identify a canonical row.
KEYS = ("record_id", "turn")


def detect(columns: Sequence[str]) -> bool:
    """Columns ``record_id`` and ``turn``, and at least one of :data:`~workbench.io.predictions.columnmap.ANSWER_COLUMNS`."""
    present = set(columns)
    return {"record_id", "turn"} <= present and bool(present & set(ANSWER_COLUMNS))


def column_map(columns: Sequence[str]) -> ColumnMap:
    """Each canonical column the file has, mapped to itself (turns count from 0).

    Examples
    --------
    >>> column_map(["turn", "record_id", "raw_output", "notes"]).columns
    {'record_id': 'record_id', 'turn': 'turn', 'raw_output': 'raw_output'}
    """
    present = set(columns)
    return ColumnMap({k: k for k in PREDICTION_TARGETS if k in present}, 0)


SHAPE = ColumnShape(name="canonical", keys=KEYS, detect=detect, column_map=column_map)
