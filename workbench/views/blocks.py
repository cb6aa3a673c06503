"""The blocks of HTML the package's tables are: a page form, a notebook form, and the table macro
both come from (:func:`html_table`, :func:`first_page`, :class:`HtmlBlock`).

:mod:`workbench.views.tables` builds every table of the package on these and re-exports them; a
live kernel's grid (:mod:`workbench.widgets.grid`) pages a block's rows (``HtmlBlock.frame``).
See :mod:`workbench.views.tables` for the two forms and why the notebook's is styled inline.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from workbench.analysis import formats, words
from workbench.views.html import PAGE_MIME, Markup, macro

__all__ = [
    "GRID_ROWS",
    "LABELS",
    "NO_MATHS",
    "SHORT_CHARS",
    "HtmlBlock",
    "first_page",
    "html_table",
    "label",
    "no_maths",
]

#: The classes of the element around every HTML output the package shows in a notebook: MathJax
#: leaves the text inside it alone (``mathjax_ignore``: MathJax 3, as JupyterLab 4 bundles it;
#: ``tex2jax_ignore``: MathJax 2, the classic notebook and nbconvert's pages). LaTeX meant to be
#: typeset goes in an element of class ``mathjax_process tex2jax_process`` inside it.
NO_MATHS = "tex2jax_ignore mathjax_ignore"


def no_maths(markup: str) -> str:
    """``markup`` inside an element MathJax does not typeset (:data:`NO_MATHS`): a ``$`` in the
    data stays a dollar sign.

    Examples
    --------
    >>> no_maths("<p>$821,000 and $824,000</p>")
    '<div class="tex2jax_ignore mathjax_ignore"><p>$821,000 and $824,000</p></div>'
    """
    return f'<div class="{NO_MATHS}">{markup}</div>'


class HtmlBlock:
    """A block of HTML that Jupyter and the report renderer display.

    ``markup`` is the page's (every row, the grid's marks, the turns' detail data); ``notebook``,
    when given, is what a notebook shows without the page's style sheet and script (the first
    rows of a long table, styled inline, and where the others are: :func:`first_page`). Jupyter
    gets the notebook's form as ``text/html`` inside :data:`NO_MATHS`, and the page's form as
    :data:`~workbench.views.html.PAGE_MIME`, which the report shows and JupyterLab ignores.

    Examples
    --------
    >>> block = HtmlBlock("<table>every row</table>", "<table>15 rows</table>")
    >>> bundle = block._repr_mimebundle_()
    >>> bundle["text/html"]
    '<div class="tex2jax_ignore mathjax_ignore"><table>15 rows</table></div>'
    >>> bundle["application/vnd.workbench.page+html"], block.__html__()
    ('<table>every row</table>', '<table>every row</table>')
    """

    def __init__(self, markup: str, notebook: str | None = None) -> None:
        self.markup = markup
        self.notebook = notebook
        #: The rows of a table made by :func:`html_table`, and how it shows them (caption, keys,
        #: number formats): what a live kernel's grid (:func:`workbench.widgets.grid.live`) pages.
        self.frame: pl.DataFrame | None = None
        self.grid_options: dict[str, Any] = {}

    def _repr_html_(self) -> str:
        return no_maths(self.markup if self.notebook is None else self.notebook)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        bundle = {"text/html": self._repr_html_()}
        if self.notebook is not None:
            bundle[PAGE_MIME] = self.markup
        return bundle

    def __html__(self) -> str:
        """The page's markup, for a template to insert as it is."""
        return self.markup

    def __add__(self, other: HtmlBlock) -> HtmlBlock:
        """The two blocks one after the other, in both forms."""
        return HtmlBlock(self.markup + other.markup, self._notebook() + other._notebook())

    def _notebook(self) -> str:
        return self.markup if self.notebook is None else self.notebook

    def __repr__(self) -> str:
        return f"HtmlBlock({len(self.markup)} characters)"


#: A text cell longer than this shows its first characters and "…"; the whole text is a click away.
SHORT_CHARS = 60

#: A table of more rows than this is a data grid (search, sort, pages) in the offline report; a
#: notebook shows this many rows of it (:func:`first_page`).
GRID_ROWS = 15

#: How a column of the package's tables is headed (the one mapping, :data:`workbench.analysis.words.COLUMNS`).
LABELS = words.COLUMNS


def label(column: str) -> str:
    """The plain label of ``column`` (:func:`workbench.analysis.words.column`).

    Examples
    --------
    >>> label("predicted_answer"), label("n_conversations"), label("turn")
    ('predicted answer', 'conversations', 'turn')
    """
    return words.column(column)


def _data_value(value: float) -> str:
    """The ``data-value`` of a numeric cell: the number unformatted, for sorting (empty for NaN)."""
    if math.isnan(value):
        return ""
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def _cell(value: Any, shown: Callable[[Any], str] | None = None) -> tuple[str, str, str]:
    """A cell as the table macro takes it: ``(kind, text, data-value)``; ``shown`` formats a number."""
    if value is None:
        return ("null", "", "")
    if isinstance(value, bool):
        return ("text", "yes" if value else "no", "")
    if isinstance(value, float):
        return ("num", shown(value) if shown else f"{value:.4g}", _data_value(value))
    if isinstance(value, int):
        return ("num", shown(value) if shown else formats.count(value), _data_value(value))
    text = str(value)
    if len(text) > SHORT_CHARS:
        return ("long", text[:SHORT_CHARS].rstrip() + "…", text)
    return ("text", text, "")


def _rows(frame: pl.DataFrame, how: Mapping[str, Callable[[Any], str]]) -> list[list[tuple[str, str, str]]]:
    shown_by = [how.get(c) for c in frame.columns]
    return [[_cell(v, f) for v, f in zip(row, shown_by, strict=True)] for row in frame.iter_rows()]


