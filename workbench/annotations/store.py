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

import csv
import datetime as dt
import errno
import hashlib
import io
import json
import numbers
import os
import secrets
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import polars as pl

from workbench.errors import InputError, UsageError, WorkbenchError
from workbench.grading.program import ProgramSyntaxError, parse_program
from workbench.io.csvsafe import is_formula_cell
from workbench.io.jsonfiles import read_text, shown_values
from workbench.io.paths import inside, safe_name
from workbench.schema import (
    ANNOTATION_CATEGORIES,
    ANNOTATION_EVENTS,
    ANNOTATION_KEYS,
    ANNOTATION_KINDS,
    ANNOTATION_SCHEMA_VERSION,
)

__all__ = [
    "DEFAULT_STORE_NAME",
    "BUSY_TIMEOUT_S",
    "CSV_COLUMNS",
    "default_store_path",
    "active_annotations",
    "validate_annotation",
    "AnnotationStore",
    "import_csv",
    "backup_name",
    "list_backups",
    "recover_store",
    "Recovery",
    "read_annotation_csv",
]

#: File name of the store beside a run's graded outputs.
DEFAULT_STORE_NAME = "annotations.sqlite"
#: How long a writer waits for another process's write to finish before giving up.
BUSY_TIMEOUT_S = 10.0
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

#: The fields an annotation is given (the keyword arguments of :meth:`AnnotationStore.annotate`).
_FIELDS = (
    "annotator",
    "record_id",
    "turn",
    "category",
    "system",
    "corrected_answer",
    "corrected_program",
    "note",
    "exclude",
)
_REQUIRED = ("annotator", "record_id", "turn", "category")
#: Columns written by an INSERT (``event_id`` is assigned by SQLite).
_INSERT_COLUMNS = tuple(ANNOTATION_EVENTS)[1:]
_EXCLUDE_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False, "": False}

T = TypeVar("T")


def _sql_list(values: Iterable[str]) -> str:
    return ", ".join(f"'{v}'" for v in values)


_CREATE_EVENTS = f"""
CREATE TABLE events (
    event_id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ({_sql_list(ANNOTATION_KINDS)})),
    created_at TEXT NOT NULL,
    annotator TEXT NOT NULL CHECK (length(trim(annotator)) > 0),
    record_id TEXT NOT NULL CHECK (length(trim(record_id)) > 0),
    turn INTEGER NOT NULL CHECK (typeof(turn) = 'integer' AND turn >= 0),
    system TEXT,
    category TEXT CHECK (category IN ({_sql_list(ANNOTATION_CATEGORIES)})),
    corrected_answer TEXT,
    corrected_program TEXT,
    note TEXT,
    exclude INTEGER NOT NULL DEFAULT 0 CHECK (exclude IN (0, 1)),
    retracts INTEGER REFERENCES events (event_id),
    CHECK ((kind = 'annotation' AND category IS NOT NULL AND retracts IS NULL)
        OR (kind = 'retraction' AND category IS NULL AND retracts IS NOT NULL))
)
"""
_CREATE_INDEXES = (
    "CREATE INDEX events_key ON events (record_id, turn, system)",
    # one retraction per event, enforced by the file itself (also across processes)
    "CREATE UNIQUE INDEX events_retracts ON events (retracts) WHERE retracts IS NOT NULL",
)
#: How the SQLite columns read back before they are cast to :data:`ANNOTATION_EVENTS`.
_RAW_SCHEMA = {
    name: (pl.Int64() if name in ("event_id", "turn", "exclude", "retracts") else pl.String())
    for name in ANNOTATION_EVENTS
}


def default_store_path(graded_dir: str | Path) -> Path:
    """The store of a run: ``annotations.sqlite`` in its graded-output directory.

    Examples
    --------
    >>> default_store_path("out/dev").as_posix()
    'out/dev/annotations.sqlite'
    """
    return Path(graded_dir) / DEFAULT_STORE_NAME


