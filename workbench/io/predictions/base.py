"""What every prediction reader shares: the source it recognises, the rows it gives, value helpers.

A reader (one module per format in this package) is a :class:`PredictionReader`: ``detect``
says whether a :class:`PredictionSource` is in its format, ``read`` gives its :class:`Rows`
with canonical column names. A :class:`ColumnShape` recognises the columns of plain rows and
says how they map to the canonical ones. :mod:`workbench.io.predictions.registry` tries them
in order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from workbench.errors import InputError
from workbench.grading.compare import answer_text, non_finite
from workbench.io.jsonfiles import require_object
from workbench.io.predictions.columnmap import ColumnMap

__all__ = [
    "Rows",
    "PredictionSource",
    "PredictionReader",
    "ColumnShape",
    "ADAPTER_COLUMNS",
    "GHCHEN99_GOLD",
    "union_keys",
    "first_item",
    "short",
    "text",
]

#: Gold columns ghchen99's files carry, as canonical names.
GHCHEN99_GOLD = ["question", "gold_answer"]

#: Canonical columns the adapters of the GSM8K and MATH formats fill.
ADAPTER_COLUMNS = [
    "record_id",
    "turn",
    "system",
    "predicted_answer",
    "predicted_program",
    "raw_output",
    "question",
    "gold_answer",
    "gold_solution",
    "upstream_correct",
    "upstream_answer",
]


@dataclass
class Rows:
    """Raw rows of a file with where each came from.

    ``by_question``: rows may lack a record id and are linked to gold by question text later.
    ``system_suffix``: each row names its system, and a name the caller gives is a prefix.
    """

    records: Sequence[Mapping[str, Any]]
    locations: list[str]
    columns: list[str]
    by_question: bool = False
    system_suffix: bool = False


@dataclass(frozen=True)
class PredictionSource:
    """A prediction file as read, before its format is recognised.

    Attributes
    ----------
    path
        The file.
    kind
        ``"lines"`` (JSON Lines), ``"json"``, ``"table"`` (CSV, TSV, Parquet) or ``"eval"`` (an
        Inspect AI ``.eval`` log, a zip read by its reader from ``path``).
    lines
        JSON Lines: ``(line number, object)`` pairs.
    document
        JSON: the parsed document.
    table
        A table's rows, as they are.
    """

    path: Path
    kind: Literal["lines", "json", "table", "eval"]
    lines: list[tuple[int, dict[str, Any]]] | None = None
    document: Any = None
    table: Rows | None = None

    @cached_property
    def objects(self) -> list[dict[str, Any]]:
        """JSON Lines: the objects, in line order."""
        return [o for _, o in self.lines or []]

    @cached_property
    def keys(self) -> set[str]:
        """JSON Lines: the keys any line has."""
        return set(union_keys(self.objects))

    @cached_property
    def records(self) -> list[dict[str, Any]]:
        """JSON: the list of records (the document, or the one list a JSON object holds).

        Raises
        ------
        InputError
            When there is no list of records, or a record is not an object.
        """
        data = self.document
        if isinstance(data, dict):
            lists = [v for v in data.values() if isinstance(v, list)]
            if len(lists) == 1:
                data = lists[0]
        if not isinstance(data, list):
            raise InputError(
                str(self.path),
                "expected a list of records",
                location="top level",
                fix="give a JSON list of objects, or JSON Lines",
            )
        for index, obj in enumerate(data):
            require_object(self.path, obj, f"record {index}")
        return data


def _never(obj: Mapping[str, Any]) -> bool:
    return False


@dataclass(frozen=True)
class PredictionReader:
    """One prediction format read by an adapter: how to recognise it and how to read it.

    Attributes
    ----------
    name
        The format's name, as errors give it (``"ToRA"``).
    detect
        Whether a source is in this format.
    read
        The rows of a source in this format, with canonical column names.
    keys
        For JSON Lines formats recognised by their keys: the keys every line has (a line of
        another shape is an error).
    skips
        Lines the reader skips, which need not have ``keys``.
    """

    name: str
    detect: Callable[[PredictionSource], bool]
    read: Callable[[PredictionSource], Rows]
    keys: tuple[str, ...] = ()
    skips: Callable[[Mapping[str, Any]], bool] = _never


@dataclass(frozen=True)
class ColumnShape:
    """Plain prediction rows of a known shape: how to recognise their columns and map them.

    Attributes
    ----------
    name
        The shape's name, as errors give it (``"canonical"``).
    keys
        The keys every row of the shape has.
    detect
        Whether a file's columns are of this shape (and hold something to grade).
    column_map
        The map of a file's columns to the canonical ones.
    """

    name: str
    keys: tuple[str, ...]
    detect: Callable[[Sequence[str]], bool]
    column_map: Callable[[Sequence[str]], ColumnMap]


def union_keys(objects: Iterable[Mapping[str, Any]]) -> list[str]:
    """The keys any of ``objects`` has, in the order they first occur."""
    keys: dict[str, None] = {}
    for row_keys in dict.fromkeys(map(tuple, objects)):  # each sequence of keys once: rows repeat them
        keys.update(dict.fromkeys(row_keys))
    return list(keys)


def first_item(value: Any) -> Any:
    """Element 0 of a list (``None`` for an empty list); anything else as it is."""
    if isinstance(value, list):
        return value[0] if value else None
    return value


def text(value: Any) -> str | None:
    """A cell as text: a list joined with spaces, a number as it reads (``None`` stays ``None``)."""
    if value is None:
        return None
    if type(value) is str:  # the usual cell, as it is (``str(value)`` below gives the same)
        return value
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    if isinstance(value, int) and not isinstance(value, bool) and non_finite(value):
        return str(value)  # past the float range: kept as written (graded as not a finite number)
    if isinstance(value, float | int | bool):
        return answer_text(value)
    return str(value)


def short(value: Any) -> str:
    """A value's ``repr`` for an error message, cut to 40 characters."""
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."
