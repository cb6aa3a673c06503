"""A plain gold table: CSV, TSV, Parquet, JSON Lines or a JSON list of rows.

Columns ``record_id, turn, question, gold_answer`` and optionally ``gold_program``, ``gold_solution``.
A table without a ``turn`` column is single-turn (GSM8K, MATH): every row is turn 0, one per record.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from workbench.errors import InputError
from workbench.grading.compare import answer_text
from workbench.io.gold.answers import executed_text, gold_value
from workbench.io.gold.base import GoldDataset, GoldReader, GoldSource, check_finite, make_dataset, one_turn_row
from workbench.io.jsonfiles import require_object

__all__ = ["READER", "KEYS", "detect", "read"]

#: Columns a plain gold table must have (they identify it); ``turn`` (every row turn 0 without it),
#: ``gold_program`` and ``gold_solution`` are optional.
KEYS = ("record_id", "question", "gold_answer")


def detect(source: GoldSource) -> bool:
    """A table file (CSV, TSV, Parquet), or records whose first has every required column."""
    return source.columns is not None or set(KEYS) <= source.first_keys


def read(source: GoldSource) -> GoldDataset:
    """One row per ``(record_id, turn)``; the turns of each record count 0, 1, 2, ... with no gaps
    (without a ``turn`` column, one row per record, turn 0)."""
    items = source.records or []
    columns = source.columns if source.columns is not None else list(items[0][1])
    return _plain_table(source.path, items, columns)


def _table_turn(path: Path, where: str, value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise InputError(
        str(path),
        f"turn {value!r} is not a whole number from 0",
        location=where,
        field="turn",
        fix="number the turns of each record 0, 1, 2, ...",
    )


def _plain_table(path: Path, items: list[tuple[str, Any]], columns: Sequence[str]) -> GoldDataset:
    missing = [c for c in KEYS if c not in columns]
    if missing:
        raise InputError(
            str(path),
            f"missing column {', '.join(repr(m) for m in missing)} (columns found: {', '.join(list(columns)[:12])})",
            field=missing[0],
            fix="give a table with columns record_id, question, gold_answer (and turn, counting from 0, "
            "when a record has several turns; optionally gold_program, gold_solution)",
        )
    if not items:
        raise InputError(str(path), "no turns found", fix="give a file with at least one row")
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, int], str] = {}
    has_turns = "turn" in columns
    for where, raw in items:
        obj = require_object(path, raw, where)
        record_id = obj.get("record_id")
        if record_id is None or not str(record_id).strip():
            raise InputError(
                str(path), "empty record id", location=where, field="record_id", fix="give every row its record id"
            )
        for name in ("record_id", "question", "gold_answer", "gold_program", "gold_solution"):
            value = obj.get(name)
            if isinstance(value, dict | list) or (name == "record_id" and isinstance(value, bool)):
                raise InputError(
                    str(path),
                    f"expected text or a number, found {type(value).__name__} {value!r:.40}",
                    location=where,
                    field=name,
                    fix="give the value as text or a number",
                )
        key = (str(record_id), _table_turn(path, where, obj.get("turn")) if has_turns else 0)
        if key in seen and not has_turns:
            raise InputError(
                str(path),
                f"record id '{key[0]}' appears again (first at {seen[key]}) in a table without a turn column",
                location=where,
                field="record_id",
                fix="keep one row per record, or add a turn column (0, 1, 2, ... within each record)",
            )
        if key in seen:
            raise InputError(
                str(path),
                f"duplicate (record_id, turn) = ('{key[0]}', {key[1]}); first at {seen[key]}",
                location=where,
                field="record_id, turn",
                fix="keep one row per turn",
            )
        seen[key] = where
        answer = obj.get("gold_answer")
        check_finite(path, answer, location=where, field="gold_answer")
        answer_str = None if answer is None else answer_text(answer)
        row = one_turn_row(
            key[0],
            None if obj.get("question") is None else str(obj["question"]),
            answer_str,
            None if answer_str is None else executed_text(answer_str),
            None if answer is None else gold_value(answer),
            None if obj.get("gold_solution") is None else str(obj["gold_solution"]),
            None if obj.get("gold_program") is None else str(obj["gold_program"]),
        )
        row["turn"] = key[1]
        rows.append(row)
    turns_by_record: dict[str, list[int]] = {}
    for record_id, turn in seen:
        turns_by_record.setdefault(record_id, []).append(turn)
    for record_id, turns in turns_by_record.items():
        if sorted(turns) != list(range(len(turns))):
            raise InputError(
                str(path),
                f"record '{record_id}' has turns {sorted(turns)}; expected 0..{len(turns) - 1}",
                location=seen[(record_id, max(turns))],
                field="turn",
                fix="number the turns of each record 0, 1, 2, ... with no gaps (turns count from 0)",
            )
    for row in rows:
        row["n_turns"] = len(turns_by_record[row["record_id"]])
    return make_dataset(path, "plain-table", "table", rows, [])


READER = GoldReader(layout="plain-table", detect=detect, read=read, shape="plain table", keys=KEYS)
