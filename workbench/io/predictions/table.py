"""Turn a prediction file's rows into the canonical predictions table: :func:`load_predictions`."""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from workbench.errors import InputError, WorkbenchError
from workbench.grading import patterns
from workbench.io.predictions.base import short, text
from workbench.io.predictions.columnmap import ColumnMap, check_map
from workbench.io.predictions.registry import detect_map, read_rows
from workbench.schema import PREDICTIONS, keys_as_keys

__all__ = ["load_predictions", "read_predictions", "read_ahead", "PredictionFile", "default_system_name"]

_GENERIC_STEMS = frozenset({"predictions", "prediction", "outputs", "output", "samples", "results"})


def default_system_name(path: Path) -> str:
    """Name a system after its file: the stem, or the folder for generic names.

    Examples
    --------
    >>> default_system_name(Path("runs/gpt4/outputs.csv"))
    'gpt4'
    >>> default_system_name(Path("zarifaziz-claude-sonnet-4-6/2026-05-04T06-35-00Z/predictions.jsonl"))
    'zarifaziz-claude-sonnet-4-6@2026-05-04T06-35-00Z'
    >>> default_system_name(Path("tora-70b.jsonl"))
    'tora-70b'
    >>> default_system_name(Path("out/meta-llama__Llama-2-7b-hf/samples_gsm8k_2024-05-01T10-00-00.jsonl"))
    'meta-llama__Llama-2-7b-hf'
    """
    is_lm_eval_log = path.stem.lower().startswith("samples_") and bool(path.parent.name)
    if path.stem.lower() not in _GENERIC_STEMS and not is_lm_eval_log:
        return path.stem
    parent = path.parent.name or path.stem
    if patterns.RUN_TIMESTAMP_DIR.match(parent) and path.parent.parent.name:
        return f"{path.parent.parent.name}@{parent}"
    return parent


def _cell(path: Path, location: str, obj: Mapping[str, Any], column: str) -> str | None:
    """The text of ``obj[column]`` (``None`` when absent); a JSON object there is an error."""
    value = obj.get(column) if column else None
    if value is None or type(value) is str:  # the usual cell, without the checks below
        return value
    if isinstance(value, dict):
        raise InputError(
            str(path),
            f"expected text or a number, found a JSON object {short(value)}",
            location=location,
            field=column,
            fix="give the value as text or a number",
        )
    return text(value)


#: The columns of :data:`~workbench.schema.PREDICTIONS` read as text by :func:`_cell` after the
#: row's keys, in the order a row's cells are checked.
_TEXT_COLUMNS = (
    "predicted_answer",
    "predicted_program",
    "raw_output",
    "gold_answer",
    "gold_solution",
    "upstream_answer",
    "predicted_unit",
    "level",
)


