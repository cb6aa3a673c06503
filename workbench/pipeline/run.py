"""Load, grade and (optionally) write one run: the call behind ``workbench grade`` and the
templates."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import polars as pl

from workbench.analysis.metrics import conversations, summarize
from workbench.config import RunConfig
from workbench.errors import UsageError
from workbench.io.gold import GoldDataset, load_gold
from workbench.io.link import attach_record_ids, detect_benchmark, gold_from_predictions
from workbench.io.predictions import load_predictions
from workbench.pipeline.engines import grade_on_engine
from workbench.pipeline.grade import GradedRun, grade_predictions
from workbench.pipeline.graded import write_graded

__all__ = ["Run", "grade_run"]


@dataclass(frozen=True)
class Run:
    """A graded run with its inputs, ready for tables, plots and export."""

    config: RunConfig
    gold: GoldDataset
    graded: GradedRun
    prediction_files: tuple[tuple[Path, str], ...]
    predictions: tuple[pl.DataFrame, ...] = ()
    kind: str = "auto"

    @property
    def turns(self) -> pl.DataFrame:
        return self.graded.turns

    @property
    def conversations(self) -> pl.DataFrame:
        return conversations(self.graded.turns)

    @property
    def unmatched(self) -> pl.DataFrame:
        return self.graded.unmatched

    @cached_property
    def summary(self) -> dict[str, dict[str, Any]]:
        """Headline metrics per system (computed once: BLEU/ROUGE are not free)."""
        g = self.graded
        return summarize(g.turns, g.unmatched, g.policy.name, g.systems, g.policy_grades)

    @property
    def policy_grades(self) -> pl.DataFrame:
        """One row per turn and grading policy (see :data:`workbench.schema.POLICY_GRADES`)."""
        return self.graded.policy_grades

    @property
    def checks(self) -> pl.DataFrame:
        """Data-quality flags on the gold turns (see :data:`workbench.schema.CHECKS`)."""
        return self.graded.checks

    def regrade(self, gold: GoldDataset) -> GradedRun:
        """Grade the same predictions against another gold set (a cleaned export of this one)."""
        g = self.graded
        return grade_predictions(
            gold,
            list(self.predictions),
            policy=g.policy,
            kind=self.kind,
            benchmark=self.gold.benchmark,  # type: ignore[arg-type]
        )

    def write(self, out_dir: str | Path) -> dict[str, Path]:
        """Write ``turns.parquet``, ``conversations.parquet``, ``unmatched.parquet``,
        ``policy_grades.parquet``, ``checks.parquet`` and ``summary.json`` into ``out_dir``;
        an empty ``out_dir`` writes nothing."""
        if not str(out_dir):
            return {}
        return write_graded(self.graded, self.gold, self.prediction_files, out_dir, summary=self.summary)

    def __repr__(self) -> str:
        systems = ", ".join(system for _, system in self.prediction_files)
        return (
            f"Run(dataset={str(self.gold.path)!r}, systems=[{systems}], turns={self.graded.turns.height}, "
            f"policy={self.graded.policy.name!r}); workbench.tables.run_overview(run) shows it as a page"
        )


#: How answers are compared for each benchmark (see :func:`workbench.grading.compare.answers_match`).
_KIND_BY_BENCHMARK = {"math": "latex"}


def _check_benchmark(config: RunConfig, found: str) -> str:
    if config.benchmark not in ("auto", found):
        raise UsageError(
            f"--benchmark {config.benchmark} was given, but the gold data is {found}. "
            f"Fix: drop --benchmark, or give a {config.benchmark} dataset"
        )
    return found


def grade_run(
    config: RunConfig, *, engine: str = "local", scheduler: str | None = None, host: str | None = None
) -> Run:
    """Load the gold set and every prediction file of ``config`` and grade them.

    Without a dataset (``config.dataset is None``) the gold is read from the prediction
    files themselves; prediction rows without a record id are linked to the gold by their
    question text.

    ``engine="dask"`` grades on a Dask cluster (the scheduler at ``scheduler``, or a local
    cluster started for the run, listening on ``host``, 127.0.0.1 unless given); the result
    equals the local engine's. See
    :mod:`workbench.pipeline.engines`.

    Raises
    ------
    InputError
        For any unusable input (the message names file, line or record, field, fix).
    UsageError
        When two prediction files would be the same system, or ``--benchmark`` contradicts
        the data.
    """
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
    if config.dataset is None:
        gold = gold_from_predictions(pl.concat(frames, how="vertical_relaxed"), source=str(config.predictions[0]))
    else:
        gold = load_gold(config.dataset)
    frames = [attach_record_ids(frame, gold) for frame in frames]
    benchmark = _check_benchmark(config, detect_benchmark(gold, pl.concat(frames, how="vertical_relaxed")))
    kind = _KIND_BY_BENCHMARK.get(benchmark, "auto")
    graded = grade_on_engine(
        gold, frames, engine=engine, scheduler=scheduler, host=host, policy=config.policy, kind=kind, benchmark=benchmark
    )
    return Run(
        config=config, gold=gold, graded=graded, prediction_files=tuple(files), predictions=tuple(frames), kind=kind
    )
