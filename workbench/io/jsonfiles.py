"""Read JSON and JSON Lines files with errors that name the file and line.

The only place that turns bytes into Python objects for JSON inputs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from workbench.errors import InputError

__all__ = ["read_json", "iter_json_lines", "read_text", "require_object"]


def read_text(path: Path) -> str:
    """Read a UTF-8 text file (a byte-order mark is allowed), or raise :class:`InputError`."""
    if not path.exists():
        raise InputError(str(path), "file not found", fix="check the path")
    if path.is_dir():
        raise InputError(str(path), "is a directory, not a file", fix="give the file inside it")
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise InputError(
            str(path),
            f"bytes that are not UTF-8 ({exc.reason})",
            location=f"line {line}",
            fix="save the file as UTF-8",
        ) from None


def require_object(path: Path, value: Any, location: str) -> dict[str, Any]:
    """Return ``value`` if it is a JSON object, else raise :class:`InputError` naming where it is."""
    if not isinstance(value, dict):
        raise InputError(
            str(path),
            f"expected a JSON object, found {type(value).__name__}",
            location=location,
            fix="make every record a JSON object",
        )
    return value


def read_json(path: Path) -> Any:
    """Parse a whole JSON file; invalid JSON gives the line and column."""
    text = read_text(path)
    if not text.strip():
        raise InputError(str(path), "the file is empty", fix="give a file with records")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            str(path),
            f"invalid JSON ({exc.msg}, column {exc.colno})",
            location=f"line {exc.lineno}",
            fix="repair the JSON at that place (a truncated file ends early)",
        ) from None


def iter_json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSON Lines file."""
    text = read_text(path)
    if not text.strip():
        raise InputError(str(path), "the file is empty", fix="give a file with one JSON object a line")
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                str(path),
                f"invalid JSON ({exc.msg}, column {exc.colno})",
                location=f"line {number}",
                fix="repair or remove that line",
            ) from None
        yield number, require_object(path, obj, f"line {number}")
