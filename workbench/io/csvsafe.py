"""Spreadsheet-safe CSV: cells a spreadsheet would run as a formula are written inert.

A spreadsheet opening a CSV runs a cell that begins with ``=``, ``+``, ``-`` or ``@`` as a
formula (``=HYPERLINK("http://x","y")`` becomes a live link, ``@SUM(A1)`` a calculation), and a
leading tab or carriage return can hide such a cell. Following OWASP ("CSV Injection"), every
CSV the workbench writes puts a single quote before such a cell, so a spreadsheet shows the text
instead of running it. Numbers are the exception and stay as they are: ``-12.5``, ``+3``,
``-1e5``, ``-1,234`` and a percentage such as ``-9.7%`` are values, not formulas.

:func:`is_formula_cell` says whether one cell needs the quote; :func:`inert_cells` quotes every
such text cell (and column name) of a polars frame; :func:`write_csv` writes a frame through it
and is the one way the workbench writes a CSV or TSV file.

The quote is part of the written text: a tool that reads the file back sees ``'=x``, not ``=x``.
This is why only CSV and TSV files are neutralised; JSON, JSON Lines and Parquet keep every
value verbatim.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

import polars as pl

from workbench.grading.patterns import PLAIN_NUMBER

__all__ = ["FORMULA_TRIGGERS", "count_formula_cells", "inert_cells", "inert_text", "is_formula_cell", "write_csv"]

#: First characters that make a spreadsheet read a cell as a formula (OWASP's list).
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")

#: What is put before a formula-looking cell.
_QUOTE = "'"


def is_formula_cell(text: str) -> bool:
    """Whether a spreadsheet would read ``text`` as a formula: it begins with ``=``, ``+``,
    ``-``, ``@``, a tab or a carriage return, and is not a number.

    A number is a signed decimal (thousands separators and an exponent allowed), optionally
    followed by ``%``: ``-12.5``, ``+3``, ``-1e5``, ``-9.7%``. A leading space does not make a
    formula.

    Parameters
    ----------
    text
        One cell's text.

    Returns
    -------
    bool

    Examples
    --------
    >>> [is_formula_cell(t) for t in ('=HYPERLINK("http://x","y")', "@SUM(A1)", "+x", "-x", "\\tx", "\\rx")]
    [True, True, True, True, True, True]
    >>> [is_formula_cell(t) for t in ("-12.5", "+3", "-1e5", "-1,234", "-9.7%", "x=1", "", " =1", "12")]
    [False, False, False, False, False, False, False, False, False]
    >>> [is_formula_cell(t) for t in ("-", "+-3", "-3+4", "-1e5+cmd|' /C calc'!A0", "\\t12")]
    [True, True, True, True, True]
    """
    if not text.startswith(FORMULA_TRIGGERS):
        return False
    if text[0] not in "+-":
        return True
    body = text[:-1] if text.endswith("%") else text
    return PLAIN_NUMBER.fullmatch(body) is None or body != body.rstrip()


def inert_text(text: str) -> str:
    """``text`` with a single quote before it when it would be read as a formula.

    Examples
    --------
    >>> inert_text("=1+2"), inert_text("-x"), inert_text("-12.5"), inert_text("plain")
    ("'=1+2", "'-x", '-12.5', 'plain')
    """
    return _QUOTE + text if is_formula_cell(text) else text


def _text_columns(frame: pl.DataFrame) -> list[pl.Series]:
    """The columns of ``frame`` that hold text, as ``String`` series."""
    return [
        frame[name].cast(pl.String)
        for name, dtype in frame.schema.items()
        if dtype == pl.String or isinstance(dtype, pl.Categorical | pl.Enum)
    ]


def _formula_rows(series: pl.Series) -> list[int]:
    """Positions of the formula-looking cells of a text series (a cheap first-character test
    first, then :func:`is_formula_cell` on the few candidates)."""
    candidates = series.str.slice(0, 1).is_in(FORMULA_TRIGGERS).fill_null(False)
    if not candidates.any():
        return []
    values = series.to_list()
    return [i for i in candidates.arg_true().to_list() if is_formula_cell(values[i])]


def count_formula_cells(frame: pl.DataFrame) -> int:
    """How many text cells and column names of ``frame`` :func:`inert_cells` quotes.

    Examples
    --------
    >>> count_formula_cells(pl.DataFrame({"id": ["=1+1", "-3", "-x"], "n": [-1, 2, 3]}))
    2
    """
    cells = sum(len(_formula_rows(series)) for series in _text_columns(frame))
    return cells + sum(is_formula_cell(name) for name in frame.columns)


def inert_cells(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` made safe to write as CSV: every text cell and column name a spreadsheet would
    run as a formula gets a leading ``'`` (:func:`is_formula_cell`).

    Text columns (``String``, and ``Categorical``/``Enum`` columns holding such a value, which
    become ``String``) are changed; numbers, booleans, dates and nulls are left as they are.

    Parameters
    ----------
    frame
        Any frame; it is not changed.

    Returns
    -------
    polars.DataFrame
        A new frame (``frame`` itself when no cell needed a quote).

    Examples
    --------
    >>> frame = pl.DataFrame({"id": ["=HYPERLINK(\\"http://x\\",\\"y\\")", "r2", "-x"],
    ...                       "answer": ["-12.5", "@SUM(A1)", None], "n": [-1, 2, 3]})
    >>> inert_cells(frame).rows()
    [('\\'=HYPERLINK("http://x","y")', '-12.5', -1), ('r2', "'@SUM(A1)", 2), ("'-x", None, 3)]
    >>> inert_cells(pl.DataFrame({"=cmd": ["a"]})).columns
    ["'=cmd"]
    """
    out = frame
    for series in _text_columns(frame):
        rows = _formula_rows(series)
        if rows:
            values = series.to_list()
            for i in rows:
                values[i] = _QUOTE + values[i]
            out = out.with_columns(pl.Series(series.name, values, dtype=pl.String))
    renames = {name: inert_text(name) for name in out.columns if is_formula_cell(name)}
    return out.rename(renames) if renames else out


def write_csv(
    frame: pl.DataFrame, file: str | Path | IO[str] | IO[bytes] | None = None, *, separator: str = ","
) -> str | None:
    """Write ``frame`` as CSV (or TSV with ``separator="\\t"``) with its formula-looking cells
    made inert (:func:`inert_cells`); the text when ``file`` is ``None``, as ``polars`` does.

    Examples
    --------
    >>> print(write_csv(pl.DataFrame({"system": ["+x", "gpt"], "value": ["-3", "@a"]})), end="")
    system,value
    '+x,-3
    gpt,'@a
    """
    return inert_cells(frame).write_csv(file, separator=separator)
