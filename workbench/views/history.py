"""The history of a reports folder's runs as figures and a table (the ``05-history`` template, the
history section of ``index.html``); the tables come from :mod:`workbench.report.history`.

* :func:`accuracy_over_runs`: each system's accuracy run after run with its 95% interval; a run
  that differs from the system's run before (McNemar, Holm) is ringed in red, its hover naming
  the groups. Each point carries its run's report link as ``customdata`` and its trace the meta
  ``{"opens": "customdata"}``: the page's script (``static/plots.js``) opens the link on a click. The
  axis's ticks are plain numbers, not links: plotly drops a relative link on a page
  opened from a file, so the table's run numbers are the links that always work.
* :func:`slice_over_runs`: the same for each group of one slice, a small chart per group (two
  columns), the groups of fewer than :data:`~workbench.analysis.slices.MIN_GROUP_N` items left out
  and said so.
* :func:`runs_table`: one row per run and system, newest first, the run's number a link to its report.
* :func:`index_section`: the history section of ``index.html``.

Every text from the data (system names, groups) goes through :func:`~workbench.views.plots.plot_text`
in a figure and through the autoescaping renderer in the markup.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from workbench.analysis import formats, words
from workbench.analysis.slices import MIN_GROUP_N, OVERALL, in_reading_order, slice_title
from workbench.views.blocks import HtmlBlock, first_page
from workbench.views.html import Markup, macro
from workbench.views.plots import no_data, plot_text, styled

__all__ = ["accuracy_over_runs", "slice_over_runs", "runs_table", "index_section", "p_text"]

_COLORS = ("#2563eb", "#ea580c", "#059669", "#7c3aed", "#db2777", "#0891b2", "#65a30d", "#9333ea")
_MARK = "#dc2626"
_LAYOUT: dict[str, Any] = {"template": "plotly_white", "margin": {"l": 56, "r": 16, "t": 96, "b": 56}}


def _hover(row: Mapping[str, Any], system: str, where: str, marked: str) -> str:
    lines = [
        f"<b>{plot_text(system)}</b>",
        f"run {row['run']}, {plot_text(str(row['created_at'])[:16].replace('T', ' '))}",
        f"{plot_text(where)}: {formats.interval(row['accuracy'], row['low'], row['high'])}",
        f"n = {formats.count(row['n_turns'])}",
    ]
    if marked:
        lines.append(f"<b>differs from the run before</b>: {plot_text(marked)}")
    return "<br>".join(lines)


def _traces(
    part: pl.DataFrame,
    marked: Mapping[tuple[int, str], str],
    *,
    system: str,
    color: str,
    where: str,
    legend: bool,
    shift: float = 0.0,
    links: Mapping[int, str] | None = None,
) -> list[go.Scatter]:
    """A system's line with interval bars, and its marked runs ringed (when there are any);
    ``shift``: how far right of its run each point is drawn (the systems' bars side by side);
    ``links``: each run's report, kept as the point's ``customdata``."""
    rows = part.sort("run").to_dicts()
    hrefs = [(links or {}).get(r["run"], "") for r in rows]
    hovers = [
        _hover(r, system, where, marked.get((r["run"], system), ""))
        + ("<br><i>click: open its report</i>" if h else "")
        for r, h in zip(rows, hrefs, strict=True)
    ]
    opens = {"opens": "customdata"} if any(hrefs) else None
    line = go.Scatter(
        x=[r["run"] + shift for r in rows],
        y=[r["accuracy"] for r in rows],
        error_y={
            "type": "data",
            "symmetric": False,
            "array": [max(0.0, (r["high"] if r["high"] is not None else r["accuracy"]) - r["accuracy"]) for r in rows],
            "arrayminus": [
                max(0.0, r["accuracy"] - (r["low"] if r["low"] is not None else r["accuracy"])) for r in rows
            ],
            "thickness": 1.2,
            "width": 3,
            "color": color,
        },
        mode="lines+markers",
        name=plot_text(system),
        legendgroup=plot_text(system),
        showlegend=legend,
        line={"color": color, "width": 2},
        marker={"color": color, "size": 7},
        hovertext=hovers,
        hovertemplate="%{hovertext}<extra></extra>",
        customdata=hrefs,
        meta=opens,
    )
    ringed = [(r, h, link) for r, h, link in zip(rows, hovers, hrefs, strict=True) if (r["run"], system) in marked]
    if not ringed:
        return [line]
    ring = go.Scatter(
        x=[r["run"] + shift for r, _, _ in ringed],
        y=[r["accuracy"] for r, _, _ in ringed],
        mode="markers",
        name="differs from the run before",
        legendgroup="marked",
        showlegend=False,
        marker={"symbol": "circle-open", "size": 17, "color": _MARK, "line": {"width": 3, "color": _MARK}},
        hovertext=[h for _, h, _ in ringed],
        hovertemplate="%{hovertext}<extra></extra>",
        customdata=[link for _, _, link in ringed],  # the ring is drawn over the point: a click lands on it
        meta=opens,
    )
    return [line, ring]


def p_text(p: float | None) -> str:
    """A p-value in a sentence: ``p = 0.012``, ``p < 0.001``.

    Examples
    --------
    >>> p_text(0.0123), p_text(0.00001)
    ('p = 0.012', 'p < 0.001')
    """
    shown = formats.p_value(p)
    return f"p {shown}" if shown.startswith("<") else f"p = {shown}"


def _marked(marks: pl.DataFrame, slice_name: str | None, group: str | None = None) -> dict[tuple[int, str], str]:
    """For each (run, system) ringed: the groups where it differs, in words. ``slice_name`` None:
    every group (the overall chart rings a run that differs anywhere); else that slice's groups
    (``group``: that group's only)."""
    said: dict[tuple[int, str], list[str]] = {}
    for m in marks.iter_rows(named=True):
        if slice_name is not None and (m["slice"] != slice_name or (group is not None and m["group"] != group)):
            continue
        where = "overall" if m["slice"] == OVERALL else f"{slice_title(m['slice']).lower()} {m['group']}"
        text = f"{where} {formats.percent(m['accuracy_before'])} -> {formats.percent(m['accuracy_now'])}"
        said.setdefault((m["run"], m["system"]), []).append(f"{text} ({p_text(m['p_holm'])})")
    return {key: "; ".join(texts) for key, texts in said.items()}


def _shift(index: int, count: int) -> float:
    """Where the ``index``-th of ``count`` systems is drawn beside its run (0.12 runs apart)."""
    return (index - (count - 1) / 2) * 0.12


def _run_ticks(runs: Sequence[int]) -> dict[str, Any]:
    """The x axis: a tick per run (every few runs when there are many)."""
    step = 1 if len(runs) <= 16 else math.ceil(len(runs) / 16)
    shown = list(runs)[::step]
    return {"title": "run (oldest first)", "tickmode": "array", "tickvals": shown, "ticktext": [str(r) for r in shown]}


def _y_range(part: pl.DataFrame) -> list[float]:
    values = [v for c in ("low", "high", "accuracy") for v in part[c].drop_nulls().to_list()]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    pad = max(0.02, (high - low) * 0.08)
    return [max(0.0, math.floor((low - pad) * 20) / 20), min(1.0, math.ceil((high + pad) * 20) / 20)]


def _run_links(over: pl.DataFrame, links: Mapping[str, str]) -> dict[int, str]:
    return {run: links.get(run_id, "") for run, run_id in over.select("run", "run_id").unique().iter_rows()}


def accuracy_over_runs(over: pl.DataFrame, marks: pl.DataFrame, links: Mapping[str, str] | None = None) -> go.Figure:
    """Each system's accuracy run after run, with 95% intervals; a run that differs from the
    system's run before in any group is ringed (the hover names the groups).

    ``over`` and ``marks`` come from :func:`workbench.report.history.over_runs` and
    :func:`~workbench.report.history.run_changes`; ``links``: each run's report by run id
    (:attr:`workbench.report.history.History.links`).
    """
    part = over.filter(pl.col("slice") == OVERALL)
    if part.is_empty():
        return no_data("Accuracy over runs", "The ledger holds no run to show.")
    marked = _marked(marks, None)
    fig = go.Figure()
    systems = list(dict.fromkeys(part["system"].to_list()))
    hrefs = _run_links(over, links or {})
    for i, system in enumerate(systems):
        mine = part.filter(pl.col("system") == system)
        color, shift = _COLORS[i % len(_COLORS)], _shift(i, len(systems))
        for trace in _traces(
            mine, marked, system=system, color=color, where="accuracy", legend=True, shift=shift, links=hrefs
        ):
            fig.add_trace(trace)
    n_runs = part["run"].n_unique()
    subtitle = (
        f"{n_runs} runs. Bars: 95% interval. Ringed in red: the run differs from the system's run before "
        "(paired McNemar, Holm). A click on a point, or a run's number in the table below, opens its report."
    )
    styled(
        fig,
        title={"text": "Accuracy over runs", "subtitle": {"text": _wrap(subtitle)}, "y": 0.97, "yanchor": "top"},
        xaxis=_run_ticks(sorted(part["run"].unique().to_list())),
        yaxis={"title": "answered correctly", "tickformat": ".0%", "range": _y_range(part)},
        legend={"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0},
        hovermode="closest",
        height=460,
        **{**_LAYOUT, "margin": {**_LAYOUT["margin"], "b": 96}},
    )
    return fig


def _wrap(text: str, width: int = 64) -> str:
    import textwrap

    return "<br>".join(textwrap.wrap(text, width, break_long_words=False))


def slice_over_runs(over: pl.DataFrame, marks: pl.DataFrame, slice_name: str) -> go.Figure:
    """Accuracy over runs for each group of one slice, a small chart per group (two columns), each
    system a line with its intervals, the marked runs ringed; groups of fewer than
    :data:`MIN_GROUP_N` items in the newest run are left out (and named)."""
    label = slice_title(slice_name)
    heading = f"Accuracy over runs by {label.lower()}"
    part = over.filter(pl.col("slice") == slice_name)
    if part.is_empty():
        return no_data(heading, f"There is no {label.lower()} in these runs.")
    newest = part.filter(pl.col("run") == pl.col("run").max().over("system"))
    sizes = newest.group_by("group").agg(pl.col("n_turns").min().alias("n_turns"), pl.col("slice").first())
    ordered = in_reading_order(sizes.with_columns(pl.lit("x").alias("system")))["group"].to_list()
    groups = [g for g in ordered if sizes.filter(pl.col("group") == g)["n_turns"][0] >= MIN_GROUP_N]
    small = [g for g in ordered if g not in groups]
    if not groups:
        return no_data(heading, f"Every {label.lower()} group has fewer than {MIN_GROUP_N} items: too few to follow.")
    if len(ordered) == 1 and ordered[0] in ("none", "n/a"):
        return no_data(heading, f"There is no {label.lower()} in these runs (every item: {ordered[0]}).")
    cols = 2 if len(groups) > 1 else 1
    rows = math.ceil(len(groups) / cols)
    names = [plot_text(f"{words.plain(g)} (n = {formats.count(_size(sizes, g))})") for g in groups]
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=names, shared_xaxes=True, vertical_spacing=0.5 / rows)
    fig.update_annotations(font_size=13)
    systems = list(dict.fromkeys(part["system"].to_list()))
    for index, group in enumerate(groups):
        mine = part.filter(pl.col("group") == group)
        marked_here = _marked(marks, slice_name, group)
        for i, system in enumerate(systems):
            where = f"{label.lower()} {words.plain(group)}"
            for trace in _traces(
                mine.filter(pl.col("system") == system),
                marked_here,
                system=system,
                color=_COLORS[i % len(_COLORS)],
                where=where,
                legend=index == 0,
                shift=_shift(i, len(systems)),
            ):
                fig.add_trace(trace, row=index // cols + 1, col=index % cols + 1)
        fig.update_yaxes(range=_y_range(mine), tickformat=".0%", row=index // cols + 1, col=index % cols + 1)
    runs = sorted(part["run"].unique().to_list())
    step = 1 if len(runs) <= 8 else math.ceil(len(runs) / 6)
    fig.update_xaxes(
        tickmode="array", tickvals=runs[::step], ticktext=[str(r) for r in runs[::step]], showticklabels=True
    )
    left_out = (
        f" Groups of under {MIN_GROUP_N} items left out: {', '.join(plot_text(words.plain(g)) for g in small)}."
        if small
        else ""
    )
    subtitle = (
        f"Each chart: one group, runs oldest first, 95% intervals; ringed: differs from the run before.{left_out}"
    )
    plots = 210 * rows
    height = plots + 220
    styled(
        fig,
        title={
            "text": plot_text(heading),
            "subtitle": {"text": _wrap(subtitle)},
            "y": 1 - 14 / height,
            "yanchor": "top",
        },
        legend={"orientation": "h", "yanchor": "top", "y": -36 / plots, "x": 0},
        hovermode="closest",
        height=height,
        **{**_LAYOUT, "margin": {**_LAYOUT["margin"], "t": 110, "b": 110}},
    )
    return fig


def _size(sizes: pl.DataFrame, group: str) -> int:
    return int(sizes.filter(pl.col("group") == group)["n_turns"][0])


def runs_table(table: pl.DataFrame) -> HtmlBlock:
    """One row per run and system (:func:`workbench.report.history.runs`), newest first: the run's
    number links to its report; accuracy with its 95% interval; the change since the system's run
    before in points; the items newly failing and newly passing; where the run differs."""
    if table.is_empty():
        return HtmlBlock(str(macro("tables.html.j2", "note", "No runs to list.")))
    shown = table.select(
        "run",
        "date",
        "system",
        pl.struct("accuracy", "low", "high")
        .map_elements(lambda r: formats.interval(r["accuracy"], r["low"], r["high"]), return_dtype=pl.String)
        .alias("accuracy"),
        pl.col("change").map_elements(formats.points, return_dtype=pl.String, skip_nulls=True),
        "newly_failing",
        "newly_passing",
        pl.col("differs").fill_null(""),
    )
    rows = [
        {
            "run": run,
            "href": href,
            "cells": [_text(v) for v in values],
        }
        for (run, *values), href in zip(shown.iter_rows(), table["href"].to_list(), strict=True)
    ]
    headings = [
        "run",
        "date",
        "system",
        "accuracy [95% interval]",
        "change",
        "newly failing",
        "newly passing",
        "differs from the run before (McNemar, Holm)",
    ]
    wrapped = [headings.index("system"), headings.index("differs from the run before (McNemar, Holm)")]
    markup = macro("history.html.j2", "runs_table", headings, rows, "Runs, newest first", wrapped)
    notebook = first_page(shown, caption="Runs, newest first", keys=1).markup
    block = HtmlBlock(str(markup), notebook)
    block.frame = shown
    block.grid_options = {"caption": "Runs, newest first", "keys": 1}
    return block


def _text(value: Any) -> tuple[str, str]:
    """A cell: (kind, text); numbers right-aligned."""
    if value is None or value == "":
        return ("null", "")
    if isinstance(value, int):
        return ("num", formats.count(value))
    return ("text", str(value))


def index_section(systems: Sequence[Mapping[str, Any]], history_href: str = "") -> Markup:
    """The history section of ``index.html``: per system its last runs' headline accuracy (a link to
    each run's report), the trend since the run before, and a link to the history page."""
    return macro("history.html.j2", "index_section", list(systems), history_href)