def active_annotations(events: pl.DataFrame) -> pl.DataFrame:
    """The annotations in force: not retracted, the latest per ``(record_id, turn, system)``.

    A ``system`` that is null (an annotation about the gold turn) is its own key, different
    from every system. When the latest annotation of a key is retracted, the one before it
    (if any, and not retracted) is in force again.

    Parameters
    ----------
    events
        Rows of :data:`workbench.schema.ANNOTATION_EVENTS` (:meth:`AnnotationStore.events`).

    Returns
    -------
    pl.DataFrame
        The columns of :data:`ANNOTATION_EVENTS` without ``kind`` and ``retracts``, sorted
        by ``record_id``, ``turn``, ``system`` (null first).

    Examples
    --------
    >>> from workbench.schema import ANNOTATION_EVENTS
    >>> events = pl.DataFrame(
    ...     {"event_id": [1, 2, 3], "kind": ["annotation", "annotation", "retraction"], "record_id": ["r", "r", "r"],
    ...      "turn": [0, 0, 0], "category": ["mislabel", "other", None], "retracts": [None, None, 2]},
    ... ).with_columns(pl.col("kind").cast(ANNOTATION_EVENTS["kind"]))
    >>> active_annotations(events.select("event_id", "kind", "record_id", "turn", "category", "retracts")).rows()
    [(1, 'r', 0, 'mislabel')]
    """
    retracted = events.filter(pl.col("kind") == "retraction").get_column("retracts").drop_nulls()
    keep = [c for c in events.columns if c not in ("kind", "retracts")]
    return (
        events.filter((pl.col("kind") == "annotation") & ~pl.col("event_id").is_in(retracted.implode()))
        .sort("event_id")
        .unique(subset=[k for k in ANNOTATION_KEYS if k in events.columns], keep="last", maintain_order=True)
        .sort([k for k in (*ANNOTATION_KEYS, "event_id") if k in events.columns], nulls_last=False)
        .select(keep)
    )


# --------------------------------------------------------------------------- validation
def _text_or_none(value: Any) -> Any:
    """Empty or blank optional text means "not given"."""
    if isinstance(value, str) and not value.strip():
        return None
    return value


def _check(values: Mapping[str, Any], file: str, location: str = "") -> tuple[Any, ...]:
    """Validate one annotation and return it as the row to insert (``_FIELDS`` order)."""

    def fail(field: str, problem: str, fix: str) -> InputError:
        return InputError(file, problem, location=location, field=field, fix=fix)

    unknown = [k for k in values if k not in _FIELDS]
    if unknown:
        raise fail(
            unknown[0], f"unknown field {unknown[0]!r}", f"use only the fields {', '.join(_FIELDS)} (or drop it)"
        )
    missing = [k for k in _REQUIRED if k not in values]
    if missing:
        raise fail(missing[0], f"missing required field {missing[0]!r}", f"give {', '.join(_REQUIRED)}")
    for name in ("annotator", "record_id"):
        value = values[name]
        if not isinstance(value, str) or not value.strip():
            raise fail(name, f"expected a non-empty text, got {value!r}", f"give the {name.replace('_', ' ')}")
    for name in _FIELDS:
        if isinstance(values.get(name), str) and "\x00" in values[name]:
            raise fail(name, f"expected text without NUL characters, got {values[name]!r}", "remove the NUL bytes")
    turn = values["turn"]
    if isinstance(turn, bool) or not isinstance(turn, numbers.Integral) or turn < 0:
        raise fail("turn", f"expected a whole number >= 0, got {turn!r}", "give the 0-based turn index")
    category = values["category"]
    if category not in ANNOTATION_CATEGORIES:
        raise fail(
            "category",
            f"expected one of {', '.join(ANNOTATION_CATEGORIES)}, got {category!r}",
            "use one of the listed categories",
        )
    optional = {name: _text_or_none(values.get(name)) for name in ("system", "corrected_answer", "note")}
    for name, value in optional.items():
        if value is not None and not isinstance(value, str):
            raise fail(name, f"expected text or nothing, got {value!r}", f"give the {name.replace('_', ' ')} as text")
    program = _text_or_none(values.get("corrected_program"))
    if program is not None:
        if not isinstance(program, str):
            raise fail("corrected_program", f"expected program text, got {program!r}", "give the program as text")
        try:
            parse_program(program)
        except ProgramSyntaxError as exc:
            raise fail(
                "corrected_program",
                f"the program {program!r} does not parse ({exc})",
                "write it in the ConvFinQA program language, e.g. 'subtract(60.94, 25.14), divide(#0, 25.14)'",
            ) from None
    exclude = values.get("exclude", False)
    if not isinstance(exclude, bool):
        raise fail("exclude", f"expected True or False, got {exclude!r}", "give exclude as a boolean")
    return (
        values["annotator"].strip(),
        values["record_id"],
        int(turn),
        category,
        optional["system"],
        optional["corrected_answer"],
        program,
        optional["note"],
        exclude,
    )


