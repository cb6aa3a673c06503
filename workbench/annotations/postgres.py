"""The annotation store on a PostgreSQL server, for a team triaging from several machines.

:class:`PostgresStore` has the interface of the SQLite :class:`~workbench.annotations.store.AnnotationStore`
(``annotate``, ``annotate_many``, ``retract``, ``events``, ``active``, ``snapshot``,
``append_events``, ``leases()``, ``location``, ``close``) and the same guarantees:

- **append-only**: the ``events`` table has the same columns and checks, and a trigger refuses
  every ``UPDATE``, ``DELETE`` and ``TRUNCATE`` of it; undo appends a retraction (one per event,
  a unique index);
- **acknowledged means committed**: every write is one transaction, committed (with the server's
  ``synchronous_commit``) before the call returns. Event writes take one transaction-scoped
  advisory lock, so ids are given in commit order, as SQLite's ``BEGIN IMMEDIATE`` gives them;
- **leases with expiry**: one row per leased turn, taken with the queue idiom ``SELECT ... FOR
  UPDATE SKIP LOCKED`` (of two sessions asking for one turn at once, exactly one gets it);
- **a recorded schema version**: the table ``workbench_schema`` logs every migration applied;
  opening creates or migrates the schema, and refuses, in one line, a database whose schema is
  newer than this workbench knows.

The connection URL may hold a password, but nothing shows it: messages and ``repr`` use the
redacted URL (:func:`workbench.annotations.url.redact`). Give the password the libpq way
(``PGPASSWORD``, ``~/.pgpass`` or a service file). psycopg 3 is imported only here, when a
``postgresql://`` store is opened.
"""

from __future__ import annotations

import numbers
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import polars as pl

from workbench.annotations.events import _FIELDS, _check, active_annotations
from workbench.annotations.rows import INSERT_COLUMNS, events_ddl, events_frame, snapshot_of
from workbench.annotations.rows import now as _now
from workbench.annotations.url import StoreLocation, parse_location
from workbench.errors import InputError, UsageError
from workbench.schema import ANNOTATION_EVENTS

if TYPE_CHECKING:
    import psycopg

__all__ = ["SCHEMA_VERSION", "PostgresStore", "PostgresLeases"]

T = TypeVar("T")

#: Advisory lock keys (arbitrary constants): one for schema changes, one for event writes.
_SCHEMA_LOCK = 7_310_033_001
_EVENTS_LOCK = 7_310_033_002

_APPEND_ONLY = (
    "CREATE FUNCTION workbench_append_only() RETURNS trigger LANGUAGE plpgsql AS "
    "$$ BEGIN RAISE EXCEPTION 'annotation events are append-only (% refused)', TG_OP; END $$",
    "CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events "
    "FOR EACH ROW EXECUTE FUNCTION workbench_append_only()",
    "CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events "
    "FOR EACH STATEMENT EXECUTE FUNCTION workbench_append_only()",
)
_LEASES = (
    """CREATE TABLE leases (
    record_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    system TEXT NOT NULL,
    owner TEXT NOT NULL,
    annotator TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL,
    expires DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (record_id, turn, system)
)""",
)
#: Each schema version and the statements that migrate the version before it to it.
_MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (1, (*events_ddl("postgresql"), *_APPEND_ONLY)),
    (2, _LEASES),
)
#: The schema version this workbench writes and reads.
SCHEMA_VERSION = _MIGRATIONS[-1][0]


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise UsageError(
            "a postgresql:// annotation store needs psycopg 3, which is not installed. "
            "Fix: pip install 'psycopg[binary]' (or conda install psycopg)"
        ) from None
    return psycopg


def _first_line(exc: BaseException, location: StoreLocation) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    secret = _password(location.url)
    return text.replace(secret, "***") if secret else text


def _password(url: str) -> str:
    from urllib.parse import parse_qsl, urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    query = dict(parse_qsl(parts.query))
    return parts.password or query.get("password", "")


def _connect_fix(message: str) -> str:
    lowered = message.lower()
    if "password" in lowered:
        return "give the user's password in PGPASSWORD or ~/.pgpass (not in the URL), or check the user name"
    if "database" in lowered and "does not exist" in lowered:
        return "create the database (createdb NAME) or correct its name in the URL"
    if "role" in lowered and "does not exist" in lowered:
        return "correct the user name in the URL (postgresql://USER@host/db) or create the role"
    return "check the host and port in the URL and that the server is running (pg_isready -h HOST -p PORT)"


