"""zarifaziz/convfinqa runs: ``record_id, turn_idx, predicted_answer, predicted_calculation, predicted_reasoning``.

The calculation is read as the program, the reasoning as raw output; gold and the upstream
verdict travel along (``gold``, ``correct``).
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.io.predictions.base import ColumnShape
from workbench.io.predictions.columnmap import ColumnMap

__all__ = ["SHAPE", "KEYS", "detect", "column_map"]

#: The keys that identify a zarifaziz row.
KEYS = ("record_id", "turn_idx")

_ZARIFAZIZ = ColumnMap(
    columns={
        "record_id": "record_id",
        "turn": "turn_idx",
        "predicted_answer": "predicted_answer",
        "predicted_program": "predicted_calculation",
        "raw_output": "predicted_reasoning",
        "question": "question",
        "gold_answer": "gold",
        "upstream_correct": "correct",
        "predicted_unit": "predicted_unit",
    },
    turn_base=0,
)


def detect(columns: Sequence[str]) -> bool:
    """Columns ``record_id``, ``turn_idx`` and ``predicted_answer``."""
    return {"record_id", "turn_idx", "predicted_answer"} <= set(columns)


def column_map(columns: Sequence[str]) -> ColumnMap:
    """The zarifaziz columns the file has, mapped to their canonical names (turns count from 0).

    Examples
    --------
    >>> column_map(["record_id", "turn_idx", "predicted_answer", "gold"]).columns
    {'record_id': 'record_id', 'turn': 'turn_idx', 'predicted_answer': 'predicted_answer', 'gold_answer': 'gold'}
    """
    present = set(columns)
    return ColumnMap({k: v for k, v in _ZARIFAZIZ.columns.items() if v in present}, 0)


SHAPE = ColumnShape(name="zarifaziz", keys=KEYS, detect=detect, column_map=column_map)
