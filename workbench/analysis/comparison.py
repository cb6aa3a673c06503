"""Compare systems: headline metrics with intervals in the seed report's layout, and
paired differences between two systems, overall and per slice.

Intervals are bootstrap intervals clustered by conversation; paired differences resample
the conversations both systems answered, once for both; the McNemar test counts the turns
exactly one of the two systems got right (see :mod:`workbench.analysis.stats`).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from workbench.analysis.metrics import COMPARED_METRICS
from workbench.analysis.slices import long_slices
from workbench.analysis.stats import paired_comparison, slice_intervals
from workbench.errors import UsageError

__all__ = ["metric_long", "metric_intervals", "systems_table", "compare_systems", "pick_systems"]


def metric_long(turns: pl.DataFrame) -> pl.DataFrame:
    """The turns behind each compared metric (``COMPARED_METRICS`` of
    :mod:`workbench.analysis.metrics`), as a long frame (``slice`` = metric key, ``group`` =
    ``all``, ``correct`` = the metric's outcome). Program metrics only for systems that
    give programs.

    Examples
    --------
    >>> t = pl.DataFrame({"system": ["s"] * 2, "record_id": ["r"] * 2, "turn": [0, 1], "n_turns": [2, 2],
    ...                   "correct": [True, False], "program_correct": [None, None], "predicted_program": [None, None]})
    >>> metric_long(t).group_by("slice", maintain_order=True).len().rows()
    [('conversation_execution_accuracy', 1), ('turn_execution_accuracy', 2)]
    """
    with_programs = turns.group_by("system").agg(pl.col("predicted_program").is_not_null().any().alias("_programs"))
    frame = turns.join(with_programs, on="system", how="left")
    last = pl.col("turn") == pl.col("n_turns") - 1
    parts = []
    for spec in COMPARED_METRICS:
        assert spec.outcome is not None, spec.key  # every compared metric has a turn outcome
        part = frame.filter(last) if spec.aggregation == "conversation" else frame
        if spec.requires == "programs":
            part = part.filter(pl.col("_programs"))
        parts.append(
            part.select(
                "system",
                "record_id",
                "turn",
                spec.outcome.alias("correct"),
                pl.lit(spec.key).alias("slice"),
                pl.lit("all").alias("group"),
            )
        )
    return pl.concat(parts)


def metric_intervals(turns: pl.DataFrame, *, n_boot: int = 1000, level: float = 0.95, seed: int = 0) -> pl.DataFrame:
    """Each system's headline metrics with bootstrap intervals clustered by conversation:
    ``system, metric, n_turns, n_correct, n_conversations, accuracy, low, high``."""

    table = slice_intervals(metric_long(turns), n_boot=n_boot, level=level, seed=seed)
    return table.rename({"slice": "metric"}).drop("group")


def _with_interval(accuracy: float | None, low: float | None, high: float | None) -> str | None:
    if accuracy is None:
        return None
    if low is None or high is None:
        return f"{accuracy:.1%}"
    return f"{accuracy:.1%} [{low:.1%}, {high:.1%}]"


def systems_table(intervals: pl.DataFrame) -> pl.DataFrame:
    """Systems by metrics, as in the seed report (conversation- and turn-level execution
    and program accuracy), each cell ``83.1% [81.2%, 84.9%]``; ``intervals`` from
    :func:`metric_intervals`.

    Examples
    --------
    >>> iv = pl.DataFrame({"system": ["s"], "metric": ["turn_execution_accuracy"], "accuracy": [0.5],
    ...                    "low": [0.25], "high": [0.75]})
    >>> systems_table(iv).row(0)
    ('s', None, None, '50.0% [25.0%, 75.0%]', None)
    """
    rows = []
    for system in dict.fromkeys(intervals["system"].to_list()):
        part = intervals.filter(pl.col("system") == system)
        row: dict[str, str | None] = {"system": system}
        for spec in COMPARED_METRICS:
            found = part.filter(pl.col("metric") == spec.key)
            row[spec.label] = _with_interval(*found.select("accuracy", "low", "high").row(0)) if found.height else None
        rows.append(row)
    return pl.DataFrame(rows, schema={"system": pl.String, **{spec.label: pl.String for spec in COMPARED_METRICS}})


def pick_systems(turns: pl.DataFrame, system_a: str = "", system_b: str = "") -> tuple[str, str]:
    """The two systems to compare: the ones named, else the first two graded.

    Raises
    ------
    UsageError
        With fewer than two systems, or a name that was not graded.
    """
    systems = list(dict.fromkeys(turns["system"].to_list()))
    a = system_a or (systems[0] if systems else "")
    b = system_b or next((s for s in systems if s != a), "")
    if len(systems) < 2 and not (system_a and system_b):
        raise UsageError(
            f"a paired comparison needs two systems; only {', '.join(systems) or 'none'} were graded. "
            "Fix: give two or more prediction files"
        )
    for name in (a, b):
        if name not in systems:
            raise UsageError(f"no graded system named {name!r}. Fix: use one of {', '.join(systems)}")
    if a == b:
        raise UsageError(f"both systems of the comparison are {a!r}. Fix: name two different systems")
    return a, b


def compare_systems(
    turns: pl.DataFrame,
    system_a: str = "",
    system_b: str = "",
    names: Sequence[str] | None = None,
    *,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> pl.DataFrame:
    """Paired comparison of two systems, overall and per slice group (see
    :func:`workbench.analysis.stats.paired_comparison` for the columns), with the two system names
    as ``system_a``/``system_b`` columns.

    Only the turns both systems answered are paired: a turn one of them has no prediction
    for is counted in ``n_unpaired`` and left out (its absence is a fact about the run, not
    a comparison of answers).
    """

    a, b = pick_systems(turns, system_a, system_b)
    default = ["operation", "turn_index", "n_turns", "type2", "dependency_distance", "answer_format", "dq_category"]
    answered = turns.filter(pl.col("system").is_in([a, b]) & (pl.col("status") != "no_prediction"))
    long = long_slices(answered, list(names) if names is not None else default)
    table = paired_comparison(long, a, b, n_boot=n_boot, level=level, seed=seed)
    return table.with_columns(pl.lit(a).alias("system_a"), pl.lit(b).alias("system_b"))
