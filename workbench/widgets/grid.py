"""The failed turns in a live JupyterLab kernel: a grid paged from the kernel, the turn's panel, linked plots.

Why a kernel-side grid on anywidget (https://anywidget.dev) rather than itables, ipydatagrid or
more hand-written page script: the kernel holds every failed row of a run (25,894 of a
105,520-turn run; a page holds at most 2,000), so the grid must page, search and sort *in the
kernel* and send one page at a time. itables' widget sends the whole table to the browser (and
downsamples a large one), ipydatagrid also ships every row and draws on a canvas whose cells
MathJax and screen readers never see. anywidget is the small, well-kept base plotly 6's own
``FigureWidget`` stands on (already installed with plotly); our front end is one short module
(``static/grid.js``) that draws the page it is sent with ``textContent`` only.

:class:`Grid` is any polars frame, a page at a time: search (every column, case-insensitive),
sort by any column (a header click; again for descending), pages of 10/25/50/100 rows, the first
columns that name a row kept in view when the table scrolls sideways, a long text shortened with
the whole text one click away, and a row click that selects it (``selected``).

:class:`FailedTurns` is the failed turns of a run (the columns and plain words of the page's
failed-turns table, :func:`workbench.views.tables.failed_turns`) in a grid, with the failed-turn
panel (:class:`workbench.widgets.turn_panel.TurnPanel`: document, conversation, programs and traces,
policies, flags, raw output, Previous and Next, and Annotate) under it. :meth:`FailedTurns.linked`
makes an accuracy plot a ``FigureWidget`` whose clicks filter the grid to the clicked group; one
line above the grid names the filter, with a button that clears it. :meth:`FailedTurns.by_group`
is the drill-down of one slice: a menu of its groups (with their counts) over the same grid.

What a notebook shows without a live kernel (reopened later, untrusted, or on GitHub): the
output also carries a ``text/html`` table of the first :data:`FIRST_PAGE` rows, text left-aligned,
and one line saying how to browse the rest; the exported report page takes the page's own grid
markup (up to ``limit`` rows with their detail) from :data:`PAGE_MIME`, which JupyterLab ignores.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
import ipywidgets as widgets
import polars as pl
import traitlets

from workbench.analysis import formats, words
from workbench.analysis.slices import SLICES, group_order
from workbench.analysis.words import plain as plain_label
from workbench.errors import WorkbenchError
from workbench.views import blocks, html, tables

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from workbench.annotations.store import AnnotationStore
    from workbench.pipeline.run import Run

__all__ = ["FIRST_PAGE", "PAGE_MIME", "Grid", "FailedTurns", "LiveTable", "failed_turns", "drilldown", "live"]

logger = logging.getLogger(__name__)

#: The MIME type of an output's markup for the exported report page (the page's own grid and
#: panel data); the report prefers it to ``text/html``, JupyterLab has no renderer for it.
PAGE_MIME = html.PAGE_MIME

#: Rows in the ``text/html`` table a notebook shows without a live kernel.
FIRST_PAGE = tables.GRID_ROWS

#: The grid's page sizes; the first page shows :data:`PAGE_SIZE` rows.
PAGE_SIZE = 25

_STATIC = resources.files("workbench.widgets") / "static"

#: Internal columns of a grid's frame: the row key, the row's position, the searched text.
_KEY, _ROW, _HAY = "__key", "__row", "__hay"


def _cell(value: Any, shown: Callable[[Any], str] | None = None) -> list[Any]:
    """A cell as ``grid.js`` draws it, ``[text, whole text or None]`` (text None: missing), made
    by the page table's own cell rule (:mod:`workbench.views.blocks`): the same formats and cuts."""
    kind, text, whole = blocks._cell(value, shown)
    if kind == "null":
        return [None, None]
    return [text, whole if kind == "long" else None]


