"""Load model outputs into the canonical predictions table.

Canonical columns: ``record_id, turn (0-based), system, predicted_answer,
predicted_program, raw_output`` (see :data:`workbench.schema.PREDICTIONS`); only the keys
and one of answer/program are required. Files may be JSON Lines, JSON, CSV or Parquet.

Shapes recognised without a map:

* canonical: columns named as above (``turn`` 0-based);
* zarifaziz/convfinqa runs: ``record_id, turn_idx, predicted_answer, predicted_calculation,
  predicted_reasoning`` (the calculation is read as the program, the reasoning as raw output);
* ghchen99/ConvFinQA-llm-eval predictions: ``[{id, conversation: [{predicted_program,
  predicted_answer}]}]``;
* ghchen99 evaluation results: ``{"results": [{question_id: "<record id>-<turn>", ...}]}``.

Anything else takes a :class:`ColumnMap` (``--map record_id=COL,turn=COL:1,...``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from workbench.errors import InputError, UsageError
from workbench.grading import patterns
from workbench.grading.compare import answer_text
from workbench.io.jsonfiles import iter_json_lines, read_json, read_text, require_object
from workbench.schema import PREDICTION_TARGETS, PREDICTIONS

__all__ = ["ColumnMap", "parse_column_map", "load_predictions", "default_system_name"]

_GENERIC_STEMS = frozenset({"predictions", "prediction", "outputs", "output", "samples", "results"})


@dataclass(frozen=True)
class ColumnMap:
    """Which source column fills each canonical column, and how turns are counted.

    Attributes
    ----------
    columns
        Canonical name to source column, e.g. ``{"record_id": "report_id_x"}``.
    turn_base
        0 when the source's first turn is 0, 1 when it is 1.
    """

    columns: Mapping[str, str] = field(default_factory=dict)
    turn_base: int = 0


def parse_column_map(spec: str) -> ColumnMap:
    """Parse ``record_id=COL,turn=COL:1,predicted_answer=COL,...``.

    The turn column must say whether it counts from 0 or from 1 (``turn=q_order:1``).

    Raises
    ------
    UsageError
        For an unknown canonical name, a missing ``=``, or a turn without its base.

    Examples
    --------
    >>> parse_column_map("record_id=report_id_x,turn=q_order:1,predicted_answer=ans")
    ColumnMap(columns={'record_id': 'report_id_x', 'turn': 'q_order', 'predicted_answer': 'ans'}, turn_base=1)
    """
    columns: dict[str, str] = {}
    base = 0
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        target, sep, source = part.partition("=")
        target, source = target.strip(), source.strip()
        if not sep or not source:
            raise UsageError(f"--map: '{part}' is not NAME=COLUMN. Fix: write e.g. record_id=report_id_x")
        if target not in PREDICTION_TARGETS:
            raise UsageError(f"--map: unknown name '{target}'. Fix: use one of {', '.join(PREDICTION_TARGETS)}")
        if target == "turn":
            match = patterns.MAP_TURN_BASE.match(source)
            if match is None:
                raise UsageError(
                    f"--map: say whether '{source}' counts turns from 0 or 1. "
                    f"Fix: write turn={source}:0 or turn={source}:1"
                )
            source, base = match.group("column"), int(match.group("base"))
        columns[target] = source
    return ColumnMap(columns=columns, turn_base=base)


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
    """
    if path.stem.lower() not in _GENERIC_STEMS:
        return path.stem
    parent = path.parent.name or path.stem
    if patterns.RUN_TIMESTAMP_DIR.match(parent) and path.parent.parent.name:
        return f"{path.parent.parent.name}@{parent}"
    return parent


# --------------------------------------------------------------------------- reading
@dataclass
class _Rows:
    """Raw rows of a file with where each came from."""

    records: list[Mapping[str, Any]]
    locations: list[str]
    columns: list[str]


