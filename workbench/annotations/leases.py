"""Leases: an item shown to one analyst is held for a few minutes, so another's queue skips it.

A lease is an event in the annotation store's file, beside the annotation events: an append-only
table ``leases`` of ``lease`` and ``release`` rows, one per item shown and one per item left, each
with its owner (one session: a random token, so two analysts who both call themselves "analyst"
still hold different leases), the annotator's name, the turn's key and the time. The latest row of
a key says who holds it: a ``lease`` row whose ``expires`` is still ahead holds it, a ``release``
row or an expired lease leaves it free. A lease is taken in one write transaction (``BEGIN
IMMEDIATE``) that first reads the key's latest row, so two processes never both get one item.
superintendent's ``DatabaseQueue`` leases items the same way (a "popped" time on the queue row).

The store's event log, undo and retraction semantics are untouched: leases never change which
annotation is in force. A store written before leases existed has no ``leases`` table; it is
added in place, through SQLite (``CREATE TABLE IF NOT EXISTS`` in the first lease's write
transaction), and until then every item reads as free. The file's ``user_version`` (the events'
schema) stays as it is, so an older workbench still opens the store.

Time is a number of seconds (``time.time()`` unless given), so tests inject it.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> from workbench.annotations.store import AnnotationStore
>>> store = AnnotationStore(Path(tempfile.mkdtemp()) / "a.sqlite")
>>> key = ("r1", 0, None)
>>> acquire(store, key, owner="s1", annotator="ana", now=100.0)
True
>>> acquire(store, key, owner="s2", annotator="bo", now=101.0)  # ana holds it
False
>>> holder(store, key, now=101.0)
'ana'
>>> acquire(store, key, owner="s2", annotator="bo", now=100.0 + LEASE_SECONDS)  # expired: free
True
>>> release(store, key, owner="s2", now=500.0), holder(store, key, now=500.0) is None
(True, True)
>>> store.close()
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

from workbench.annotations.integrity import _sqlite_error

__all__ = ["LEASE_SECONDS", "Key", "SqliteLeases", "acquire", "release", "release_owner", "holder", "held_by_others"]

#: How long an item shown to one analyst is kept from the others (renewed while they act on it).
LEASE_SECONDS = 300.0

#: A queued turn's key: (record_id, turn, system); system None is the gold turn.
Key = tuple[str, int, "str | None"]

_CREATE_LEASES = """
CREATE TABLE IF NOT EXISTS leases (
    lease_id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('lease', 'release')),
    created_at TEXT NOT NULL,
    at REAL NOT NULL,
    expires REAL,
    owner TEXT NOT NULL CHECK (length(owner) > 0),
    annotator TEXT NOT NULL,
    record_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    system TEXT,
    CHECK ((kind = 'lease' AND expires IS NOT NULL) OR (kind = 'release' AND expires IS NULL))
)
"""
_CREATE_INDEX = "CREATE INDEX IF NOT EXISTS leases_key ON leases (record_id, turn, system, lease_id)"

#: The latest row of one key (``system IS ?`` matches a null system too).
_LATEST = (
    "SELECT kind, expires, owner, annotator FROM leases WHERE record_id = ? AND turn = ? AND system IS ? "
    "ORDER BY lease_id DESC LIMIT 1"
)
#: The latest row of every key.
_ALL_LATEST = (
    "SELECT l.record_id, l.turn, l.system, l.kind, l.expires, l.owner, l.annotator FROM leases l "
    "JOIN (SELECT MAX(lease_id) AS last FROM leases GROUP BY record_id, turn, system) m ON l.lease_id = m.last"
)


T = TypeVar("T")


class LeaseTable(Protocol):
    """What a backend's ``store.leases()`` gives: the three operations the functions below use."""

    def take(self, key: Key, *, owner: str, annotator: str, now: float, seconds: float) -> bool: ...
    def give_back(self, key: Key, *, owner: str, now: float) -> bool: ...
    def live(self, now: float) -> dict[Key, tuple[str, str]]: ...


class Leased(Protocol):
    """A store with leases (every backend's store)."""

    def leases(self) -> LeaseTable: ...


class _SqliteFile(Protocol):
    """What :class:`SqliteLeases` uses of the SQLite store (its write transaction and connection)."""

    path: Any
    _lock: Any

    def _connection(self) -> sqlite3.Connection: ...
    def _write(self, body: Callable[[sqlite3.Connection], T]) -> T: ...


def _stamp(now: float) -> str:
    return dt.datetime.fromtimestamp(now, dt.UTC).isoformat(timespec="microseconds")