def _flag(value: Any) -> bool | None:
    """An upstream verdict as a boolean: ``True``/``False``, 1/0, ``1.0``/``0.0``, ``"True"``/``"False"``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return None if math.isnan(value) else value != 0  # NaN (a missing verdict in pandas) is no verdict
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0", "1.0", "0.0", "yes", "no"):
        return value.strip().lower() in ("true", "1", "1.0", "yes")
    return None


def _turn(path: Path, location: str, value: Any, base: int, source: str) -> int:
    if isinstance(value, bool) or value is None:
        ok = False
    elif isinstance(value, int):
        ok = True
    elif isinstance(value, float) and value.is_integer():
        value, ok = int(value), True
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value, ok = int(value.strip()), True
    else:
        ok = False
    if not ok:
        raise InputError(
            str(path),
            f"turn {value!r} is not a whole number",
            location=location,
            field=source,
            fix="give the turn index as an integer",
        )
    if value < base:
        raise InputError(
            str(path),
            f"turn {value} is below {base}, the first turn this map says the file uses",
            location=location,
            field=source,
            fix=f"if turns count from 0, say turn={source}:0 in --map" if base == 1 else "turns start at 0",
        )
    return value - base


@dataclass(frozen=True)
class PredictionFile:
    """A prediction file read into the canonical table (:func:`read_predictions`).

    Attributes
    ----------
    path
        The file.
    frame
        The canonical table (:data:`workbench.schema.PREDICTIONS`).
    single_turn
        The file has no turn column (nor a ``turn=`` in its map): every row was read as turn 0.
    """

    path: Path
    frame: pl.DataFrame
    single_turn: bool = False

    def __post_init__(self) -> None:
        # the keys as every table holds them, however the frame was built (issue 35)
        object.__setattr__(self, "frame", keys_as_keys(self.frame))

    @property
    def note(self) -> str | None:
        """The line that says the file was read as single-turn (``None`` when it has turns).

        Examples
        --------
        >>> PredictionFile(Path("gsm8k.jsonl"), pl.DataFrame(), single_turn=True).note
        'no turn column in gsm8k.jsonl: every row is turn 0 (single-turn)'
        """
        return f"no turn column in {self.path}: every row is turn 0 (single-turn)" if self.single_turn else None


def load_predictions(
    path: str | Path, *, system: str | None = None, column_map: ColumnMap | None = None
) -> pl.DataFrame:
    """Load one prediction file into the canonical table (:func:`read_predictions`'s frame).

    Parameters
    ----------
    path
        A ``.jsonl``, ``.json``, ``.csv`` or ``.parquet`` file.
    system
        The system's name; by default a ``system`` column, else :func:`default_system_name`.
        For files that hold several systems a line (OpenAI's GSM8K solutions) it is a prefix:
        ``"{system}/6b_finetuning"``.
    column_map
        How to read a file whose shape is not recognised.

    Returns
    -------
    polars.DataFrame
        The canonical table (:data:`workbench.schema.PREDICTIONS`). Rows of files without ids
        (OpenAI, program-of-thoughts) have a null ``record_id`` and their ``question``; link
        them with :func:`workbench.io.link.attach_record_ids`.

    Raises
    ------
    InputError
        For a missing column, invalid JSON on a line, a map naming a column that does not
        exist, a bad turn, a missing record id (and no question to link by), or a duplicate
        ``(record_id, turn)``.

    Warns
    -----
    UserWarning
        When lines that are not predictions (program-of-thoughts' prompt-only lines) are skipped.

    Examples
    --------
    >>> from workbench.config import project_root
    >>> tora = load_predictions(project_root() / "data/predictions/gsm8k/tora/tora-70b.jsonl")
    >>> tora.height, tora.row(0, named=True)["upstream_answer"], tora.row(0, named=True)["gold_answer"]
    (1319, '18', '18')
    """
    return read_predictions(path, system=system, column_map=column_map).frame


def read_predictions(
    path: str | Path, *, system: str | None = None, column_map: ColumnMap | None = None
) -> PredictionFile:
    """Read one prediction file into the canonical table, and say whether it had turns.

    A file without a turn column (a map without ``turn=``) is single-turn: every row is turn 0,
    and each record id may appear once per system (a repeated id means the file has turns
    after all, and is refused). Parameters and errors as :func:`load_predictions`.
    """
    path = Path(path)
    if _AHEAD and column_map is None and (found := _AHEAD.pop(_file_key(path, system), None)) is not None:
        return found
    raw = read_rows(path)
    if not raw.records:
        raise InputError(str(path), "no predictions found", fix="give a file with at least one row")
    cmap = column_map if column_map is not None and column_map.columns else detect_map(path, raw.columns)
    check_map(path, cmap, raw.columns)
    name = system or default_system_name(path)
    columns: dict[str, list[Any]] = {name: [] for name in PREDICTIONS}
    # the text columns a row takes as they are (by _cell), each with the file's column it reads
    texts = [(columns[name], cmap.columns.get(name, "")) for name in _TEXT_COLUMNS]
    upstream = cmap.columns.get("upstream_correct", "")
    seen: dict[tuple[str, str, int], str] = {}
    rid_col, turn_col = cmap.columns["record_id"], cmap.columns.get("turn")
    for obj, location in zip(raw.records, raw.locations, strict=True):
        given_id = obj.get(rid_col)
        if isinstance(given_id, dict | list | bool):
            raise InputError(
                str(path),
                f"record id {short(given_id)} is a {type(given_id).__name__}, not text or a number",
                location=location,
                field=rid_col,
                fix="give the record id as text (e.g. 'Single_JKHY/2009/page_28.pdf-3') or a number",
            )
        record_id = text(given_id)
        question = _cell(path, location, obj, cmap.columns.get("question", ""))
        if record_id is None or not record_id.strip():
            if not (raw.by_question and question and question.strip()):
                raise InputError(
                    str(path),
                    "empty record id" + (" and no question to link it by" if raw.by_question else ""),
                    location=location,
                    field=rid_col,
                    fix="give every row the id of the conversation it answers"
                    + (", or its question" if raw.by_question else ""),
                )
            record_id = None
        turn = 0 if turn_col is None else _turn(path, location, obj.get(turn_col), cmap.turn_base, turn_col)
        row_system = _cell(path, location, obj, cmap.columns["system"]) if "system" in cmap.columns else None
        if raw.system_suffix and row_system:
            row_system = f"{system}/{row_system}" if system else row_system
        else:
            row_system = system or row_system or name
        if record_id is not None:
            key = (row_system, record_id, turn)
            if key in seen and turn_col is None:
                raise InputError(
                    str(path),
                    f"record id '{record_id}' appears again (first at {seen[key]}) in a file without a turn "
                    "column, so the file has turns",
                    location=location,
                    field=rid_col,
                    fix="name the turn column and its base in --map: turn=COLUMN:0 or turn=COLUMN:1",
                )
            if key in seen:
                raise InputError(
                    str(path),
                    f"duplicate (record_id, turn) = ('{key[1]}', {turn}); first at {seen[key]}",
                    location=location,
                    field=f"{rid_col}, {turn_col}",
                    fix="keep one prediction per turn, or split the runs into files, one system each",
                )
            seen[key] = location
        columns["record_id"].append(record_id)
        columns["turn"].append(turn)
        columns["system"].append(row_system)
        columns["question"].append(question)
        for values, column in texts:  # in the order of the columns: a bad cell is found where it was
            values.append(_cell(path, location, obj, column))
        columns["upstream_correct"].append(_flag(obj.get(upstream)))
        columns["source_location"].append(location)
    columns["source_file"] = [str(path)] * len(columns["record_id"])
    return PredictionFile(path, pl.DataFrame(columns, schema=PREDICTIONS), single_turn=turn_col is None)


#: Prediction files read ahead (:func:`read_ahead`), each taken (once) by the next
#: :func:`read_predictions` of the same file, unchanged, as the same system, without a column map.
_AHEAD: dict[Hashable, PredictionFile] = {}


def _file_key(path: Path, system: str | None) -> Hashable:
    """The file as it is now (where, size, modified, inode) and the system it is read as."""
    try:
        stat = path.stat()
        return (str(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino, system)
    except OSError:
        return None


def read_ahead(files: Sequence[tuple[str, str | None]]) -> None:
    """Read prediction files (path, system) before they are asked for, each kept for the next
    :func:`read_predictions` of it (a report's kernel reads its inputs while the runner grades
    them); what was read ahead before is dropped. A file that cannot be read, that changes while
    it is read, or whose reading warns is not kept: its own reading later says what it says.

    Examples
    --------
    >>> from workbench.config import project_root
    >>> path = project_root() / "data/predictions/gsm8k/tora/tora-70b.jsonl"
    >>> read_ahead([(str(path), "tora")])
    >>> taken = read_predictions(path, system="tora")
    >>> taken is read_predictions(path, system="tora"), len(_AHEAD)
    (False, 0)
    """
    _AHEAD.clear()
    for name, system in files:
        path = Path(name)
        key = _file_key(path, system)
        if key is None:
            continue
        try:
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always")
                read = read_predictions(path, system=system)
        except (WorkbenchError, OSError):
            continue
        if not said and _file_key(path, system) == key:
            _AHEAD[key] = read
