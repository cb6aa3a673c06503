"""The graded folder: ``turns.parquet``, ``conversations.parquet``, ``unmatched.parquet``,
``policy_inputs.parquet``, ``checks.parquet`` (data-quality flags) and ``summary.json``,
written as a set: every file into a temporary file first, and only when all are complete
renamed into place (``summary.json`` last), so a failure while writing leaves the previous
outputs whole; and read back (:func:`read_graded`) without grading again.

The same inputs give byte-identical files, whatever the engine (local or Dask) and the
number of worker processes: rows come out in the gold's order and the Parquet writer's
options are fixed. ``summary.json`` holds no timestamp (only input paths and hashes).

Its layout has a version, ``schema_version`` in ``summary.json``
(:data:`~workbench.io.manifest.SCHEMA_VERSIONS`). Version 2 keeps the grades under every policy
once per distinct grading input (``policy_inputs.parquet``: ``input_key`` and a struct column per
policy; :mod:`workbench.pipeline.policy_inputs`), and each row of ``turns.parquet`` names its
input in an ``input_key`` column (its last). Versions 1 and 0 kept them once per turn and policy
(``policy_grades.parquet``); such a folder is converted as it is read."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl

from workbench.analysis.metrics import conversations, summarize
from workbench.errors import InputError
from workbench.grading.policies import POLICIES
from workbench.io.atomic import parquet_writer, write_atomic_set
from workbench.io.gold import GoldDataset
from workbench.io.manifest import SCHEMA_VERSIONS, Manifest, read_manifest
from workbench.io.paths import inside
from workbench.pipeline.grade import GradedRun
from workbench.pipeline.policy_inputs import check_inputs, from_policy_grades
from workbench.schema import POLICY_GRADES, keys_as_keys

__all__ = ["GRADED_TABLES", "V1_TABLES", "file_sha256", "graded_paths", "read_graded", "write_graded"]

#: The Parquet tables of a graded folder, in the order they are written (``summary.json`` after them).
GRADED_TABLES = ("turns", "conversations", "unmatched", "policy_inputs", "checks")
#: The tables of a graded folder of version 1 (or 0): the policy grades once per turn and policy.
V1_TABLES = ("turns", "conversations", "unmatched", "policy_grades", "checks")
#: The version of the graded folders this workbench writes.
GRADED_VERSION = SCHEMA_VERSIONS["graded"]


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _in_stable_order(systems: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The per-system metrics with each ``reasons`` count table ordered by count (descending),
    then by reason, so that ties do not come out in a different order in each run."""
    out = {}
    for system, metrics in systems.items():
        reasons = metrics.get("reasons") if isinstance(metrics, dict) else None
        if isinstance(reasons, dict):
            ordered = dict(sorted(reasons.items(), key=lambda item: (-item[1], str(item[0]))))
            metrics = {**metrics, "reasons": ordered}
        out[system] = metrics
    return out


def graded_paths(out_dir: str | Path, tables: tuple[str, ...] = GRADED_TABLES) -> dict[str, Path]:
    """The files of the graded folder ``out_dir`` by name (``tables``, by default
    :data:`GRADED_TABLES`, then ``summary``), in the order they are written.

    Examples
    --------
    >>> [p.name for p in graded_paths("g").values()][-3:]
    ['policy_inputs.parquet', 'checks.parquet', 'summary.json']
    """
    out = Path(out_dir)
    return {**{name: inside(out, f"{name}.parquet") for name in tables}, "summary": inside(out, "summary.json")}


