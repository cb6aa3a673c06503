r"""MATH-style problems: ``{problem, solution, [level], [type], [unique_id | id]}`` records.

A JSON list or JSON Lines; the final answer is in the solution's last ``\boxed{...}``.
"""

from __future__ import annotations

from workbench.errors import InputError
from workbench.grading.extract import last_boxed
from workbench.io.gold.answers import plain_number
from workbench.io.gold.base import (
    GoldDataset,
    GoldReader,
    GoldSource,
    Record,
    check_finite,
    level_text,
    make_dataset,
    one_turn_row,
)
from workbench.io.jsonfiles import require_object

__all__ = ["READER", "KEYS", "detect", "read"]

#: The keys that identify a MATH record.
KEYS = ("problem", "solution")


def detect(source: GoldSource) -> bool:
    """Records whose first has a ``problem`` and a ``solution``."""
    return set(KEYS) <= source.first_keys


def read(source: GoldSource) -> GoldDataset:
    """MATH-style problems: the id is ``unique_id`` (or ``id``) when present, else the position;
    ``level`` (``"Level 3"`` or ``3``) is kept as the turn's ``level`` (:func:`level_text`)."""
    path, items = source.path, source.records or []
    rows = []
    seen: dict[str, str] = {}
    for index, (where, raw) in enumerate(items):
        obj = require_object(path, raw, where)
        given = obj.get("unique_id", obj.get("id"))
        record_id = str(given) if given is not None and str(given).strip() else str(index)
        rec = Record(path, index, obj, record_id=record_id, where=where)
        if record_id in seen:
            raise InputError(
                str(path),
                f"record id '{record_id}' appears twice (at {seen[record_id]} and {where})",
                location=rec.location,
                field="unique_id" if "unique_id" in obj else "id",
                fix="remove or rename the duplicate record",
            )
        seen[record_id] = where
        problem = rec.get("problem", kind=str)
        solution = rec.get("solution", kind=str)
        boxed = last_boxed(solution)
        if boxed is None or not boxed.strip():
            raise InputError(
                str(path),
                "the solution has no \\boxed{...} final answer",
                location=rec.location,
                field="solution",
                fix="put the final answer in \\boxed{...} in the solution, as MATH does",
            )
        check_finite(path, boxed, location=rec.location, field="solution")
        level = None if obj.get("level") is None else level_text(rec.get("level", kind=(str, int)))
        rows.append(one_turn_row(record_id, problem, boxed, boxed, plain_number(boxed), solution, level=level))
    return make_dataset(path, "math-problems", "math", rows, [])


READER = GoldReader(layout="math-problems", detect=detect, read=read, shape="MATH", keys=KEYS)
