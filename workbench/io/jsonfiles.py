"""Read JSON, JSON Lines, CSV and Parquet input files with errors that name the file and line.

The only place that turns bytes into Python objects (or tables) for JSON and CSV inputs:

* text is UTF-8; a UTF-8 byte-order mark is dropped, a UTF-16 file (with its byte-order
  mark) is decoded; any other byte that is not UTF-8 is reported with its line and byte offset;
* a JSON object that gives the same key twice is an error naming the key and the line (the
  JSON reader would silently keep the last value);
* JSON nested deeper than :data:`MAX_DEPTH` levels, or holding a whole number longer than
  Python reads (4,300 digits), is an error naming the line and the field (the path of keys to it),
  never a ``RecursionError`` or ``ValueError``;
* a CSV row with more or fewer values than the header, or a header naming a column twice, is
  an error naming the line.
"""

from __future__ import annotations

import csv
import io
import json
import json.decoder
import json.scanner
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from workbench.errors import InputError

__all__ = [
    "read_json",
    "iter_json_lines",
    "read_text",
    "require_object",
    "read_csv",
    "check_closed_quotes",
    "shown_values",
    "read_parquet",
    "MAX_DEPTH",
]

#: The deepest nesting of arrays and objects a JSON input may have. Real inputs nest fewer
#: than 10 levels; anything deeper is refused before any code recurses into it (the JSON
#: reader itself fails near 1,000 levels, and ``repr`` of a deep value as well).
MAX_DEPTH = 100

_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_REENCODE = "re-encode the file as UTF-8 (e.g. iconv -f cp1252 -t utf-8 FILE > NEW)"


def read_text(path: Path) -> str:
    """Read a UTF-8 text file (a byte-order mark is allowed; UTF-16 with its byte-order mark
    is decoded), or raise :class:`InputError`."""
    if not path.exists():
        raise InputError(str(path), "file not found", fix="check the path")
    if path.is_dir():
        raise InputError(str(path), "is a directory, not a file", fix="give the file inside it")
    data = path.read_bytes()
    if data.startswith(_UTF16_BOMS) and not data.startswith(b"\xff\xfe\x00\x00"):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise InputError(
                str(path),
                f"starts with a UTF-16 byte-order mark but is not valid UTF-16 (byte offset {exc.start})",
                fix=_REENCODE,
            ) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            str(path),
            f"byte 0x{data[exc.start]:02x} at byte offset {exc.start} is not UTF-8 ({exc.reason})",
            location=f"line {line}",
            fix=_REENCODE,
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


