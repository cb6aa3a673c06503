"""Who annotates, asked in the browser: a name box that the browser remembers.

:class:`AnalystName` is a small anywidget (``static/analyst.js``). Under JupyterHub it shows
``JUPYTERHUB_USER`` and asks nothing. Otherwise, with no name from the template (an empty or
shared default name, see :mod:`workbench.annotations.names`), it asks for one; the name typed is
kept in the browser's ``localStorage`` and offered again by the next page in that browser, in
Voila and in JupyterLab alike. The triage and the turn panel refuse to save until a name is set.

The box also says when a page shows it (after offering the name the browser remembers): until
then no browser is there, as in a kernel Voila starts ahead of its page, and the triage takes no
item (:meth:`AnalystName.on_page`).

Examples
--------
>>> box = AnalystName("", environ={})
>>> box.name, box.message
('', 'Who is annotating? Type your name: nothing is saved until you do.')
>>> seen = []
>>> box.on_name(seen.append)
>>> box.proposed = "analyst"
>>> box.name, box.message
('', "Not used: 'analyst' is a shared default name, not an analyst's. Type your own name.")
>>> box.proposed = " Ana "
>>> box.name, seen
('Ana', ['Ana'])
>>> shown = []
>>> box.on_page(lambda: shown.append(box.name))
>>> box.connected, shown
(False, [])
>>> box._message(box, {"kind": "page"}, [])  # what analyst.js sends when a page shows the box
>>> box.connected, shown
(True, ['Ana'])
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any

import anywidget
import traitlets

from workbench.annotations.names import HUB_VARIABLE, name_problem, resolve_name

__all__ = ["AnalystName", "ASKING"]

_STATIC = resources.files("workbench.widgets") / "static"
#: What the box says while no name is set.
ASKING = "Who is annotating? Type your name: nothing is saved until you do."


class AnalystName(anywidget.AnyWidget):  # type: ignore[misc]
    """The analyst's name: from ``JUPYTERHUB_USER``, the template, or typed (and remembered).

    Attributes
    ----------
    name
        The name in use ("" while asking).
    proposed
        A name the browser offers (typed, or remembered from an earlier page); taken when it
        names someone.
    fixed
        True under JupyterHub: the name is the hub user's and is not asked.
    message
        One line: who is annotating, or what is missing.
    connected
        True once a page has shown the box (a browser is there).
    """

    _esm = _STATIC / "analyst.js"
    _css = _STATIC / "analyst.css"

    name = traitlets.Unicode("").tag(sync=True)
    proposed = traitlets.Unicode("").tag(sync=True)
    fixed = traitlets.Bool(False).tag(sync=True)
    message = traitlets.Unicode("").tag(sync=True)

    def __init__(self, given: str | None = "", *, environ: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        env = os.environ if environ is None else environ
        name = resolve_name(given, environ=env) or ""
        super().__init__(name=name, fixed=bool((env.get(HUB_VARIABLE) or "").strip()), **kwargs)
        self._callbacks: list[Callable[[str], None]] = []
        self._page_callbacks: list[Callable[[], None]] = []
        self.connected = False
        self.message = self._says(name)
        self.observe(self._proposed, names="proposed")
        self.on_msg(self._message)

    def on_name(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(name)`` whenever a new name is taken."""
        self._callbacks.append(callback)

    def on_page(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` once, when a page first shows the box (at once if one has)."""
        if self.connected:
            callback()
        else:
            self._page_callbacks.append(callback)

    def _message(self, _widget: Any, content: Mapping[str, Any], _buffers: Any) -> None:
        """A message from ``analyst.js``: ``{"kind": "page"}`` when a page shows the box."""
        if not isinstance(content, Mapping) or content.get("kind") != "page" or self.connected:
            return
        self.connected = True
        waiting, self._page_callbacks = self._page_callbacks, []
        for callback in waiting:
            callback()

    def _says(self, name: str) -> str:
        if not name:
            return ASKING
        how = " (JupyterHub user)" if self.fixed else " (remembered in this browser)"
        return f"Annotating as {name}{how}."

    def _proposed(self, change: Mapping[str, Any]) -> None:
        offered = str(change["new"] or "")
        if self.fixed or not offered.strip():
            return
        problem = name_problem(offered)
        if problem is not None:
            self.message = f"Not used: {problem}. Type your own name."
            return
        self.name = offered.strip()
        self.message = self._says(self.name)
        for callback in self._callbacks:
            callback(self.name)
