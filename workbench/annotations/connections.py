"""This process's SQLite connections to store files: one per file, shared and counted.

Every :class:`~workbench.annotations.store.AnnotationStore` open on a file uses the same
connection; the last one closed closes it. A forked child never uses (or closes) its parent's
connections.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path

from workbench.errors import InputError

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
