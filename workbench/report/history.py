"""History: the runs of a ledger (:mod:`workbench.pipeline.ledger`) over time, as tables.

* :func:`over_runs`: accuracy of every system and slice group in every run, with a 95%
  bootstrap interval clustered by conversation (:func:`workbench.analysis.stats.slice_intervals`);
* :func:`run_changes`: for every run and system, the items newly failing and newly passing since
  that system's previous run, and the groups where the run differs from it: a paired McNemar
  test on the items both answered (the regression gate's test,
  :func:`workbench.report.gate.compare_rows`), Holm-adjusted across every group of every run
  shown for the system, a group the items of a stronger difference explain folded into it
  (:func:`workbench.report.gate.fold`).

A run is numbered from 1 in the order the ledger holds them (oldest first).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from workbench.analysis.comparison import holm
from workbench.analysis.stats import slice_intervals
from workbench.pipeline.ledger import LedgerRow
from workbench.report.gate import ALPHA, compare_rows, fold, paired_items, previous_row

__all__ = ["lineage", "over_runs", "run_changes"]


def _numbered(rows: Sequence[LedgerRow]) -> dict[str, int]:
    return {run_id: i for i, run_id in enumerate(dict.fromkeys(r.run_id for r in rows), start=1)}


def lineage(rows: Sequence[LedgerRow]) -> list[str]:
    """The name each row is shown under: the name of the first row of its line of runs (each row
    linked to its previous run as the gate links them, :func:`workbench.report.gate.previous_row`),
    so a nightly system whose name carries a run-folder timestamp is one line over time."""
    names: list[str] = []
    for position, row in enumerate(rows):
        before = previous_row(rows[:position], row)
        earlier = next((i for i, r in enumerate(rows) if r is before), None)
        names.append(names[earlier] if earlier is not None else row.system)
    return names


def over_runs(rows: Sequence[LedgerRow], *, n_boot: int = 1000, seed: int = 0) -> pl.DataFrame:
    """``run, run_id, created_at, report, system, slice, group, n_turns, accuracy, low, high``:
    one row per run, system and slice group (``system`` as :func:`lineage` names it)."""
    number = _numbered(rows)
    parts = []
    for row, name in zip(rows, lineage(rows), strict=True):
        long = row.verdicts.with_columns(pl.lit(name).alias("system"))
        table = slice_intervals(long, n_boot=n_boot, seed=seed)
        parts.append(
            table.select(
                pl.lit(number[row.run_id]).alias("run"),
                pl.lit(row.run_id).alias("run_id"),
                pl.lit(row.created_at).alias("created_at"),
                pl.lit(row.report).alias("report"),
                "system",
                "slice",
                "group",
                "n_turns",
                "accuracy",
                "low",
                "high",
            )
        )
    return pl.concat(parts) if parts else pl.DataFrame()


def run_changes(rows: Sequence[LedgerRow]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The changes of each run against the system's previous run.

    Returns
    -------
    (items, marks)
        ``items``: ``run, system, newly_failing, newly_passing`` (items both runs answered);
        ``marks``: ``run, system, slice, group, n_turns, accuracy_before, accuracy_now,
        mcnemar_p, p_holm, also``: the groups where the run differs (McNemar p < 0.05 after
        Holm's adjustment across all the system's runs and groups), with the groups the same
        items explain.
    """
    number = _numbered(rows)
    names = lineage(rows)
    counts: list[dict[str, object]] = []
    marks: list[dict[str, object]] = []
    tested: list[tuple[int, str, pl.DataFrame, pl.DataFrame]] = []
    for position, now in enumerate(rows):
        before = previous_row(rows[:position], now)
        if before is None:
            continue
        run, system = number[now.run_id], names[position]
        items = paired_items(before, now)
        overall = items.filter(pl.col("slice") == "overall")
        counts.append(
            {
                "run": run,
                "system": system,
                "newly_failing": overall.filter(pl.col("before") & ~pl.col("now")).height,
                "newly_passing": overall.filter(~pl.col("before") & pl.col("now")).height,
            }
        )
        table = compare_rows(before, now)
        if not table.is_empty():
            tested.append((run, system, items, table))
    # Holm across every group of every run shown for the system: the family the page shows
    for system in dict.fromkeys(name for _, name, _, _ in tested):
        mine = [entry for entry in tested if entry[1] == system]
        adjusted = iter(holm([p for *_, table in mine for p in table["mcnemar_p"].to_list()]))
        for run, _, items, table in mine:
            table = table.with_columns(p_holm=pl.Series([next(adjusted) for _ in range(table.height)]))
            for found, also in fold(items, table.filter(pl.col("p_holm") < ALPHA), 0.0):
                marks.append({"run": run, "system": system, **found, "also": ", ".join(also)})
    items_schema = {"run": pl.Int64, "system": pl.String, "newly_failing": pl.Int64, "newly_passing": pl.Int64}
    marks_schema = {
        "run": pl.Int64,
        "system": pl.String,
        "slice": pl.String,
        "group": pl.String,
        "n_turns": pl.Int64,
        "accuracy_before": pl.Float64,
        "accuracy_now": pl.Float64,
        "mcnemar_p": pl.Float64,
        "p_holm": pl.Float64,
        "also": pl.String,
    }
    return pl.DataFrame(counts, schema=items_schema), pl.DataFrame(marks, schema=marks_schema)
