"""A plotly figure whose clicks reach the kernel, and that still shows without one.

:class:`LinkedFigure` is plotly's ``FigureWidget`` (an anywidget since plotly 6) with a click
callback on every trace. Its output also carries the figure's JSON under plotly's own MIME type,
so the exported report page draws it as it draws every other figure, and a notebook reopened
without a live kernel shows the plot (without the clicks).

Its front end is plotly's own, wrapped by ``static/figure.js`` so that the plot is drawn only
once its output is in the page with a width, and drawn again when that width changes. Drawn as
plotly's module draws it, before JupyterLab has attached the output, the plot took plotly's
default 700 px whatever the output's width, its subtitle lay over its title, and it was never laid
out again. :func:`front_end` builds that module from plotly's installed one.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Callable
from importlib import resources
from typing import Any

import plotly
import plotly.graph_objects as go
import plotly.io as pio
from plotly.basewidget import BaseFigureWidget

__all__ = ["PLOTLY_MIME", "LinkedFigure", "front_end"]

logger = logging.getLogger(__name__)

#: plotly's MIME type for a figure's JSON (what ``go.Figure`` displays as).
PLOTLY_MIME = "application/vnd.plotly.v1+json"

_WRAPPER = resources.files("workbench.widgets") / "static" / "figure.js"

#: The export statement that ends plotly's widget module (``export{A as FigureModel,...,C as default};``).
_EXPORTS = re.compile(r"export\s*\{(?P<names>[^{}]*)\}\s*;?")


@functools.cache
def front_end() -> str:
    """The module of :class:`LinkedFigure`'s front end: plotly's widget module, its default export
    wrapped by ``workbenchFigure`` (``static/figure.js``); its other exports kept.

    plotly's module as it is (a warning logged) when its last statement is not the export list
    this expects, from a plotly release that builds it otherwise: the plot then shows as plotly
    draws it.

    Examples
    --------
    >>> module = front_end()
    >>> "function workbenchFigure(" in module and module.rstrip().endswith(";")
    True
    """
    plotly_module = str(BaseFigureWidget._esm)
    found = list(_EXPORTS.finditer(plotly_module))
    specifiers = [s.strip() for s in found[-1].group("names").split(",")] if found else []
    default = [s.split(" as ")[0].strip() for s in specifiers if s.endswith(" as default")]
    if not default:
        logger.warning(
            "plotly %s's widget module does not end with the export list workbench wraps; linked plots are drawn as "
            "plotly draws them (at 700 px until the window is resized)",
            plotly.__version__,
        )
        return plotly_module
    last = found[-1]
    kept = ", ".join(s for s in specifiers if not s.endswith(" as default"))
    return "\n".join(
        [
            plotly_module[: last.start()] + plotly_module[last.end() :],
            _WRAPPER.read_text(encoding="utf-8"),
            f"export {{{kept}}};" if kept else "",
            f"export default workbenchFigure({default[0]});",
        ]
    )


class LinkedFigure(go.FigureWidget):  # type: ignore[misc]
    """``figure`` as a widget that calls ``on_click(trace, points, state)`` on a click on any trace,
    drawn at its output's width (plotly's ``responsive`` config: again when the width changes)."""

    _esm = front_end()

    def __init__(self, figure: go.Figure, *, on_click: Callable[[Any, Any, Any], None]) -> None:
        super().__init__(figure)
        self._config = {**self._config, "responsive": True}
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