def validate_annotation(
    *,
    annotator: Any,
    record_id: Any,
    turn: Any,
    category: Any,
    system: Any = None,
    corrected_answer: Any = None,
    corrected_program: Any = None,
    note: Any = None,
    exclude: Any = False,
    where: str = "",
) -> None:
    """Check one annotation before it is stored; raise :class:`InputError` when it cannot be.

    Parameters
    ----------
    annotator, record_id, turn, category, system, corrected_answer, corrected_program, note, exclude
        The fields of :meth:`AnnotationStore.annotate`. Blank optional text counts as not given.
    where
        Where the annotation comes from (``"annotations.csv line 4"``), for the message.

    Raises
    ------
    InputError
        Naming ``where``, the field, what was expected and got, and the fix: an empty
        annotator or record id, a turn that is not a whole number >= 0, an unknown category,
        a corrected program that does not parse, an ``exclude`` that is not a bool.

    Examples
    --------
    >>> validate_annotation(annotator="ana", record_id="r1", turn=2, category="mislabel")
    >>> validate_annotation(annotator="ana", record_id="r1", turn=2, category="typo", where="a.csv line 4")
    Traceback (most recent call last):
    ...
    workbench.errors.InputError: a.csv line 4: field 'category': expected one of missing_value, unit_inconsistency, \
sign_inconsistency, mislabel, ambiguous_question, model_error, other, got 'typo'. Fix: use one of the listed categories
    """
    _check(
        {
            "annotator": annotator,
            "record_id": record_id,
            "turn": turn,
            "category": category,
            "system": system,
            "corrected_answer": corrected_answer,
            "corrected_program": corrected_program,
            "note": note,
            "exclude": exclude,
        },
        where or "annotation",
    )


# --------------------------------------------------------------------------- the store
def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


#: The first 16 bytes of every SQLite database file.
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: The two magic numbers a WAL file starts with (big-endian), and its format version.
_WAL_MAGIC = (0x377F0682, 0x377F0683)
_WAL_VERSION = 3007000


def backup_name(store: str | Path, stamp: str, n: int = 1) -> str:
    """The file name of a backup of ``store`` taken at ``stamp`` (``YYYYmmddTHHMMSSZ``);
    the ``n``-th backup in the same second gets ``-n``.

    Examples
    --------
    >>> backup_name("out/annotations.sqlite", "20261121T220000Z"), backup_name("a.sqlite", "20261121T220000Z", 2)
    ('annotations.backup-20261121T220000Z.sqlite', 'a.backup-20261121T220000Z-2.sqlite')
    """

    suffix = "" if n == 1 else f"-{n}"
    return f"{safe_name(Path(store).stem)}.backup-{stamp}{suffix}.sqlite"


def list_backups(store: str | Path, directory: str | Path | None = None) -> list[Path]:
    """The backups of ``store`` (in its folder, or in ``directory``), oldest first."""

    folder = Path(directory) if directory is not None else Path(store).parent
    found = sorted(folder.glob(f"{safe_name(Path(store).stem)}.backup-*.sqlite"))
    return sorted(found, key=lambda p: (p.name.split(".backup-")[1].split(".")[0].split("-")[0], p.stat().st_mtime_ns))


def _restore_hint(path: Path, *, recover: bool = True) -> str:
    """The fix for a store that cannot be read: copy the newest backup (only that one is named)
    over it, or (``recover``) rescue what SQLite can still read."""
    backups = list_backups(path)
    rescue = f"`workbench annotations recover --store {path}` copies what is still readable into a new store"
    if backups:
        restore = f"copy the newest backup, {backups[-1]}, over it"
        return f"{restore} (or {rescue})" if recover else restore
    return f"restore it from a backup, or {rescue}" if recover else "restore it from a backup"


def _unrecoverable(path: Path, detail: str) -> InputError:
    backups = list_backups(path)
    return InputError(
        str(path),
        f"no event can be recovered ({detail}); the file was left as it is",
        fix=f"restore the newest backup ({backups[-1]}) by copying it over the file"
        if backups
        else "restore the file from a backup, or start a new store",
    )


