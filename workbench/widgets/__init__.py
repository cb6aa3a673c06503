"""Widgets: views over the stateful parts of the workbench; they hold no data of their own.

* :mod:`workbench.widgets.triage`: the triage view over an
  :class:`~workbench.annotations.session.AnnotationSession` (``triage.triage(session)``).

Widgets import :mod:`workbench.annotations`, never the reverse. Import the submodule you need
(``from workbench.widgets import triage``); this package imports nothing itself, so it stays cheap.
"""

from __future__ import annotations

__all__ = ["triage"]
