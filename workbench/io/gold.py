"""Load gold datasets into the tidy gold ``turns`` and ``documents`` tables.

Layouts recognised from the file's shape:

* ConvFinQA reformatted: ``{"dev"|"train"|...: [{id, doc, dialogue, features}]}``;
* ConvFinQA original (czyssrs): ``[{id, pre_text, post_text, table, annotation, qa...}]``,
  including the public test file that holds questions only;
* gold that travels inside ghchen99-style outputs:
  ``[{id, financial_report, conversation: [{question, expected_program, expected_answer}]}]``;
* GSM8K JSON Lines ``{question, answer}``, the answer ending ``#### <final answer>``;
* MATH-style problems, a JSON list or JSON Lines of ``{problem, solution, [level], [type],
  [unique_id | id]}``, the final answer in the solution's last ``\\boxed{...}``;
* a plain table (CSV, TSV, JSON Lines, JSON list or Parquet) with columns
  ``record_id, turn, question, gold_answer`` and optionally ``gold_program``, ``gold_solution``.

Each dataset says which ``benchmark`` it is: ``convfinqa``, ``gsm8k``, ``math`` or ``table``.
Datasets without documents (all but ConvFinQA) have an empty ``documents`` table and a null
``doc_id``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl

from workbench.errors import InputError
from workbench.grading import patterns
from workbench.grading.compare import answer_text, non_finite
from workbench.grading.extract import last_boxed
from workbench.grading.normalize import parse_cell_number, parse_number
from workbench.grading.program import TableRows, table_grid, table_rows
from workbench.io.jsonfiles import iter_json_lines, read_csv, read_json, read_parquet, read_text, require_object
from workbench.schema import DOCUMENTS, GOLD_TURNS

__all__ = [
    "document_table",
    "GoldDataset",
    "Layout",
    "Benchmark",
    "load_gold",
    "gsm8k_final_answer",
    "plain_number",
    "executed_text",
    "gold_value",
    "check_finite",
]

Layout = Literal[
    "convfinqa-reformatted",
    "convfinqa-original",
    "ghchen99-embedded",
    "gsm8k-jsonl",
    "math-problems",
    "plain-table",
    "carried-in-predictions",
]
Benchmark = Literal["convfinqa", "gsm8k", "math", "table"]

#: Columns a plain gold table must have, and those it may have.
_TABLE_REQUIRED = ("record_id", "turn", "question", "gold_answer")
_TABLE_OPTIONAL = ("gold_program", "gold_solution")


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
    benchmark
        ``"convfinqa"``, ``"gsm8k"``, ``"math"`` or ``"table"``: which grading rules apply.
    """

    turns: pl.DataFrame
    documents: pl.DataFrame
    path: Path
    layout: Layout
    benchmark: Benchmark

    def tables(self, doc_ids: Iterable[str] | None = None) -> dict[str, TableRows]:
        """Document tables by ``doc_id`` (all, or those of ``doc_ids``), for ``table_*`` operations."""
        docs = self.documents if doc_ids is None else self.documents.filter(pl.col("doc_id").is_in(sorted(doc_ids)))
        return {doc_id: document_table(text) for doc_id, text in docs.select("doc_id", "table_json").iter_rows()}


def document_table(table_json: str | None) -> TableRows:
    """The rows of a document's table (``documents.table_json``) for ``table_*`` operations.

    Examples
    --------
    >>> document_table('{"columns": ["2019"], "rows": [["sales", "$ 5"]]}')
    {'sales': [5.0]}
    """
    grid = json.loads(table_json) if table_json else {}
    return table_rows([["", *grid.get("columns", [])], *grid.get("rows", [])])


