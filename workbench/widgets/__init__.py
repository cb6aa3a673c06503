"""Widgets: views over the stateful parts of the workbench; they hold no data of their own.

* :mod:`workbench.widgets.grid`: the failed turns in a live kernel (paged, searched and sorted in
  the kernel), the drill-down of a slice, and plots whose clicks filter them (01 and 02 templates).
* :mod:`workbench.widgets.turn_panel`: the failed-turn panel with Annotate, shown under the grid.
* :mod:`workbench.widgets.figures`: a plotly figure whose clicks reach the kernel.
* :mod:`workbench.widgets.triage`: the triage view over an
  :class:`~workbench.annotations.session.AnnotationSession` (``triage.triage(session)``).

Widgets import :mod:`workbench.annotations`, never the reverse. Import the submodule you need
(``from workbench.widgets import grid``); this package imports nothing itself, so it stays cheap.
"""

from __future__ import annotations

__all__ = ["figures", "grid", "triage", "turn_panel"]