class PostgresStore:
    """An append-only log of annotation events in a PostgreSQL database (see the module).

    Parameters
    ----------
    location
        A ``postgresql://`` URL (or its :class:`StoreLocation`).
    create
        Create the schema when the database has none; with ``False`` that is a :class:`UsageError`.
    connect_timeout
        Seconds to wait for the server when connecting.

    Raises
    ------
    InputError
        The server cannot be reached, refuses the login, or has no such database: one line naming
        the redacted URL and the fix.
    UsageError
        psycopg is missing, the database has no annotation store (``create=False``), or its schema
        is newer than this workbench reads.
    """

    def __init__(self, location: str | StoreLocation, *, create: bool = True, connect_timeout: int = 10) -> None:
        self.location = location if isinstance(location, StoreLocation) else parse_location(location)
        if self.location.kind != "postgresql":
            raise UsageError(
                f"PostgresStore takes a postgresql:// URL, got {self.location.display!r}. "
                "Fix: open a file with AnnotationStore, or any location with open_store"
            )
        self._pg = _psycopg()
        self._timeout = connect_timeout
        self._lock = threading.RLock()
        self._pid = os.getpid()
        self._conn: psycopg.Connection[Any] | None = None
        self._closed = False
        self._connect()
        self._migrate(create)

    # ----------------------------------------------------------------- plumbing
    def _connect(self) -> psycopg.Connection[Any]:
        try:
            self._conn = self._pg.connect(
                self.location.url, autocommit=True, connect_timeout=self._timeout, application_name="workbench"
            )
        except self._pg.Error as exc:
            message = _first_line(exc, self.location)
            raise InputError(
                self.location.display,
                f"cannot connect to the annotation store's PostgreSQL server ({message})",
                fix=_connect_fix(message),
            ) from None
        return self._conn

    def _connection(self) -> psycopg.Connection[Any]:
        if self._closed:
            raise UsageError(f"the annotation store {self.location.display} is closed. Fix: open a new store")
        if self._pid != os.getpid():
            raise UsageError(
                f"the annotation store {self.location.display} was opened by the process this one was forked "
                "from; a database connection must not cross a fork. Fix: open a new store in this process"
            )
        if self._conn is None or self._conn.closed or self._conn.broken:
            return self._connect()  # the server went away and may be back: a new connection
        return self._conn

    def _lost(self, exc: BaseException, doing: str) -> InputError:
        """The one-line error for a server gone while ``doing`` (nothing after the last
        acknowledged write is promised; what was acknowledged is committed)."""
        if self._conn is not None:
            try:
                self._conn.close()
            except self._pg.Error:
                pass
        return InputError(
            self.location.display,
            f"the PostgreSQL server failed while {doing} ({_first_line(exc, self.location)}); "
            "this call was not acknowledged, everything acknowledged before it is kept",
            fix="check that the server is running, then do it again (a new connection is opened)",
        )

    def _transaction(self, body: Callable[[Any], T], *, doing: str, lock: int | None = None) -> T:
        """Run ``body(cursor)`` in one transaction, committed before returning."""
        with self._lock:
            conn = self._connection()
            try:
                with conn.transaction(), conn.cursor() as cur:
                    if lock is not None:
                        cur.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
                    return body(cur)
            except self._pg.errors.IntegrityError as exc:
                raise InputError(
                    self.location.display,
                    f"the store refused the event ({_first_line(exc, self.location)}); nothing was written",
                    fix="check the annotation's fields (a retraction may have been made by someone else meanwhile)",
                ) from None
            except (self._pg.OperationalError, self._pg.InterfaceError) as exc:
                raise self._lost(exc, doing) from None
            except self._pg.Error as exc:
                raise InputError(
                    self.location.display,
                    f"the PostgreSQL server refused {doing} ({_first_line(exc, self.location)})",
                    fix="check that the URL names an annotation store this workbench wrote",
                ) from None

    def _write(self, body: Callable[[Any], T]) -> T:
        return self._transaction(body, doing="writing", lock=_EVENTS_LOCK)

    def _migrate(self, create: bool) -> None:
        shown = self.location.display

        def body(cur: Any) -> None:
            cur.execute("SELECT to_regclass('workbench_schema') IS NOT NULL, to_regclass('events') IS NOT NULL")
            has_schema, has_events = cur.fetchone()
            if not has_schema:
                if has_events:
                    raise UsageError(
                        f"the database {shown} has an events table but no workbench_schema: not an annotation "
                        "store. Fix: give another database"
                    )
                if not create:
                    raise UsageError(f"no annotation store in {shown}. Fix: open it with create=True to start one")
                cur.execute("CREATE TABLE workbench_schema (version INTEGER PRIMARY KEY, migrated_at TEXT NOT NULL)")
            cur.execute("SELECT coalesce(max(version), 0) FROM workbench_schema")
            version = int(cur.fetchone()[0])
            if version > SCHEMA_VERSION:
                raise UsageError(
                    f"the annotation store {shown} has schema version {version}, but this workbench knows versions "
                    f"up to {SCHEMA_VERSION}. Fix: use the newer workbench that wrote it (pip install -U workbench)"
                )
            for target, statements in _MIGRATIONS:
                if target > version:
                    for statement in statements:
                        cur.execute(statement)
                    cur.execute("INSERT INTO workbench_schema VALUES (%s, %s)", (target, _now()))

        self._transaction(body, doing="creating or migrating the schema", lock=_SCHEMA_LOCK)

    def schema_version(self) -> int:
        """The schema version the database records."""
        return int(
            self._transaction(
                lambda cur: cur.execute("SELECT max(version) FROM workbench_schema").fetchone()[0],
                doing="reading the schema version",
            )
        )

    # ----------------------------------------------------------------- writing
    @staticmethod
    def _insert(cur: Any, row: tuple[Any, ...]) -> int:
        values = dict(zip(_FIELDS, row, strict=True))
        values.update(kind="annotation", created_at=_now(), retracts=None, exclude=int(values["exclude"]))
        cur.execute(
            f"INSERT INTO events ({', '.join(INSERT_COLUMNS)}) VALUES ({', '.join(['%s'] * len(INSERT_COLUMNS))}) "
            "RETURNING event_id",
            [values[c] for c in INSERT_COLUMNS],
        )
        return int(cur.fetchone()[0])

    def annotate(
        self,
        *,
        annotator: str,
        record_id: str,
        turn: int,
        category: str,
        system: str | None = None,
        corrected_answer: str | None = None,
        corrected_program: str | None = None,
        note: str | None = None,
        exclude: bool = False,
    ) -> int:
        """Append one annotation, committed before this returns; its ``event_id``
        (as :meth:`AnnotationStore.annotate <workbench.annotations.store.AnnotationStore.annotate>`)."""
        fields = {k: v for k, v in locals().items() if k != "self"}
        row = _check(fields, "annotation")
        return self._write(lambda cur: self._insert(cur, row))

    def annotate_many(self, rows: Iterable[Mapping[str, Any]], *, where: str = "") -> list[int]:
        """Append several annotations in one transaction: all of them, or (on any error) none."""
        checked = [_check(row, where or "annotations", f"row {i}") for i, row in enumerate(rows, 1)]
        return self._write(lambda cur: [self._insert(cur, row) for row in checked]) if checked else []

    def retract(self, event_id: int, *, annotator: str) -> int:
        """Append a retraction of annotation ``event_id`` (undo); return the retraction's id."""
        if not isinstance(annotator, str) or not annotator.strip():
            raise UsageError(f"retract needs the annotator's name, got {annotator!r}. Fix: pass annotator='name'")
        if isinstance(event_id, bool) or not isinstance(event_id, numbers.Integral):
            raise UsageError(f"retract takes an event id (an integer), got {event_id!r}. Fix: pass the event_id")
        event_id = int(event_id)  # numpy's integers too, as the SQLite store takes them

        def body(cur: Any) -> int:
            found = cur.execute(
                "SELECT kind, record_id, turn, system FROM events WHERE event_id = %s", (event_id,)
            ).fetchone()
            if found is None:
                raise UsageError(
                    f"there is no event {event_id} in the annotation store {self.location.display}. "
                    "Fix: retract an event_id that annotate() returned"
                )
            kind, record_id, turn, system = found
            if kind != "annotation":
                raise UsageError(
                    f"event {event_id} is a retraction; only annotations can be retracted. "
                    "Fix: annotate the turn again instead"
                )
            done = cur.execute("SELECT event_id FROM events WHERE retracts = %s", (event_id,)).fetchone()
            if done is not None:
                raise UsageError(
                    f"event {event_id} is already retracted (by event {done[0]}). Fix: nothing to undo for it"
                )
            cur.execute(
                "INSERT INTO events (kind, created_at, annotator, record_id, turn, system, exclude, retracts) "
                "VALUES ('retraction', %s, %s, %s, %s, %s, 0, %s) RETURNING event_id",
                (_now(), annotator.strip(), record_id, turn, system, event_id),
            )
            return int(cur.fetchone()[0])

        return self._write(body)

    def append_events(self, rows: Sequence[Sequence[Any]]) -> None:
        """Append raw events (:data:`ANNOTATION_EVENTS` order) with their own event ids, all or
        none, in one transaction (``workbench annotations copy``)."""
        columns = tuple(ANNOTATION_EVENTS)
        sql = f"INSERT INTO events ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})"

        def body(cur: Any) -> None:
            cur.executemany(sql, [tuple(row) for row in rows])
            cur.execute(
                "SELECT setval(pg_get_serial_sequence('events', 'event_id'), "
                "(SELECT coalesce(max(event_id), 1) FROM events))"
            )

        if rows:
            self._write(body)

    # ----------------------------------------------------------------- reading
    def _rows(self) -> list[tuple[Any, ...]]:
        sql = f"SELECT {', '.join(ANNOTATION_EVENTS)} FROM events ORDER BY event_id"
        return self._transaction(lambda cur: cur.execute(sql).fetchall(), doing="reading the events")

    def events(self) -> pl.DataFrame:
        """Every event, in the order the store received them (:data:`ANNOTATION_EVENTS` schema)."""
        return events_frame(self._rows())

    def active(self) -> pl.DataFrame:
        """The annotations in force (:func:`active_annotations` of :meth:`events`)."""
        return active_annotations(self.events())

    def snapshot(self) -> dict[str, Any]:
        """``n_events``, ``max_event_id`` and a ``sha256`` of every event (the same as an SQLite
        store holding the same events)."""
        return snapshot_of(self._rows())

    def backup(self, directory: object = None) -> None:
        """A server store is backed up by the server; say how."""
        raise UsageError(
            f"the annotation store {self.location.display} is on a PostgreSQL server. Fix: back it up with "
            "pg_dump, or copy it into a file: workbench annotations copy URL sqlite:///backup.sqlite"
        )

    def leases(self) -> PostgresLeases:
        """The store's leases (:mod:`workbench.annotations.leases`), in its ``leases`` table."""
        return PostgresLeases(self)

    # ----------------------------------------------------------------- lifetime
    def close(self) -> None:
        """Close the connection (again: no effect)."""
        with self._lock:
            self._closed = True
            conn, self._conn = self._conn, None
            if conn is not None and self._pid == os.getpid():
                try:
                    conn.close()
                except self._pg.Error:
                    pass

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.location.display!r}, {'closed' if self._closed else 'open'})"