def _damaged(path: Path, detail: str) -> InputError:
    """The store file (or its WAL) is unreadable; say so, and that it was left as it is."""
    return InputError(
        str(path),
        f"damaged annotation store: SQLite cannot read it ({detail}); the file was left as it is",
        fix=_restore_hint(path),
    )


def _check_bytes(path: Path) -> None:
    """Refuse, without opening it with SQLite (which could change it), a store file or WAL
    file whose header is not SQLite's. A header is read again after a pause before it is called
    damaged: another process may be creating the store at this very moment."""
    for pause in (0.05, 0.2, 0.0):
        try:
            _check_header(path)
            return
        except InputError:
            if not pause:
                raise
            time.sleep(pause)


def _check_header(path: Path) -> None:
    """Read the first bytes of the store and of its WAL (only while this process has no
    connection to the file: see :class:`_Connection`)."""
    try:
        if path.stat().st_size == 0:  # a store is never empty (_create_store_file): it was cut short
            backups = list_backups(path)
            restore = f"copy the newest backup, {backups[-1]}, over it" if backups else "restore a backup over it"
            raise InputError(
                str(path),
                "the file is empty (0 bytes): not an annotation store, but perhaps one that was cut short "
                "(a full disk, an interrupted copy); the file was left as it is",
                fix=f"{restore}, or delete the empty file to start a new store",
            )
        with path.open("rb") as handle:
            head = handle.read(100)
        if len(head) < 100 or not head.startswith(_SQLITE_MAGIC):
            raise InputError(
                str(path),
                "not an SQLite database: its header is not SQLite's (damaged, or another kind of file); "
                "the file was left as it is",
                fix=_restore_hint(path, recover=False),
            )
        wal = path.with_name(path.name + "-wal")
        if wal.exists() and wal.stat().st_size >= 8:
            with wal.open("rb") as handle:
                head = handle.read(8)
            if int.from_bytes(head[:4], "big") not in _WAL_MAGIC or int.from_bytes(head[4:8], "big") != _WAL_VERSION:
                raise InputError(
                    str(wal),
                    "damaged write-ahead log of the annotation store (its header is not SQLite's); "
                    "the store and the log were left as they are",
                    fix=f"copy {path.name} and {wal.name} somewhere safe, then move {wal.name} aside and open the "
                    "store again (events only in the damaged log are lost), or restore a backup",
                )
    except OSError as exc:
        raise InputError(
            str(path), f"cannot read the store ({exc.strerror or exc})", fix="check the path and its permissions"
        ) from None


def _is_lock_error(exc: sqlite3.Error) -> bool:
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc)


def _sqlite_error(path: Path, exc: sqlite3.Error, doing: str) -> WorkbenchError:
    """One line for an SQLite error: where, what went wrong, what to do."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    text = str(exc)
    if _is_lock_error(exc):
        return InputError(
            str(path),
            f"another process holds a lock on the annotation store (waited {BUSY_TIMEOUT_S:g} s while {doing}; "
            f"{text}); nothing was written",
            fix="close the other notebook or process using the store, or wait for it to finish, and try again",
        )
    if name.startswith("SQLITE_READONLY") or "readonly" in text or "read-only" in text:
        return InputError(
            str(path),
            f"the annotation store is read-only ({text}) while {doing}; nothing was written",
            fix="make the file and its folder writable (SQLite writes -wal and -shm files beside it), "
            "or copy the store somewhere writable",
        )
    if name.startswith("SQLITE_CANTOPEN") or "unable to open" in text:
        return InputError(
            str(path),
            f"cannot open the annotation store ({text}) while {doing}",
            fix="check that the folder exists and is writable (SQLite writes -wal and -shm files beside the store) "
            "and that the file is readable",
        )
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "malformed" in text or "not a database" in text:
        return _damaged(path, text)
    if name.startswith("SQLITE_FULL") or "disk is full" in text:
        return InputError(
            str(path),
            f"the disk is full ({text}) while {doing}; nothing was written",
            fix="free some space and try again",
        )
    return InputError(
        str(path),
        f"SQLite failed while {doing} ({name or type(exc).__name__}: {text})",
        fix="check the file, its folder and the disk, then try again",
    )


# --------------------------------------------------------------------------- one connection per file
# On POSIX, closing *any* descriptor of a file drops *every* fcntl lock the process holds on it.
# Reading a store's header with open() while this process has an SQLite connection to the file
# silently dropped that connection's locks; another process then took itself for the file's last
# user, checkpointed and deleted the write-ahead log, and the first process went on writing into a
# deleted log (acknowledged annotations vanished). So: a process has ONE connection per store file
# (by device and inode, whatever path names it), shared and counted by every AnnotationStore open
# on it, and the file (or its -wal, -shm) is read outside SQLite only while there is no connection.


@dataclass(eq=False)
class _Connection:
    """This process's one SQLite connection to a store file, shared by its open handles."""

    conn: sqlite3.Connection
    key: tuple[int, int] = (0, 0)
    pid: int = field(default_factory=os.getpid)
    lock: threading.RLock = field(default_factory=threading.RLock)
    handles: int = 1