def _read_rows(path: Path) -> _Rows | pl.DataFrame:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        pairs = list(iter_json_lines(path))
        return _Rows([o for _, o in pairs], [f"line {n}" for n, _ in pairs], _union_keys(o for _, o in pairs))
    if suffix == ".json":
        data = read_json(path)
        return _json_rows(path, data)
    if suffix in (".csv", ".tsv"):
        read_text(path)  # encoding and existence checks with clear messages
        try:
            return pl.read_csv(path, infer_schema=False, separator="\t" if suffix == ".tsv" else ",")
        except (pl.exceptions.ComputeError, pl.exceptions.NoDataError) as exc:
            raise InputError(
                str(path),
                f"not a readable CSV ({exc})".splitlines()[0],
                fix="check the delimiter, quoting and header row",
            ) from None
    if suffix == ".parquet":
        if not path.exists():
            raise InputError(str(path), "file not found", fix="check the path")
        try:
            return pl.read_parquet(path)
        except Exception as exc:  # noqa: BLE001 - polars raises several types for bad files
            raise InputError(
                str(path), f"not a readable Parquet file ({type(exc).__name__})", fix="re-export the file as Parquet"
            ) from None
    raise InputError(
        str(path),
        f"unknown file type '{suffix or '(none)'}'",
        fix="give a .jsonl, .json, .csv or .parquet file",
    )


def _union_keys(objects: Iterable[Mapping[str, Any]]) -> list[str]:
    keys: dict[str, None] = {}
    for obj in objects:
        keys.update(dict.fromkeys(obj))
    return list(keys)


def _json_rows(path: Path, data: Any) -> _Rows:
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        return _ghchen99_results(path, data["results"])
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(lists) == 1:
            data = lists[0]
    if not isinstance(data, list):
        raise InputError(
            str(path),
            "expected a list of records",
            location="top level",
            fix="give a JSON list of objects, or JSON Lines",
        )
    for index, obj in enumerate(data):
        require_object(path, obj, f"record {index}")
    if data and "conversation" in data[0] and "id" in data[0]:
        return _ghchen99_predictions(path, data)
    return _Rows(data, [f"record {i}" for i in range(len(data))], _union_keys(data))


def _ghchen99_predictions(path: Path, data: list[dict[str, Any]]) -> _Rows:
    records, locations = [], []
    for index, obj in enumerate(data):
        conversation = obj.get("conversation")
        if not isinstance(conversation, list):
            raise InputError(
                str(path),
                "expected a list of turns",
                location=f"record {index} (id '{obj.get('id')}')",
                field="conversation",
                fix="give each record a 'conversation' list",
            )
        for turn, item in enumerate(conversation):
            item = item if isinstance(item, dict) else {}
            records.append(
                {
                    "record_id": obj.get("id"),
                    "turn": turn,
                    "predicted_answer": item.get("predicted_answer"),
                    "predicted_program": item.get("predicted_program"),
                }
            )
            locations.append(f"record {index} (id '{obj.get('id')}'), turn {turn}")
    return _Rows(records, locations, ["record_id", "turn", "predicted_answer", "predicted_program"])


def _ghchen99_results(path: Path, results: list[Any]) -> _Rows:
    records, locations = [], []
    for index, obj in enumerate(results):
        location = f"results[{index}]"
        qid = obj.get("question_id") if isinstance(obj, dict) else None
        record_id, sep, turn = str(qid).rpartition("-")
        if not isinstance(qid, str) or not sep or not turn.isdigit():
            raise InputError(
                str(path),
                f"question_id {qid!r} is not '<record id>-<turn>'",
                location=location,
                field="question_id",
                fix="write question_id as the record id, a hyphen, and the 0-based turn",
            )
        records.append(
            {
                "record_id": record_id,
                "turn": int(turn),
                "predicted_answer": obj.get("predicted_answer"),
                "predicted_program": obj.get("predicted_program"),
            }
        )
        locations.append(f"{location} (question_id '{qid}')")
    return _Rows(records, locations, ["record_id", "turn", "predicted_answer", "predicted_program"])


# --------------------------------------------------------------------------- shapes
_ZARIFAZIZ = ColumnMap(
    columns={
        "record_id": "record_id",
        "turn": "turn_idx",
        "predicted_answer": "predicted_answer",
        "predicted_program": "predicted_calculation",
        "raw_output": "predicted_reasoning",
    },
    turn_base=0,
)


