"""What every gold reader shares: the dataset type, the source a reader recognises, field access.

A reader (one module per layout in this package) is a :class:`GoldReader`: ``detect`` says
whether a :class:`GoldSource` is in its layout, ``read`` turns it into a :class:`GoldDataset`.
:mod:`workbench.io.gold.registry` tries them in order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl

from workbench.errors import InputError
from workbench.grading.compare import answer_text, non_finite
from workbench.grading.program import TableRows, table_rows
from workbench.io.jsonfiles import require_object
from workbench.schema import DOCUMENTS, GOLD_TURNS, keys_as_keys

__all__ = [
    "Layout",
    "Benchmark",
    "GoldDataset",
    "document_table",
    "check_finite",
    "GoldSource",
    "GoldReader",
    "Record",
    "make_dataset",
    "one_turn_row",
    "level_text",
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

    def __post_init__(self) -> None:
        # the keys as every table holds them, however the turns were built (issue 35)
        object.__setattr__(self, "turns", keys_as_keys(self.turns))

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


@dataclass(frozen=True)
class GoldSource:
    """A gold file as read, before its layout is recognised.

    Attributes
    ----------
    path
        The file.
    data
        The parsed JSON document (``None`` for tables and JSON Lines).
    records
        ``(location, object)`` pairs when the file is one record per item: the rows of a table,
        the lines of JSON Lines, or the items of a JSON list whose first item is an object.
    columns
        The header of a table file (CSV, TSV, Parquet); ``None`` for JSON.
    where
        Where an unrecognised file is reported at.
    """

    path: Path
    data: Any = None
    records: list[tuple[str, Any]] | None = None
    columns: Sequence[str] | None = None
    where: str = "top level"

    @property
    def first_keys(self) -> set[str]:
        """The keys of the first record (empty when there are no records or it is not an object)."""
        if not self.records or not isinstance(self.records[0][1], dict):
            return set()
        return set(self.records[0][1])


@dataclass(frozen=True)
class GoldReader:
    """One gold layout: how to recognise it and how to read it.

    Attributes
    ----------
    layout
        The layout's name (:data:`Layout`).
    detect
        Whether a source is in this layout.
    read
        The dataset of a source in this layout.
    shape
        For layouts of one record per item: the name errors give the shape (``"GSM8K"``).
    keys
        For layouts of one record per item: the keys every record of the layout has.
    """

    layout: Layout
    detect: Callable[[GoldSource], bool]
    read: Callable[[GoldSource], GoldDataset]
    shape: str = ""
    keys: tuple[str, ...] = ()


class Record:
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


def make_dataset(
    path: Path, layout: Layout, benchmark: Benchmark, rows: list[dict[str, Any]], docs: list[dict[str, Any]]
) -> GoldDataset:
    """The dataset of turn rows and document rows, in the schemas of :mod:`workbench.schema`."""
    turns = pl.DataFrame(rows, schema=GOLD_TURNS)
    documents = pl.DataFrame(docs, schema=DOCUMENTS)
    return GoldDataset(turns=turns, documents=documents, path=path, layout=layout, benchmark=benchmark)


def one_turn_row(
    record_id: str,
    question: str,
    answer: str | None,
    executed: str | None,
    value: float | None,
    solution: str | None,
    program: str | None = None,
    level: str | None = None,
) -> dict[str, Any]:
    """The gold row of a single question (turn 0 of a one-turn record); ``level``: MATH's level
    (:func:`level_text`), else ``None``."""
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
        "level": level,
    }


def level_text(value: object) -> str | None:
    """MATH's difficulty level as the ``level`` column holds it: the number as text.

    MATH writes ``"Level 3"``, MATH-500 ``3`` and math-evaluation-harness outputs ``"3"``; all
    read ``"3"``. A level that is not a number (MATH's ``"Level ?"``) is kept as written after
    ``Level``; a missing or empty one is ``None``.

    Examples
    --------
    >>> level_text("Level 3"), level_text(3), level_text(" 5 "), level_text("Level ?"), level_text(None)
    ('3', '3', '5', '?', None)
    """
    if value is None or isinstance(value, bool):
        return None
    text = str(value).strip()
    if text[:5].lower() == "level":
        text = text[5:].strip()
    return text or None
