"""Write graded outputs: ``turns.parquet``, ``conversations.parquet``, ``unmatched.parquet``,
``policy_grades.parquet``, ``checks.parquet`` (data-quality flags) and ``summary.json``,
each written atomically (a temporary file, then a rename)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from workbench.grade import GradedRun
from workbench.grading.policies import POLICIES
from workbench.io.gold import GoldDataset
from workbench.metrics import conversations, summarize

__all__ = ["file_sha256", "write_atomic", "write_graded"]


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_atomic(path: Path, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


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
    manifest in ``summary.json``; ``summary`` is the per-system metrics when already computed.
    """
    out = Path(out_dir)
    from workbench import __version__

    manifest: dict[str, Any] = {
        "workbench_version": __version__,
        "dataset": {
            "path": str(gold.path),
            "sha256": file_sha256(gold.path),
            "layout": gold.layout,
            "n_turns": gold.turns.height,
            "n_conversations": gold.turns["record_id"].n_unique(),
            "benchmark": gold.benchmark,
        },
        "predictions": [{"path": str(p), "sha256": file_sha256(p), "system": s} for p, s in prediction_files],
        "policy": dataclasses.asdict(run.policy),
        "policies": [dataclasses.asdict(p) for p in POLICIES.values()],
        "checks": {str(k): int(v) for k, v in run.checks.group_by("category").len().iter_rows()},
        "systems": summary
        if summary is not None
        else summarize(run.turns, run.unmatched, run.policy.name, run.systems, run.policy_grades),
    }
    paths = {
        "turns": out / "turns.parquet",
        "conversations": out / "conversations.parquet",
        "unmatched": out / "unmatched.parquet",
        "policy_grades": out / "policy_grades.parquet",
        "checks": out / "checks.parquet",
        "summary": out / "summary.json",
    }
    frames: dict[str, pl.DataFrame] = {
        "turns": run.turns,
        "conversations": conversations(run.turns),
        "unmatched": run.unmatched,
        "policy_grades": run.policy_grades,
        "checks": run.checks,
    }
    for name, frame in frames.items():
        write_atomic(paths[name], frame.write_parquet)
    text = json.dumps(manifest, indent=2, sort_keys=False) + "\n"
    write_atomic(paths["summary"], lambda p: p.write_text(text, encoding="utf-8"))
    return paths
