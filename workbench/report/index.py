"""``index.html``: one page linking every report in a reports folder, rewritten by every run.

Each report leaves a manifest beside its HTML (``<name>.manifest.json``: template, date,
inputs, headline metrics per system, the HTML's file name); the index lists them all, newest
first, with the date, the benchmark, the inputs and the headline figures, through the one
autoescaping renderer (:mod:`workbench.views.html`). It is a plain offline page: no script,
no network, relative links only. Paths on a page are never the machine's
(:func:`workbench.io.paths.shown_path`): relative to the reports folder or the project, else
the file's folder and name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workbench.analysis import formats
from workbench.config import project_root
from workbench.errors import InputError
from workbench.io.atomic import write_atomic
from workbench.io.paths import safe_name, shown_path
from workbench.pipeline.ledger import read_ledger
from workbench.report.sections import benchmark_name, report_title
from workbench.views.changes import run_date
from workbench.views.html import Markup, render, static_text

__all__ = ["INDEX_NAME", "index_folder", "shown_paths", "report_entries", "history_systems", "write_index"]

#: The index page's file name, in the reports folder.
INDEX_NAME = "index.html"
#: How deep below the reports folder manifests are looked for (``<template>/<name>.manifest.json``).
_DEPTH = 2


def index_folder(out: Path, template: str) -> Path:
    """The reports folder whose index lists a report written into ``out``: the parent of a
    folder named after the template (``reports/01-overview`` -> ``reports``), else ``out``.

    Examples
    --------
    >>> index_folder(Path("reports/01-overview"), "01-overview").as_posix()
    'reports'
    >>> index_folder(Path("reports/nightly"), "01-overview").as_posix()
    'reports/nightly'
    """
    return out.parent if out.name == safe_name(template) else out


def shown_paths(manifest: Mapping[str, Any], folder: str | Path) -> dict[str, Any]:
    """A report manifest with its input and parameter paths as a page shows them
    (:func:`~workbench.io.paths.shown_path`: relative to ``folder`` or the project; the file
    keeps the paths as they were given).

    Examples
    --------
    >>> m = {"parameters": {"predictions": ["/srv/r/x/p.jsonl"], "seed": 1}, "inputs": {"dataset": {"path": "/a/b/c.json"}}}
    >>> shown_paths(m, "/srv/r")
    {'parameters': {'predictions': ['x/p.jsonl'], 'seed': 1}, 'inputs': {'dataset': {'path': 'b/c.json'}}}
    """

    def walk(value: Any, key: str = "") -> Any:
        if isinstance(value, Mapping):
            return {k: walk(v, str(k)) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, key) for v in value]
        if isinstance(value, str) and value.startswith("/") and key in _PATH_KEYS:
            return ";".join(shown_path(part, folder, project_root()) for part in value.split(";"))
        return value

    return walk(dict(manifest))


#: Manifest keys whose text values are paths.
_PATH_KEYS = frozenset({"path", "dataset", "predictions", "annotations", "store", "graded_dir"})


def _headline(metrics: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per system: its turn execution accuracy, and how many of how many turns."""
    lines = []
    for system, values in metrics.items():
        share, right, n = values.get("turn_execution_accuracy"), values.get("n_turns_correct"), values.get("n_turns")
        counted = (
            f", {formats.count(right)} of {formats.count(n)}" if isinstance(n, int) and isinstance(right, int) else ""
        )
        lines.append(f"{system}: {formats.percent(share)} correct{counted}")
    return lines