# --------------------------------------------------------------------------- JSON
class _DuplicateKey(Exception):
    def __init__(self, key: str, position: int = -1) -> None:
        super().__init__(key)
        self.key, self.position = key, position


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` that refuses a key given twice in one object."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


def _key_position(text: str, key: str, start: int, end: int) -> int:
    """Offset of the second ``"key":`` between ``start`` and ``end`` (``start`` if not found)."""
    token = json.dumps(key, ensure_ascii=False)
    found: list[int] = []
    at = text.find(token, start, end)
    while at >= 0 and len(found) < 2:
        if text[at + len(token) : end].lstrip().startswith(":"):
            found.append(at)
        at = text.find(token, at + 1, end)
    return found[1] if len(found) == 2 else start


def _duplicate_position(text: str) -> int:
    """Where the first object with a repeated key repeats it (a slow, pure-Python parse: errors only)."""
    decoder = json.JSONDecoder()

    def parse_object(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo=None):  # type: ignore[no-untyped-def]
        s, start = s_and_end
        pairs, end = json.decoder.JSONObject(s_and_end, strict, scan_once, None, list, memo)
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            key = next(k for i, k in enumerate(keys) if k in keys[:i])
            raise _DuplicateKey(key, _key_position(s, key, start, end))
        return dict(pairs), end

    decoder.parse_object = parse_object  # type: ignore[assignment]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        decoder.decode(text)
    except _DuplicateKey as exc:
        return exc.position
    except (ValueError, RecursionError):  # not expected: the fast parse got as far as the repeated key
        pass
    return 0


def _duplicate_error(path: Path, key: str, line: int) -> InputError:
    return InputError(
        str(path),
        f"key '{key}' appears twice in one JSON object (a JSON reader would silently keep the last)",
        location=f"line {line}",
        field=key,
        fix="remove or rename one of the two",
    )


def _json_error(path: Path, exc: json.JSONDecodeError, text: str, line: int | None = None) -> InputError:
    ends_early = not text[exc.pos :].strip() or exc.msg.startswith("Unterminated string")
    problem = f"invalid JSON ({exc.msg}, column {exc.colno})"
    if ends_early:
        problem += "; the text ends in the middle of a value, so the file looks truncated"
    return InputError(
        str(path),
        problem,
        location=f"line {line if line is not None else exc.lineno}",
        fix="repair or remove that line"
        if line is not None
        else "repair the JSON at that place, or give the whole file",
    )


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests arrays and objects more than ``limit`` levels deep (no recursion).

    Examples
    --------
    >>> _deeper_than({"a": 1, "b": "x"}, 1), _deeper_than({"a": [1]}, 1), _deeper_than([[[]]], 2)
    (False, True, True)
    """
    if type(value) is dict and limit >= 1 and _SCALARS.issuperset(map(type, value.values())):
        return False  # the usual record: one level of text and numbers (checked without a Python loop)
    level = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        inner: list[Any] = []
        for item in level:
            inner.extend(c for c in (item.values() if isinstance(item, dict) else item) if isinstance(c, dict | list))
        level = inner
    return False


#: The types of JSON's values that hold no other value.
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _path_text(stack: list[list[Any]]) -> str:
    """``conversation[0].expected_answer`` for a stack of open containers (at most 6 steps shown)."""
    steps = [f"[{key}]" if kind == "[" else f".{key}" for kind, key, _ in stack if key is not None]
    text = "".join(steps[:6]) + ("..." if len(steps) > 6 else "")
    return text.removeprefix(".")


def _locate(text: str, *, depth: int | None = None, digits: int | None = None) -> tuple[int, str] | None:
    """Where, in JSON ``text``, the first array or object opens more than ``depth`` levels deep,
    or the first whole number longer than ``digits`` digits starts: ``(offset, path of keys)``.

    A token-by-token walk without recursion, for error messages only (the fast reader has
    already failed or found the problem).

    Examples
    --------
    >>> _locate('{"a": [1, {"b": [[2]]}]}', depth=3)
    (16, 'a[1].b')
    >>> _locate('[1, {"x": 12345}]', digits=4)
    (10, '[1].x')
    """
    stack: list[list[Any]] = []  # [kind, key or index, expecting a key]
    at, end = 0, len(text)
    try:
        while at < end:
            at = json.decoder.WHITESPACE.match(text, at).end()  # type: ignore[attr-defined]
            if at >= end:
                break
            char = text[at]
            if char == '"':
                value, at = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
                if stack and stack[-1][0] == "{" and stack[-1][2]:
                    stack[-1][1:] = [value, False]
                continue
            if char in "[{":
                if depth is not None and len(stack) >= depth:
                    return at, _path_text(stack)
                stack.append([char, 0 if char == "[" else None, char == "{"])
            elif char in "]}":
                if stack:
                    stack.pop()
            elif char == ",":
                if stack and stack[-1][0] == "[":
                    stack[-1][1] += 1
                elif stack:
                    stack[-1][2] = True
            elif (number := json.scanner.NUMBER_RE.match(text, at)) is not None:  # type: ignore[attr-defined]
                whole, fraction, exponent = number.groups()
                if digits is not None and not fraction and not exponent and len(whole.lstrip("-")) > digits:
                    return at, _path_text(stack)
                at = number.end()
                continue
            at += 1
    except ValueError:  # text that is not JSON after all: nothing to point at
        return None
    return None


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _too_deep(path: Path, text: str, line: int | None = None) -> InputError:
    """The error for JSON nested more than :data:`MAX_DEPTH` levels (``line``: of a JSON Lines file)."""
    found = _locate(text, depth=MAX_DEPTH)
    offset, field = found if found is not None else (0, "")
    return InputError(
        str(path),
        f"arrays or objects nested more than {MAX_DEPTH} levels deep (no real input nests this deep; "
        "a value built by a runaway loop?)",
        location=f"line {line if line is not None else _line_of(text, offset)}",
        field=field,
        fix=f"give the value flat (text or a number), at most {MAX_DEPTH} levels deep, or remove it",
    )


def _long_number(path: Path, text: str, line: int | None = None) -> InputError:
    """The error for a whole number longer than Python reads (``sys.get_int_max_str_digits()``)."""
    limit = sys.get_int_max_str_digits()
    found = _locate(text, digits=limit) if limit else None
    offset, field = found if found is not None else (0, "")
    number = json.scanner.NUMBER_RE.match(text, offset) if found is not None else None  # type: ignore[attr-defined]
    size = f"{len(number.group(1).lstrip('-')):,} digits" if number is not None else "too many digits"
    return InputError(
        str(path),
        f"a whole number of {size}; Python reads whole numbers of at most {limit:,} digits",
        location=f"line {line if line is not None else _line_of(text, offset)}",
        field=field,
        fix="write the number as text (in quotes), or remove it",
    )


#: One decoder for every parse: ``json.loads`` with a hook builds a new decoder per call, a
#: third of the time of a JSON Lines file's short lines. Text starting with a byte-order mark
#: goes through ``json.loads`` itself, which refuses it in its own words.
_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs)


def _loads(text: str) -> Any:
    """``json.loads(text, object_pairs_hook=_unique_pairs)``: the same value or the same exception."""
    if text.startswith("\ufeff"):
        return json.loads(text, object_pairs_hook=_unique_pairs)
    return _DECODER.decode(text)


def _parse(path: Path, text: str, line: int | None = None) -> Any:
    """``json.loads`` with every failure as one :class:`InputError` (``line``: of a JSON Lines file)."""
    try:
        value = _loads(text)
    except json.JSONDecodeError as exc:
        raise _json_error(path, exc, text, line) from None
    except _DuplicateKey as exc:
        if line is not None:
            raise _duplicate_error(path, exc.key, line) from None
        position = _duplicate_position(text)
        raise _duplicate_error(path, exc.key, text.count("\n", 0, position) + 1) from None
    except RecursionError:
        raise _too_deep(path, text, line) from None
    except ValueError:  # int(): a whole number of more digits than sys.get_int_max_str_digits()
        raise _long_number(path, text, line) from None
    if _deeper_than(value, MAX_DEPTH):
        raise _too_deep(path, text, line)
    return value


def read_json(path: Path) -> Any:
    """Parse a whole JSON file; invalid JSON gives the line and column, a key given twice its line,
    nesting deeper than :data:`MAX_DEPTH` or a whole number too long to read the line and field."""
    text = read_text(path)
    if not text.strip():
        raise InputError(str(path), "the file is empty", fix="give a file with records")
    return _parse(path, text)


def iter_json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSON Lines file."""
    text = read_text(path)
    if not text.strip():
        raise InputError(str(path), "the file is empty", fix="give a file with one JSON object a line")
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        yield number, require_object(path, _parse(path, line, number), f"line {number}")


# --------------------------------------------------------------------------- tables
def shown_values(values: Sequence[str]) -> str:
    r"""Up to 8 values for a one-line message: line breaks shown as ``\n``, long values cut.

    Examples
    --------
    >>> shown_values(["a", "b\nc", "x" * 40])
    'a, b\\nc, xxxxxxxxxxxxxxxxxxxxxxxxx...'
    """
    cut = [v if len(v) <= 28 else v[:25] + "..." for v in values[:8]]
    text = ", ".join(v.replace("\r", "").replace("\n", "\\n") for v in cut)
    return text + (", ..." if len(values) > 8 else "")


def read_csv(path: Path) -> tuple[pl.DataFrame, list[str]]:
    """Read a CSV (``.tsv``: tab-separated) file as text columns, and where each row starts.

    Empty values are null. A header naming a column twice, or a row with more or fewer values
    than the header (a truncated file, two files of different columns pasted together), is
    an :class:`InputError` naming the line.
    """
    text = read_text(path)
    if not text.strip():
        raise InputError(str(path), "the file is empty", fix="give a file with a header line and rows")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
    rows: list[list[str]] = []
    locations: list[str] = []
    header: list[str] = []
    try:
        end = 0
        for row in reader:
            start, end = end + 1, reader.line_num
            if not row:
                continue
            if not header:
                header = row
                dups = [name for i, name in enumerate(header) if name in header[:i]]
                if dups:
                    raise InputError(
                        str(path),
                        f"column '{dups[0]}' is named twice in the header",
                        location=f"line {start}",
                        field=dups[0],
                        fix="rename or remove one of the two columns",
                    )
                continue
            if len(row) != len(header):
                last = not "".join(text.splitlines()[end:]).strip()
                spans_lines = any("\n" in v or "\r" in v for v in row)
                raise InputError(
                    str(path),
                    f"{len(row)} values ({shown_values(row)}) where the header has {len(header)} columns "
                    f"({shown_values(header)})"
                    + ("; the file looks truncated" if last and len(row) < len(header) else "")
                    + ("; a value runs over several lines: is a quote left open?" if spans_lines else ""),
                    location=f"line {start}",
                    fix="give every row one value per column (quote values that contain the delimiter); "
                    "do not paste files with other columns together",
                )
            rows.append(row)
            locations.append(f"line {start}")
    except csv.Error as exc:
        raise InputError(
            str(path),
            f"not a readable CSV ({exc})",
            location=f"line {reader.line_num}",
            fix="check the quoting on that line",
        ) from None
    if rows:
        check_closed_quotes(path, text, rows[-1], locations[-1])
    columns = {name: [r[i] or None for r in rows] for i, name in enumerate(header)}
    return pl.DataFrame(columns, schema=dict.fromkeys(header, pl.String)), locations


def check_closed_quotes(path: Path, text: str, last_row: Sequence[str | None], location: str) -> None:
    """Raise :class:`InputError` when a quote opened in the last row is never closed.

    The CSV reader then takes the rest of the file as one value, silently swallowing the rows
    after it: the last value holds a line break, yet the file does not end with a quote.
    """
    if any(v and ("\n" in v or "\r" in v) for v in last_row) and not text.rstrip().endswith('"'):
        raise InputError(
            str(path),
            "a quote opened here is never closed, so the rest of the file would be read as one value",
            location=location,
            fix="close the quote (write a quote inside a quoted value as two quotes)",
        )


def read_parquet(path: Path) -> pl.DataFrame:
    """Read a Parquet file, or raise :class:`InputError` (missing, empty, truncated or corrupt)."""
    if not path.exists():
        raise InputError(str(path), "file not found", fix="check the path")
    if path.is_dir():
        raise InputError(str(path), "is a directory, not a file", fix="give the file inside it")
    if path.stat().st_size == 0:
        raise InputError(str(path), "the file is empty", fix="give a Parquet file with rows")
    try:
        return pl.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - polars raises several types for bad files
        raise InputError(
            str(path),
            f"not a readable Parquet file, truncated or corrupt ({type(exc).__name__})",
            fix="re-export the file as Parquet",
        ) from None
