"""The prediction readers, tried in order, and the column shapes of plain rows.

A file is read by its suffix (JSON Lines, JSON, CSV/TSV, Parquet) into a
:class:`~workbench.io.predictions.base.PredictionSource`; the first reader of :data:`READERS`
whose ``detect`` accepts it gives its rows. A file no reader claims is read as plain rows, one a
line, record or table row (a file that mixes the shapes of :data:`SHAPES` is an error).
:func:`detect_map` then maps the rows' columns by the first of :data:`SHAPES` they fit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from workbench.errors import InputError
from workbench.io.jsonfiles import iter_json_lines, read_csv, read_json, read_parquet
from workbench.io.predictions.base import ColumnShape, PredictionReader, PredictionSource, Rows, union_keys
from workbench.io.predictions.canonical import SHAPE as CANONICAL
from workbench.io.predictions.columnmap import ANSWER_COLUMNS, MAP_NAMES, ColumnMap
from workbench.io.predictions.ghchen99_predictions import READER as GHCHEN99_PREDICTIONS
from workbench.io.predictions.ghchen99_results import READER as GHCHEN99_RESULTS
from workbench.io.predictions.inspect_log import READER as INSPECT_LOG
from workbench.io.predictions.lm_eval_samples import READER as LM_EVAL_SAMPLES
from workbench.io.predictions.openai_gsm8k import READER as OPENAI_GSM8K
from workbench.io.predictions.program_of_thoughts import READER as PROGRAM_OF_THOUGHTS
from workbench.io.predictions.tora import READER as TORA
from workbench.io.predictions.zarifaziz import SHAPE as ZARIFAZIZ

__all__ = ["READERS", "SHAPES", "read_source", "read_rows", "detect_map"]

#: The formats read by an adapter, in the order they are tried.
READERS: tuple[PredictionReader, ...] = (
    INSPECT_LOG,
    OPENAI_GSM8K,
    TORA,
    PROGRAM_OF_THOUGHTS,
    LM_EVAL_SAMPLES,
    GHCHEN99_RESULTS,
    GHCHEN99_PREDICTIONS,
)

#: Shapes of plain prediction rows, by the columns that identify them, in the order they are tried.
SHAPES: tuple[ColumnShape, ...] = (ZARIFAZIZ, CANONICAL)


def read_source(path: Path) -> PredictionSource:
    """Read a prediction file by its suffix, before its format is recognised.

    Raises
    ------
    InputError
        For an unknown suffix, or a file that cannot be read.
    """
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return PredictionSource(path, "lines", lines=list(iter_json_lines(path)))
    if suffix == ".json":
        return PredictionSource(path, "json", document=read_json(path))
    if suffix == ".eval":
        if not path.is_file():  # read by inspect_ai.log, later
            problem = "is not a file" if path.exists() else "file not found"
            raise InputError(str(path), problem, fix="check the path")
        return PredictionSource(path, "eval")
    if suffix in (".csv", ".tsv"):
        frame, locations = read_csv(path)
        return PredictionSource(path, "table", table=Rows(frame.to_dicts(), locations, frame.columns))
    if suffix == ".parquet":
        frame = read_parquet(path)
        rows = Rows(frame.to_dicts(), [f"row {i + 1}" for i in range(frame.height)], frame.columns)
        return PredictionSource(path, "table", table=rows)
    raise InputError(
        str(path),
        f"unknown file type '{suffix or '(none)'}'",
        fix="give a .jsonl, .json, .csv or .parquet file, or an Inspect AI log (.eval)",
    )


def read_rows(path: Path) -> Rows:
    """The rows of a prediction file: by the first reader that recognises it, else as they are.

    Raises
    ------
    InputError
        When the file cannot be read, mixes two shapes, or a reader finds a bad value.
    """
    source = read_source(path)
    reader = next((r for r in READERS if r.detect(source)), None)
    if reader is None:
        return _plain_rows(source)
    if reader.keys:
        _check_adapter_lines(source, reader)
    return reader.read(source)


def detect_map(path: Path, columns: Sequence[str]) -> ColumnMap:
    """The map of plain rows' columns, by the first shape of :data:`SHAPES` they fit.

    Canonical columns without a turn (``record_id`` and an answer, no column named like a turn)
    are single-turn rows: the map has no ``turn``, and every row is read as turn 0.

    Raises
    ------
    InputError
        When the columns fit no shape: the message names the missing columns.

    Examples
    --------
    >>> detect_map(Path("gsm8k.csv"), ["record_id", "predicted_answer", "question"]).columns
    {'record_id': 'record_id', 'predicted_answer': 'predicted_answer', 'question': 'question'}
    """
    shape = next((s for s in SHAPES if s.detect(columns)), None)
    if shape is not None:
        return shape.column_map(columns)
    present = set(columns)
    if _single_turn(columns):
        return CANONICAL.column_map(columns)
    if "record_id" not in present:
        missing = "record_id"
    elif not present & set(ANSWER_COLUMNS):
        missing = ", ".join(ANSWER_COLUMNS[:-1]) + f" or {ANSWER_COLUMNS[-1]}"
    else:
        missing = "turn"  # a column named like a turn, but not 'turn'
    raise InputError(
        str(path),
        f"missing column '{missing}' (columns found: {', '.join(columns[:12])}{', ...' if len(columns) > 12 else ''})",
        field=missing,
        fix="rename the columns, or map them: --map record_id=COL,predicted_answer=COL "
        f"(add turn=COL:0 or turn=COL:1 when the file has turns; names: {MAP_NAMES})",
    )


def _single_turn(columns: Sequence[str]) -> bool:
    """Canonical columns of single-turn rows: ``record_id`` and an answer, and no column named like a turn."""
    present = set(columns)
    named_like_a_turn = any("turn" in c.lower() for c in columns)
    return "record_id" in present and bool(present & set(ANSWER_COLUMNS)) and not named_like_a_turn


def _plain_rows(source: PredictionSource) -> Rows:
    """The rows of a file no reader claims: table rows, lines or records, as they are."""
    if source.table is not None:
        return source.table
    if source.lines is not None:
        objects = source.objects
        locations = [f"line {n}" for n, _ in source.lines]
    else:
        objects = source.records
        locations = [f"record {i}" for i in range(len(objects))]
    _check_one_shape(source.path, objects, locations)
    return Rows(objects, locations, union_keys(objects))


def _shape(keys: Iterable[str]) -> ColumnShape | None:
    present = set(keys)
    return next((s for s in SHAPES if set(s.keys) <= present), None)


def _check_one_shape(path: Path, objects: Sequence[Mapping[str, Any]], locations: Sequence[str]) -> None:
    """Raise :class:`InputError` at the first record whose shape differs from the first record's."""
    if not objects:
        return
    first = _shape(objects[0])
    if first is None:
        return
    shapes: dict[tuple[str, ...], ColumnShape | None] = {}  # by the keys in their order: rows repeat them
    for obj, location in zip(objects, locations, strict=True):
        keys = tuple(obj)
        shape = shapes[keys] if keys in shapes else shapes.setdefault(keys, _shape(keys))
        if shape != first:
            missing = next(k for k in first.keys if k not in obj)
            raise InputError(
                str(path),
                f"the file mixes two schemas: this record has the {shape.name if shape else 'unrecognised'} shape "
                f"(keys {', '.join(list(obj)[:8])}) but {locations[0]} has the {first.name} shape "
                f"(keys {', '.join(list(objects[0])[:8])})",
                location=location,
                field=missing,
                fix="give each schema its own file, or convert these records to one shape",
            )


def _check_adapter_lines(source: PredictionSource, reader: PredictionReader) -> None:
    """Raise :class:`InputError` at the first line that lacks the keys of the reader's format
    (lines the reader skips excepted)."""
    name, needed = reader.name, reader.keys
    for number, obj in source.lines or []:
        missing = [k for k in needed if k not in obj]
        if reader.skips(obj):
            continue
        # a line lacking a key or two is read as it is (the missing field is reported where needed)
        if missing and (_shape(obj) is not None or len(missing) > len(needed) // 2):
            raise InputError(
                str(source.path),
                f"the file mixes two schemas: this line has keys {', '.join(list(obj)[:8])} "
                f"but the file is {name} output (keys {', '.join(needed)})",
                location=f"line {number}",
                field=missing[0],
                fix="give each schema its own file, or remove the lines of the other shape",
            )