#: The connections of this process, by the (st_dev, st_ino) of their file.
_OPEN: dict[tuple[int, int], _Connection] = {}
#: Guards :data:`_OPEN` and every opening and closing (a new lock in a forked child).
_OPEN_LOCK: threading.RLock | None = threading.RLock()
#: In a forked child: the parent's connections, never used, closed (when safe) before the child
#: opens its own connection to the same file, so SQLite's per-process lock state starts clean.
_INHERITED: dict[tuple[int, int], list[_Connection]] = {}


def _registry() -> threading.RLock:
    assert _OPEN_LOCK is not None
    return _OPEN_LOCK


def _after_fork_in_child() -> None:
    global _OPEN_LOCK
    _OPEN_LOCK = threading.RLock()
    for key, shared in _OPEN.items():
        _INHERITED.setdefault(key, []).append(shared)
    _OPEN.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _file_key(path: Path) -> tuple[int, int] | None:
    """The (device, inode) of the file at ``path``; None when there is none."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(
            str(path), f"cannot look at the store ({exc.strerror or exc})", fix="check the path and its permissions"
        ) from None
    return (found.st_dev, found.st_ino)


def _close_quietly(conn: sqlite3.Connection) -> None:
    try:
        conn.close()
    except sqlite3.Error:
        pass


def _forget_inherited(key: tuple[int, int]) -> None:
    """Close the connections to ``key`` this (forked) process inherited, when no thread of the
    parent was using them at the fork; the others are kept, unused, for the life of the process."""
    for shared in _INHERITED.pop(key, []):
        if shared.lock.acquire(blocking=False):  # held by a thread that no longer exists: leave it
            if not shared.conn.in_transaction:
                _close_quietly(shared.conn)
                continue
        _INHERITED.setdefault((-1, -1), []).append(shared)


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


def _release(shared: _Connection, *, wait: bool = True) -> None:
    """One handle less on ``shared``; the last one closes the connection. Call under the registry lock."""
    if shared.pid != os.getpid():
        return  # the parent's connection, seen from a forked child: not this process's to close
    shared.handles -= 1
    if shared.handles > 0:
        return
    if _OPEN.get(shared.key) is shared:
        del _OPEN[shared.key]
    if shared.lock.acquire(blocking=wait):
        try:
            _close_quietly(shared.conn)
        finally:
            shared.lock.release()
    else:  # another thread is in the middle of using it (only from __del__): it closes when collected
        _INHERITED.setdefault((-1, -1), []).append(shared)


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
                conn.execute(_CREATE_EVENTS)
                for statement in _CREATE_INDEXES:
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
        _fsync_dir(path.parent)
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
        self.path = Path(path)
        self._shared: _Connection | None = None
        with _registry():
            self._shared = _open_shared(self, create)
        self._lock = self._shared.lock

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
        conn.execute(_CREATE_EVENTS)
        for statement in _CREATE_INDEXES:
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
        raw = pl.DataFrame(self._rows(), schema=_RAW_SCHEMA, orient="row")
        return raw.with_columns(
            pl.col("kind").cast(ANNOTATION_EVENTS["kind"]),
            pl.col("created_at").str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%:z", time_unit="us").dt.convert_time_zone("UTC"),
            pl.col("turn").cast(pl.Int32),
            pl.col("category").cast(ANNOTATION_EVENTS["category"]),
            pl.col("exclude").cast(pl.Boolean),
        ).select(pl.col(name).cast(dtype) for name, dtype in ANNOTATION_EVENTS.items())

    def active(self) -> pl.DataFrame:
        """The annotations in force (:func:`active_annotations` of :meth:`events`)."""
        return active_annotations(self.events())

    def snapshot(self) -> dict[str, Any]:
        """What the store holds now: ``n_events``, ``max_event_id`` (0 when empty), and a
        ``sha256`` of every event's content (changes whenever an event is added)."""
        rows = self._rows()
        digest = hashlib.sha256()
        for row in rows:
            digest.update(json.dumps(list(row), ensure_ascii=False).encode("utf-8") + b"\n")
        return {"n_events": len(rows), "max_event_id": rows[-1][0] if rows else 0, "sha256": digest.hexdigest()}

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
        # unless that would mean waiting for another thread.
        shared = getattr(self, "_shared", None)
        if shared is None or _OPEN_LOCK is None or not _OPEN_LOCK.acquire(blocking=False):
            return
        try:
            self._shared = None
            _release(shared, wait=False)
        finally:
            _OPEN_LOCK.release()

    def __enter__(self) -> AnnotationStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._shared is None else "open"
        return f"AnnotationStore({str(self.path)!r}, {state})"