def _browse_note(shown: int, total: int, what: str = "rows") -> str:
    """The line under a notebook's first page of a longer table: where the other rows are."""
    return (
        f"The first {formats.count(shown)} of {formats.count(total)} {what}. The exported HTML report "
        "(workbench report) lists them all, with search, sort and pages."
    )


def first_page(
    frame: pl.DataFrame,
    *,
    caption: str = "",
    css_class: str = "wb-table",
    total: int | None = None,
    note: str | None = None,
    rows: int = GRID_ROWS,
    formats_by_column: Mapping[str, Callable[[Any], str]] | None = None,
    keys: int = 0,
) -> HtmlBlock:
    """The table a notebook shows of ``frame`` without the page's script: its first ``rows`` rows,
    each cell aligned by its own style (text left, numbers right) in a box that scrolls sideways,
    and one line saying how to browse the rest.

    Parameters
    ----------
    frame
        The rows, in order (only the first ``rows`` are read); columns headed through :func:`label`.
    caption, css_class, formats_by_column, keys
        As :func:`html_table` takes them.
    total
        How many rows there are in all (default: ``frame.height``); said in the line under the table.
    note
        That line (escaped); default: "The first 15 of 252 rows. The exported HTML report ... lists
        them all", when some rows are not shown, else none. ``""``: no line.
    rows
        How many rows to show.

    Returns
    -------
    HtmlBlock
        Its ``markup`` is this table (no page form); Jupyter shows it inside :data:`NO_MATHS`.

    Examples
    --------
    >>> block = first_page(pl.DataFrame({"record_id": [f"r{i}" for i in range(40)], "n": range(40)}), caption="Rows")
    >>> block.markup.count("<tr>"), "The first 15 of 40 rows." in block.markup
    (16, True)
    >>> '<td style="text-align:right' in block.markup and "text-align:left" in block.markup
    True
    """
    total = frame.height if total is None else total
    shown = frame.head(rows)
    if note is None:
        note = _browse_note(shown.height, total) if total > shown.height else ""
    markup = macro(
        "tables.html.j2",
        "nb_table",
        [label(c) for c in shown.columns],
        _rows(shown, formats_by_column or {}),
        caption,
        css_class,
        keys,
        note,
    )
    return HtmlBlock(str(markup))


def html_table(
    frame: pl.DataFrame,
    *,
    caption: str = "",
    css_class: str = "wb-table",
    max_rows: int | None = None,
    sortable: bool = False,
    formats_by_column: Mapping[str, Callable[[Any], str]] | None = None,
    keys: int = 0,
    row_keys: Sequence[str] | None = None,
    details: Markup | str = "",
    item: str = "",
    browse: str | None = None,
) -> HtmlBlock:
    """Render a frame as an escaped HTML table: the page's grid, and the notebook's first page.

    Parameters
    ----------
    frame
        The rows to show, in order. Column names are shown through :func:`label`.
    caption
        The table's caption (escaped).
    css_class
        The ``class`` attribute of the table (escaped).
    max_rows
        Put at most this many rows in the page, with a note saying how many there are
        (None: every row; the page's grid shows them a page at a time).
    sortable
        Mark the table ``data-wb-sortable``: the offline report makes it a data grid (search,
        sort, pages). A table of more than :data:`GRID_ROWS` rows is marked anyway. Numeric
        cells always carry their number in ``data-value``.
    formats_by_column
        How to show the numbers of some columns (e.g. :func:`workbench.analysis.formats.percent`);
        integers are counts with separators and other floats four significant digits by default.
    keys
        How many first columns name a row (kept in view when the table scrolls sideways).
    row_keys
        One turn key per row shown (:func:`workbench.views.turn_detail.turn_key`): a click on
        the row opens that turn's detail.
    details
        The turns' detail data (:func:`workbench.views.turn_detail.detail_script`), placed after the table.
    item
        What a row is, ``"turn"`` or ``"problem"`` (the words of the page's panel), or ``""``.
    browse
        The line under the notebook's first page of a longer table (default: where the others are,
        :func:`first_page`).

    Examples
    --------
    >>> html_table(pl.DataFrame({"a": ["<b>x</b>"]})).markup.count("&lt;b&gt;")
    1
    >>> markup = html_table(pl.DataFrame({"n": [0.123456], "n_turns": [1234]}), sortable=True).markup
    >>> "data-wb-sortable" in markup and '<td class="num" data-value="0.123456">0.1235</td>' in markup
    True
    >>> '<th scope="col">turns</th>' in markup and '<td class="num" data-value="1234">1,234</td>' in markup
    True
    >>> block = html_table(pl.DataFrame({"n": range(100)}))
    >>> block.markup.count("<tr>"), block.notebook.count("<tr>")
    (101, 16)
    """
    shown = frame if max_rows is None else frame.head(max_rows)
    how = formats_by_column or {}
    grid = sortable or frame.height > GRID_ROWS
    markup = macro(
        "tables.html.j2",
        "table",
        [label(c) for c in shown.columns],
        _rows(shown, how),
        caption,
        css_class,
        grid,
        max_rows,
        frame.height,
        keys,
        None if row_keys is None else list(row_keys)[: shown.height],
        details,
        item,
    )
    notebook = first_page(
        frame, caption=caption, css_class=css_class, note=browse, formats_by_column=how, keys=keys
    ).markup
    block = HtmlBlock(str(markup), notebook)
    block.frame = frame
    block.grid_options = {"caption": caption, "keys": keys, "formats_by_column": dict(how)}
    return block
