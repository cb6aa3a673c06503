"""Gold that travels inside ghchen99-style outputs.

``[{id, financial_report, conversation: [{question, expected_program, expected_answer}]}]``.
"""

from __future__ import annotations

from typing import Any

from workbench.errors import InputError
from workbench.io.gold.base import GoldDataset, GoldReader, GoldSource, Record, check_finite
from workbench.io.gold.conversations import build, document, table_features, turn_row

__all__ = ["READER", "detect", "read"]


def detect(source: GoldSource) -> bool:
    """A JSON list whose first record has a ``conversation`` and a ``financial_report``."""
    return isinstance(source.data, list) and {"conversation", "financial_report"} <= source.first_keys


def read(source: GoldSource) -> GoldDataset:
    """One conversation per record."""
    return build(source.path, "ghchen99-embedded", source.data, _read_record)


def _read_record(rec: Record) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    conversation = rec.get("conversation", kind=list)
    n = len(conversation)
    report = rec.get("financial_report", kind=dict)
    table = rec.rows(rec.get("financial_report", "table", kind=list, default=[]), "financial_report.table")
    duplicate, non_numeric = table_features(table)
    flags = (rec.id.startswith("Double_"), duplicate, non_numeric)
    rows = []
    for i, turn in enumerate(conversation):
        if not isinstance(turn, dict) or "question" not in turn:
            raise InputError(
                str(rec.path),
                "turn without a question",
                location=f"{rec.location}, turn {i}",
                field="conversation.question",
                fix="give each turn a 'question'",
            )
        rec.scalars({"conversation.expected_answer": [None] * i + [turn.get("expected_answer")]})
        check_finite(
            rec.path,
            turn.get("expected_answer"),
            location=f"{rec.location}, turn {i}",
            field="conversation.expected_answer",
        )
        executed = turn.get("expected_answer")
        rows.append(
            turn_row(rec, i, n, str(turn["question"]), executed, executed, turn.get("expected_program"), None, flags)
        )
    return rows, document(rec, report.get("pre_text"), report.get("post_text"), table)


READER = GoldReader(layout="ghchen99-embedded", detect=detect, read=read)
