"""The document's table as programs read it: either ConvFinQA layout into rows of numbers.

The ``table_*`` operations of :mod:`workbench.grading.program` look a row up by its label
(:func:`row_key`, whitespace and case folded) and read the numbers its cells show
(:func:`cell_value`: ``"(4)"`` is -4).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from workbench.grading import patterns
from workbench.grading.normalize import parse_cell_number

__all__ = ["TableRows", "table_grid", "table_rows", "cell_value", "row_key"]

#: A table as the ``table_*`` operations read it: row label (:func:`row_key`) to cell numbers.
TableRows = Mapping[str, Sequence[float | None]]


def row_key(label: str) -> str:
    """A row label as ``table_*`` operations look it up: whitespace runs as one space, lower case.

    Examples
    --------
    >>> row_key("  Net   Sales ")
    'net sales'
    """
    return patterns.WHITESPACE.sub(" ", label).strip().lower()


def table_grid(table: object) -> tuple[list[str], list[list[object]]]:
    """Turn either ConvFinQA table layout into ``(columns, rows)``, a row being ``[label, cells...]``.

    Accepts the reformatted layout ``{column: {row: value}}`` and the original layout
    (a header row, then ``[label, cells...]`` rows).

    Examples
    --------
    >>> table_grid({"2019": {"sales": 5.0}, "2018": {"sales": 4.0}})
    (['2019', '2018'], [['sales', 5.0, 4.0]])
    >>> table_grid([["", "2019"], ["sales", "$ 5"]])
    (['2019'], [['sales', '$ 5']])
    """
    if isinstance(table, Mapping):
        columns = [str(c) for c in table]
        labels: dict[str, None] = {}
        for column in table.values():
            if isinstance(column, Mapping):
                labels.update(dict.fromkeys(str(k) for k in column))
        rows = [
            [label, *[(col.get(label) if isinstance(col, Mapping) else None) for col in table.values()]]
            for label in labels
        ]
        return columns, rows
    if isinstance(table, Sequence) and not isinstance(table, str) and table:
        header = [str(c) for c in table[0]][1:]
        body = [list(row) for row in table[1:] if isinstance(row, Sequence) and not isinstance(row, str) and row]
        return header, body
    return [], []


def table_rows(table: object) -> dict[str, list[float | None]]:
    """Map each table row label to the numbers its cells show, for ``table_*`` operations.

    Examples
    --------
    >>> table_rows({"2019": {"sales": 5.0}, "2018": {"sales": "4"}})
    {'sales': [5.0, 4.0]}
    >>> table_rows([["", "2019", "2018"], ["sales", "$ 5", "(4)"]])
    {'sales': [5.0, -4.0]}
    """
    _, rows = table_grid(table)
    return {row_key(str(row[0])): [cell_value(c) for c in row[1:]] for row in rows}


def cell_value(cell: object) -> float | None:
    """The number a table cell shows (``"(4)"`` is -4), or ``None``.

    Examples
    --------
    >>> cell_value("(4)"), cell_value(5), cell_value("n/a"), cell_value(True)
    (-4.0, 5.0, None, None)
    """
    if isinstance(cell, bool):
        return None
    if isinstance(cell, int | float):
        return float(cell) if math.isfinite(cell) else None
    return parse_cell_number(str(cell))