def _ensure_table(conn: sqlite3.Connection) -> None:
    """Add the ``leases`` table to a store that has none (in the caller's write transaction)."""
    conn.execute(_CREATE_LEASES)
    conn.execute(_CREATE_INDEX)


def _has_table(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'leases'").fetchone() is not None


def _live(row: tuple[object, ...] | None, now: float) -> bool:
    """Whether a key's latest row (kind, expires, ...) is a lease still in force at ``now``."""
    return row is not None and row[0] == "lease" and float(row[1]) > now  # type: ignore[arg-type]


class SqliteLeases:
    """The leases of an SQLite store, in its file (see the module's description).

    Every backend's store gives one from ``store.leases()`` with these three methods; the module's
    functions are written against them only.
    """

    def __init__(self, store: _SqliteFile) -> None:
        self.store = store

    def _read(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        store = self.store
        store._connection()
        with store._lock:
            conn = store._connection()
            try:
                if not _has_table(conn):
                    return []
                return conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise _sqlite_error(store.path, exc, "reading the leases") from None

    def take(self, key: Key, *, owner: str, annotator: str, now: float, seconds: float) -> bool:
        """Lease ``key`` to ``owner`` unless another owner holds a live lease (check and write in one transaction)."""
        record_id, turn, system = key

        def body(conn: sqlite3.Connection) -> bool:
            _ensure_table(conn)
            latest = conn.execute(_LATEST, (record_id, turn, system)).fetchone()
            if _live(latest, now) and latest[2] != owner:
                return False
            conn.execute(
                "INSERT INTO leases (kind, created_at, at, expires, owner, annotator, record_id, turn, system) "
                "VALUES ('lease', ?, ?, ?, ?, ?, ?, ?, ?)",
                (_stamp(now), now, now + seconds, owner, annotator, record_id, turn, system),
            )
            return True

        return self.store._write(body)

    def give_back(self, key: Key, *, owner: str, now: float) -> bool:
        """Release ``key`` when ``owner`` holds its live lease; True when it did."""
        record_id, turn, system = key

        def body(conn: sqlite3.Connection) -> bool:
            if not _has_table(conn):
                return False
            latest = conn.execute(_LATEST, (record_id, turn, system)).fetchone()
            if not _live(latest, now) or latest[2] != owner:
                return False
            conn.execute(
                "INSERT INTO leases (kind, created_at, at, expires, owner, annotator, record_id, turn, system) "
                "VALUES ('release', ?, ?, NULL, ?, ?, ?, ?, ?)",
                (_stamp(now), now, owner, latest[3], record_id, turn, system),
            )
            return True

        return self.store._write(body)

    def live(self, now: float) -> dict[Key, tuple[str, str]]:
        """Every key with a live lease at ``now``: its (owner, annotator)."""
        return {
            (str(r), int(t), None if s is None else str(s)): (str(who), str(name))  # type: ignore[call-overload]
            for r, t, s, kind, expires, who, name in self._read(_ALL_LATEST)
            if _live((kind, expires), now)
        }


def acquire(store: Leased, key: Key, *, owner: str, annotator: str, now: float, seconds: float = LEASE_SECONDS) -> bool:
    """Lease ``key`` to ``owner`` until ``now + seconds``; False (nothing written) when another
    owner holds a live lease on it. The owner's own lease is renewed.

    Check and write are one transaction: of two sessions (or processes) asking for one key at
    once, exactly one gets it.
    """
    return store.leases().take(key, owner=owner, annotator=annotator, now=now, seconds=seconds)


def release(store: Leased, key: Key, *, owner: str, now: float) -> bool:
    """Give ``key`` back when ``owner`` holds its latest lease; True when it did."""
    return store.leases().give_back(key, owner=owner, now=now)


def release_owner(store: Leased, *, owner: str, now: float) -> int:
    """Give back every live lease of ``owner`` (a session closing); return how many."""
    table = store.leases()
    held = [key for key, (who, _name) in table.live(now).items() if who == owner]
    return sum(table.give_back(key, owner=owner, now=now) for key in held)


def holder(store: Leased, key: Key, *, now: float) -> str | None:
    """The annotator holding a live lease on ``key`` at ``now`` (None: free)."""
    found = store.leases().live(now).get(tuple(key))  # type: ignore[arg-type]
    return None if found is None else found[1]


def held_by_others(store: Leased, *, owner: str, now: float, keys: Iterable[Key] | None = None) -> set[Key]:
    """The keys (of ``keys``, or all) with a live lease at ``now`` held by anyone but ``owner``."""
    wanted = None if keys is None else set(keys)
    return {
        key
        for key, (who, _name) in store.leases().live(now).items()
        if who != owner and (wanted is None or key in wanted)
    }
