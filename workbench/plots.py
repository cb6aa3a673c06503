"""Figures: a graded ``turns`` frame in, a plotly ``Figure`` out; no I/O."""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl

from workbench.metrics import accuracy_by

__all__ = ["accuracy_by_turn", "accuracy_by_operation"]

_LAYOUT = {"template": "plotly_white", "height": 380, "margin": {"l": 60, "r": 20, "t": 60, "b": 50}}


def accuracy_by_turn(turns: pl.DataFrame) -> go.Figure:
    """Turn execution accuracy by turn index, a line per system (error propagation)."""
    table = accuracy_by(turns, "turn")
    fig = go.Figure()
    for system in dict.fromkeys(table["system"].to_list()):
        part = table.filter(pl.col("system") == system)
        fig.add_trace(
            go.Scatter(
                x=part["turn"].to_list(),
                y=part["turn_execution_accuracy"].to_list(),
                customdata=list(zip(part["n_correct"].to_list(), part["n_turns"].to_list(), strict=True)),
                mode="lines+markers",
                name=system,
                hovertemplate="turn %{x}: %{y:.1%} (%{customdata[0]} of %{customdata[1]})<extra>%{fullData.name}</extra>",
            )
        )
    fig.update_layout(
        title="Accuracy by turn index",
        xaxis_title="turn index (0 = first question)",
        yaxis={"title": "turn execution accuracy", "tickformat": ".0%", "range": [0, 1.02]},
        **_LAYOUT,
    )
    return fig


def accuracy_by_operation(turns: pl.DataFrame) -> go.Figure:
    """Turn execution accuracy by the gold program's final operation, bars per system."""
    table = accuracy_by(turns, "operation")
    order = (
        table.group_by("operation").agg(pl.col("n_turns").sum()).sort("n_turns", descending=True)["operation"].to_list()
    )
    fig = go.Figure()
    for system in dict.fromkeys(table["system"].to_list()):
        part = table.filter(pl.col("system") == system)
        fig.add_trace(
            go.Bar(
                x=part["operation"].to_list(),
                y=part["turn_execution_accuracy"].to_list(),
                customdata=list(zip(part["n_correct"].to_list(), part["n_turns"].to_list(), strict=True)),
                name=system,
                hovertemplate="%{x}: %{y:.1%} (%{customdata[0]} of %{customdata[1]})<extra>%{fullData.name}</extra>",
            )
        )
    fig.update_layout(
        title="Accuracy by operation (final step of the gold program)",
        barmode="group",
        xaxis={"title": "operation", "categoryorder": "array", "categoryarray": order},
        yaxis={"title": "turn execution accuracy", "tickformat": ".0%", "range": [0, 1.02]},
        **_LAYOUT,
    )
    return fig