class PostgresLeases:
    """The leases of a :class:`PostgresStore`: one row per turn ever leased (``system`` '' is
    the gold turn), taken with ``SELECT ... FOR UPDATE SKIP LOCKED``."""

    def __init__(self, store: PostgresStore) -> None:
        self.store = store

    def take(self, key: tuple[str, int, str | None], *, owner: str, annotator: str, now: float, seconds: float) -> bool:
        """Lease ``key`` to ``owner`` unless another owner holds a live lease; a row another
        session is taking at this moment is skipped (the turn is not free)."""
        record_id, turn, system = key[0], key[1], key[2] or ""

        def body(cur: Any) -> bool:
            cur.execute(
                "INSERT INTO leases VALUES (%s, %s, %s, '', '', 0, 0) ON CONFLICT DO NOTHING", (record_id, turn, system)
            )
            row = cur.execute(
                "SELECT owner, expires FROM leases WHERE record_id = %s AND turn = %s AND system = %s "
                "FOR UPDATE SKIP LOCKED",
                (record_id, turn, system),
            ).fetchone()
            if row is None or (row[1] > now and row[0] != owner):
                return False
            cur.execute(
                "UPDATE leases SET owner = %s, annotator = %s, at = %s, expires = %s "
                "WHERE record_id = %s AND turn = %s AND system = %s",
                (owner, annotator, now, now + seconds, record_id, turn, system),
            )
            return True

        return self.store._transaction(body, doing="taking a lease")

    def give_back(self, key: tuple[str, int, str | None], *, owner: str, now: float) -> bool:
        """Release ``key`` when ``owner`` holds its live lease; True when it did."""
        params = (key[0], key[1], key[2] or "", owner, now)
        return self.store._transaction(
            lambda cur: (
                cur.execute(
                    "UPDATE leases SET expires = 0 WHERE record_id = %s AND turn = %s AND system = %s "
                    "AND owner = %s AND expires > %s",
                    params,
                ).rowcount
                > 0
            ),
            doing="releasing a lease",
        )

    def live(self, now: float) -> dict[tuple[str, int, str | None], tuple[str, str]]:
        """Every key with a live lease at ``now``: its (owner, annotator)."""
        rows = self.store._transaction(
            lambda cur: cur.execute(
                "SELECT record_id, turn, system, owner, annotator FROM leases WHERE expires > %s", (now,)
            ).fetchall(),
            doing="reading the leases",
        )
        return {(r, int(t), s or None): (o, a) for r, t, s, o, a in rows}
