"""What the three ConvFinQA layouts share: one record a conversation with its document.

Each record becomes its turn rows and one document row; a record id given twice is an error.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from workbench.errors import InputError
from workbench.grading.compare import answer_text
from workbench.grading.normalize import parse_cell_number
from workbench.grading.program import table_grid
from workbench.io.gold.answers import gold_value
from workbench.io.gold.base import GoldDataset, Layout, Record, make_dataset

__all__ = ["RecordReader", "document", "table_features", "turn_row", "build"]

#: What a layout's reader makes of one record: its turn rows and its document row.
RecordReader = Callable[[Record], tuple[list[dict[str, Any]], dict[str, Any]]]


def _join_text(value: object) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return "" if value is None else str(value)


def document(rec: Record, pre: object, post: object, table: object) -> dict[str, Any]:
    """The document row of a record: its texts and its table as ``{"columns", "rows"}`` JSON."""
    columns, rows = table_grid(table)
    return {
        "doc_id": rec.id,
        "filename": rec.get("filename", kind=(str, type(None)), default=None),
        "pre_text": _join_text(pre),
        "post_text": _join_text(post),
        "table_json": json.dumps({"columns": columns, "rows": rows}),
    }


def table_features(table: object) -> tuple[bool, bool]:
    """Whether a table has duplicate column names, and whether any cell is not a number."""
    columns, rows = table_grid(table)
    duplicate = len(set(columns)) != len(columns)
    non_numeric = any(
        not isinstance(c, int | float) and parse_cell_number(str(c)) is None
        for row in rows
        for c in row[1:]
        if c not in (None, "")
    )
    return duplicate, non_numeric


def turn_row(
    rec: Record,
    turn: int,
    n: int,
    question: str,
    answer: object,
    executed: object,
    program: object,
    qa_split: object,
    flags: tuple[bool, bool, bool],
) -> dict[str, Any]:
    """The gold row of turn ``turn`` of the ``n`` turns of a conversation."""
    return {
        "record_id": rec.id,
        "turn": turn,
        "question": question,
        "gold_answer": None if answer is None else answer_text(answer),
        "gold_executed": None if executed is None else answer_text(executed),
        "gold_value": gold_value(executed),
        "gold_program": None if program is None else str(program),
        "gold_solution": None,
        "qa_split": None if qa_split is None else bool(qa_split),
        "n_turns": n,
        "has_type2_question": flags[0],
        "has_duplicate_columns": flags[1],
        "has_non_numeric_values": flags[2],
        "doc_id": rec.id,
    }


def build(path: Path, layout: Layout, records: Iterable[object], read_one: RecordReader) -> GoldDataset:
    """The dataset of ConvFinQA ``records``, each read by ``read_one``; a record id given twice is an error."""
    rows: list[dict[str, Any]] = []
    docs: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(records):
        rec = Record(path, index, raw)
        if rec.id in seen:
            raise InputError(
                str(path),
                f"record id '{rec.id}' appears twice (records {seen[rec.id]} and {index})",
                location=rec.location,
                field="id",
                fix="remove or rename the duplicate record",
            )
        seen[rec.id] = index
        turn_rows, doc = read_one(rec)
        rows.extend(turn_rows)
        docs.append(doc)
    if not rows:
        raise InputError(str(path), "no turns found", fix="give a file with at least one conversation")
    return make_dataset(path, layout, "convfinqa", rows, docs)