def _link_exclusive(tmp: Path, folder: Path, name: Callable[[int], str]) -> Path:
    """Give the complete file ``tmp`` its name ``name(1)`` in ``folder`` (``name(2)``, ... when
    taken): a hard link, which fails rather than replace an existing file."""

    n = 1
    while True:
        final = inside(folder, name(n))
        try:
            os.link(tmp, final)
        except FileExistsError:
            n += 1
            continue
        _fsync_dir(folder)
        return final


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


def _fsync_dir(folder: Path) -> None:
    """Make a new directory entry durable (no effect where directories cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


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


#: Text fields of an imported annotation that a spreadsheet could have filled with a formula.
_FORMULA_FIELDS = ("corrected_answer", "corrected_program", "note")


def _csv_text(text: str, name: str, file: str, location: str) -> str | None:
    """An optional text value of an annotation CSV; a spreadsheet formula is refused."""

    if is_formula_cell(text):
        lead = {"\t": "tab", "\r": "carriage return"}.get(text[0], repr(text[0]))
        article = "a " if text[0] in "\t\r" else ""
        raise InputError(
            file,
            f"{_shown(text)} is a spreadsheet formula (it begins with {article}{lead} and is not a number), not a value",
            location=location,
            field=name,
            fix=f"write the value itself instead of the formula (or remove the leading {lead})",
        )
    return text or None


def _shown(text: str, limit: int = 60) -> str:
    """``text`` quoted for a message, cut after ``limit`` characters."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def read_annotation_csv(path: str | Path, *, annotator: str | None = None) -> list[dict[str, Any]]:
    """Read and check every row of an annotation CSV; nothing is written anywhere.

    Columns: ``record_id``, ``turn``, ``category`` (required); ``annotator`` (or the
    argument, used where the column is missing or empty), ``system``, ``corrected_answer``,
    ``corrected_program``, ``note``, ``exclude`` (``true/false/1/0/yes/no``, empty is false).
    A quoted value may span lines (a note of several lines). A ``corrected_answer``,
    ``corrected_program`` or ``note`` that is a spreadsheet formula (it begins with ``=``, ``+``,
    ``-``, ``@``, a tab or a carriage return and is not a number, see
    :func:`workbench.io.csvsafe.is_formula_cell`) is refused: a spreadsheet would have run it.

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
    >>> _ = csv_path.write_text('record_id,turn,category,corrected_answer\\nr1,0,other,"=HYPERLINK(""http://x"",""y"")"\\n')
    >>> read_annotation_csv(csv_path, annotator="ana")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    workbench.errors.InputError: ...a.csv: line 2: field 'corrected_answer': '=HYPERLINK("http://x","y")' is a \
spreadsheet formula (it begins with '=' and is not a number), not a value. Fix: write the value itself instead of the \
formula (or remove the leading '=')
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
            for name in _FORMULA_FIELDS:
                values[name] = _csv_text(text.get(name, ""), name, file, location)
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