def load_gold(path: str | Path) -> GoldDataset:
    """Load a gold dataset in any recognised layout (see the module docstring).

    The layout is recognised from the file's suffix and the keys of its first record;
    a ``.json`` file that holds JSON Lines is read as JSON Lines.

    Parameters
    ----------
    path
        The dataset file.

    Raises
    ------
    InputError
        When the file cannot be read, a record lacks a field, a GSM8K answer has no
        ``####`` line or a MATH solution no ``\\boxed{}``; the message names the file, the
        line or record, the field and the fix.

    Examples
    --------
    >>> from workbench.config import BUNDLED_DATASET, project_root
    >>> gold = load_gold(project_root() / BUNDLED_DATASET)
    >>> gold.layout, gold.benchmark, gold.turns.height, gold.documents.height
    ('convfinqa-reformatted', 'convfinqa', 1490, 421)
    >>> gsm8k = load_gold(project_root() / "data/gsm8k/test.jsonl")
    >>> gsm8k.benchmark, gsm8k.turns.height, gsm8k.turns.row(2, named=True)["gold_executed"]
    ('gsm8k', 1319, '70000')
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv", ".parquet"):
        records, locations, columns = _read_table(path)
        return _plain_table(path, list(zip(locations, records, strict=True)), columns)
    if suffix in (".jsonl", ".ndjson"):
        return _from_objects(path, [(f"line {n}", obj) for n, obj in iter_json_lines(path)])
    data = _read_json_or_lines(path)
    if isinstance(data, _Lines):
        return _from_objects(path, data.items)
    if isinstance(data, dict) and data and all(isinstance(v, list) for v in data.values()):
        records = [r for split in data.values() for r in split]
        return _build(path, "convfinqa-reformatted", records, _reformatted)
    if isinstance(data, list) and data and isinstance(data[0], dict):
        first = data[0]
        if "annotation" in first:
            return _build(path, "convfinqa-original", data, _original)
        if "conversation" in first and "financial_report" in first:
            return _build(path, "ghchen99-embedded", data, _ghchen99)
        return _from_objects(path, [(f"record {i}", obj) for i, obj in enumerate(data)], where="top level")
    raise _unrecognised(path, "top level", data)


def gsm8k_final_answer(solution: str) -> str | None:
    """The final answer of a GSM8K solution: the text after its last ``####``, stripped.

    ``None`` when there is no ``####`` or nothing follows it.

    Examples
    --------
    >>> gsm8k_final_answer("He makes 9 * 2 = $<<9*2=18>>18.\\n#### 18")
    '18'
    >>> gsm8k_final_answer("#### 1,000 ") , gsm8k_final_answer("no marker")
    ('1,000', None)
    """
    matches = list(patterns.HASH_ANSWER.finditer(solution))
    if not matches:
        return None
    answer = matches[-1].group("answer").strip()
    return answer or None


def plain_number(text: str | None) -> float | None:
    r"""The value of an answer that is just a number (``"70,000"``, ``"-3"``, ``"0.5"``), else ``None``.

    No units, currency, percent or LaTeX: ``\frac{1}{2}`` and ``10,\!080`` are not plain numbers.

    Examples
    --------
    >>> plain_number("70,000"), plain_number("-0.5"), plain_number(r"\frac{1}{2}"), plain_number("5%")
    (70000.0, -0.5, None, None)
    """
    if text is None:
        return None
    match = patterns.PLAIN_NUMBER.match(text)
    if match is None:
        return None
    return float((match.group("sign") or "") + match.group("num").replace(",", ""))


def executed_text(answer: str) -> str:
    r"""Write a gold final answer as the executed answer: a plain number loses its thousands
    separators; anything else is kept as written (stripped).

    Examples
    --------
    >>> executed_text("70,000"), executed_text(r" \frac{1}{2} ")
    ('70000', '\\frac{1}{2}')
    """
    text = answer.strip()
    return text.replace(",", "") if plain_number(text) is not None else text


# --------------------------------------------------------------------------- helpers
def check_finite(file: str | Path, value: object, *, location: str, field: str) -> None:
    """Raise :class:`InputError` when a gold answer is not a finite number.

    A JSON ``1e999999`` reads as infinity and ``NaN``/``Infinity`` are accepted by Python's
    JSON reader; such a gold answer would be matched by a prediction written the same way.

    Examples
    --------
    >>> check_finite("gold.json", 0.5, location="record 0", field="answer")
    >>> check_finite("gold.json", float("inf"), location="record 0", field="answer")
    Traceback (most recent call last):
    ...
    workbench.errors.InputError: gold.json: record 0: field 'answer': the gold answer reads as inf, not a finite number...
    """
    if non_finite(value):
        shown = answer_text(value) if isinstance(value, float) else repr(value)
        shown = shown if len(shown) <= 40 else f"{shown[:20]}... ({len(shown):,} characters)"
        raise InputError(
            str(file),
            f"the gold answer reads as {shown}, not a finite number",
            location=location,
            field=field,
            fix="give the finite value (a JSON 1e999999 overflows to infinity; NaN and Infinity are not "
            "answers), or null if the turn has no gold answer",
        )


class _Record:
    """Field access on one raw record that raises errors naming the record and field."""

    def __init__(
        self, path: Path, index: int, raw: object, *, record_id: str | None = None, where: str | None = None
    ) -> None:
        self.path, self.raw = path, require_object(path, raw, where or f"record {index}")
        given = self.raw.get("id", f"#{index}")
        if record_id is None and (isinstance(given, bool) or not isinstance(given, str | int)):
            raise InputError(
                str(path),
                f"record id {given!r:.40} is a {type(given).__name__}, not text",
                location=where or f"record {index}",
                field="id",
                fix="give the record id as text, e.g. 'Single_JKHY/2009/page_28.pdf-3'",
            )
        self.id = record_id if record_id is not None else str(given)
        self.location = f"{where or f'record {index}'} (id '{self.id}')"

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

    def scalars(self, field_lists: Mapping[str, Sequence[Any]]) -> None:
        """Each turn's value must be text, a number, a boolean or null (not an object or list)."""
        for name, values in field_lists.items():
            for turn, value in enumerate(values):
                if isinstance(value, dict | list):
                    raise InputError(
                        str(self.path),
                        f"expected text or a number, found {type(value).__name__} {value!r:.40}",
                        location=f"{self.location}, turn {turn}",
                        field=name,
                        fix="give each turn's value as text or a number",
                    )

    def finite(self, field_lists: Mapping[str, Sequence[Any]]) -> None:
        """Each turn's gold answer must be a finite number when it is a number (:func:`check_finite`)."""
        for name, values in field_lists.items():
            for turn, value in enumerate(values):
                check_finite(self.path, value, location=f"{self.location}, turn {turn}", field=name)

    def rows(self, table: list[Any], field: str) -> list[Any]:
        """A table in the original layout must be a list of rows, each a list of cells."""
        for index, row in enumerate(table):
            if not isinstance(row, list):
                raise InputError(
                    str(self.path),
                    f"table row {index} is a {type(row).__name__}, not a list of cells",
                    location=self.location,
                    field=field,
                    fix="give the table as a list of rows, each a list of cells",
                )
        return table

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
        "filename": rec.get("filename", kind=(str, type(None)), default=None),
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


