"""Annotations from a CSV file: every row read and checked first, then all written at once."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from workbench.annotations.events import _check
from workbench.annotations.store import AnnotationStore
from workbench.errors import InputError
from workbench.io.jsonfiles import read_text, shown_values

__all__ = ["CSV_COLUMNS", "read_annotation_csv", "import_csv"]

#: Columns of an annotation CSV, and whether each is required (see :func:`import_csv`).
CSV_COLUMNS: dict[str, bool] = {
    "record_id": True,
    "turn": True,
    "category": True,
    "annotator": False,
    "system": False,
    "corrected_answer": False,
    "corrected_program": False,
    "note": False,
    "exclude": False,
}
_EXCLUDE_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False, "": False}


# --------------------------------------------------------------------------- CSV import
def _csv_turn(text: str, file: str, location: str) -> int | str:
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        raise InputError(
            file,
            f"expected a whole number >= 0, got {text!r}",
            location=location,
            field="turn",
            fix="give the 0-based turn index",
        ) from None


def _csv_exclude(text: str, file: str, location: str) -> bool:
    word = text.strip().lower()
    if word not in _EXCLUDE_WORDS:
        raise InputError(
            file,
            f"expected true/false/1/0/yes/no or empty, got {text!r}",
            location=location,
            field="exclude",
            fix="write exclude as true or false",
        )
    return _EXCLUDE_WORDS[word]


#: Free-text fields of an imported annotation.
_TEXT_FIELDS = ("corrected_answer", "corrected_program", "note")


def _csv_text(text: str) -> str | None:
    """An optional text value of an annotation CSV, stored as written (empty: not given).

    Text read is data: a note such as ``- missing value`` or ``@alice please check`` is kept
    byte for byte. The defence against spreadsheet formulas is at CSV output, where every
    formula-looking cell is written inert (:func:`workbench.io.csvsafe.write_csv`)."""
    return text or None


def _shown(text: str, limit: int = 60) -> str:
    """``text`` quoted for a message, cut after ``limit`` characters."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def read_annotation_csv(path: str | Path, *, annotator: str | None = None) -> list[dict[str, Any]]:
    """Read and check every row of an annotation CSV; nothing is written anywhere.

    Columns: ``record_id``, ``turn``, ``category`` (required); ``annotator`` (or the
    argument, used where the column is missing or empty), ``system``, ``corrected_answer``,
    ``corrected_program``, ``note``, ``exclude`` (``true/false/1/0/yes/no``, empty is false).
    A quoted value may span lines (a note of several lines). Text is stored as written, even
    when it begins with ``=``, ``+``, ``-`` or ``@`` ("- missing value", "@alice please check"):
    every CSV the workbench writes quotes such cells (:func:`workbench.io.csvsafe.write_csv`).

    Returns
    -------
    list[dict[str, Any]]
        One mapping of :meth:`AnnotationStore.annotate`'s keyword arguments per row, in file order.

    Raises
    ------
    InputError
        For a missing file, an unknown or missing column, a quote left open, or a row that is
        not valid, naming its line and field.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> csv_path = Path(tempfile.mkdtemp()) / "a.csv"
    >>> _ = csv_path.write_text('record_id,turn,category,note\\nr1,0,other,"two\\nlines"\\n')
    >>> [(row["record_id"], row["note"]) for row in read_annotation_csv(csv_path, annotator="ana")]
    [('r1', 'two\\nlines')]
    >>> _ = csv_path.write_text('record_id,turn,category,note\\nr1,0,other,- missing value\\nr2,0,other,@alice please check\\n')
    >>> [row["note"] for row in read_annotation_csv(csv_path, annotator="ana")]
    ['- missing value', '@alice please check']
    """
    path = Path(path)
    file = str(path)
    if not path.is_file():
        raise InputError(file, "file not found", fix="check the path of the annotation CSV")

    content = read_text(path)  # UTF-8 (a byte-order mark is dropped) or UTF-16; other bytes: line and offset
    if not content.strip():
        raise InputError(file, "the file is empty (no header line)", location="line 1", fix="start with a header line")
    with io.StringIO(content, newline="") as handle:
        reader = csv.DictReader(handle, strict=True)  # strict: a quote left open is an error, not the rest of the file
        try:
            fieldnames = reader.fieldnames
        except csv.Error as exc:
            raise _csv_error(file, exc, "line 1") from None
        header = [name.strip() for name in fieldnames or []]
        if not header:
            raise InputError(file, "empty file (no header line)", location="line 1", fix="start with a header line")
        reader.fieldnames = header
        for name in header:
            if name not in CSV_COLUMNS:
                raise InputError(
                    file,
                    f"unknown column {name!r}",
                    location="line 1",
                    field=name,
                    fix=f"use only the columns {', '.join(CSV_COLUMNS)}",
                )
        duplicated = sorted({name for name in header if header.count(name) > 1})
        if duplicated:
            raise InputError(
                file, "column given twice", location="line 1", field=duplicated[0], fix="keep one column of that name"
            )
        required = [name for name, needed in CSV_COLUMNS.items() if needed]
        missing = [name for name in required if name not in header]
        if missing:
            raise InputError(
                file,
                "missing column",
                location="line 1",
                field=missing[0],
                fix=f"the header needs {', '.join(required)}",
            )
        if "annotator" not in header and not annotator:
            raise InputError(
                file,
                "no annotator column and no annotator given",
                location="line 1",
                field="annotator",
                fix="add an annotator column, or pass annotator='name'",
            )
        rows: list[dict[str, Any]] = []
        end = reader.line_num
        while True:
            location = f"line {end + 1}"  # where the record starts (a quoted value may span lines)
            try:
                record = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                raise _csv_error(file, exc, location) from None
            end = reader.line_num
            values_given = [v for k, v in record.items() if k is not None and v is not None] + list(
                record.get(None) or []  # type: ignore[call-overload]
            )
            spans_lines = any("\n" in v or "\r" in v for v in values_given)
            hint = "; a value runs over several lines: is a quote misplaced?" if spans_lines else ""
            if None in record:
                raise InputError(
                    file,
                    f"{len(record[None])} more value(s) than columns: {shown_values(values_given)} "  # type: ignore[index]
                    f"where the header has {len(header)} ({', '.join(header)}): a line of another CSV, "
                    f"or a value with an unquoted comma{hint}",
                    location=location,
                    fix="quote values that contain commas",
                )
            if None in record.values():
                given = sum(value is not None for value in record.values())
                raise InputError(
                    file,
                    f"{given} value(s) where the header has {len(header)} columns"
                    + ("; the file looks truncated" if not handle.read(1) else "")
                    + hint,
                    location=location,
                    field=next(name for name, value in record.items() if value is None),
                    fix="give every row one value per column (an empty value is written as nothing between commas)",
                )
            text = {name: (value or "") for name, value in record.items()}
            values: dict[str, Any] = {
                "annotator": text.get("annotator", "").strip() or (annotator or ""),
                "record_id": text["record_id"].strip(),
                "turn": _csv_turn(text["turn"], file, location),
                "category": text["category"].strip(),
                "exclude": _csv_exclude(text.get("exclude", ""), file, location),
                "system": text.get("system") or None,
            }
            for name in _TEXT_FIELDS:
                values[name] = _csv_text(text.get(name, ""))
            _check(values, file, location)
            rows.append(values)
    return rows