def _detect_map(path: Path, columns: Sequence[str]) -> ColumnMap:
    present = set(columns)
    if {"record_id", "turn_idx", "predicted_answer"} <= present:
        return ColumnMap({k: v for k, v in _ZARIFAZIZ.columns.items() if v in present}, 0)
    if {"record_id", "turn"} <= present and present & {"predicted_answer", "predicted_program"}:
        return ColumnMap({k: k for k in PREDICTION_TARGETS if k in present}, 0)
    missing = [c for c in ("record_id", "turn") if c not in present]
    if not missing:
        missing = ["predicted_answer or predicted_program"]
    raise InputError(
        str(path),
        f"missing column {', '.join(repr(m) for m in missing)} (columns found: "
        f"{', '.join(columns[:12])}{', ...' if len(columns) > 12 else ''})",
        field=missing[0],
        fix="rename the columns, or map them: --map record_id=COL,turn=COL:0,predicted_answer=COL",
    )


def _check_map(path: Path, column_map: ColumnMap, columns: Sequence[str]) -> None:
    for target, source in column_map.columns.items():
        if source not in columns:
            raise InputError(
                str(path),
                f"column '{source}' named by --map for {target} does not exist "
                f"(columns found: {', '.join(columns[:12])}{', ...' if len(columns) > 12 else ''})",
                field=source,
                fix="name one of the columns found in --map",
            )
    for required in ("record_id", "turn"):
        if required not in column_map.columns:
            raise InputError(
                str(path),
                f"--map does not say which column is {required}",
                field=required,
                fix=f"add {required}=COL to --map",
            )
    if not {"predicted_answer", "predicted_program"} & set(column_map.columns):
        raise InputError(
            str(path),
            "--map names neither predicted_answer nor predicted_program",
            field="predicted_answer",
            fix="add predicted_answer=COL or predicted_program=COL",
        )


# --------------------------------------------------------------------------- values
def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    if isinstance(value, float | int | bool):
        return answer_text(value)
    return str(value)


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


def load_predictions(
    path: str | Path, *, system: str | None = None, column_map: ColumnMap | None = None
) -> pl.DataFrame:
    """Load one prediction file into the canonical table.

    Parameters
    ----------
    path
        A ``.jsonl``, ``.json``, ``.csv`` or ``.parquet`` file.
    system
        The system's name; by default a ``system`` column, else :func:`default_system_name`.
    column_map
        How to read a file whose shape is not recognised.

    Raises
    ------
    InputError
        For a missing column, invalid JSON on a line, a map naming a column that does not
        exist, a bad turn, a missing record id, or a duplicate ``(record_id, turn)``.
    """
    path = Path(path)
    raw = _read_rows(path)
    if isinstance(raw, pl.DataFrame):
        first_row = 2 if path.suffix.lower() in (".csv", ".tsv") else 1
        kind = "line" if first_row == 2 else "row"
        raw = _Rows(raw.to_dicts(), [f"{kind} {i + first_row}" for i in range(raw.height)], raw.columns)
    if not raw.records:
        raise InputError(str(path), "no predictions found", fix="give a file with at least one row")
    cmap = column_map if column_map is not None and column_map.columns else _detect_map(path, raw.columns)
    _check_map(path, cmap, raw.columns)
    name = system or default_system_name(path)
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, int], str] = {}
    rid_col, turn_col = cmap.columns["record_id"], cmap.columns["turn"]
    for obj, location in zip(raw.records, raw.locations, strict=True):
        record_id = obj.get(rid_col)
        if record_id is None or not str(record_id).strip():
            raise InputError(
                str(path),
                "empty record id",
                location=location,
                field=rid_col,
                fix="give every row the id of the conversation it answers",
            )
        turn = _turn(path, location, obj.get(turn_col), cmap.turn_base, turn_col)
        row_system = _text(obj.get(cmap.columns["system"])) if "system" in cmap.columns else None
        row_system = system or row_system or name
        key = (row_system, str(record_id), turn)
        if key in seen:
            raise InputError(
                str(path),
                f"duplicate (record_id, turn) = ('{key[1]}', {turn}); first at {seen[key]}",
                location=location,
                field=f"{rid_col}, {turn_col}",
                fix="keep one prediction per turn, or split the runs into files, one system each",
            )
        seen[key] = location
        rows.append(
            {
                "record_id": key[1],
                "turn": turn,
                "system": row_system,
                "predicted_answer": _text(obj.get(cmap.columns.get("predicted_answer", ""))),
                "predicted_program": _text(obj.get(cmap.columns.get("predicted_program", ""))),
                "raw_output": _text(obj.get(cmap.columns.get("raw_output", ""))),
                "source_file": str(path),
                "source_location": location,
            }
        )
    return pl.DataFrame(rows, schema=PREDICTIONS)