def gold_value(executed: object) -> float | None:
    """The number an executed answer stands for (``None`` for yes/no and non-numbers).

    Examples
    --------
    >>> gold_value(0.14136), gold_value("yes"), gold_value(True)
    (0.14136, None, None)
    """
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
    table = rec.rows(rec.get("financial_report", "table", kind=list, default=[]), "financial_report.table")
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
        rec.scalars({"conversation.expected_answer": [None] * i + [turn.get("expected_answer")]})
        check_finite(
            rec.path,
            turn.get("expected_answer"),
            location=f"{rec.location}, turn {i}",
            field="conversation.expected_answer",
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
    return _dataset(path, layout, "convfinqa", rows, docs)


def _dataset(
    path: Path, layout: Layout, benchmark: Benchmark, rows: list[dict[str, Any]], docs: list[dict[str, Any]]
) -> GoldDataset:
    turns = pl.DataFrame(rows, schema=GOLD_TURNS)
    documents = pl.DataFrame(docs, schema=DOCUMENTS)
    return GoldDataset(turns=turns, documents=documents, path=path, layout=layout, benchmark=benchmark)


# --------------------------------------------------------------------------- one-turn layouts
@dataclass(frozen=True)
class _Lines:
    """A ``.json`` file that turned out to hold JSON Lines: ``(location, object)`` pairs."""

    items: list[tuple[str, dict[str, Any]]]


def _read_json_or_lines(path: Path) -> Any:
    """Parse a ``.json`` file; one that holds JSON Lines (a common naming slip) is read line by line."""
    try:
        return read_json(path)
    except InputError as exc:
        first = read_text(path).lstrip().split("\n", 1)[0]
        if not exc.problem.startswith("invalid JSON (Extra data") or not first.startswith("{"):
            raise
    return _Lines([(f"line {n}", obj) for n, obj in iter_json_lines(path)])


def _unrecognised(path: Path, location: str, found: object) -> InputError:
    keys = f" (keys found: {', '.join(list(found)[:12])})" if isinstance(found, dict) else ""
    return InputError(
        str(path),
        f"not a recognised gold layout{keys}",
        location=location,
        fix=(
            "give ConvFinQA in the reformatted layout ({'dev': [...]}), the original layout "
            "(a list of records with 'annotation'), outputs that carry gold "
            "(a list of records with 'conversation' and 'financial_report'), GSM8K JSON Lines "
            "({question, answer} with '#### <answer>'), MATH-style {problem, solution} records, "
            "or a table with columns record_id, turn, question, gold_answer"
        ),
    )


def _from_objects(path: Path, items: list[tuple[str, Any]], *, where: str | None = None) -> GoldDataset:
    """Dispatch a list of one-record-per-item objects on the keys of the first.

    ``where`` names the place an unrecognised file is reported at (default: the first item).
    """
    if not items:
        raise InputError(str(path), "no turns found", fix="give a file with at least one record")
    location, first = items[0]
    first = require_object(path, first, location)
    shape = next((name for name, keys in _ONE_TURN_SHAPES.items() if set(keys) <= set(first)), None)
    if shape is None:
        raise _unrecognised(path, where or location, first)
    _check_one_shape(path, items, shape)
    if shape == "plain table":
        return _plain_table(path, items, list(first))
    if shape == "MATH":
        return _math(path, items)
    return _gsm8k(path, items)


#: One-record-per-item gold shapes, by the keys that identify them (checked in this order).
_ONE_TURN_SHAPES = {"plain table": _TABLE_REQUIRED, "MATH": ("problem", "solution"), "GSM8K": ("question", "answer")}


def _check_one_shape(path: Path, items: list[tuple[str, Any]], shape: str) -> None:
    """Raise :class:`InputError` at the first item of another shape than the first item's."""
    needed = _ONE_TURN_SHAPES[shape]
    for where, obj in items:
        obj = require_object(path, obj, where)
        missing = [k for k in needed if k not in obj]
        if not missing:
            continue
        other = next((name for name, keys in _ONE_TURN_SHAPES.items() if set(keys) <= set(obj)), None)
        if other is None:
            continue  # a record that merely lacks a field: the layout's reader names it
        raise InputError(
            str(path),
            f"the file mixes two schemas: this record has the {other} shape (keys {', '.join(list(obj)[:8])}) "
            f"but {items[0][0]} has the {shape} shape (keys {', '.join(needed)})",
            location=where,
            field=missing[0],
            fix="give each schema its own file, or convert these records to one shape",
        )


def _one_turn_row(
    record_id: str,
    question: str,
    answer: str | None,
    executed: str | None,
    value: float | None,
    solution: str | None,
    program: str | None = None,
) -> dict[str, Any]:
    return {
        "record_id": record_id,
        "turn": 0,
        "question": question,
        "gold_answer": answer,
        "gold_executed": executed,
        "gold_value": value,
        "gold_program": program,
        "gold_solution": solution,
        "qa_split": None,
        "n_turns": 1,
        "has_type2_question": None,
        "has_duplicate_columns": None,
        "has_non_numeric_values": None,
        "doc_id": None,
    }


def _gsm8k(path: Path, items: list[tuple[str, Any]]) -> GoldDataset:
    """GSM8K: the record id is the record's 0-based position (its line index when there are no blank lines)."""
    rows = []
    for index, (where, raw) in enumerate(items):
        rec = _Record(path, index, raw, record_id=str(index), where=where)
        question = rec.get("question", kind=str)
        solution = rec.get("answer", kind=str)
        answer = gsm8k_final_answer(solution)
        if answer is None:
            raise InputError(
                str(path),
                "the answer has no final '#### <answer>' line",
                location=rec.location,
                field="answer",
                fix="end the answer with '#### ' and the final answer, as GSM8K does",
            )
        check_finite(path, answer, location=rec.location, field="answer")
        rows.append(_one_turn_row(rec.id, question, answer, executed_text(answer), plain_number(answer), solution))
    return _dataset(path, "gsm8k-jsonl", "gsm8k", rows, [])


def _math(path: Path, items: list[tuple[str, Any]]) -> GoldDataset:
    """MATH-style problems: the id is ``unique_id`` (or ``id``) when present, else the position."""
    rows = []
    seen: dict[str, str] = {}
    for index, (where, raw) in enumerate(items):
        obj = require_object(path, raw, where)
        given = obj.get("unique_id", obj.get("id"))
        record_id = str(given) if given is not None and str(given).strip() else str(index)
        rec = _Record(path, index, obj, record_id=record_id, where=where)
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
        rows.append(_one_turn_row(record_id, problem, boxed, boxed, plain_number(boxed), solution))
    return _dataset(path, "math-problems", "math", rows, [])


def _read_table(path: Path) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """Rows of a CSV, TSV or Parquet file, where each came from, and the columns."""
    if path.suffix.lower() == ".parquet":
        frame = read_parquet(path)
        return frame.to_dicts(), [f"row {i + 1}" for i in range(frame.height)], frame.columns
    frame, locations = read_csv(path)
    return frame.to_dicts(), locations, frame.columns


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
    missing = [c for c in _TABLE_REQUIRED if c not in columns]
    if missing:
        raise InputError(
            str(path),
            f"missing column {', '.join(repr(m) for m in missing)} (columns found: {', '.join(list(columns)[:12])})",
            field=missing[0],
            fix="give a table with columns record_id, turn, question, gold_answer (and optionally gold_program)",
        )
    if not items:
        raise InputError(str(path), "no turns found", fix="give a file with at least one row")
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, int], str] = {}
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
        key = (str(record_id), _table_turn(path, where, obj.get("turn")))
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
        row = _one_turn_row(
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
    return _dataset(path, "plain-table", "table", rows, [])
