"""The report's opening and closing sections: what changed since the previous run of the same
report (from :func:`workbench.analysis.changes.compare_runs`), and the run manifest.

The markup is ``templates/changes.html.j2``, rendered by the one autoescaping renderer
(:mod:`workbench.views.html`): system names, record ids and parameters show as text.
"""

from __future__ import annotations

import json
from typing import Any

import polars as pl

from workbench.analysis import formats
from workbench.analysis.changes import Changes
from workbench.analysis.metrics import MANIFEST_METRICS, Item, for_items
from workbench.views.html import macro, script_json

__all__ = ["run_date", "changes_html", "manifest_html"]

#: Turns (or problems) listed per direction (newly failing, newly passing); a note says how many more there are.
TURN_LIST_LIMIT = 200


def run_date(created_at: str) -> str:
    """When a run was made, as pages show it (its manifest's ``created_at``, in UTC).

    Examples
    --------
    >>> run_date("2026-11-23T16:44:58Z"), run_date("an earlier run")
    ('2026-11-23 16:44:58 UTC', 'an earlier run')
    """
    return created_at.replace("T", " ").replace("Z", " UTC") if created_at[:4].isdigit() else created_at


def _turns(frame: pl.DataFrame) -> tuple[list[tuple[Any, ...]], int]:
    """The first :data:`TURN_LIST_LIMIT` ``(system, record_id, turn)`` of ``frame``, and how many there are."""
    return frame.head(TURN_LIST_LIMIT).rows(), frame.height


def _number(value: float | None, key: str) -> str:
    """A manifest figure: a count with separators, a rate as a percent (:mod:`~workbench.analysis.formats`)."""
    if value is None:
        return formats.MISSING
    return formats.count(round(value)) if key.startswith("n_") else formats.percent(value)


def _change(delta: float | None, key: str) -> str:
    """A change: a count signed, a rate in points."""
    if delta is None:
        return formats.MISSING
    return f"{round(delta):+,}" if key.startswith("n_") else formats.points(delta)


def _moved(then: float | None, now: float | None, delta: float | None, key: str) -> bool:
    """Whether a metric changed as a page shows it (a rate by a tenth of a point, a count by one);
    a metric that one run lacks has changed."""
    if then is None or now is None or delta is None:
        return then is not None or now is not None
    return round(delta) != 0 if key.startswith("n_") else formats.points(delta) != formats.points(0.0)


def changes_html(changes: Changes | None, item: Item = "turn") -> str:
    """The "changes since the previous run" section that opens a report (a note without one).

    ``item`` is what the run counts (:func:`workbench.analysis.metrics.counted_item`): for
    ``"problem"`` the metrics are those a run of single problems shows, under their labels
    there (:func:`workbench.analysis.metrics.for_items`), and the flipped items are problems,
    listed without a turn index. Only the metrics that moved are a row of the table (a rate by a
    tenth of a point, a count by one); one sentence names the others, unchanged.

    Examples
    --------
    >>> "no earlier run" in changes_html(None)
    True
    """
    if changes is None:
        return str(macro("changes.html.j2", "no_previous_run"))
    labels = {spec.key: spec.label for spec in for_items(MANIFEST_METRICS, item)}
    left_out = {spec.key for spec in MANIFEST_METRICS} - labels.keys()  # for problems: conversation-level metrics
    shown = [row for row in changes.metrics.iter_rows() if row[1] not in left_out]
    rows = [
        (system, labels.get(key, key), _number(then, key), _number(now, key), _change(delta, key))
        for system, key, then, now, delta in shown
        if _moved(then, now, delta, key)
    ]
    moved = {key for _, key, then, now, delta in shown if _moved(then, now, delta, key)}
    unchanged = [labels.get(key, key) for key in dict.fromkeys(row[1] for row in shown) if key not in moved]
    matches = [(m.current, m.previous, m.how) for m in changes.matches]
    markup = macro(
        "changes.html.j2",
        "changes",
        run_date(changes.previous),
        list(changes.inputs_changed),
        rows,
        _turns(changes.newly_failing),
        _turns(changes.newly_passing),
        TURN_LIST_LIMIT,
        matches,
        changes.unmatched,
        len(matches) != 1,
        item,
        unchanged,
    )
    return str(markup)


def manifest_html(manifest: dict[str, Any]) -> str:
    """The run manifest as a collapsible section (and as JSON a script can read).

    Examples
    --------
    >>> page = manifest_html({"parameters": {"dataset": "</script>"}})
    >>> "&lt;/script&gt;" in page and "\\\\u003c/script\\\\u003e" in page and page.count("</script>") == 1
    True
    """
    text = json.dumps(manifest, indent=2, default=str)
    return str(macro("changes.html.j2", "manifest", text, script_json(text)))