def _csv_error(file: str, exc: csv.Error, location: str) -> InputError:
    """One line for what Python's strict CSV reader refuses."""
    text = str(exc)
    if "unexpected end of data" in text:
        return InputError(
            file,
            "a quote opened here is never closed, so the rest of the file would be read as one value",
            location=location,
            fix="close the quote (write a quote inside a quoted value as two quotes)",
        )
    if "expected after" in text:
        return InputError(
            file,
            "a quoted value is followed by more text before the next comma",
            location=location,
            fix="put the whole value in quotes and write a quote inside it as two quotes",
        )
    return InputError(
        file, f"not a readable CSV line ({text})", location=location, fix="check the quoting of this line"
    )


def import_csv(store: AnnotationStore, path: str | Path, *, annotator: str | None = None) -> list[int]:
    """Append the annotations of a CSV file, all in one transaction.

    The file is read and every row checked first (:func:`read_annotation_csv`, which
    lists the columns); nothing is written when any row is not valid.

    Returns
    -------
    list[int]
        The new event ids, in file order.

    Raises
    ------
    InputError
        For a missing file, an unknown or missing column, or a row that is not valid
        (naming its line and field); nothing is written then.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.csv").write_text("record_id,turn,category,exclude\\nr1,0,mislabel,yes\\nr2,3,other,\\n")
    >>> with AnnotationStore(folder / "a.sqlite") as store:
    ...     import_csv(store, folder / "a.csv", annotator="ana")
    ...     store.active().select("record_id", "turn", "category", "exclude").rows()
    [1, 2]
    [('r1', 0, 'mislabel', True), ('r2', 3, 'other', False)]
    """
    rows = read_annotation_csv(path, annotator=annotator)
    return store.annotate_many(rows, where=str(path)) if rows else []
