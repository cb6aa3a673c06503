"""Whether a store file is sound, and one line when it is not.

The bytes of a store (and of its write-ahead log) are checked before SQLite opens it, and only
while this process has no connection to the file (see :mod:`workbench.annotations.connections`);
every ``sqlite3`` error becomes one :class:`~workbench.errors.InputError` saying where, what and
what to do, naming the newest backup of a damaged store. New files (a store, a backup, a
recovered store) get their name by a hard link, which never replaces a file.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from workbench.errors import InputError, WorkbenchError
from workbench.io.atomic import fsync_dir
from workbench.io.paths import inside, safe_name

__all__ = ["BUSY_TIMEOUT_S", "backup_name", "list_backups"]

#: How long a writer waits for another process's write to finish before giving up.
BUSY_TIMEOUT_S = 10.0


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
        fsync_dir(folder)
        return final
