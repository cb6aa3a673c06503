"""Figures: a graded ``turns`` frame in, a plotly ``Figure`` out; no I/O."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
import polars as pl

from workbench.metrics import accuracy_by

__all__ = ["accuracy_by_turn", "accuracy_by_operation"]

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
                x=part[by].to_list(),
                y=part["turn_execution_accuracy"].to_list(),
                customdata=list(zip(part["n_correct"].to_list(), part["n_turns"].to_list(), strict=True)),
                name=system,
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
        xaxis={"title": "operation", "categoryorder": "array", "categoryarray": order},
        yaxis=_ACCURACY_AXIS,
        **_LAYOUT,
    )
    return fig
