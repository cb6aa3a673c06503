"""Figures: a graded ``turns`` frame in, a plotly ``Figure`` out; no I/O.

Plotly draws trace names, tick labels, titles and hover text as a subset of HTML (``<a href>``
becomes a live link, ``<br>`` a line break) and, where MathJax is loaded, text between two
``$`` as TeX. Every string that comes from the data (system names, operations, slice groups,
error types, categories, titles built from them) goes through :func:`plot_text` before it
reaches a figure, so it shows as the characters it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

import plotly.graph_objects as go
import polars as pl

from workbench.analysis.metrics import accuracy_by
from workbench.analysis.slices import SLICES, group_order

__all__ = [
    "accuracy_by_turn",
    "accuracy_by_operation",
    "slice_accuracy",
    "error_heatmap",
    "flag_counts",
    "paired_differences",
    "plot_text",
]

_T = TypeVar("_T")

#: The characters plotly would read as markup (``&``, ``<``, ``>``) or TeX (``$``), as the
#: entities it shows as those characters. Quotes stay: plotly's text has no attributes to close.
#: Not the HTML renderer's escaping (:mod:`workbench.views.html`), which also spells quotes as
#: entities: a figure's text is plotly's own markup, not an HTML page.
_PLOT_ENTITIES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "$": "&#36;"})


def plot_text(value: _T) -> _T | str:
    """Text from the data as plotly must be given it to show it literally; anything that is
    not text (a turn number, ``None``) is returned as it is.

    ``&``, ``<`` and ``>`` become entities and ``$`` becomes ``&#36;`` (no tag, no TeX);
    plotly turns the entities back into the characters when it draws the text.

    Examples
    --------
    >>> plot_text('<a href="http://evil.example/">x</a> & $1')
    '&lt;a href="http://evil.example/"&gt;x&lt;/a&gt; &amp; &#36;1'
    >>> plot_text(3), plot_text(None)
    (3, None)
    """
    if not isinstance(value, str):
        return value
    return value.translate(_PLOT_ENTITIES)


def _texts(values: Iterable[Any]) -> list[Any]:
    """:func:`plot_text` of each value."""
    return [plot_text(v) for v in values]


_LAYOUT: dict[str, Any] = {"template": "plotly_white", "height": 380, "margin": {"l": 60, "r": 20, "t": 60, "b": 50}}
_ACCURACY_AXIS = {"title": "turn execution accuracy", "tickformat": ".0%", "range": [0, 1.02]}


def _accuracy_figure(turns: pl.DataFrame, by: str, trace: type, hover_prefix: str, **trace_args: Any) -> go.Figure:
    """One trace per system of accuracy by ``by``, with counts in the hover text."""
    table = accuracy_by(turns, by)
    fig = go.Figure()
    for system in dict.fromkeys(table["system"].to_list()):
        part = table.filter(pl.col("system") == system)
        fig.add_trace(
            trace(
                x=_texts(part[by].to_list()),
                y=part["turn_execution_accuracy"].to_list(),
                customdata=list(zip(part["n_correct"].to_list(), part["n_turns"].to_list(), strict=True)),
                name=plot_text(system),
                hovertemplate=hover_prefix
                + "%{y:.1%} (%{customdata[0]} of %{customdata[1]})<extra>%{fullData.name}</extra>",
                **trace_args,
            )
        )
    return fig


def accuracy_by_turn(turns: pl.DataFrame) -> go.Figure:
    """Turn execution accuracy by turn index, a line per system (error propagation)."""
    fig = _accuracy_figure(turns, "turn", go.Scatter, "turn %{x}: ", mode="lines+markers")
    fig.update_layout(
        title="Accuracy by turn index",
        xaxis_title="turn index (0 = first question)",
        yaxis=_ACCURACY_AXIS,
        **_LAYOUT,
    )
    return fig


def accuracy_by_operation(turns: pl.DataFrame) -> go.Figure:
    """Turn execution accuracy by the gold program's final operation, bars per system."""
    order = turns.group_by("operation").len().sort("len", "operation", descending=[True, False])["operation"].to_list()
    fig = _accuracy_figure(turns, "operation", go.Bar, "%{x}: ")
    fig.update_layout(
        title="Accuracy by operation (final step of the gold program)",
        barmode="group",
        xaxis={"title": "operation", "categoryorder": "array", "categoryarray": _texts(order)},
        yaxis=_ACCURACY_AXIS,
        **_LAYOUT,
    )
    return fig


def _interval_error(part: pl.DataFrame) -> dict[str, Any] | None:
    """Asymmetric error bars from ``low``/``high`` columns (none when they are null)."""
    if part["low"].is_null().all():
        return None
    acc = part["accuracy"]
    return {
        "type": "data",
        "symmetric": False,
        "array": (part["high"] - acc).fill_null(0.0).to_list(),
        "arrayminus": (acc - part["low"]).fill_null(0.0).to_list(),
        "thickness": 1.2,
        "width": 4,
    }