class Grid(anywidget.AnyWidget):  # type: ignore[misc]
    """A polars frame in a live kernel, one page at a time (search, sort, pages, a selected row).

    Parameters
    ----------
    frame
        The rows, in order, with the columns to show (named as in the package's tables; headed
        through :func:`workbench.views.tables.label`).
    row_keys
        One key per row (a turn key, :func:`workbench.views.turn_detail.turn_key`); ``selected``
        holds the key of the row clicked.
    keys
        How many first columns name a row (kept in view when the table scrolls sideways).
    caption, items
        The grid's caption, and what its rows are ("failed turns", "failed problems").
    formats_by_column
        How the numbers of some columns show (as the page's table shows them); others are counts
        with separators or four significant digits.

    Examples
    --------
    >>> g = Grid(pl.DataFrame({"record_id": ["b", "a", "c"], "turn": [0, 2, 1]}), row_keys=["1", "2", "3"])
    >>> g.total, [row[0] for row in g.rows]
    (3, ['1', '2', '3'])
    >>> g.sort = "turn"; [row[0] for row in g.rows]
    ['1', '3', '2']
    >>> g.query = "A"; g.total, g.rows[0][1][0]
    (1, ['a', None])
    """

    _esm = _STATIC / "grid.js"
    _css = _STATIC / "grid.css"

    columns = traitlets.List().tag(sync=True)
    rows = traitlets.List().tag(sync=True)
    total = traitlets.Int(0).tag(sync=True)
    all_rows = traitlets.Int(0).tag(sync=True)
    page = traitlets.Int(0).tag(sync=True)
    page_size = traitlets.Int(PAGE_SIZE).tag(sync=True)
    sort = traitlets.Unicode("").tag(sync=True)
    descending = traitlets.Bool(False).tag(sync=True)
    query = traitlets.Unicode("").tag(sync=True)
    filter_text = traitlets.Unicode("").tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    caption = traitlets.Unicode("").tag(sync=True)
    items = traitlets.Unicode("rows").tag(sync=True)
    empty_text = traitlets.Unicode("").tag(sync=True)
    selectable = traitlets.Bool(True).tag(sync=True)

    def __init__(
        self,
        frame: pl.DataFrame,
        *,
        row_keys: Sequence[str],
        keys: int = 0,
        caption: str = "",
        items: str = "rows",
        formats_by_column: Mapping[str, Callable[[Any], str]] | None = None,
        **kwargs: Any,
    ) -> None:
        if len(row_keys) != frame.height:
            raise ValueError(f"a grid needs one key per row: {len(row_keys)} keys for {frame.height} rows")
        shown = frame.columns
        self._frame = frame.with_columns(
            pl.Series(_KEY, list(row_keys), dtype=pl.String),
            pl.int_range(pl.len(), dtype=pl.Int64).alias(_ROW),
            pl.concat_str([pl.col(c).cast(pl.String) for c in shown], separator="\u241f", ignore_nulls=True)
            .str.to_lowercase()
            .alias(_HAY),
        )
        self._shown = shown
        self._formats = [(formats_by_column or {}).get(c) for c in shown]
        self._mask: pl.Series | None = None
        self._view = self._frame
        columns = [
            {
                "name": c,
                "label": tables.label(c),
                "kind": "num" if frame.schema[c].is_numeric() else "text",
                "key": i < keys,
            }
            for i, c in enumerate(shown)
        ]
        super().__init__(columns=columns, caption=caption, items=items, all_rows=frame.height, **kwargs)
        self.empty_text = f"No {items} to show."
        self._refresh()

    # ------------------------------------------------------------------ the kernel's side
    @traitlets.observe("page", "page_size", "sort", "descending", "query")
    def _on_change(self, change: dict[str, Any]) -> None:
        self._refresh(reorder=change["name"] != "page")

    def _refresh(self, *, reorder: bool = True) -> None:
        """Filter, search and sort the frame (unless only the page moved), then send the page."""
        if reorder:
            view = self._frame if self._mask is None else self._frame.filter(self._mask)
            words = self.query.strip().lower().split()
            if words:
                view = view.filter(pl.all_horizontal(pl.col(_HAY).str.contains(w, literal=True) for w in words))
            if self.sort in self._shown:
                view = view.sort(self.sort, _ROW, descending=[self.descending, False], nulls_last=True)
            self._view = view
            self.total = view.height
        last = max(0, (self.total - 1) // max(1, self.page_size))
        if self.page > last:
            self.page = last  # observed: sends that page
            return
        start = self.page * self.page_size
        part = self._view.slice(start, self.page_size)
        self.rows = [
            [key, [_cell(v, f) for v, f in zip(values, self._formats, strict=True)]]
            for key, *values in part.select(_KEY, *self._shown).iter_rows()
        ]

    def set_filter(self, mask: pl.Series | None, text: str = "") -> None:
        """Show only the rows where ``mask`` (one boolean per row of the frame) is true, and name
        the filter in the line above the grid (``mask`` None: every row)."""
        self._mask = mask
        self.filter_text = text if mask is not None else ""
        self.page = 0
        self._refresh()

    def keys_in_order(self) -> list[str]:
        """The keys of the rows the grid shows (filter, search and sort applied), in order."""
        return self._view[_KEY].to_list()

    def select(self, key: str) -> None:
        """Select the row of ``key`` and show the page that holds it."""
        keys = self.keys_in_order()
        if key in keys:
            self.page = keys.index(key) // max(1, self.page_size)
        self.selected = key

    def step(self, delta: int) -> None:
        """Select the row ``delta`` rows after (before, when negative) the selected one, in the grid's order."""
        keys = self.keys_in_order()
        if not keys:
            return
        at = keys.index(self.selected) if self.selected in keys else -1
        self.select(keys[min(max(0, at + delta), len(keys) - 1)])


class FailedTurns(widgets.VBox):  # type: ignore[misc]
    """The failed turns of a run in a live kernel: the grid, and the selected turn's panel under it.

    Parameters
    ----------
    run
        The graded run.
    store, annotator
        Where the panel's Annotate writes (the annotation store the template names; empty: the
        default store) and under whose name.
    limit
        The exported page's grid holds at most this many rows (the kernel's grid has them all).
    slice_name
        Make it the drill-down of this slice (:data:`workbench.analysis.slices.SLICES`): a menu
        of the slice's groups, with their counts, filters the grid.
    """

    def __init__(
        self,
        run: Run,
        *,
        store: str | Path | AnnotationStore | None = None,
        annotator: str = "analyst",
        limit: int | None = None,
        slice_name: str = "",
    ) -> None:
        self.run = run
        self.limit = limit
        self.slice_name = slice_name
        _, failed = tables._failed(run)
        item = run.item
        self._item = item
        only, note = tables._DRILL_ONLY.get(slice_name, (None, "")) if slice_name else (None, "")
        note = note.format(item=item)
        if only is not None:
            failed = failed.filter(SLICES[slice_name].expr.cast(pl.String).is_in(list(only)))
            if not failed.height:
                note = f"The grading policies agree on every failed {item}: none to list by {SLICES[slice_name].title.lower()}."
        self._failed = failed
        self._dropped = tables._dropped(failed)
        self._items = f"failed {words.items(item)}"
        shown = tables._failed_columns(failed, dropped=self._dropped)
        keys = tables._turn_keys(failed)
        caption = f"{self._items.capitalize()} ({formats.count(failed.height)})"
        self.grid = Grid(
            shown,
            row_keys=keys,
            keys=2 if "turn" in self._dropped else 3,
            caption=note if slice_name else caption,
            items=self._items,
        )
        self._store = store
        self._annotator = annotator
        self._panel: Any = None
        self.panel_box = widgets.VBox()
        self.errors = widgets.Output()
        self.grid.observe(self._on_select, names="selected")
        self.grid.on_msg(self._on_message)
        children: list[widgets.Widget] = [self.grid, self.panel_box, self.errors]
        self.groups: widgets.Dropdown | None = None
        if slice_name:
            self.groups = self._group_menu(slice_name)
            children.insert(0, self.groups)
        super().__init__(children=children)
        self.add_class("tex2jax_ignore")
        self.add_class("mathjax_ignore")

    # ------------------------------------------------------------------ groups and filters
    def _group_values(self, slice_name: str) -> pl.Series:
        spec = SLICES[slice_name]
        return self._failed.select(spec.expr.cast(pl.String).alias("g"))["g"]

    def _group_menu(self, slice_name: str) -> widgets.Dropdown:
        values = self._group_values(slice_name)
        counts = dict(values.value_counts().iter_rows())
        order = group_order(slice_name, list(counts), counts)
        options = [(f"Every group ({words.counted(values.len(), f'failed {self._item}')})", "")]
        options += [(f"{plain_label(str(g))} ({formats.count(counts[g])})", str(g)) for g in order]
        menu = widgets.Dropdown(
            options=options, value="", description=f"{SLICES[slice_name].title}:", layout={"width": "auto"}
        )
        menu.style.description_width = "initial"
        menu.observe(lambda change: self.show_group(slice_name, change["new"]), names="value")
        return menu

    def show_group(self, slice_name: str, group: str) -> None:
        """Filter the grid to the failed rows of ``group`` of ``slice_name`` ("" clears the filter)."""
        if not group:
            self.clear_filter()
            return
        mask = self._group_values(slice_name) == group
        n = int(mask.sum())
        where = f"where {SLICES[slice_name].title.lower()} is {plain_label(group)}"
        text = f"Showing the {words.counted(n, f'failed {self._item}')} {where}."
        self.grid.set_filter(mask, text)
        if self.groups is not None and slice_name == self.slice_name and self.groups.value != group:
            self.groups.value = group

    def clear_filter(self) -> None:
        """Show every failed row again."""
        self.grid.set_filter(None)
        if self.groups is not None and self.groups.value != "":
            self.groups.value = ""

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "clear_filter":
            with self.errors:
                self.clear_filter()

    # ------------------------------------------------------------------ the panel
    def panel(self) -> Any:
        """The failed-turn panel (made at the first selection)."""
        if self._panel is None:
            from workbench.widgets.turn_panel import TurnPanel

            self._panel = TurnPanel(self.run, store=self._store, annotator=self._annotator)
            self._panel.navigate = self.grid.step
            self.panel_box.children = (self._panel.widget,)
        return self._panel

    def _on_select(self, change: dict[str, Any]) -> None:
        key = change["new"]
        if not key:
            return
        system, record_id, turn = json.loads(key)
        keys = self.grid.keys_in_order()
        position = (keys.index(key), len(keys)) if key in keys else None
        try:
            panel = self.panel()
        except WorkbenchError as exc:  # the template's store: a bad path or URL, one line under the grid
            self.errors.clear_output()
            with self.errors:
                print(f"The panel cannot open: {exc}")
            return
        with self.errors:
            panel.show((system, record_id, int(turn)), position=position)

    def open_turn(self, key: str) -> None:
        """Select the row of ``key`` (a turn key) and open its panel."""
        self.grid.select(key)

    # ------------------------------------------------------------------ linked plots
    def linked(self, figure: go.Figure, slice_name: str) -> Any:
        """``figure`` (an accuracy plot by the groups of ``slice_name``) as a widget whose clicks
        filter the grid to the clicked group. A figure with no data is returned as it is."""
        if not figure.data:
            return figure
        from workbench.widgets.figures import LinkedFigure

        groups = self._group_values(slice_name).unique().drop_nulls().to_list()
        by_label = {plain_label(g): g for g in groups} | {g: g for g in groups}

        def clicked(_trace: Any, points: Any, _state: Any) -> None:
            if not points.point_inds:
                return
            with self.errors:
                label = str(points.xs[0])
                self.show_group(slice_name, by_label.get(label, label))

        return LinkedFigure(figure, on_click=clicked)

    # ------------------------------------------------------------------ without a kernel, and the page
    def _first_page_html(self) -> str:
        total = self._failed.height
        if total > FIRST_PAGE:
            line = (
                f"The first {formats.count(FIRST_PAGE)} of {formats.count(total)} {self._items}. To browse, search and sort "
                "them all and open each one, run the notebook in JupyterLab with a live kernel (Run All), "
                "or open its exported HTML report."
            )
        else:
            line = "Run the notebook in JupyterLab with a live kernel (Run All) to sort, search and open each row."
        return tables.first_page(
            tables._failed_columns(self._failed.head(FIRST_PAGE), dropped=self._dropped),
            caption=self.grid.caption or f"{self._items.capitalize()} ({formats.count(total)})",
            css_class="wb-table wb-failed",
            total=total,
            note=line,
            rows=FIRST_PAGE,
            keys=2 if "turn" in self._dropped else 3,
        ).markup

    def _page_html(self) -> str:
        if self.slice_name:
            return tables.drilldown(self.run, self.slice_name, limit=self.limit).markup
        return tables.failed_turns(self.run, limit=self.limit).markup

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle: dict[str, Any] = dict(super()._repr_mimebundle_(**kwargs) or {})
        bundle["text/html"] = tables.no_maths(self._first_page_html())
        bundle[PAGE_MIME] = self._page_html()
        return bundle

    def __repr__(self) -> str:
        return f"FailedTurns({self._failed.height} {self._items}{', by ' + self.slice_name if self.slice_name else ''})"


def failed_turns(
    run: Run,
    *,
    store: str | Path | AnnotationStore | None = None,
    annotator: str = "analyst",
    limit: int | None = None,
) -> FailedTurns:
    """Every failed turn of ``run`` in a live grid with the turn panel (see :class:`FailedTurns`)."""
    return FailedTurns(run, store=store, annotator=annotator, limit=limit)


def drilldown(
    run: Run,
    slice_name: str,
    *,
    store: str | Path | AnnotationStore | None = None,
    annotator: str = "analyst",
    limit: int | None = None,
) -> FailedTurns:
    """The failed turns of ``run`` by the groups of ``slice_name``: a menu of groups over the live grid."""
    return FailedTurns(run, store=store, annotator=annotator, limit=limit, slice_name=slice_name)


class LiveTable(widgets.VBox):  # type: ignore[misc]
    """A table of the package (:func:`workbench.views.tables.html_table`'s block) as a grid in a
    live kernel: the same columns, labels and number formats, paged, searched and sorted; without
    a kernel and on the page, the block's own forms (its first page; the page's grid)."""

    def __init__(self, block: tables.HtmlBlock) -> None:
        self.block = block
        frame, options = block.frame, block.grid_options
        self.grid = Grid(
            frame,
            row_keys=[str(i) for i in range(frame.height)],
            keys=int(options.get("keys", 0)),
            caption=str(options.get("caption", "")),
            items=str(options.get("items", "rows")),
            formats_by_column=options.get("formats_by_column"),
            selectable=False,
        )
        super().__init__(children=[self.grid])
        self.add_class("tex2jax_ignore")
        self.add_class("mathjax_ignore")

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle: dict[str, Any] = dict(super()._repr_mimebundle_(**kwargs) or {})
        bundle.update(self.block._repr_mimebundle_())
        return bundle


def live(block: Any) -> Any:
    """``block`` (a table of :mod:`workbench.views.tables`) as a :class:`LiveTable` when it has more
    than :data:`~workbench.views.tables.GRID_ROWS` rows, else as it is (a short table, a sentence,
    nothing)."""
    frame = getattr(block, "frame", None)
    if isinstance(frame, pl.DataFrame) and frame.height > tables.GRID_ROWS:
        return LiveTable(block)
    return block
