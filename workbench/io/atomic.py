"""Every atomic write and folder swap of the package.

* :func:`write_atomic`: one file, written into a temporary file beside it, then renamed over it.
* :func:`write_atomic_set`: several files as a set, or none of them (the graded folder).
* :func:`parquet_writer`: a frame's Parquet bytes as a ``write(path)`` for the two above.
* :func:`make_staging`, :func:`swap_in`, :func:`recover_interrupted`, :func:`fsync_tree`: a
  whole folder written beside its target and swapped in (``renameat2(RENAME_EXCHANGE)`` where
  the system offers it, else two renames), and what a killed swap left behind put right (the
  cleaned export).

A failure at any step leaves the target as it was: the previous file, set or folder, whole.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import glob
import io
import logging
import os
import re
import secrets
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from workbench.schema import keys_as_text

__all__ = [
    "fsync_dir",
    "fsync_tree",
    "make_staging",
    "parquet_writer",
    "recover_interrupted",
    "swap_in",
    "write_atomic",
    "write_atomic_set",
]

logger = logging.getLogger(__name__)

#: How Rust libraries (polars' Parquet writer) report an operating-system error: "No space left
#: on device (os error 28)".
_OS_ERROR_IN_TEXT = re.compile(r"\(os error (\d+)\)")


# --------------------------------------------------------------------------- files
def _write(write: Callable[[Path], None], tmp: Path, path: Path) -> None:
    """``write(tmp)``, with an operating-system error that a library reported as its own
    exception (polars' ``ComputeError``) raised as the :class:`OSError` it is, naming ``path``.

    Examples
    --------
    >>> def full_disk(tmp):  # what polars raises when the disk is full
    ...     raise pl.exceptions.ComputeError("parquet: underlying IO error: No space left on device (os error 28)")
    >>> _write(full_disk, Path("t.tmp"), Path("out/a.parquet"))
    Traceback (most recent call last):
    ...
    OSError: [Errno 28] No space left on device: 'out/a.parquet'
    """
    try:
        write(tmp)
    except OSError:
        raise
    except Exception as exc:
        found = _OS_ERROR_IN_TEXT.search(str(exc))
        if found is None:
            raise
        code = int(found.group(1))
        raise OSError(code, os.strerror(code), str(path)) from exc


def parquet_writer(frame: pl.DataFrame, **options: Any) -> Callable[[Path], None]:
    """A ``write(path)`` for :func:`write_atomic` and :func:`write_atomic_set`: the frame is
    encoded in memory, then written with Python's file API, so a full disk is the
    :class:`OSError` it is (polars' own writer says "Invalid thrift: transport error").
    The bytes are those ``frame.write_parquet(path, **options)`` writes, with the key columns
    (``system``, ``record_id``) as text (:func:`~workbench.schema.keys_as_text`): a file's
    layout does not depend on how the workbench holds them in memory."""

    def write(path: Path) -> None:
        buffer = io.BytesIO()
        keys_as_text(frame).write_parquet(buffer, **options)
        path.write_bytes(buffer.getvalue())

    return write


def write_atomic(path: Path, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it over ``path``.

    Raises
    ------
    OSError
        When the file cannot be written (a full disk...); ``path`` is left as it was.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        _write(write, tmp, path)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def write_atomic_set(items: Sequence[tuple[Path, Callable[[Path], None]]]) -> list[Path]:
    """Write several files as a set, or none of them.

    Each ``write(tmp)`` goes into a temporary file beside its path first; only when all of
    them are complete (and flushed to disk) are they renamed into place, in order. The file
    each rename replaces is kept as a hard link (a copy where links are not allowed) until
    the last rename is done, so a rename that fails half-way through the set puts the earlier
    ones back: the folder holds the previous set byte for byte, never part of a new one (and a
    folder this call had to create is removed again).

    Raises
    ------
    OSError
        The error that stopped the set (a full disk, a read-only folder...), with
        ``filename`` naming the file being written; no temporary file is left behind.
    """
    temps: list[Path] = []
    kept: list[tuple[Path, Path | None]] = []  # (target, its previous content) for each rename done
    current = items[0][0] if items else Path()
    new_folders = _missing_folders([path.parent for path, _ in items])
    try:
        for path, write in items:
            current = path
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            os.close(fd)
            temps.append(Path(tmp_name))
            _write(write, temps[-1], path)
            os.chmod(temps[-1], 0o644)
        for tmp, (path, _) in zip(temps, items, strict=True):
            current = path
            with tmp.open("rb") as handle:
                os.fsync(handle.fileno())
        for tmp, (path, _) in zip(temps, items, strict=True):
            current = path
            previous = _keep_previous(path)
            kept.append((path, previous))
            os.replace(tmp, path)
    except BaseException as exc:
        _put_back(kept)
        for tmp in temps:
            tmp.unlink(missing_ok=True)
        for folder in new_folders:  # deepest first; only the empty folders this call made
            try:
                folder.rmdir()
            except OSError:
                break
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(current)
        raise
    finally:
        for tmp in temps:
            tmp.unlink(missing_ok=True)
        for _, previous in kept:
            if previous is not None:
                previous.unlink(missing_ok=True)
    return [path for path, _ in items]


def _missing_folders(folders: list[Path]) -> list[Path]:
    """The folders among ``folders`` and their parents that do not exist yet, deepest first."""
    missing: set[Path] = set()
    for folder in folders:
        while not folder.exists() and folder != folder.parent:
            missing.add(folder)
            folder = folder.parent
    return sorted(missing, key=lambda p: len(p.parts), reverse=True)


def _keep_previous(path: Path) -> Path | None:
    """A second name for the file at ``path`` (a hard link, else a copy), or ``None`` when
    there is no such file; :func:`_put_back` renames it back."""
    if not path.is_file():
        return None
    backup = path.with_name(f".{path.name}.{os.getpid()}.previous")
    backup.unlink(missing_ok=True)
    try:
        os.link(path, backup)
    except OSError:
        shutil.copy2(path, backup)
    return backup


def _put_back(kept: list[tuple[Path, Path | None]]) -> None:
    """Undo the renames done so far, last first: each target gets its previous file back, or
    is removed when it had none."""
    for path, previous in reversed(kept):
        try:
            if previous is None:
                path.unlink(missing_ok=True)
            else:
                os.replace(previous, path)
        except OSError:  # pragma: no cover - the folder broke between two renames
            continue


# --------------------------------------------------------------------------- folders
def make_staging(out: Path, mode: int | None) -> Path:
    """A new empty folder beside ``out`` to write a whole folder into, named as
    :func:`recover_interrupted` expects, with the mode of the folder it replaces (``mode``) or,
    for a new folder, the usual mode of a new folder (``0o777`` less the umask)."""
    for _ in range(100):
        staging = out.with_name(f".{out.name}.export-{os.getpid()}-{secrets.token_hex(6)}")
        try:
            os.mkdir(staging, 0o777)  # the system applies the umask (and a default ACL)
        except FileExistsError:
            continue
        if mode is not None:
            os.chmod(staging, mode)
        return staging
    raise FileExistsError(errno.EEXIST, "no free name for a temporary export folder", str(out.parent))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def recover_interrupted(out: Path) -> None:
    """Undo what a killed swap left beside ``out``: put back a previous folder it had moved
    aside (when ``out`` itself is missing), and remove its temporary folders."""
    parent = out.parent
    if not parent.is_dir():
        return

    def leftovers(kind: str) -> list[Path]:
        found = []
        for folder in sorted(parent.glob(f".{glob.escape(out.name)}.{kind}-*")):
            pid = folder.name[len(f".{out.name}.{kind}-") :].split("-")[0]
            if folder.is_dir() and pid.isdigit() and not _pid_alive(int(pid)):
                found.append(folder)
        return sorted(found, key=lambda folder: folder.name.rsplit("-", 1)[-1])

    moved = leftovers("previous")
    if moved and not os.path.lexists(out):
        os.rename(moved.pop(), out)
        logger.warning("put back the previous export %s, which an interrupted export had moved aside", out)
    for folder in [*moved, *leftovers("export")]:
        shutil.rmtree(folder, ignore_errors=True)


def fsync_tree(folder: Path) -> None:
    """Flush the files of ``folder`` and the folder itself to disk."""
    for item in folder.iterdir():
        if item.is_file():
            with item.open("rb") as handle:
                os.fsync(handle.fileno())
    fsync_dir(folder)


def fsync_dir(folder: Path) -> None:
    """Flush ``folder``'s entries (names added, renamed, removed) to disk, where the system allows."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directory entries atomically (Linux ``renameat2(RENAME_EXCHANGE)``); ``False``
    where the system or file system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(code, os.strerror(code), str(b))


def swap_in(new: Path, out: Path, refusal: Callable[[Path], BaseException | None]) -> None:
    """Make the complete folder ``new`` be ``out``; an earlier ``out`` is removed only after.

    What was at ``out`` is checked again once it is out of the way: ``refusal(moved)`` gives the
    error to raise when the entry moved aside from ``out`` may not be removed (a file appeared
    in it meanwhile, say), else ``None``. On an error it is put back at ``out`` and the error
    raised, so nothing is removed that ``refusal`` did not let go.
    """
    if not os.path.lexists(out):
        os.rename(new, out)
    elif _exchange(new, out):  # ``new`` now holds the earlier folder
        error = refusal(new)
        if error is not None:
            _exchange(new, out)
            raise error
        shutil.rmtree(new, ignore_errors=True)
    else:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        old = out.with_name(f".{out.name}.previous-{os.getpid()}-{stamp}")
        os.rename(out, old)
        error = refusal(old)
        if error is not None:
            os.rename(old, out)
            raise error
        try:
            os.rename(new, out)
        except BaseException:
            os.rename(old, out)
            raise
        shutil.rmtree(old, ignore_errors=True)
    fsync_dir(out.parent)
