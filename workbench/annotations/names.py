"""Who annotates: the analyst's name, never a shared default.

Every event carries the name of the analyst who wrote it, so the store can tell two analysts
apart (and :mod:`workbench.annotations.agreement` can compare them). A name comes from, in order:
``JUPYTERHUB_USER`` (under JupyterHub the server knows who is logged in), the name the template
or the caller gives, or, when neither is there, the analyst is asked (the triage and the panel
ask before the first save and the browser remembers the answer). An empty name or a shared
default (:data:`SHARED_NAMES`: the old template default ``"analyst"``) means "ask": it never
reaches the store (:func:`check_name`, which :mod:`workbench.annotations.events` applies to
every event).

Examples
--------
>>> resolve_name("ana", environ={})
'ana'
>>> resolve_name("analyst", environ={}) is None, resolve_name("  ", environ={}) is None
(True, True)
>>> resolve_name("", environ={"JUPYTERHUB_USER": "bo"})
'bo'
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["SHARED_NAMES", "HUB_VARIABLE", "resolve_name", "name_problem", "ASK_FIX"]

#: Names that say nobody in particular: a default, not an analyst (compared case-insensitively).
SHARED_NAMES = frozenset({"analyst", "annotator", "anonymous", "default", "user"})
#: The environment variable JupyterHub sets in every user's server.
HUB_VARIABLE = "JUPYTERHUB_USER"
#: What an analyst does when the name is missing.
ASK_FIX = "type your name in the 'Your name' box (this browser remembers it), or pass annotator='your name'"


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot sign an event (None: it can).

    Examples
    --------
    >>> name_problem("ana") is None
    True
    >>> name_problem("Analyst")
    "'Analyst' is a shared default name, not an analyst's"
    """
    if not isinstance(name, str) or not name.strip():
        return f"no analyst name was given (got {name!r})"
    if name.strip().casefold() in SHARED_NAMES:
        return f"{name.strip()!r} is a shared default name, not an analyst's"
    return None


def resolve_name(given: str | None, *, environ: Mapping[str, str] | None = None) -> str | None:
    """The analyst's name: ``JUPYTERHUB_USER`` when set, else ``given`` when it names someone,
    else None (the view asks)."""
    env = os.environ if environ is None else environ
    hub = (env.get(HUB_VARIABLE) or "").strip()
    if hub:
        return hub
    if given is not None and name_problem(given) is None:
        return given.strip()
    return None