def read_graded(folder: str | Path) -> tuple[Manifest, dict[str, pl.DataFrame], pl.Series]:
    """The manifest (``summary.json``), the tables of a graded folder (:data:`GRADED_TABLES`,
    ``turns`` without its ``input_key``) and the turns' input keys. A folder of version 1 (or 0)
    is converted: its ``policy_grades.parquet`` (a row per turn and policy) becomes the policy
    grades of its distinct inputs (:func:`~workbench.pipeline.policy_inputs.from_policy_grades`).

    Raises
    ------
    InputError
        When a file of the folder is missing, the policy inputs do not fit the turns, or a
        version-1 policy-grades column is missing or holds another type than
        :data:`~workbench.schema.POLICY_GRADES` says (text where it says categories is read as them).
    """
    summary = graded_paths(folder)["summary"]
    if not summary.is_file():
        raise InputError(
            str(folder),
            "not a complete graded folder: summary.json is missing",
            fix="grade the run again ('workbench grade ... --out FOLDER')",
        )
    manifest = read_manifest(summary, "graded")
    version_2 = manifest.schema_version >= 2
    paths = graded_paths(folder, GRADED_TABLES if version_2 else V1_TABLES)
    for path in paths.values():
        if not path.is_file():
            raise InputError(
                str(folder),
                f"not a complete graded folder: {path.name} is missing",
                fix="grade the run again ('workbench grade ... --out FOLDER')",
            )
    # the keys are text on disk (today's and older folders alike) and categories in memory
    tables = {name: keys_as_keys(pl.read_parquet(paths[name])) for name in paths if name != "summary"}
    if version_2:
        turns = tables["turns"]
        if "input_key" not in turns.columns:
            raise InputError(
                str(paths["turns"]),
                "column input_key is missing",
                field="input_key",
                fix="grade the run again ('workbench grade ... --out FOLDER')",
            )
        keys = turns.get_column("input_key")
        tables["turns"] = turns.drop("input_key")
        check_inputs(tables["policy_inputs"], keys, source=str(paths["policy_inputs"]))
        return manifest, tables, keys
    # a folder written while the policy grades' few-valued columns were text reads as today's
    grades = tables.pop("policy_grades")
    for name, dtype in POLICY_GRADES.items():
        found = grades.schema.get(name)
        if found is None or (found != dtype and not (found == pl.String and dtype == pl.Categorical)):
            raise InputError(
                str(paths["policy_grades"]),
                f"column {name} is missing" if found is None else f"column {name} holds {found}, not {dtype}",
                field=name,
                fix="grade the run again ('workbench grade ... --out FOLDER')",
            )
    grades = grades.with_columns([pl.col(c).cast(t) for c, t in POLICY_GRADES.items() if grades.schema[c] != t])
    keys, tables["policy_inputs"] = from_policy_grades(tables["turns"], grades, source=str(paths["policy_grades"]))
    return manifest, {name: tables[name] for name in GRADED_TABLES}, keys


def _write_text(path: Path, *, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def write_graded(
    run: GradedRun,
    gold: GoldDataset,
    prediction_files: Sequence[tuple[Path, str]],
    out_dir: str | Path,
    *,
    summary: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Path]:
    """Write a graded run into ``out_dir`` and return the paths written.

    ``prediction_files`` pairs each input file with the system it was read as, for the
    manifest in ``summary.json`` (a :class:`~workbench.io.manifest.Manifest` of kind ``graded``);
    ``summary`` is the per-system metrics when already computed.
    """
    out = Path(out_dir)

    manifest = Manifest(
        kind="graded",
        schema_version=GRADED_VERSION,
        inputs={
            "dataset": {
                "path": str(gold.path),
                "sha256": file_sha256(gold.path),
                "layout": gold.layout,
                "n_turns": gold.turns.height,
                "n_conversations": gold.turns["record_id"].n_unique(),
                "benchmark": gold.benchmark,
            },
            "predictions": [{"path": str(p), "sha256": file_sha256(p), "system": s} for p, s in prediction_files],
        },
        parameters={
            "policy": dataclasses.asdict(run.policy),
            "policies": [dataclasses.asdict(p) for p in POLICIES.values()],
        },
        # sorted: a hash group_by gives its groups in a different order from one run to the next
        outputs={
            "checks": {str(k): int(v) for k, v in run.checks.group_by("category").len().sort("category").iter_rows()}
        },
        metrics=_in_stable_order(
            summary
            if summary is not None
            else summarize(run.turns, run.unmatched, run.policy.name, run.systems, run.policy_grades)
        ),
    )
    paths = graded_paths(out)
    frames: dict[str, pl.DataFrame] = {
        "turns": run.turns.with_columns(run.input_keys.cast(pl.UInt32).alias("input_key")),
        "conversations": conversations(run.turns),
        "unmatched": run.unmatched,
        "policy_inputs": run.policy_inputs,
        "checks": run.checks,
    }
    text = manifest.to_json()
    # fixed writer options: the same run gives the same bytes (see tests/reliability);
    # written as a set, summary.json last: a failure half-way leaves the previous set whole
    write_atomic_set(
        [
            *(
                (paths[name], parquet_writer(frame, compression="zstd", statistics=True))
                for name, frame in frames.items()
            ),
            (paths["summary"], partial(_write_text, text=text)),
        ]
    )
    return paths
