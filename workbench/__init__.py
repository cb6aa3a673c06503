"""workbench: error analysis for model outputs on numerical-reasoning question answering.

The public API is small and imports lazily, so ``import workbench`` is cheap and grading
code can run in worker processes without loading plotting or notebook libraries.

Examples
--------
>>> import workbench
>>> workbench.execute_program("subtract(60.94, 25.14), divide(#0, 25.14)").answer
'1.42403'
"""

from __future__ import annotations

#: ``typing`` is not imported (an ``if TYPE_CHECKING`` of its own): the ``workbench`` command imports this
#: module before its Ctrl-C handler is in place (:mod:`workbench.__main__`), so it imports nothing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__version__ = "0.1.0"  # the one source of the version: pyproject.toml, `workbench --version` and CHANGELOG.md follow it

_EXPORTS = {
    "answers_match": "workbench.grading.compare",
    "MatchPolicy": "workbench.grading.compare",
    "Verdict": "workbench.grading.compare",
    "execute_program": "workbench.grading.program",
    "parse_program": "workbench.grading.program",
    "ProgramResult": "workbench.grading.program",
    "programs_equivalent": "workbench.grading.equivalence",
    "grade_turn": "workbench.grading.turn",
    "load_gold": "workbench.io.gold",
    "load_predictions": "workbench.io.predictions",
    "parse_column_map": "workbench.io.predictions",
    "grade_predictions": "workbench.pipeline.grade",
    "grade_run": "workbench.pipeline.run",
    "open_run": "workbench.pipeline.run",
    "open_or_grade": "workbench.pipeline.run",
    "resolve": "workbench.config",
    "WorkbenchError": "workbench.errors",
    "InputError": "workbench.errors",
}

#: Modules reachable as attributes of ``workbench`` (``workbench.tables.headline(...)``).
_MODULES = {
    "config": "workbench.config",
    "tables": "workbench.views.tables",
    "plots": "workbench.views.plots",
    "metrics": "workbench.analysis.metrics",
    "report": "workbench.report",
    "grading": "workbench.grading",
    "io": "workbench.io",
}

__all__ = ["__version__", *sorted(_EXPORTS), "config", "tables", "plots"]


def __getattr__(name: str) -> Any:
    from importlib import import_module

    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    if name in _MODULES:
        return import_module(_MODULES[name])
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")
