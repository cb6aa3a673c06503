"""Rescue a damaged store: copy every event still readable into a new store.

The damaged file (and its write-ahead log) is only read, never changed; what could not be read
is counted and named (:class:`Recovery`).
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from workbench.annotations.connections import _OPEN, _Connection, _file_key, _registry
from workbench.annotations.integrity import _SQLITE_MAGIC, _WAL_MAGIC, _link_exclusive, backup_name, list_backups
from workbench.annotations.leases import _ensure_table
from workbench.annotations.store import AnnotationStore
from workbench.errors import InputError, UsageError
from workbench.schema import ANNOTATION_EVENTS

__all__ = ["Recovery", "recover_store"]


def _unrecoverable(path: Path, detail: str) -> InputError:
    backups = list_backups(path)
    return InputError(
        str(path),
        f"no event can be recovered ({detail}); the file was left as it is",
        fix=f"restore the newest backup ({backups[-1]}) by copying it over the file"
        if backups
        else "restore the file from a backup, or start a new store",
    )


class Recovery(NamedTuple):
    """What :func:`recover_store` did."""

    #: The new store.
    path: Path
    #: Events copied into it.
    kept: int
    #: Event ids that could not be read: gaps in the ids up to the highest one the store gave
    #: (events are never deleted, so every id up to it was an event; a store made by an earlier
    #: recover keeps the gaps of its source, and they count again).
    unreadable: int
    #: Rows read but left out: not a valid event, or a retraction of an annotation that was lost.
    invalid: int
    #: The unreadable event ids as ranges, e.g. ``"5-9, 12"`` (empty when none).
    missing_ids: str


def _id_ranges(ids: Iterable[int]) -> str:
    """``[5, 6, 7, 9]`` as ``"5-7, 9"``.

    Examples
    --------
    >>> _id_ranges([5, 6, 7, 8, 9, 12]), _id_ranges([])
    ('5-9, 12', '')
    """
    spans: list[list[int]] = []
    for i in sorted(ids):
        if spans and i == spans[-1][1] + 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def recover_store(path: str | Path, directory: str | Path | None = None) -> Recovery:
    """Copy the events still readable in a damaged store into a new store; the damaged file
    (and its write-ahead log) are only read, never changed.

    The new store is ``<name>.recovered-<UTC time>.sqlite`` beside the damaged one (or in
    ``directory``), never over an existing file. Events keep their ids; a retraction whose
    annotation was lost is left out, and so is any row that is not a valid event. Event ids the
    store gave out but that cannot be read are counted (``unreadable``): ids are never reused or
    deleted, so every gap below the highest id is a lost row.

    When this process has the store open (a notebook kernel), its file is not read byte for byte
    (that would drop the open connection's locks): the copy is taken through that connection.

    Returns
    -------
    Recovery
        The new store, how many events it holds, how many were unreadable (and which ids), and
        how many readable rows were left out.

    Raises
    ------
    InputError
        When nothing at all can be read (restore a backup then).
    """
    source = Path(path)
    folder = Path(directory) if directory is not None else source.parent
    if not source.is_file():
        raise UsageError(f"no annotation store at {source}. Fix: give the path of the damaged store")
    folder.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{source.name}.recover-", dir=folder))
    try:
        copy = work / "damaged.sqlite"
        with _registry():
            shared = _OPEN.get(_file_key(source) or (0, 0))
            if shared is not None and shared.pid == os.getpid():
                _copy_through(shared, source, copy)
            else:
                _copy_bytes(source, copy, work)
        rows, top = _readable_rows(copy, source)
        held = _readable_leases(copy)
        target = work / "recovered.sqlite"
        kept, invalid = 0, 0
        with AnnotationStore(target) as store:
            conn = store._connection()
            present: set[int] = set()
            conn.execute("BEGIN IMMEDIATE")
            for row in rows:
                values = dict(zip(ANNOTATION_EVENTS, row, strict=False))
                if values.get("kind") == "retraction" and values.get("retracts") not in present:
                    invalid += 1
                    continue
                try:
                    conn.execute(
                        f"INSERT INTO events ({', '.join(ANNOTATION_EVENTS)}) "
                        f"VALUES ({', '.join('?' * len(ANNOTATION_EVENTS))})",
                        row,
                    )
                except (sqlite3.IntegrityError, sqlite3.InterfaceError, sqlite3.ProgrammingError, sqlite3.DataError):
                    invalid += 1
                    continue
                present.add(int(values["event_id"]))
                kept += 1
            if held:  # the leases come along: a recovered store keeps who holds which item
                _ensure_table(conn)
                conn.executemany(f"INSERT INTO leases ({_LEASE_COLUMNS}) VALUES ({', '.join('?' * 9)})", held)
            conn.execute("COMMIT")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("PRAGMA journal_mode = DELETE")
        read_ids = {row[0] for row in rows if isinstance(row[0], int)}
        missing = sorted(set(range(1, top + 1)) - read_ids)
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        stem = backup_name(source, stamp).replace(".backup-", ".recovered-")
        final = _link_exclusive(target, folder, lambda n: stem if n == 1 else f"{stem[: -len('.sqlite')]}-{n}.sqlite")
        return Recovery(final, kept, len(missing), invalid, _id_ranges(missing))
    finally:
        for leftover in sorted(work.glob("*"), reverse=True):
            leftover.unlink(missing_ok=True)
        work.rmdir()


_LEASE_COLUMNS = "kind, created_at, at, expires, owner, annotator, record_id, turn, system"


def _readable_leases(copy: Path) -> list[tuple[Any, ...]]:
    """The lease rows still readable in ``copy``, in order (none when the table is missing or damaged:
    a lease only keeps an item from a second analyst for a few minutes)."""
    try:
        conn = sqlite3.connect(str(copy), isolation_level=None)
    except sqlite3.Error:
        return []
    try:
        return conn.execute(f"SELECT {_LEASE_COLUMNS} FROM leases ORDER BY lease_id").fetchall()
    except sqlite3.DatabaseError:
        return []
    finally:
        conn.close()


def _copy_through(shared: _Connection, source: Path, copy: Path) -> None:
    """Copy a store this process has open through its connection (SQLite's backup API)."""
    target = sqlite3.connect(str(copy))
    try:
        with shared.lock:
            shared.conn.backup(target)
    except sqlite3.Error as exc:
        raise InputError(
            str(source),
            f"this process has the store open and SQLite cannot copy it ({exc}); it was left as it is",
            fix="close every AnnotationStore on it (or restart the notebook kernel), then run recover again",
        ) from None
    finally:
        target.close()


def _copy_bytes(source: Path, copy: Path, work: Path) -> None:
    """Copy the damaged file (and a WAL whose header is SQLite's) byte for byte: SQLite may
    write to what it opens, so it opens the copy. Only when this process has no connection to it."""
    data = bytearray(source.read_bytes())
    if len(data) >= 100 and data.startswith(_SQLITE_MAGIC):
        page_size = int.from_bytes(data[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        if page_size >= 512 and int.from_bytes(data[28:32], "big") > len(data) // page_size:
            # truncated: make the copy's header say how many pages there are, so that
            # SQLite reads the pages that are left instead of refusing the whole file
            data[28:32] = (len(data) // page_size).to_bytes(4, "big")
    copy.write_bytes(bytes(data))
    wal = source.with_name(source.name + "-wal")
    if wal.is_file():
        log = wal.read_bytes()
        if len(log) >= 8 and int.from_bytes(log[:4], "big") in _WAL_MAGIC:
            (work / (copy.name + "-wal")).write_bytes(log)


def _readable_rows(copy: Path, source: Path) -> tuple[list[tuple[Any, ...]], int]:
    """The rows of ``events`` that can still be read from ``copy``, by event id, and the highest
    event id the store gave out (from ``sqlite_sequence`` when it can be read)."""
    columns = ", ".join(ANNOTATION_EVENTS)
    try:
        conn = sqlite3.connect(str(copy), isolation_level=None)
    except sqlite3.Error as exc:
        raise _unrecoverable(source, str(exc)) from None
    try:
        try:
            top = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
            given = int(top[0]) if top and isinstance(top[0], int) else 0
        except sqlite3.DatabaseError:
            given = 0
        try:
            found = conn.execute(f"SELECT {columns} FROM events ORDER BY event_id").fetchall()
            return found, max([given, *(row[0] for row in found if isinstance(row[0], int))])
        except sqlite3.DatabaseError as exc:
            first = exc
        rows: dict[int, tuple[Any, ...]] = {}
        limit = max(given, copy.stat().st_size // 40)  # no event row is shorter than about 40 bytes
        for start in range(1, limit + 1, 256):
            block = (start, start + 255)
            try:
                found = conn.execute(f"SELECT {columns} FROM events WHERE event_id BETWEEN ? AND ?", block).fetchall()
            except sqlite3.DatabaseError:
                found = []
                for event_id in range(block[0], block[1] + 1):
                    try:
                        found.extend(conn.execute(f"SELECT {columns} FROM events WHERE event_id = ?", (event_id,)))
                    except sqlite3.DatabaseError:
                        continue
            rows.update((row[0], tuple(row)) for row in found)
        if not rows:
            raise _unrecoverable(source, str(first))
        return [rows[k] for k in sorted(rows)], max(given, *rows)
    finally:
        conn.close()
