"""ConvFinQA in the reformatted layout: ``{"dev"|"train"|...: [{id, doc, dialogue, features}]}``."""

from __future__ import annotations

from typing import Any

from workbench.io.gold.base import GoldDataset, GoldReader, GoldSource, Record
from workbench.io.gold.conversations import build, document, table_features, turn_row

__all__ = ["READER", "detect", "read"]


def detect(source: GoldSource) -> bool:
    """A JSON object whose every value is a list (of records), one list per split."""
    data = source.data
    return isinstance(data, dict) and bool(data) and all(isinstance(v, list) for v in data.values())


def read(source: GoldSource) -> GoldDataset:
    """The records of every split, in the order of the file."""
    records = [r for split in source.data.values() for r in split]
    return build(source.path, "convfinqa-reformatted", records, _read_record)


def _read_record(rec: Record) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    questions = rec.get("dialogue", "conv_questions", kind=list)
    n = len(questions)
    answers = rec.get("dialogue", "conv_answers", kind=list)
    programs = rec.get("dialogue", "turn_program", kind=list)
    executed = rec.get("dialogue", "executed_answers", kind=list)
    splits = rec.get("dialogue", "qa_split", kind=list, default=[None] * n)
    rec.same_length(
        {
            "dialogue.conv_answers": answers,
            "dialogue.turn_program": programs,
            "dialogue.executed_answers": executed,
            "dialogue.qa_split": splits,
        },
        n,
    )
    rec.scalars(
        {
            "dialogue.conv_questions": questions,
            "dialogue.conv_answers": answers,
            "dialogue.turn_program": programs,
            "dialogue.executed_answers": executed,
        }
    )
    rec.finite({"dialogue.conv_answers": answers, "dialogue.executed_answers": executed})
    features = rec.get("features", kind=dict, default={})
    table = rec.get("doc", "table", kind=(dict, list))
    duplicate, non_numeric = table_features(table)
    flags = (
        bool(features.get("has_type2_question", rec.id.startswith("Double_"))),
        bool(features.get("has_duplicate_columns", duplicate)),
        bool(features.get("has_non_numeric_values", non_numeric)),
    )
    rows = [
        turn_row(rec, i, n, str(questions[i]), answers[i], executed[i], programs[i], splits[i], flags) for i in range(n)
    ]
    doc = document(rec, rec.get("doc", "pre_text", default=""), rec.get("doc", "post_text", default=""), table)
    return rows, doc


READER = GoldReader(layout="convfinqa-reformatted", detect=detect, read=read)
