"""The annotation store: one SQLite file of append-only annotation events.

Every event is a row of :data:`workbench.schema.ANNOTATION_EVENTS`. An *annotation* says
what is wrong with a turn (a category, maybe a corrected answer or program, a note, whether
to exclude the conversation); a *retraction* takes an earlier annotation back (undo). Rows
are never updated or deleted, so the file is a complete log of who said what and when.

The file is in WAL mode with ``synchronous=FULL``, and every :meth:`AnnotationStore.annotate`
is its own committed transaction: once it returns, the event survives a crash of the
process. Writers take the write lock up front (``BEGIN IMMEDIATE``) and wait up to
:data:`BUSY_TIMEOUT_S` for one another, so two analysts (two processes) can annotate the
same file at once.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> path = Path(tempfile.mkdtemp()) / DEFAULT_STORE_NAME
>>> with AnnotationStore(path) as store:
...     first = store.annotate(annotator="ana", record_id="r1", turn=0, category="mislabel")
...     second = store.annotate(annotator="ana", record_id="r1", turn=0, category="unit_inconsistency")
...     undo = store.retract(second, annotator="ana")
...     store.active().select("event_id", "record_id", "turn", "category").rows()
[(1, 'r1', 0, 'mislabel')]
"""

from __future__ import annotations

import datetime as dt
import errno
import numbers
import os
import secrets
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import polars as pl

from workbench.annotations import connections
from workbench.annotations.connections import (
    _OPEN,
    _close_quietly,
    _Connection,
    _file_key,
    _forget_inherited,
    _registry,
    _release,
)
from workbench.annotations.events import _FIELDS, _check, active_annotations
from workbench.annotations.integrity import (
    BUSY_TIMEOUT_S,
    _check_bytes,
    _damaged,
    _is_lock_error,
    _link_exclusive,
    _restore_hint,
    _sqlite_error,
    backup_name,
)
from workbench.annotations.leases import SqliteLeases
from workbench.annotations.rows import INSERT_COLUMNS as _INSERT_COLUMNS
from workbench.annotations.rows import events_ddl, events_frame, snapshot_of
from workbench.annotations.rows import now as _now
from workbench.annotations.url import StoreLocation, parse_location
from workbench.errors import InputError, UsageError
from workbench.io.atomic import fsync_dir
from workbench.schema import ANNOTATION_EVENTS, ANNOTATION_SCHEMA_VERSION

__all__ = ["DEFAULT_STORE_NAME", "default_store_path", "AnnotationStore"]

#: File name of the store beside a run's graded outputs.
DEFAULT_STORE_NAME = "annotations.sqlite"
T = TypeVar("T")


def default_store_path(graded_dir: str | Path) -> Path:
    """The store of a run: ``annotations.sqlite`` in its graded-output directory.

    Examples
    --------
    >>> default_store_path("out/dev").as_posix()
    'out/dev/annotations.sqlite'
    """
    return Path(graded_dir) / DEFAULT_STORE_NAME


# --------------------------------------------------------------------------- the store
def _open_shared(store: AnnotationStore, create: bool) -> _Connection:
    """The connection ``store`` uses: the process's open one to its file, or a new one
    (the file's bytes are checked first, and a missing file is created). Call under the registry lock."""
    path = store.path
    key = _file_key(path)
    if key is not None and key in _OPEN:
        shared = _OPEN[key]
        shared.handles += 1
        return shared
    if key is None:
        if not create:
            raise UsageError(
                f"no annotation store at {path}. Fix: check the path, or open it with create=True to start one"
            )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(
                str(path),
                f"cannot create the folder of the annotation store ({exc.strerror or exc})",
                fix="give a store path in a folder you can write to",
            ) from None
        _create_store_file(path)
    _check_bytes(path)  # no connection of this process to the file: reading it drops no lock
    store._connect(create)
    shared = store._shared
    assert shared is not None
    shared.key = _file_key(path) or (0, 0)
    _forget_inherited(shared.key)
    _OPEN[shared.key] = shared
    return shared


