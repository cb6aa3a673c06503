"""The run ledger: one row per system for every ``workbench report`` and ``workbench grade --out``.

The ledger is an SQLite file, ``ledger.sqlite``, in the reports folder (the ``--out`` folder of
``report`` or of ``grade``). A row holds what is needed to follow a system over time and to test
whether tonight's run is worse than last night's (:mod:`workbench.report.gate`):

* ``run_id`` (shared by the systems of one run), ``created_at`` (UTC, ISO 8601), ``source``
  (``report`` or ``grade``), ``report`` (the HTML file, when a report wrote one);
* ``system``, ``benchmark``, ``template``, ``gold_sha256``, ``predictions_sha256``;
* ``headline``: the system's headline metrics (JSON, as in ``summary.json``, without the
  per-policy and per-reason tallies);
* ``slices``: accuracy and n of every slice group (JSON list of ``{slice, group, n, accuracy}``);
* ``column_map`` and ``parameters`` (JSON) the run used;
* ``verdicts``: the item verdicts (``record_id, turn, slice, group, correct, answered``) as
  Parquet bytes, for the paired tests of the gate and of ``05-history``.

Why SQLite and not a Parquet file renamed into place (:func:`workbench.io.atomic.write_atomic`):
an append is a read-modify-write, and two runs appending at once through rename would each
write the file without the other's row. An SQLite append is one transaction (``BEGIN
IMMEDIATE``: writers queue, :data:`_BUSY_MS`), journalled with ``synchronous=FULL``: a process
killed mid-append leaves a hot journal that the next reader rolls back, so the earlier rows are
intact and the half-written one is absent.
"""

from __future__ import annotations

import io
import json
import sqlite3
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from workbench.analysis.slices import long_slices, present_slices
from workbench.errors import InputError
from workbench.io.manifest import read_manifest
from workbench.io.paths import inside
from workbench.pipeline.graded import graded_paths
from workbench.schema import keys_as_keys, keys_as_text

__all__ = [
    "LEDGER_NAME",
    "LedgerRow",
    "ledger_path",
    "rows_from_graded",
    "append",
    "append_graded",
    "read_ledger",
    "verdicts",
]

#: The ledger's file name, in the reports folder.
LEDGER_NAME = "ledger.sqlite"
#: How long an append waits for another run's append to finish (milliseconds).
_BUSY_MS = 120_000
#: Slices whose groups follow from the run's own verdicts (``error_type``; ``graders_disagree``:
#: whether the grading policies agree on this run's answer) say nothing fixed about the items, so
#: two runs' groups are not the same items: not recorded.
_NOT_RECORDED = frozenset({"error_type", "graders_disagree"})
#: Headline keys left out of ``headline`` (tallies kept in ``summary.json``).
_NOT_HEADLINE = frozenset({"policies", "reasons"})

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    source TEXT NOT NULL,
    report TEXT NOT NULL,
    system TEXT NOT NULL,
    benchmark TEXT NOT NULL,
    template TEXT NOT NULL,
    gold_sha256 TEXT NOT NULL,
    predictions_sha256 TEXT NOT NULL,
    headline TEXT NOT NULL,
    slices TEXT NOT NULL,
    column_map TEXT NOT NULL,
    parameters TEXT NOT NULL,
    verdicts BLOB NOT NULL,
    PRIMARY KEY (run_id, system)
)
"""
_COLUMNS = (
    "run_id",
    "created_at",
    "source",
    "report",
    "system",
    "benchmark",
    "template",
    "gold_sha256",
    "predictions_sha256",
    "headline",
    "slices",
    "column_map",
    "parameters",
    "verdicts",
)


@dataclass(frozen=True)
class LedgerRow:
    """One system of one run, as the ledger stores it (JSON fields as Python values, the
    verdicts as a table)."""

    run_id: str
    created_at: str
    source: str
    report: str
    system: str
    benchmark: str
    template: str
    gold_sha256: str
    predictions_sha256: str
    headline: Mapping[str, Any]
    slices: Sequence[Mapping[str, Any]]
    column_map: Any
    parameters: Mapping[str, Any]
    verdicts: pl.DataFrame

    def _values(self) -> tuple[Any, ...]:
        buffer = io.BytesIO()
        keys_as_text(self.verdicts).write_parquet(buffer, compression="zstd")  # stored as text, as before
        return (
            self.run_id,
            self.created_at,
            self.source,
            self.report,
            self.system,
            self.benchmark,
            self.template,
            self.gold_sha256,
            self.predictions_sha256,
            json.dumps(self.headline, sort_keys=True, default=str),
            json.dumps(list(self.slices), default=str),
            json.dumps(self.column_map, default=str),
            json.dumps(self.parameters, sort_keys=True, default=str),
            buffer.getvalue(),
        )


def ledger_path(folder: str | Path) -> Path:
    """The ledger of the reports folder ``folder``."""
    return inside(Path(folder), LEDGER_NAME)


def verdicts(turns: pl.DataFrame) -> pl.DataFrame:
    """The item verdicts the ledger keeps for each system: ``system, record_id, turn, slice,
    group, correct, answered`` (one row per turn and recorded slice, ``overall``/``all`` first;
    ``answered`` is false for a turn the system gave no prediction for)."""
    names = [name for name in present_slices(turns) if name not in _NOT_RECORDED]  # no all-n/a level
    long = long_slices(turns.with_columns(pl.col("status").cast(pl.String)), names)
    answered = turns.select(
        "system", "record_id", "turn", (pl.col("status").cast(pl.String) != "no_prediction").alias("answered")
    )
    return long.join(answered, on=["system", "record_id", "turn"], how="left").select(
        "system",
        "record_id",
        pl.col("turn").cast(pl.Int64),
        "slice",
        pl.col("group").cast(pl.String),
        pl.col("correct").cast(pl.Boolean).fill_null(False),
        "answered",
    )


def _slice_table(items: pl.DataFrame) -> list[dict[str, Any]]:
    """Accuracy and n of every slice group, over the answered and unanswered items alike."""
    table = items.group_by("slice", "group", maintain_order=True).agg(
        pl.len().alias("n"), pl.col("correct").mean().alias("accuracy")
    )
    return table.to_dicts()


def rows_from_graded(
    folder: str | Path,
    *,
    source: str,
    template: str = "",
    report: str = "",
    column_map: Any = None,
    parameters: Mapping[str, Any] | None = None,
    run_id: str = "",
    created_at: str = "",
) -> list[LedgerRow]:
    """The ledger rows of the graded folder ``folder`` (``turns.parquet`` and ``summary.json``),
    one per system, in the folder's order."""
    paths = graded_paths(folder)
    manifest = read_manifest(paths["summary"], "graded")
    if not manifest.metrics:  # no system graded: nothing to record
        return []
    turns = keys_as_keys(pl.read_parquet(paths["turns"]))
    items = verdicts(turns)
    dataset = manifest.inputs.get("dataset") or {}
    predictions = {entry.get("system"): entry.get("sha256", "") for entry in manifest.inputs.get("predictions") or []}
    run_id = run_id or uuid.uuid4().hex
    created_at = created_at or datetime.now(UTC).isoformat(timespec="seconds")
    rows = []
    for system, metrics in manifest.metrics.items():
        mine = items.filter(pl.col("system") == system).drop("system")
        rows.append(
            LedgerRow(
                run_id=run_id,
                created_at=created_at,
                source=source,
                report=report,
                system=str(system),
                benchmark=str(dataset.get("benchmark", "")),
                template=template,
                gold_sha256=str(dataset.get("sha256", "")),
                predictions_sha256=str(predictions.get(system, "")),
                headline={k: v for k, v in dict(metrics).items() if k not in _NOT_HEADLINE},
                slices=_slice_table(mine),
                column_map=column_map if column_map is not None else (parameters or {}).get("column_map", []),
                parameters=dict(parameters or {}),
                verdicts=mine,
            )
        )
    return rows


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, timeout=_BUSY_MS / 1000, isolation_level=None)
    connection.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
    connection.execute("PRAGMA synchronous = FULL")
    return connection


