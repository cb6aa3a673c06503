"""Load gold datasets into the tidy gold ``turns`` and ``documents`` tables.

Layouts recognised from the file's shape:

* ConvFinQA reformatted: ``{"dev"|"train"|...: [{id, doc, dialogue, features}]}``;
* ConvFinQA original (czyssrs): ``[{id, pre_text, post_text, table, annotation, qa...}]``,
  including the public test file that holds questions only;
* gold that travels inside ghchen99-style outputs:
  ``[{id, financial_report, conversation: [{question, expected_program, expected_answer}]}]``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl

from workbench.errors import InputError
from workbench.grading.compare import answer_text
from workbench.grading.normalize import parse_cell_number, parse_number
from workbench.grading.program import table_grid
from workbench.io.jsonfiles import read_json, require_object
from workbench.schema import DOCUMENTS, GOLD_TURNS

__all__ = ["GoldDataset", "Layout", "load_gold"]

Layout = Literal["convfinqa-reformatted", "convfinqa-original", "ghchen99-embedded"]


@dataclass(frozen=True)
class GoldDataset:
    """A gold dataset as two tables.

    Attributes
    ----------
    turns
        One row per ``(record_id, turn)``; see :data:`workbench.schema.GOLD_TURNS`.
    documents
        One row per ``doc_id``; see :data:`workbench.schema.DOCUMENTS`.
    path
        The file it was read from.
    layout
        Which layout the file was recognised as.
    """

    turns: pl.DataFrame
    documents: pl.DataFrame
    path: Path
    layout: Layout


def load_gold(path: str | Path) -> GoldDataset:
    """Load a ConvFinQA gold file in any recognised layout.

    Raises
    ------
    InputError
        When the file cannot be read or a record lacks a field; the message names the
        file, the record, the field and the fix.

    Examples
    --------
    >>> from workbench.config import BUNDLED_DATASET, project_root
    >>> gold = load_gold(project_root() / BUNDLED_DATASET)
    >>> gold.layout, gold.turns.height, gold.documents.height
    ('convfinqa-reformatted', 1490, 421)
    """
    path = Path(path)
    data = read_json(path)
    if isinstance(data, dict) and data and all(isinstance(v, list) for v in data.values()):
        records = [r for split in data.values() for r in split]
        return _build(path, "convfinqa-reformatted", records, _reformatted)
    if isinstance(data, list) and data and isinstance(data[0], dict):
        first = data[0]
        if "annotation" in first:
            return _build(path, "convfinqa-original", data, _original)
        if "conversation" in first and "financial_report" in first:
            return _build(path, "ghchen99-embedded", data, _ghchen99)
    raise InputError(
        str(path),
        "not a recognised gold layout",
        location="top level",
        fix=(
            "give ConvFinQA in the reformatted layout ({'dev': [...]}), the original layout "
            "(a list of records with 'annotation'), or outputs that carry gold "
            "(a list of records with 'conversation' and 'financial_report')"
        ),
    )


# --------------------------------------------------------------------------- helpers
class _Record:
    """Field access on one raw record that raises errors naming the record and field."""

    def __init__(self, path: Path, index: int, raw: object) -> None:
        self.path, self.raw = path, require_object(path, raw, f"record {index}")
        self.id = str(raw.get("id", f"#{index}"))
        self.location = f"record {index} (id '{self.id}')"

    def get(self, *keys: str, kind: type | tuple[type, ...] = object, default: Any = ...) -> Any:
        value: Any = self.raw
        for depth, key in enumerate(keys):
            if not isinstance(value, dict) or key not in value:
                if default is not ...:
                    return default
                raise InputError(
                    str(self.path),
                    "missing field",
                    location=self.location,
                    field=".".join(keys[: depth + 1]),
                    fix="add the field, or check that the file is in the layout it looks like",
                )
            value = value[key]
        if not isinstance(value, kind):
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            raise InputError(
                str(self.path),
                f"expected {names}, found {type(value).__name__}",
                location=self.location,
                field=".".join(keys),
                fix=f"make it a {names}",
            )
        return value

    def same_length(self, field_lists: Mapping[str, Sequence[Any]], n: int) -> None:
        for name, values in field_lists.items():
            if len(values) != n:
                raise InputError(
                    str(self.path),
                    f"has {len(values)} entries where the conversation has {n} turns",
                    location=self.location,
                    field=name,
                    fix="give one entry per turn",
                )


def _join_text(value: object) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return "" if value is None else str(value)


def _document(rec: _Record, pre: object, post: object, table: object) -> dict[str, Any]:
    columns, rows = table_grid(table)
    return {
        "doc_id": rec.id,
        "filename": rec.raw.get("filename"),
        "pre_text": _join_text(pre),
        "post_text": _join_text(post),
        "table_json": json.dumps({"columns": columns, "rows": rows}),
    }


def _table_features(table: object) -> tuple[bool, bool]:
    columns, rows = table_grid(table)
    duplicate = len(set(columns)) != len(columns)
    non_numeric = any(
        not isinstance(c, int | float) and parse_cell_number(str(c)) is None
        for row in rows
        for c in row[1:]
        if c not in (None, "")
    )
    return duplicate, non_numeric


def _gold_value(executed: object) -> float | None:
    if isinstance(executed, bool) or executed is None:
        return None
    if isinstance(executed, int | float):
        return float(executed)
    number = parse_number(str(executed))
    return number.fraction if number else None


def _turn_row(
    rec: _Record,
    turn: int,
    n: int,
    question: str,
    answer: object,
    executed: object,
    program: object,
    qa_split: object,
    flags: tuple[bool, bool, bool],
) -> dict[str, Any]:
    return {
        "record_id": rec.id,
        "turn": turn,
        "question": question,
        "gold_answer": None if answer is None else answer_text(answer),
        "gold_executed": None if executed is None else answer_text(executed),
        "gold_value": _gold_value(executed),
        "gold_program": None if program is None else str(program),
        "qa_split": None if qa_split is None else bool(qa_split),
        "n_turns": n,
        "has_type2_question": flags[0],
        "has_duplicate_columns": flags[1],
        "has_non_numeric_values": flags[2],
        "doc_id": rec.id,
    }


# --------------------------------------------------------------------------- layouts
def _reformatted(rec: _Record) -> tuple[list[dict[str, Any]], dict[str, Any]]:
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
    features = rec.get("features", kind=dict, default={})
    table = rec.get("doc", "table", kind=(dict, list))
    duplicate, non_numeric = _table_features(table)
    flags = (
        bool(features.get("has_type2_question", rec.id.startswith("Double_"))),
        bool(features.get("has_duplicate_columns", duplicate)),
        bool(features.get("has_non_numeric_values", non_numeric)),
    )
    rows = [
        _turn_row(rec, i, n, str(questions[i]), answers[i], executed[i], programs[i], splits[i], flags)
        for i in range(n)
    ]
    doc = _document(rec, rec.get("doc", "pre_text", default=""), rec.get("doc", "post_text", default=""), table)
    return rows, doc


def _original(rec: _Record) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    questions = rec.get("annotation", "dialogue_break", kind=list)
    n = len(questions)
    programs = rec.get("annotation", "turn_program", kind=list, default=[None] * n)
    executed = rec.get("annotation", "exe_ans_list", kind=list, default=[None] * n)
    splits = rec.get("annotation", "qa_split", kind=list, default=[None] * n)
    rec.same_length(
        {"annotation.turn_program": programs, "annotation.exe_ans_list": executed, "annotation.qa_split": splits},
        n,
    )
    # The original layout has display answers only for the question each half ends with.
    answers: list[object] = [None] * n
    halves = [k for k in ("qa", "qa_0", "qa_1") if isinstance(rec.raw.get(k), dict)]
    for key in halves:
        half = 1 if key == "qa_1" else 0
        last = max((i for i in range(n) if int(splits[i] or 0) == half), default=None)
        if last is not None:
            answers[last] = rec.raw[key].get("answer")
    table = rec.get("table", kind=list, default=[])
    duplicate, non_numeric = _table_features(table)
    flags = ("qa_1" in rec.raw or rec.id.startswith("Double_"), duplicate, non_numeric)
    rows = [
        _turn_row(rec, i, n, str(questions[i]), answers[i], executed[i], programs[i], splits[i], flags)
        for i in range(n)
    ]
    return rows, _document(rec, rec.raw.get("pre_text"), rec.raw.get("post_text"), table)


def _ghchen99(rec: _Record) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    conversation = rec.get("conversation", kind=list)
    n = len(conversation)
    report = rec.get("financial_report", kind=dict)
    table = report.get("table", [])
    duplicate, non_numeric = _table_features(table)
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
        executed = turn.get("expected_answer")
        rows.append(
            _turn_row(rec, i, n, str(turn["question"]), executed, executed, turn.get("expected_program"), None, flags)
        )
    return rows, _document(rec, report.get("pre_text"), report.get("post_text"), table)


def _build(path: Path, layout: Layout, records: Iterable[object], read_one) -> GoldDataset:  # type: ignore[no-untyped-def]
    rows: list[dict[str, Any]] = []
    docs: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(records):
        rec = _Record(path, index, raw)
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
    turns = pl.DataFrame(rows, schema=GOLD_TURNS)
    documents = pl.DataFrame(docs, schema=DOCUMENTS)
    return GoldDataset(turns=turns, documents=documents, path=path, layout=layout)
