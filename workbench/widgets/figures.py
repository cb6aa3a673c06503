"""A plotly figure whose clicks reach the kernel, and that still shows without one.

:class:`LinkedFigure` is plotly's ``FigureWidget`` (an anywidget since plotly 6) with a click
callback on every trace. Its output also carries the figure's JSON under plotly's own MIME type,
so the exported report page draws it as it draws every other figure, and a notebook reopened
without a live kernel shows the plot (without the clicks).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

__all__ = ["PLOTLY_MIME", "LinkedFigure"]

#: plotly's MIME type for a figure's JSON (what ``go.Figure`` displays as).
PLOTLY_MIME = "application/vnd.plotly.v1+json"


class LinkedFigure(go.FigureWidget):  # type: ignore[misc]
    """``figure`` as a widget that calls ``on_click(trace, points, state)`` on a click on any trace."""

    def __init__(self, figure: go.Figure, *, on_click: Callable[[Any, Any, Any], None]) -> None:
        super().__init__(figure)
        self._static = json.loads(pio.to_json(figure, validate=False))
        for trace in self.data:
            trace.on_click(on_click)

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None, validate: bool = True, **kwargs: Any
    ) -> dict[str, Any]:
        bundle: dict[str, Any] = dict(super()._repr_mimebundle_(include, exclude, validate, **kwargs) or {})
        bundle[PLOTLY_MIME] = {"data": self._static.get("data", []), "layout": self._static.get("layout", {})}
        bundle.setdefault("text/plain", "An interactive plot: click a group to filter the failed rows below.")
        return bundle