def append(path: str | Path, rows: Sequence[LedgerRow]) -> Path:
    """Add ``rows`` to the ledger at ``path`` (created when missing) in one transaction: all of
    them or none; another run's append waits for this one (and this one for it).

    Raises
    ------
    InputError
        When the rows cannot be added (a full disk, a read-only folder, a file that is no SQLite
        database): one line; the ledger keeps its earlier rows, none of these.
    """
    target = Path(path)
    if not rows:
        return target
    values = [row._values() for row in rows]
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        connection = _connect(target)
        try:
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.execute(_SCHEMA)
                placeholders = ", ".join("?" for _ in _COLUMNS)
                connection.executemany(f"INSERT INTO runs ({', '.join(_COLUMNS)}) VALUES ({placeholders})", values)
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
        finally:
            connection.close()
    except (sqlite3.Error, OSError) as exc:
        # the run's other outputs are written by now: say so, and that the ledger is as it was
        cause = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise InputError(
            str(target),
            f"could not add this run to the ledger ({cause}); the run's other outputs are written, and the "
            "ledger keeps its earlier rows without this run",
            fix="free some space on that disk (or make the folder writable), then run again",
        ) from None
    return target


def append_graded(folder: str | Path, graded: str | Path, **fields: Any) -> Path:
    """Add the systems of the graded folder ``graded`` to the ledger of the reports folder
    ``folder`` (see :func:`rows_from_graded` for ``fields``)."""
    return append(ledger_path(folder), rows_from_graded(graded, **fields))


def read_ledger(path: str | Path, *, with_verdicts: bool = False) -> list[LedgerRow]:
    """Every row of the ledger at ``path``, oldest first (by time, then in the order appended).
    Without ``with_verdicts`` the verdict tables are left empty (reading them costs time).

    Raises
    ------
    InputError
        When there is no ledger at ``path`` or it is not one.
    """
    target = Path(path)
    if not target.is_file():
        raise InputError(
            str(target),
            "no run ledger here",
            fix="run 'workbench report ... --out FOLDER' or 'workbench grade ... --out FOLDER' first",
        )
    chosen = ", ".join(column if column != "verdicts" or with_verdicts else "NULL" for column in _COLUMNS)
    try:
        connection = _connect(target)
        try:
            found = connection.execute(f"SELECT {chosen} FROM runs ORDER BY created_at, rowid").fetchall()
        finally:
            connection.close()
    except sqlite3.DatabaseError as exc:
        raise InputError(
            str(target), f"not a run ledger ({exc})", fix="point to the ledger.sqlite a run wrote"
        ) from None
    rows = []
    for values in found:
        record = dict(zip(_COLUMNS, values, strict=True))
        for key in ("headline", "slices", "column_map", "parameters"):
            record[key] = json.loads(record[key])
        blob = record["verdicts"]
        record["verdicts"] = keys_as_keys(pl.read_parquet(io.BytesIO(blob))) if blob is not None else pl.DataFrame()
        rows.append(LedgerRow(**record))
    return rows