def slice_accuracy(table: pl.DataFrame, slice_name: str, *, title: str | None = None) -> go.Figure:
    """Accuracy by the groups of one slice, bars per system with bootstrap interval bars.

    ``table`` comes from :func:`workbench.analysis.slices.slice_accuracy`. Numeric slices (turn
    index, dependency distance) are drawn as lines, so a falling line shows errors carried
    from earlier turns.
    """

    part_all = table.filter(pl.col("slice") == slice_name)
    spec = SLICES.get(slice_name)
    sizes = part_all.group_by("group").agg(pl.col("n_turns").sum()).sort("n_turns", "group", descending=[True, False])
    order = group_order(slice_name, sizes["group"].to_list())
    numeric = spec is not None and spec.numeric
    fig = go.Figure()
    for system in dict.fromkeys(part_all["system"].to_list()):
        part = (
            part_all.filter(pl.col("system") == system)
            .with_columns(pl.col("group").replace_strict(order, list(range(len(order)))).alias("_order"))
            .sort("_order")
        )
        common: dict[str, Any] = {
            "x": _texts(part["group"].to_list()),
            "y": part["accuracy"].to_list(),
            "name": plot_text(system),
            "error_y": _interval_error(part),
            "customdata": list(
                zip(
                    part["n_correct"].to_list(),
                    part["n_turns"].to_list(),
                    part["low"].to_list(),
                    part["high"].to_list(),
                    strict=True,
                )
            ),
            "hovertemplate": "%{x}: %{y:.1%} (%{customdata[0]} of %{customdata[1]}; "
            "95% interval %{customdata[2]:.1%} to %{customdata[3]:.1%})<extra>%{fullData.name}</extra>",
        }
        fig.add_trace(go.Scatter(mode="lines+markers", **common) if numeric else go.Bar(**common))
    label = spec.title if spec else slice_name
    fig.update_layout(
        title=plot_text(
            title or f"Accuracy by {label.lower()} (bars: 95% bootstrap interval, clustered by conversation)"
        ),
        barmode="group",
        xaxis={"title": plot_text(label), "categoryorder": "array", "categoryarray": _texts(order), "type": "category"},
        yaxis=_ACCURACY_AXIS,
        **_LAYOUT,
    )
    return fig


def error_heatmap(turns: pl.DataFrame, *, system: str | None = None) -> go.Figure:
    """Wrong turns counted by error type (rows) and gold operation (columns), for one
    system or all systems together."""
    wrong = turns.filter(~pl.col("correct"))
    if system is not None:
        wrong = wrong.filter(pl.col("system") == system)
    counts = wrong.group_by(pl.col("error_type").cast(pl.String), "operation").len()
    # ties broken by name: group_by's order varies from run to run, the figure must not
    types = (
        counts.group_by("error_type")
        .agg(pl.col("len").sum())
        .sort("len", "error_type", descending=[True, False])["error_type"]
        .to_list()
    )
    ops = counts.group_by("operation").agg(pl.col("len").sum()).sort("len", "operation", descending=[True, False])
    ops = ops["operation"].to_list()
    lookup = {(t, o): n for t, o, n in counts.iter_rows()}
    z = [[lookup.get((t, o), 0) for o in ops] for t in types]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=_texts(ops),
            y=_texts(types),
            colorscale="Reds",
            text=z,
            texttemplate="%{text}",
            hovertemplate="%{y} on %{x}: %{z} wrong turns<extra></extra>",
            colorbar={"title": "wrong turns"},
        )
    )
    who = f" ({system})" if system else (" (all systems)" if turns["system"].n_unique() > 1 else "")
    fig.update_layout(
        title=plot_text(f"Error type by operation{who}"),
        xaxis_title="operation (final step of the gold program)",
        yaxis={"title": "error type", "autorange": "reversed"},
        **{**_LAYOUT, "height": max(320, 60 + 34 * len(types))},
    )
    return fig


def flag_counts(counts: pl.DataFrame) -> go.Figure:
    """Data-quality flags per category (``counts`` from :func:`workbench.quality.checks.flag_counts`)."""
    fig = go.Figure(
        go.Bar(
            x=_texts(counts["category"].cast(pl.String).to_list()),
            y=counts["n_turns"].to_list(),
            text=counts["n_turns"].to_list(),
            hovertemplate="%{x}: %{y} flagged turns<extra></extra>",
            marker_color="#b45309",
        )
    )
    fig.update_layout(
        title="Gold turns flagged per data-quality category",
        xaxis_title="category",
        yaxis_title="flagged turns",
        **_LAYOUT,
    )
    return fig


def paired_differences(comparison: pl.DataFrame, *, title: str = "") -> go.Figure:
    """A forest plot of paired accuracy differences (system A minus B) per slice group,
    with paired bootstrap intervals; ``comparison`` from
    :func:`workbench.analysis.comparison.compare_systems`."""
    rows = comparison.with_columns(pl.format("{}: {}", "slice", "group").alias("label"))
    fig = go.Figure(
        go.Scatter(
            x=rows["difference"].to_list(),
            y=_texts(rows["label"].to_list()),
            mode="markers",
            error_x={
                "type": "data",
                "symmetric": False,
                "array": (rows["high"] - rows["difference"]).fill_null(0.0).to_list(),
                "arrayminus": (rows["difference"] - rows["low"]).fill_null(0.0).to_list(),
            },
            customdata=list(zip(rows["n_turns"].to_list(), rows["mcnemar_p"].to_list(), strict=True)),
            hovertemplate="%{y}: %{x:+.1%} (%{customdata[0]} paired turns, McNemar p = %{customdata[1]:.3g})"
            "<extra></extra>",
        )
    )
    fig.add_vline(x=0, line_dash="dot", line_color="#888")
    fig.update_layout(
        title=plot_text(title or "Paired accuracy difference (95% paired bootstrap interval)"),
        xaxis={"title": "accuracy difference", "tickformat": "+.0%"},
        yaxis={"autorange": "reversed", "type": "category"},
        **{**_LAYOUT, "height": max(380, 40 + 22 * rows.height)},
    )
    return fig
