"""The gold readers, tried in order, and :func:`load_gold`, which reads a file with the first that fits.

A file is read by its suffix (a table, JSON Lines, or JSON; a ``.json`` file that holds JSON
Lines is read as JSON Lines) into a :class:`~workbench.io.gold.base.GoldSource`; the first
reader of :data:`READERS` whose ``detect`` accepts it reads it. The order decides between
layouts a file could be in: the ConvFinQA layouts by the shape of the document, then the
layouts of one record per item by the keys of the first record (plain table, MATH, GSM8K).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.errors import InputError
from workbench.io.gold.base import GoldDataset, GoldReader, GoldSource
from workbench.io.gold.convfinqa_original import READER as CONVFINQA_ORIGINAL
from workbench.io.gold.convfinqa_reformatted import READER as CONVFINQA_REFORMATTED
from workbench.io.gold.ghchen99_embedded import READER as GHCHEN99_EMBEDDED
from workbench.io.gold.gsm8k_jsonl import READER as GSM8K_JSONL
from workbench.io.gold.math_problems import READER as MATH_PROBLEMS
from workbench.io.gold.plain_table import READER as PLAIN_TABLE
from workbench.io.jsonfiles import iter_json_lines, read_csv, read_json, read_parquet, read_text, require_object

__all__ = ["READERS", "load_gold", "read_source"]

#: The gold readers, in the order they are tried.
READERS: tuple[GoldReader, ...] = (
    CONVFINQA_REFORMATTED,
    CONVFINQA_ORIGINAL,
    GHCHEN99_EMBEDDED,
    PLAIN_TABLE,
    MATH_PROBLEMS,
    GSM8K_JSONL,
)


def load_gold(path: str | Path) -> GoldDataset:
    """Load a gold dataset in any recognised layout (see :mod:`workbench.io.gold`).

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
    source = read_source(path)
    reader = next((r for r in READERS if r.detect(source)), None)
    if reader is None:
        raise _unrecognised(path, source.where, source.records[0][1] if source.records else source.data)
    if reader.keys and source.columns is None:
        _check_one_shape(source, reader)
    return reader.read(source)


def read_source(path: Path) -> GoldSource:
    """Read a gold file by its suffix, before its layout is recognised.

    Raises
    ------
    InputError
        When the file cannot be read, or a file of one record per line holds no record or
        its first is not an object.
    """
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv", ".parquet"):
        records, locations, columns = _read_table(path)
        return GoldSource(path, records=list(zip(locations, records, strict=True)), columns=columns)
    if suffix in (".jsonl", ".ndjson"):
        return _lines_source(path, [(f"line {n}", obj) for n, obj in iter_json_lines(path)])
    data = _read_json_or_lines(path)
    if isinstance(data, _Lines):
        return _lines_source(path, data.items)
    if isinstance(data, list) and data and isinstance(data[0], dict):
        return GoldSource(path, data=data, records=[(f"record {i}", obj) for i, obj in enumerate(data)])
    return GoldSource(path, data=data)


def _lines_source(path: Path, items: list[tuple[str, Any]]) -> GoldSource:
    """The source of a JSON Lines file: at least one record, and the first an object."""
    if not items:
        raise InputError(str(path), "no turns found", fix="give a file with at least one record")
    location, first = items[0]
    require_object(path, first, location)
    return GoldSource(path, records=items, where=location)


def _read_table(path: Path) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """Rows of a CSV, TSV or Parquet file, where each came from, and the columns."""
    if path.suffix.lower() == ".parquet":
        frame = read_parquet(path)
        return frame.to_dicts(), [f"row {i + 1}" for i in range(frame.height)], frame.columns
    frame, locations = read_csv(path)
    return frame.to_dicts(), locations, frame.columns


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
            "or a table with columns record_id, question, gold_answer (and turn, when records have several)"
        ),
    )


def _check_one_shape(source: GoldSource, reader: GoldReader) -> None:
    """Raise :class:`InputError` at the first record of another layout than the first record's."""
    path, items = source.path, source.records or []
    shape, needed = reader.shape, reader.keys
    for where, obj in items:
        obj = require_object(path, obj, where)
        missing = [k for k in needed if k not in obj]
        if not missing:
            continue
        other = next((r.shape for r in READERS if r.keys and set(r.keys) <= set(obj)), None)
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
