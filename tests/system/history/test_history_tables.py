"""The history tables behind 05-history (issue 34, point 2, package part): 12 nightly runs from the
bundled runs show 12 points per system with intervals, and the planted 6-point drop on `divide` in
run 9 is the one group marked (the groups the same items moved named on its mark)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from tests.system.history.conftest import build_ledger
from workbench.pipeline.ledger import LedgerRow, read_ledger
from workbench.report.history import over_runs, run_changes


def test_twelve_runs_a_point_each_and_one_mark_on_divide(bundled_rows: list[LedgerRow], tmp_path: Path) -> None:
    rows = read_ledger(build_ledger(tmp_path / "ledger.sqlite", bundled_rows, 12, drop_night=9), with_verdicts=True)
    table = over_runs(rows, n_boot=200)
    overall = table.filter(pl.col("slice") == "overall")
    assert overall.group_by("system").len()["len"].to_list() == [12, 12]
    assert overall.height == 24
    assert (overall["low"] <= overall["accuracy"]).all() and (overall["accuracy"] <= overall["high"]).all()
    divide = table.filter((pl.col("slice") == "operation") & (pl.col("group") == "divide"))
    assert divide["run"].n_unique() == 12
    items, marks = run_changes(rows)
    assert items.height == 2 * 11  # each system's runs after its first
    assert (items["newly_failing"] > 0).all() and (items["newly_passing"] > 0).all()
    assert marks.select("run", "slice", "group").rows() == [(9, "operation", "divide")], marks
    (mark,) = marks.iter_rows(named=True)
    assert mark["accuracy_before"] - mark["accuracy_now"] > 0.05 and mark["p_holm"] < 0.05
    assert "answer format percent" in mark["also"]
