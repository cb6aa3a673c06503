"""Paths built from data stay inside the folder chosen for them.

Every file name the workbench derives from something it read (a record id such as
``Single_ABMD/2015/page_93.pdf-2``, a system name, a template name, a slice label) goes
through :func:`safe_name`, and every path it writes under an output folder through
:func:`inside`, which refuses a result outside that folder. :func:`check_output_folder`
refuses an ``--out`` that names a file or a name the file system cannot hold, before any
work is done; :func:`terminal_text` is what the command line prints of any text that came
from data (system names, record ids, paths, error messages), with the terminal's control
characters shown as escapes instead of obeyed; :func:`shown_path` is how a page shows a path
(relative, never the machine's absolute path).

Examples
--------
>>> safe_name("Single_ABMD/2015/page_93.pdf-2")
'Single_ABMD_2015_page_93.pdf-2-d00e36bf'
>>> safe_name("claude-sonnet-4-6")
'claude-sonnet-4-6'
>>> inside("/tmp/out", "turns.parquet").as_posix()
'/tmp/out/turns.parquet'
>>> inside("/tmp/out", "../etc/passwd")
Traceback (most recent call last):
...
workbench.errors.UsageError: the path '../etc/passwd' would be written outside the output folder /tmp/out. \
Fix: use a name without '..', '/' or '\\' (workbench.io.paths.safe_name makes one)
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
from pathlib import Path

from workbench.errors import UsageError

__all__ = ["MAX_NAME", "safe_name", "inside", "check_output_folder", "terminal_text", "shown_path"]

#: Longest name :func:`safe_name` returns (file systems allow 255 bytes; room is left for
#: suffixes such as ``.manifest.json`` and ``.tmp``).
MAX_NAME = 120
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")
_RESERVED = {"", ".", ".."}


def safe_name(text: object, *, max_length: int = MAX_NAME) -> str:
    """A file name made from ``text``: one path component, never ``.``/``..``, no separator,
    no control character, at most ``max_length`` characters.

    A name that is already safe is returned unchanged; any other gets its unsafe runs
    replaced by ``_`` and a short hash of the original appended, so two different texts
    never share a name (``a/b`` and ``a_b`` differ).
    """
    raw = str(text)
    cleaned = _UNSAFE.sub("_", raw).strip("._") or "_"
    if cleaned == raw and raw not in _RESERVED and not raw.startswith(".") and len(raw) <= max_length:
        return raw
    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{cleaned[: max(1, max_length - 9)]}-{digest}"


def inside(root: str | os.PathLike[str], *parts: str | os.PathLike[str]) -> Path:
    """``root / parts``, refused (:class:`UsageError`) when it would lie outside ``root``.

    ``..``, absolute parts, NUL and backslashes are refused, and so is a result whose
    resolved path (symbolic links followed) is not under the resolved ``root``.
    """
    base = Path(root)
    path = base
    for part in parts:
        text = os.fspath(part)
        bad = (
            "\x00" in text
            or "\\" in text
            or Path(text).is_absolute()
            or any(piece in ("..",) for piece in Path(text).parts)
            or text in _RESERVED
        )
        if bad:
            raise _outside(base, text)
        path = path / text
    resolved_root = base.resolve()
    resolved = path.resolve()
    if resolved != resolved_root and resolved_root not in resolved.parents:
        raise _outside(base, os.path.join(*map(os.fspath, parts)) if parts else str(path))
    return path


def shown_path(path: str | os.PathLike[str], *folders: str | os.PathLike[str]) -> str:
    """``path`` as a page shows it, never absolute: a relative path as given; an absolute one
    relative to the first of ``folders`` holding it (the report's folder, the project), else
    its own folder's name and its name.

    Examples
    --------
    >>> shown_path("/srv/reports/bundled.graded/turns.parquet", "/srv/reports", "/srv")
    'bundled.graded/turns.parquet'
    >>> shown_path("/srv/data/convfinqa/dev.json", "/srv/reports", "/srv")
    'data/convfinqa/dev.json'
    >>> shown_path("/data/runs/2026-05-04T06-35-00Z/predictions.jsonl"), shown_path("data/dev.json")
    ('2026-05-04T06-35-00Z/predictions.jsonl', 'data/dev.json')
    """
    candidate = Path(path)
    if not candidate.is_absolute():
        return candidate.as_posix()
    for folder in folders:
        base = Path(folder).absolute()
        if candidate.is_relative_to(base):
            return candidate.relative_to(base).as_posix() or "."
    return Path(*candidate.parts[-2:]).as_posix()


def _outside(root: Path, text: str) -> UsageError:
    return UsageError(
        f"the path {text!r} would be written outside the output folder {root}. "
        "Fix: use a name without '..', '/' or '\\' (workbench.io.paths.safe_name makes one)"
    )


#: What a name may hold when the file system does not say (POSIX ``NAME_MAX`` on Linux, macOS, Windows).
_NAME_MAX = 255
#: Characters a terminal obeys instead of showing: C0 (ESC starts every ANSI sequence, BEL
#: ends a window title), DEL, C1 (``\x9b`` is a one-byte CSI), the bidirectional overrides and
#: the Unicode line separators. Escaping each one defuses a whole sequence: what followed the
#: ESC is left as the plain text it is.
_TERMINAL_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")

_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def terminal_text(text: object, *, multiline: bool = False) -> str:
    r"""``text`` as it may be printed on a terminal: every control character (C0, DEL, C1, so
    the whole ANSI escape family: colours, cursor moves, screen clears, window titles, bells),
    the bidirectional overrides and the line separators shown as a ``\x..``/``\u....``
    escape instead of being obeyed. Newlines are kept with ``multiline``; otherwise the
    result is one line.

    Examples
    --------
    >>> terminal_text("sys\x1b]0;pwned\x07 \x1b[2J")
    'sys\\x1b]0;pwned\\x07 \\x1b[2J'
    >>> terminal_text("two\nlines"), terminal_text("two\nlines", multiline=True)
    ('two\\nlines', 'two\nlines')
    >>> terminal_text("claude-sonnet-4-6 06:35 (é, 数)")
    'claude-sonnet-4-6 06:35 (é, 数)'
    """

    def shown(match: re.Match[str]) -> str:
        char = match.group()
        if multiline and char == "\n":
            return char
        code = ord(char)
        return _SHORT_ESCAPES.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")

    return _TERMINAL_CONTROL.sub(shown, str(text))


def _name_max(folder: Path) -> int:
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return _NAME_MAX


def check_output_folder(path: str | os.PathLike[str], *, option: str = "--out") -> Path:
    """Check, before any work, that ``path`` can be an output folder; create nothing.

    It may exist as a folder or not exist yet; then the nearest folder that exists must be a
    folder, and every new name must fit the file system (``NAME_MAX`` bytes, 255 almost
    everywhere).

    Raises
    ------
    UsageError
        When ``path`` (or a part of it) is an existing file, or a name is too long; one line
        naming the path, the cause and the fix.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> check_output_folder(folder / "new" / "run") == folder / "new" / "run"
    True
    >>> (folder / "notes.txt").write_text("mine")
    4
    >>> check_output_folder(folder / "notes.txt")
    Traceback (most recent call last):
    ...
    workbench.errors.UsageError: --out .../notes.txt is a file, not a folder; it was left as it is. Fix: give the name of a folder (a new one, or one the workbench wrote before)
    """
    out = Path(path)
    if str(path) == "":
        raise UsageError(f"{option} is empty. Fix: give the name of a folder")
    existing, new = out, []
    while not os.path.lexists(existing) and existing != existing.parent:
        new.append(existing.name)
        existing = existing.parent
    if os.path.lexists(existing) and not existing.is_dir():
        shown = terminal_text(out)
        if existing == out:
            raise UsageError(
                f"{option} {shown} is a file, not a folder; it was left as it is. "
                "Fix: give the name of a folder (a new one, or one the workbench wrote before)"
            )
        raise UsageError(
            f"{option} {shown}: {terminal_text(existing)} is a file, not a folder. "
            "Fix: give a path whose parent folders are folders"
        )
    limit = _name_max(existing if existing.is_dir() else Path.cwd())
    for name in reversed(new):
        size = len(os.fsencode(name))
        if size > limit:
            raise UsageError(
                f"{option} {terminal_text(out)[:60]}...: the name {terminal_text(name)[:40]!r}... has {size} bytes, "
                f"more than the file system allows ({limit}; {os.strerror(errno.ENAMETOOLONG).lower()}). "
                "Fix: use a shorter folder name"
            )
    return out
