"""Paths built from data stay inside the folder chosen for them.

Every file name the workbench derives from something it read (a record id such as
``Single_ABMD/2015/page_93.pdf-2``, a system name, a template name, a slice label) goes
through :func:`safe_name`, and every path it writes under an output folder through
:func:`inside`, which refuses a result outside that folder.

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

import hashlib
import os
import re
from pathlib import Path

from workbench.errors import UsageError

__all__ = ["MAX_NAME", "safe_name", "inside"]

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


def _outside(root: Path, text: str) -> UsageError:
    return UsageError(
        f"the path {text!r} would be written outside the output folder {root}. "
        "Fix: use a name without '..', '/' or '\\' (workbench.io.paths.safe_name makes one)"
    )
