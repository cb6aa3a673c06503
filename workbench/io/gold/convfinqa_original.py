"""ConvFinQA in the original layout (czyssrs): ``[{id, pre_text, post_text, table, annotation, qa...}]``.

Includes the public test file that holds questions only.
"""

from __future__ import annotations

from typing import Any

from workbench.errors import InputError
from workbench.io.gold.base import GoldDataset, GoldReader, GoldSource, Record, check_finite
from workbench.io.gold.conversations import build, document, table_features, turn_row

__all__ = ["READER", "detect", "read"]


def detect(source: GoldSource) -> bool:
    """A JSON list whose first record has an ``annotation``."""
    return isinstance(source.data, list) and "annotation" in source.first_keys


def read(source: GoldSource) -> GoldDataset:
    """One conversation per record."""
    return build(source.path, "convfinqa-original", source.data, _read_record)


def _read_record(rec: Record) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    questions = rec.get("annotation", "dialogue_break", kind=list)
    n = len(questions)
    programs = rec.get("annotation", "turn_program", kind=list, default=[None] * n)
    executed = rec.get("annotation", "exe_ans_list", kind=list, default=[None] * n)
    splits = rec.get("annotation", "qa_split", kind=list, default=[None] * n)
    rec.same_length(
        {"annotation.turn_program": programs, "annotation.exe_ans_list": executed, "annotation.qa_split": splits},
        n,
    )
    rec.scalars(
        {
            "annotation.dialogue_break": questions,
            "annotation.turn_program": programs,
            "annotation.exe_ans_list": executed,
        }
    )
    rec.finite({"annotation.exe_ans_list": executed})
    for turn, split in enumerate(splits):
        if split not in (None, 0, 1):  # True/False are 1/0
            raise InputError(
                str(rec.path),
                f"qa_split {split!r:.40} is not 0 or 1",
                location=f"{rec.location}, turn {turn}",
                field="annotation.qa_split",
                fix="give 0 for turns of the first question, 1 for the second",
            )
    # The original layout has display answers only for the question each half ends with.
    answers: list[object] = [None] * n
    halves = [k for k in ("qa", "qa_0", "qa_1") if isinstance(rec.raw.get(k), dict)]
    for key in halves:
        half = 1 if key == "qa_1" else 0
        last = max((i for i in range(n) if int(splits[i] or 0) == half), default=None)
        if last is not None:
            answers[last] = rec.raw[key].get("answer")
            check_finite(rec.path, answers[last], location=f"{rec.location}, turn {last}", field=f"{key}.answer")
    table = rec.rows(rec.get("table", kind=list, default=[]), "table")
    duplicate, non_numeric = table_features(table)
    flags = ("qa_1" in rec.raw or rec.id.startswith("Double_"), duplicate, non_numeric)
    rows = [
        turn_row(rec, i, n, str(questions[i]), answers[i], executed[i], programs[i], splits[i], flags) for i in range(n)
    ]
    return rows, document(rec, rec.raw.get("pre_text"), rec.raw.get("post_text"), table)


READER = GoldReader(layout="convfinqa-original", detect=detect, read=read)
