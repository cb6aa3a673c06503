"""Run manifests, and what changed since the previous run of the same report.

A report run leaves, next to its HTML, ``<slug>.manifest.json`` (input hashes, parameters,
versions, headline metrics per system) and ``<slug>.verdicts.parquet`` (one row per system and
turn: correct or not). The next run into the same folder compares itself with them: metric
deltas per system, and the turns that newly fail or newly pass.

A nightly job names its systems after their run folders (``model@2026-05-04T12-48-44Z``), so
the systems of two runs are matched by a stable identity (:func:`match_systems`): the same
name (a ``--system`` name is kept from night to night); else the name without its run-folder
timestamps; else, when each run has exactly one system, those two.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from workbench.analysis.metrics import MANIFEST_METRICS as _MANIFEST_SPECS
from workbench.grading.patterns import RUN_TIMESTAMP_DIR
from workbench.io.manifest import Manifest, library_versions
from workbench.schema import KEY_DTYPE, keys_as_keys

__all__ = [
    "MANIFEST_METRICS",
    "Changes",
    "SystemMatch",
    "stable_identity",
    "match_systems",
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
    return keys_as_keys(pl.read_parquet(turns_path, columns=[*VERDICT_KEYS, "correct"]))


def stable_identity(system: str) -> str:
    """A system's name without the run-folder timestamps a default name carries.

    Examples
    --------
    >>> stable_identity("zarifaziz-claude-sonnet-4-6@2026-05-04T12-48-44Z")
    'zarifaziz-claude-sonnet-4-6'
    >>> stable_identity("claude-small"), stable_identity("2026-05-04T12-48-44Z")
    ('claude-small', '2026-05-04T12-48-44Z')
    """
    kept = [part for part in system.split("@") if not RUN_TIMESTAMP_DIR.match(part)]
    return "@".join(kept) or system


@dataclass(frozen=True)
class SystemMatch:
    """A system of the current run and the system of the previous run it is compared with.

    ``how`` says why they are taken as the same system: ``"same name"``, ``"same name without
    the run-folder timestamp"`` or ``"the only system of each run"``.
    """

    current: str
    previous: str
    how: str


def match_systems(previous: list[str], current: list[str]) -> tuple[tuple[SystemMatch, ...], str | None]:
    """Match the systems of two runs by a stable identity, and say why any are left unmatched.

    In order: the same name; else the same name without run-folder timestamps
    (:func:`stable_identity`, when it names one system on each side); else, when each run has
    exactly one system, those two. Returns the matches (in the order of ``current``) and,
    when a system of the current run has no match, one sentence saying why (else ``None``).

    Examples
    --------
    >>> m, why = match_systems(["m@2026-05-04T06-35-00Z"], ["m@2026-05-04T12-48-44Z"])
    >>> [(x.previous, x.current, x.how) for x in m], why
    ([('m@2026-05-04T06-35-00Z', 'm@2026-05-04T12-48-44Z', 'same name without the run-folder timestamp')], None)
    >>> [(x.previous, x.current, x.how) for x in match_systems(["gpt"], ["claude"])[0]]
    [('gpt', 'claude', 'the only system of each run')]
    >>> match_systems(["a", "b"], ["c", "d"])
    ((), 'No system of this run (c, d) has the name of one of the previous run (a, b), with or without run-folder timestamps; name them with --system to compare them from run to run.')
    """
    matches: dict[str, SystemMatch] = {}
    for name in current:
        if name in previous:
            matches[name] = SystemMatch(name, name, "same name")
    left_now = [n for n in current if n not in matches]
    left_then = [n for n in previous if n not in {m.previous for m in matches.values()}]
    for name in left_now:
        same = [p for p in left_then if stable_identity(p) == stable_identity(name)]
        rivals = [n for n in left_now if stable_identity(n) == stable_identity(name)]
        if len(same) == 1 and len(rivals) == 1:
            matches[name] = SystemMatch(name, same[0], "same name without the run-folder timestamp")
            left_then.remove(same[0])
    if not matches and len(current) == 1 and len(previous) == 1:
        matches[current[0]] = SystemMatch(current[0], previous[0], "the only system of each run")
    ordered = tuple(matches[n] for n in current if n in matches)
    unmatched = [n for n in current if n not in matches]
    if not unmatched:
        return ordered, None
    if not previous:
        return ordered, "The previous run recorded no systems, so there is nothing to compare with."
    return ordered, (
        f"No system of this run ({', '.join(unmatched)}) has the name of one of the previous run "
        f"({', '.join(left_then) or ', '.join(previous)}), with or without run-folder timestamps; "
        "name them with --system to compare them from run to run."
    )


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
    matches
        Which system of the previous run each system is compared with, and why
        (:func:`match_systems`).
    unmatched
        One sentence saying why a system of this run has no counterpart, or ``None``.
    """

    previous: str
    metrics: pl.DataFrame
    newly_failing: pl.DataFrame
    newly_passing: pl.DataFrame
    inputs_changed: tuple[str, ...]
    matches: tuple[SystemMatch, ...] = ()
    unmatched: str | None = None


