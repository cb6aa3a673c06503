"""Run manifests, and what changed since the previous run of the same report.

A report run leaves, next to its HTML, ``<slug>.manifest.json`` (input hashes, parameters,
versions, headline metrics per system) and ``<slug>.verdicts.parquet`` (one row per system and
turn: correct or not). The next run into the same folder compares itself with them: metric
deltas per system, and the turns that newly fail or newly pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from workbench.analysis.metrics import MANIFEST_METRICS as _MANIFEST_SPECS
from workbench.io.manifest import Manifest, library_versions

__all__ = [
    "MANIFEST_METRICS",
    "Changes",
    "build_manifest",
    "read_verdicts",
    "compare_runs",
]

#: Headline metrics a manifest keeps per system (``MANIFEST_METRICS`` of
#: :mod:`workbench.analysis.metrics`), by key, with their labels.
MANIFEST_METRICS: Mapping[str, str] = {spec.key: spec.label for spec in _MANIFEST_SPECS}
VERDICT_KEYS = ["system", "record_id", "turn"]


def build_manifest(
    *, template: str, parameters: dict[str, Any], summary: Mapping[str, Any] | None, html_file: str
) -> Manifest:
    """The manifest of one report run (written as ``<name>.manifest.json``).

    ``summary`` is the graded run's ``summary.json`` (inputs with their hashes, metrics per
    system; with or without ``schema_version``), or ``None`` for a template that grades nothing.

    Examples
    --------
    >>> m = build_manifest(template="01-overview", parameters={}, summary=None, html_file="bundled.html")
    >>> list(m.to_dict())[:3], m.name, m.outputs
    (['schema_version', 'workbench_version', 'template'], '01-overview', {'html': 'bundled.html'})
    """

    summary = summary or {}
    metrics = {
        system: {key: values.get(key) for key in MANIFEST_METRICS if values.get(key) is not None}
        for system, values in summary.get("systems", {}).items()
    }
    return Manifest(
        kind="report",
        name=template,
        created_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        parameters=parameters,
        inputs={"dataset": summary.get("dataset"), "predictions": summary.get("predictions", [])},
        versions=library_versions(),
        metrics=metrics,
        outputs={"html": html_file},
    )


def read_verdicts(turns_path: Path) -> pl.DataFrame:
    """``system, record_id, turn, correct`` from a graded ``turns.parquet``."""
    return pl.read_parquet(turns_path, columns=[*VERDICT_KEYS, "correct"])


@dataclass(frozen=True)
class Changes:
    """What changed between two runs of one report.

    Attributes
    ----------
    previous
        When the previous run was made (its manifest's ``created_at``).
    metrics
        ``system, metric, previous, current, delta`` for each headline metric.
    newly_failing, newly_passing
        ``system, record_id, turn`` of turns whose verdict flipped.
    inputs_changed
        Names of the inputs whose hash differs (``dataset``, prediction files).
    """

    previous: str
    metrics: pl.DataFrame
    newly_failing: pl.DataFrame
    newly_passing: pl.DataFrame
    inputs_changed: tuple[str, ...]


def _input_hashes(manifest: Mapping[str, Any]) -> dict[str, str]:
    inputs = manifest.get("inputs") or {}
    out = {}
    if inputs.get("dataset"):
        out["dataset"] = inputs["dataset"].get("sha256", "")
    for item in inputs.get("predictions") or []:
        out[f"predictions of {item.get('system')}"] = item.get("sha256", "")
    return out


def compare_runs(
    previous: Mapping[str, Any] | Manifest,
    previous_verdicts: pl.DataFrame | None,
    current: Mapping[str, Any] | Manifest,
    verdicts: pl.DataFrame,
) -> Changes:
    """Compare a run with the previous run of the same report.

    ``previous`` and ``current`` are report manifests, as their files hold them or as
    :class:`~workbench.io.manifest.Manifest`; a file without ``schema_version`` (written before
    it was recorded) reads the same.

    Examples
    --------
    >>> old = {"created_at": "t0", "metrics": {"s": {"turn_execution_accuracy": 0.5}}}
    >>> new = {"created_at": "t1", "metrics": {"s": {"turn_execution_accuracy": 0.75}}}
    >>> v0 = pl.DataFrame({"system": ["s"] * 2, "record_id": ["r"] * 2, "turn": [0, 1], "correct": [True, False]})
    >>> v1 = v0.with_columns(pl.lit(True).alias("correct"))
    >>> c = compare_runs(old, v0, new, v1)
    >>> c.metrics.row(0), c.newly_passing.rows(), c.newly_failing.height
    (('s', 'turn_execution_accuracy', 0.5, 0.75, 0.25), [('s', 'r', 1)], 0)
    """
    if isinstance(previous, Manifest):
        previous = previous.to_dict()
    if isinstance(current, Manifest):
        current = current.to_dict()
    rows = []
    for system, values in current.get("metrics", {}).items():
        before = previous.get("metrics", {}).get(system, {})
        for key in MANIFEST_METRICS:
            if key in values or key in before:
                now, then = values.get(key), before.get(key)
                delta = now - then if isinstance(now, int | float) and isinstance(then, int | float) else None
                rows.append({"system": system, "metric": key, "previous": then, "current": now, "delta": delta})
    metrics = pl.DataFrame(
        rows,
        schema={
            "system": pl.String,
            "metric": pl.String,
            "previous": pl.Float64,
            "current": pl.Float64,
            "delta": pl.Float64,
        },
    )
    empty = pl.DataFrame(schema={"system": pl.String, "record_id": pl.String, "turn": pl.Int32})
    failing, passing = empty, empty
    if previous_verdicts is not None:
        joined = verdicts.join(previous_verdicts, on=VERDICT_KEYS, how="inner", suffix="_previous")
        failing = joined.filter(pl.col("correct_previous") & ~pl.col("correct")).select(VERDICT_KEYS).sort(VERDICT_KEYS)
        passing = joined.filter(~pl.col("correct_previous") & pl.col("correct")).select(VERDICT_KEYS).sort(VERDICT_KEYS)
    old, new = _input_hashes(previous), _input_hashes(current)
    changed = tuple(name for name in new if old.get(name) != new[name])
    return Changes(str(previous.get("created_at", "an earlier run")), metrics, failing, passing, changed)