def report_entries(folder: Path) -> list[dict[str, Any]]:
    """The reports in ``folder`` (and its template folders) whose HTML exists, newest first:
    link, title, template, date, benchmark, inputs and headline lines."""
    entries = []
    for depth in range(_DEPTH):
        for path in folder.glob("/".join(["*"] * depth + ["*.manifest.json"])):
            try:
                manifest = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if not isinstance(manifest, dict) or "template" not in manifest or not manifest.get("html"):
                continue
            page = path.with_name(str(manifest["html"]))
            if not page.is_file():
                continue
            inputs = manifest.get("inputs") or {}
            dataset = inputs.get("dataset") or {}
            files = [dataset.get("path")] if dataset.get("path") else []
            files += [item.get("path") for item in inputs.get("predictions") or [] if item.get("path")]
            benchmark = str(dataset.get("benchmark", ""))
            entries.append(
                {
                    "href": page.relative_to(folder).as_posix(),
                    "title": report_title(benchmark, str(manifest["template"])),
                    "template": str(manifest["template"]),
                    "date": run_date(str(manifest.get("created_at", ""))),
                    "benchmark": benchmark_name(benchmark) if benchmark else "",
                    "inputs": list(dict.fromkeys(shown_path(f, folder, project_root()) for f in files)),
                    "headline": _headline(manifest.get("metrics") or {}),
                }
            )
    return sorted(entries, key=lambda e: (e["date"], e["href"]), reverse=True)


#: How many of a system's last runs the index's history section shows.
HISTORY_RUNS = 6
#: The template whose page shows a folder's whole history.
HISTORY_TEMPLATE = "05-history"


def history_systems(folder: Path, *, last: int = HISTORY_RUNS) -> list[dict[str, Any]]:
    """The index's history section: for each system of the run ledgers in ``folder`` (and its
    template folders; :func:`workbench.report.history.ledger_files`), of each template, its last
    ``last`` runs' headline accuracy, each linked to its report, and the change since the run
    before. A ledger that cannot be read is left out (the index is rewritten by every report
    and must not fail for it; ``workbench check`` and ``05-history`` say what is wrong with it)."""
    from workbench.report.history import ledger_files, lineage, when

    systems: list[dict[str, Any]] = []
    for path in ledger_files(folder):
        try:
            rows = read_ledger(path)
        except InputError:
            continue
        templates = {row.template for row in rows}
        names = lineage(rows)
        lines: dict[tuple[str, str], list[Any]] = {}
        for row, name in zip(rows, names, strict=True):
            lines.setdefault((row.template, name), []).append(row)
        for (template, name), mine in lines.items():
            shown = mine[-last:]
            accuracy = [row.headline.get("turn_execution_accuracy") for row in shown]
            change = (
                accuracy[-1] - accuracy[-2]
                if len(accuracy) > 1 and isinstance(accuracy[-1], float) and isinstance(accuracy[-2], float)
                else None
            )
            systems.append(
                {
                    "name": name if len(templates) == 1 else f"{name} ({template or 'workbench grade'})",
                    "ledger": shown_path(path, folder.parent, project_root()),
                    "runs": [
                        {
                            "label": f"{when(row.created_at)}: {formats.percent(value)}",
                            "accuracy": formats.percent(value),
                            "href": (path.parent / row.report).relative_to(folder).as_posix() if row.report else "",
                        }
                        for row, value in zip(shown, accuracy, strict=True)
                    ],
                    "trend": f"{formats.points(change)} since the run before, of {len(mine)} runs"
                    if change is not None
                    else f"{len(mine)} run{'s' if len(mine) != 1 else ''}",
                    "falling": change is not None and change < 0,
                }
            )
    return systems


def _history_section(folder: Path, entries: list[dict[str, Any]]) -> Markup:
    from workbench.views.history import index_section  # plotly's module: loaded when a page is written

    pages = [e["href"] for e in entries if e["template"] == HISTORY_TEMPLATE]
    return index_section(history_systems(folder), pages[0] if pages else "")


def write_index(folder: Path) -> Path:
    """Write ``<folder>/index.html`` listing every report in ``folder`` (see :func:`report_entries`),
    then the history of the systems in its run ledgers (:func:`history_systems`)."""
    entries = report_entries(folder)
    page = str(
        render(
            "index.html.j2",
            entries=entries,
            history=_history_section(folder, entries),
            css=Markup(static_text("report.css") + static_text("index.css")),
        )
    )
    target = folder / INDEX_NAME
    write_atomic(target, lambda p: p.write_text(page, encoding="utf-8"))
    return target