def _input_hashes(manifest: Mapping[str, Any], names: Mapping[str, str] | None = None) -> dict[str, str]:
    """The hash of each input by name; ``names`` renames systems (previous run: its matches)."""
    inputs = manifest.get("inputs") or {}
    out = {}
    if inputs.get("dataset"):
        out["dataset"] = inputs["dataset"].get("sha256", "")
    for item in inputs.get("predictions") or []:
        system = str(item.get("system"))
        out[f"predictions of {(names or {}).get(system, system)}"] = item.get("sha256", "")
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
    it was recorded) reads the same. Systems are matched by :func:`match_systems`; metrics
    and verdicts are compared between matched systems only, under the current name.

    Examples
    --------
    >>> old = {"created_at": "t0", "metrics": {"s": {"turn_execution_accuracy": 0.5}}}
    >>> new = {"created_at": "t1", "metrics": {"s": {"turn_execution_accuracy": 0.75}}}
    >>> v0 = pl.DataFrame({"system": ["s"] * 2, "record_id": ["r"] * 2, "turn": [0, 1], "correct": [True, False]})
    >>> v1 = v0.with_columns(pl.lit(True).alias("correct"))
    >>> c = compare_runs(old, v0, new, v1)
    >>> c.metrics.row(0), c.newly_passing.rows(), c.newly_failing.height
    (('s', 'turn_execution_accuracy', 0.5, 0.75, 0.25), [('s', 'r', 1)], 0)
    >>> c = compare_runs({**old, "metrics": {"t": old["metrics"]["s"]}}, v0.with_columns(system=pl.lit("t")), new, v1)
    >>> c.matches[0].how, c.newly_passing.rows()
    ('the only system of each run', [('s', 'r', 1)])
    """
    if isinstance(previous, Manifest):
        previous = previous.to_dict()
    if isinstance(current, Manifest):
        current = current.to_dict()
    then_metrics = previous.get("metrics", {}) or {}
    matches, unmatched = match_systems(list(then_metrics), list(current.get("metrics", {}) or {}))
    earlier = {m.current: m.previous for m in matches}
    rows = []
    for system, values in current.get("metrics", {}).items():
        if system not in earlier:
            continue
        before = then_metrics.get(earlier[system], {})
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
    empty = pl.DataFrame(schema={"system": KEY_DTYPE, "record_id": KEY_DTYPE, "turn": pl.Int32})
    failing, passing = empty, empty
    if previous_verdicts is not None and matches:
        verdicts = keys_as_keys(verdicts)  # either run's verdicts may have been read as text
        previous_verdicts = keys_as_keys(previous_verdicts)
        renamed = previous_verdicts.join(
            pl.DataFrame(
                {"system": [m.previous for m in matches], "current": [m.current for m in matches]},
                schema={"system": previous_verdicts.schema["system"], "current": pl.String},
            ),
            on="system",
            how="inner",
        ).with_columns(pl.col("current").cast(KEY_DTYPE).alias("system"))
        joined = verdicts.join(
            renamed.select(VERDICT_KEYS + ["correct"]), on=VERDICT_KEYS, how="inner", suffix="_previous"
        )
        failing = joined.filter(pl.col("correct_previous") & ~pl.col("correct")).select(VERDICT_KEYS).sort(VERDICT_KEYS)
        passing = joined.filter(~pl.col("correct_previous") & pl.col("correct")).select(VERDICT_KEYS).sort(VERDICT_KEYS)
    old = _input_hashes(previous, {m.previous: m.current for m in matches})
    new = _input_hashes(current)
    changed = tuple(name for name in new if old.get(name) != new[name])
    created = str(previous.get("created_at", "an earlier run"))
    return Changes(created, metrics, failing, passing, changed, matches, unmatched)