def _create_store_file(path: Path) -> None:
    """Create an empty annotation store at ``path``, whole: it is written (tables, schema version,
    WAL mode) under a temporary name and hard-linked to ``path``, which fails rather than replace a
    file. Another process creating it at the same moment is no problem: the first link wins and the
    other uses that file. So a store file never exists half made, and a zero-byte file is never one."""
    tmp = path.with_name(f".{path.name}.new-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        try:
            conn = sqlite3.connect(str(tmp), isolation_level=None)
            try:
                conn.execute("PRAGMA synchronous = FULL")
                conn.execute("BEGIN IMMEDIATE")
                for statement in events_ddl("sqlite"):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {ANNOTATION_SCHEMA_VERSION}")
                conn.execute("COMMIT")
                conn.execute("PRAGMA journal_mode = WAL")
            finally:
                conn.close()
        except sqlite3.Error as exc:
            raise _sqlite_error(path, exc, "creating it") from None
        try:
            os.link(tmp, path)
        except FileExistsError:
            return  # another process made it first
        except OSError as exc:
            if exc.errno in (errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP):
                return  # no hard links here: SQLite creates the store in place when it opens it
            raise InputError(
                str(path),
                f"cannot create the annotation store ({exc.strerror or exc})",
                fix="check that the folder is writable",
            ) from None
        fsync_dir(path.parent)
    finally:
        for leftover in (tmp, *(tmp.with_name(tmp.name + end) for end in ("-wal", "-shm", "-journal"))):
            try:
                leftover.unlink(missing_ok=True)
            except OSError:
                pass


class AnnotationStore:
    """An append-only log of annotation events in one SQLite file (WAL mode).

    A process has one SQLite connection per store file, shared by every ``AnnotationStore``
    open on that file (whatever path names it): opening the same store again (a notebook cell run
    twice) reuses the connection, closing one handle leaves the others working, and the last close
    closes the connection. The file is never read outside SQLite while the connection is open
    (closing any descriptor of a file would drop the connection's locks on it). A store can be
    used from several threads (a widget's callback thread included), and several processes can
    open the same file at once.

    Parameters
    ----------
    path
        The SQLite file (usually :func:`default_store_path` of the run's output directory).
    create
        Create the file and its table when missing; with ``False`` a missing file is a
        :class:`UsageError`.

    Raises
    ------
    UsageError
        The file is missing (``create=False``), is another SQLite database, or was written
        by a workbench with another annotation schema version.
    InputError
        The file is not an SQLite database or is damaged (it is then left byte for byte as
        it is, and the message names the newest backup and ``workbench annotations recover``),
        its write-ahead log is damaged, another process holds a lock on it for longer than
        :data:`BUSY_TIMEOUT_S`, or it (or its folder) is read-only. Writing and reading raise
        the same one-line errors; no ``sqlite3`` exception leaves the store.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> store = AnnotationStore(Path(tempfile.mkdtemp()) / "a.sqlite")
    >>> store.annotate(annotator="ana", record_id="r1", turn=1, category="other", note="check the table")
    1
    >>> store.events().select("event_id", "kind", "note").rows()
    [(1, 'annotation', 'check the table')]
    >>> store.snapshot()["n_events"]
    1
    >>> store.close()
    """

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        location = parse_location(path)  # a server URL is never taken for a folder name
        if location.path is None:
            raise UsageError(
                f"AnnotationStore is the SQLite store, and {location.display!r} is a server. "
                "Fix: open it with workbench.annotations.open_store(url)"
            )
        self.path = location.path
        self._shared: _Connection | None = None
        with _registry():
            self._shared = _open_shared(self, create)
        self._lock = self._shared.lock

    @property
    def location(self) -> StoreLocation:
        """Where the store is (its ``display`` is the path, for messages)."""
        return parse_location(self.path)

    def leases(self) -> SqliteLeases:
        """The store's leases (:mod:`workbench.annotations.leases`), kept in its file."""
        return SqliteLeases(self)

    def _connect(self, create: bool) -> None:
        """Open and set up this process's connection to the file (there is none yet)."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                conn = sqlite3.connect(
                    str(self.path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
                )
            except sqlite3.Error as exc:
                raise _sqlite_error(self.path, exc, "opening it") from None
            self._shared = _Connection(conn)
            self._lock = self._shared.lock
            try:
                self._configure(create)
                return
            except sqlite3.Error as exc:
                self._shared = None
                _close_quietly(conn)
                # Two processes opening a new store at once can both hold a read lock while one asks
                # for the write lock to switch it to WAL: SQLite answers "locked" at once, without
                # waiting, to break the deadlock. Opening again resolves it; a real lock outlasts the wait.
                if _is_lock_error(exc) and time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                raise _sqlite_error(self.path, exc, "opening it") from None
            except BaseException:
                self._shared = None
                _close_quietly(conn)
                raise

    # ----------------------------------------------------------------- setup
    def _configure(self, create: bool) -> None:
        conn = self._connection()
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        # Look before changing anything: a file that is not an annotation store (another
        # SQLite database, a damaged store) must be left byte for byte as it is.
        try:
            conn.execute("BEGIN")  # one read snapshot: another process may be creating the tables meanwhile
            try:
                version = self._user_version()
                tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            finally:
                conn.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            if "not a database" not in str(exc):
                raise  # locked, unreadable, damaged: said by _sqlite_error
            raise InputError(
                str(self.path),
                f"not an SQLite database ({exc}); the file was left as it is",
                fix=_restore_hint(self.path, recover=False),
            ) from None
        if version == 0 and tables:
            raise UsageError(
                f"{self.path} is an SQLite database but not an annotation store (tables: {', '.join(tables)}). "
                "Fix: give another file name for the store"
            )
        if version == 0 and not tables and not create:
            raise UsageError(
                f"{self.path} is empty, not an annotation store. Fix: open it with create=True to start one"
            )
        if version not in (0, ANNOTATION_SCHEMA_VERSION):
            raise UsageError(
                f"the annotation store {self.path} has schema version {version}, but this workbench reads version "
                f"{ANNOTATION_SCHEMA_VERSION}. Fix: open it with the workbench version that wrote it, "
                "or start a new store (another file name)"
            )
        if version == ANNOTATION_SCHEMA_VERSION:
            self._check_columns(conn)
            problems = [r[0] for r in conn.execute("PRAGMA quick_check")]
            if problems != ["ok"]:
                raise _damaged(self.path, f"SQLite's quick_check found: {'; '.join(problems[:3])}")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise UsageError(
                f"the annotation store {self.path} cannot use WAL mode (SQLite answered {mode!r}). "
                "Fix: put the store on a local file system"
            )
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        if version == 0:
            self._write(lambda c: self._create_tables(c, create))
            version = self._user_version()
            if version != ANNOTATION_SCHEMA_VERSION:
                raise UsageError(
                    f"the annotation store {self.path} has schema version {version}, but this workbench reads "
                    f"version {ANNOTATION_SCHEMA_VERSION}. Fix: open it with the workbench version that wrote it, "
                    "or start a new store (another file name)"
                )
            self._check_columns(conn)

    def _check_columns(self, conn: sqlite3.Connection) -> None:
        columns = tuple(row[1] for row in conn.execute("PRAGMA table_info(events)"))
        if columns != tuple(ANNOTATION_EVENTS):
            raise UsageError(
                f"the annotation store {self.path} has events columns {', '.join(columns) or '(none)'}, expected "
                f"{', '.join(ANNOTATION_EVENTS)}. Fix: start a new store (another file name)"
            )

    def _user_version(self) -> int:
        return int(self._connection().execute("PRAGMA user_version").fetchone()[0])

    def _create_tables(self, conn: sqlite3.Connection, create: bool) -> None:
        if self._user_version() != 0:  # another process created it while we waited for the lock
            return
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        if tables:
            raise UsageError(
                f"{self.path} is an SQLite database but not an annotation store (tables: {', '.join(tables)}). "
                "Fix: give another file name for the store"
            )
        if not create:
            raise UsageError(
                f"{self.path} is empty, not an annotation store. Fix: open it with create=True to start one"
            )
        for statement in events_ddl("sqlite"):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {ANNOTATION_SCHEMA_VERSION}")

    # ----------------------------------------------------------------- plumbing
    def _connection(self) -> sqlite3.Connection:
        shared = self._shared
        if shared is None:
            raise UsageError(f"the annotation store {self.path} is closed. Fix: open a new AnnotationStore")
        if shared.pid != os.getpid():
            raise UsageError(
                f"the annotation store {self.path} was opened by the process this one was forked from; an SQLite "
                "connection must not cross a fork. Fix: open a new AnnotationStore in this process"
            )
        return shared.conn

    def _write(self, body: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``body`` in one write transaction, committed (durably) before returning."""
        self._connection()  # closed, or opened before a fork: say so before waiting for the lock
        with self._lock:
            conn = self._connection()
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise _sqlite_error(self.path, exc, "starting a write") from None
            try:
                result = body(conn)
                conn.execute("COMMIT")
            except sqlite3.IntegrityError as exc:
                self._rollback(conn)
                raise InputError(
                    str(self.path),
                    f"the store refused the event ({exc}); nothing was written",
                    fix="check the annotation's fields (a retraction may have been made by someone else meanwhile)",
                ) from None
            except sqlite3.Error as exc:
                self._rollback(conn)
                raise _sqlite_error(self.path, exc, "writing") from None
            except BaseException:
                self._rollback(conn)
                raise
            return result

    @staticmethod
    def _rollback(conn: sqlite3.Connection) -> None:
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    @staticmethod
    def _insert(conn: sqlite3.Connection, row: tuple[Any, ...]) -> int:
        """Insert an annotation given in ``_FIELDS`` order; return its event id."""
        values = dict(zip(_FIELDS, row, strict=True))
        values.update(kind="annotation", created_at=_now(), retracts=None)
        cursor = conn.execute(
            f"INSERT INTO events ({', '.join(_INSERT_COLUMNS)}) VALUES ({', '.join('?' * len(_INSERT_COLUMNS))})",
            [values[c] for c in _INSERT_COLUMNS],
        )
        return int(cursor.lastrowid)  # type: ignore[arg-type]

    def _insert_many(self, rows: list[tuple[Any, ...]]) -> list[int]:
        return self._write(lambda conn: [self._insert(conn, row) for row in rows])

    # ----------------------------------------------------------------- writing
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
        """Append one annotation; it is committed to disk before this returns.

        ``system`` null means the annotation is about the gold turn itself; blank optional
        text counts as not given.

        Returns
        -------
        int
            The new event's ``event_id``.

        Raises
        ------
        InputError
            When a field is not valid (see :func:`validate_annotation`).
        """
        fields = {k: v for k, v in locals().items() if k != "self"}  # the keyword arguments, as _check takes them
        return self._insert_many([_check(fields, "annotation")])[0]

    def annotate_many(self, rows: Iterable[Mapping[str, Any]], *, where: str = "") -> list[int]:
        """Append several annotations in one transaction: all of them, or (on any error) none.

        Parameters
        ----------
        rows
            Mappings with the keyword arguments of :meth:`annotate`.
        where
            Where the rows come from, for error messages (``"row N"`` is added).

        Returns
        -------
        list[int]
            The event ids, in the order of ``rows``.

        Examples
        --------
        >>> import tempfile
        >>> from pathlib import Path
        >>> with AnnotationStore(Path(tempfile.mkdtemp()) / "a.sqlite") as store:
        ...     store.annotate_many([{"annotator": "ana", "record_id": "r", "turn": t, "category": "other"}
        ...                          for t in range(3)])
        [1, 2, 3]
        """
        checked = [_check(row, where or "annotations", f"row {i}") for i, row in enumerate(rows, 1)]
        return self._insert_many(checked) if checked else []

    def retract(self, event_id: int, *, annotator: str) -> int:
        """Append a retraction of annotation ``event_id`` (undo); return the retraction's id.

        Raises
        ------
        UsageError
            When ``event_id`` is not an annotation of this store, or is already retracted.
        """
        if not isinstance(annotator, str) or not annotator.strip():
            raise UsageError(f"retract needs the annotator's name, got {annotator!r}. Fix: pass annotator='name'")
        if isinstance(event_id, bool) or not isinstance(event_id, numbers.Integral):
            raise UsageError(f"retract takes an event id (an integer), got {event_id!r}. Fix: pass the event_id")

        def body(conn: sqlite3.Connection) -> int:
            found = conn.execute(
                "SELECT kind, record_id, turn, system FROM events WHERE event_id = ?", (int(event_id),)
            ).fetchone()
            if found is None:
                raise UsageError(
                    f"there is no event {event_id} in the annotation store {self.path}. "
                    "Fix: retract an event_id that annotate() returned"
                )
            kind, record_id, turn, system = found
            if kind != "annotation":
                raise UsageError(
                    f"event {event_id} is a retraction; only annotations can be retracted. "
                    "Fix: annotate the turn again instead"
                )
            done = conn.execute("SELECT event_id FROM events WHERE retracts = ?", (int(event_id),)).fetchone()
            if done is not None:
                raise UsageError(
                    f"event {event_id} is already retracted (by event {done[0]}). Fix: nothing to undo for it"
                )
            values = {
                "kind": "retraction",
                "created_at": _now(),
                "annotator": annotator.strip(),
                "record_id": record_id,
                "turn": turn,
                "system": system,
                "category": None,
                "corrected_answer": None,
                "corrected_program": None,
                "note": None,
                "exclude": False,
                "retracts": int(event_id),
            }
            cursor = conn.execute(
                f"INSERT INTO events ({', '.join(_INSERT_COLUMNS)}) VALUES ({', '.join('?' * len(_INSERT_COLUMNS))})",
                [values[c] for c in _INSERT_COLUMNS],
            )
            return int(cursor.lastrowid)  # type: ignore[arg-type]

        return self._write(body)

    def append_events(self, rows: Sequence[Sequence[Any]]) -> None:
        """Append raw events (:data:`ANNOTATION_EVENTS` order) with their own event ids, all or
        none, in one transaction (``workbench annotations copy``; a retraction's target comes first)."""
        columns = tuple(ANNOTATION_EVENTS)
        sql = f"INSERT INTO events ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        self._write(lambda conn: conn.executemany(sql, [tuple(row) for row in rows]))

    # ----------------------------------------------------------------- reading
    def _rows(self) -> list[tuple[Any, ...]]:
        self._connection()
        with self._lock:
            conn = self._connection()
            try:
                return conn.execute(f"SELECT {', '.join(ANNOTATION_EVENTS)} FROM events ORDER BY event_id").fetchall()
            except sqlite3.Error as exc:
                raise _sqlite_error(self.path, exc, "reading the events") from None

    def events(self) -> pl.DataFrame:
        """Every event, in the order the store received them (:data:`ANNOTATION_EVENTS` schema)."""
        return events_frame(self._rows())

    def active(self) -> pl.DataFrame:
        """The annotations in force (:func:`active_annotations` of :meth:`events`)."""
        return active_annotations(self.events())

    def snapshot(self) -> dict[str, Any]:
        """What the store holds now: ``n_events``, ``max_event_id`` (0 when empty), and a
        ``sha256`` of every event's content (changes whenever an event is added)."""
        return snapshot_of(self._rows())

    # ----------------------------------------------------------------- backups
    def backup(self, directory: str | Path | None = None) -> Path:
        """Copy the store, consistently, with SQLite's online backup API; return the copy.

        The copy is ``<name>.backup-<UTC YYYYmmddTHHMMSSZ>.sqlite`` beside the store (or in
        ``directory``); a second backup in the same second is ``...-2.sqlite``, and so on. An
        existing file is never overwritten: the copy is written to a temporary file, checked
        (``PRAGMA quick_check``) and then hard-linked to its name, which fails rather than
        replace anything. Others may keep writing to the store meanwhile.

        Examples
        --------
        >>> import tempfile
        >>> from pathlib import Path
        >>> with AnnotationStore(Path(tempfile.mkdtemp()) / "annotations.sqlite") as store:
        ...     _ = store.annotate(annotator="ana", record_id="r", turn=0, category="other")
        ...     copy = store.backup()
        ...     AnnotationStore(copy, create=False).snapshot() == store.snapshot()
        True
        """
        self._connection()
        folder = Path(directory) if directory is not None else self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(prefix=f".{self.path.name}.backup-", suffix=".tmp", dir=folder)
            os.close(fd)
        except OSError as exc:
            raise InputError(
                str(folder),
                f"cannot write a backup of {self.path.name} here ({exc.strerror or exc})",
                fix="give a writable folder for the backup",
            ) from None
        tmp = Path(tmp_name)
        try:
            target = sqlite3.connect(tmp_name)
            try:
                with self._lock:
                    self._connection().backup(target)
                target.execute("PRAGMA journal_mode = DELETE")
                problems = [r[0] for r in target.execute("PRAGMA quick_check")]
            finally:
                target.close()
            if problems != ["ok"]:
                raise _damaged(self.path, f"its backup failed SQLite's quick_check: {'; '.join(problems[:3])}")
            with tmp.open("rb+") as handle:
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o644)
            stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
            return _link_exclusive(tmp, folder, lambda n: backup_name(self.path, stamp, n))
        except sqlite3.Error as exc:
            raise _sqlite_error(self.path, exc, "taking a backup") from None
        finally:
            tmp.unlink(missing_ok=True)

    # ----------------------------------------------------------------- lifetime
    def close(self) -> None:
        """Let go of the file (again: no effect).

        The process's connection to the file is closed with the last :class:`AnnotationStore`
        open on it; the others keep working. In a forked child, a store the parent opened is only
        marked closed: the parent's connection is not the child's to close.
        """
        with _registry():
            shared, self._shared = self._shared, None
            if shared is not None:
                _release(shared)

    def __del__(self) -> None:
        # A handle dropped without close() (a notebook cell run again) gives its share back,
        # unless that would mean waiting for another thread. The registry lock is looked up in
        # its module each time: a forked child has a new one, and at exit it may be gone.
        shared = getattr(self, "_shared", None)
        registry = getattr(connections, "_OPEN_LOCK", None)
        if shared is None or registry is None or not registry.acquire(blocking=False):
            return
        try:
            self._shared = None
            _release(shared, wait=False)
        finally:
            registry.release()

    def __enter__(self) -> AnnotationStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._shared is None else "open"
        return f"AnnotationStore({_shown(self.path)!r}, {state})"


def _shown(path: Path) -> str:
    """``path`` as a repr shows it: relative to the working folder, else its name (never absolute)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return path.name
