"""Load, grade and (optionally) write one run: the call behind ``workbench grade`` and the
templates."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from workbench.config import RunConfig
from workbench.errors import UsageError
from workbench.grade import GradedRun, grade_predictions
from workbench.io.gold import GoldDataset, load_gold
from workbench.io.outputs import write_graded
from workbench.io.predictions import load_predictions
from workbench.metrics import conversations, summarize

__all__ = ["Run", "grade_run"]


@dataclass(frozen=True)
class Run:
    """A graded run with its inputs, ready for tables, plots and export."""

    config: RunConfig
    gold: GoldDataset
    graded: GradedRun
    prediction_files: tuple[tuple[Path, str], ...]

    @property
    def turns(self) -> pl.DataFrame:
        return self.graded.turns

    @property
    def conversations(self) -> pl.DataFrame:
        return conversations(self.graded.turns)

    @property
    def unmatched(self) -> pl.DataFrame:
        return self.graded.unmatched

    @property
    def summary(self) -> dict[str, dict[str, Any]]:
        return summarize(self.graded.turns, self.graded.unmatched, self.graded.policy.name, self.graded.systems)

    def write(self, out_dir: str | Path) -> dict[str, Path]:
        """Write ``turns.parquet``, ``conversations.parquet``, ``unmatched.parquet`` and
        ``summary.json`` into ``out_dir``; an empty ``out_dir`` writes nothing."""
        if not str(out_dir):
            return {}
        return write_graded(self.graded, self.gold, self.prediction_files, out_dir)

    def _repr_html_(self) -> str:
        from workbench.tables import run_overview

        return run_overview(self)._repr_html_()


def grade_run(config: RunConfig) -> Run:
    """Load the gold set and every prediction file of ``config`` and grade them.

    Raises
    ------
    InputError
        For any unusable input (the message names file, line or record, field, fix).
    UsageError
        When two prediction files would be the same system.
    """
    gold = load_gold(config.dataset)
    frames = []
    files: list[tuple[Path, str]] = []
    for path, system, cmap in zip(config.predictions, config.systems, config.column_maps, strict=True):
        frame = load_predictions(path, system=system, column_map=cmap)
        for name in dict.fromkeys(frame["system"].to_list()):
            if any(name == other for _, other in files):
                raise UsageError(
                    f"two prediction files are both named system '{name}'. "
                    "Fix: name each with --system (one per file, in order)"
                )
            files.append((path, name))
        frames.append(frame)
    graded = grade_predictions(gold, frames, policy=config.policy)
    return Run(config=config, gold=gold, graded=graded, prediction_files=tuple(files))
