"""Figures and tables of the error-analysis templates, on both real dev runs."""

from __future__ import annotations

import re

import polars as pl
import pytest
from markupsafe import escape

from workbench.analysis import words
from workbench.analysis.slices import slice_accuracy
from workbench.pipeline.run import Run
from workbench.quality import checks
from workbench.views import plots, tables


@pytest.fixture(scope="module")
def by_slice(two_dev_runs: Run) -> pl.DataFrame:
    return slice_accuracy(two_dev_runs.turns, n_boot=300, seed=1)


def test_slice_plot_has_interval_bars_around_each_accuracy(by_slice: pl.DataFrame) -> None:
    fig = plots.slice_accuracy(by_slice, "operation")
    assert {trace.legendgroup for trace in fig.data} == set(by_slice["system"].to_list())  # traces per system
    for trace in fig.data:
        part = by_slice.filter((pl.col("system") == trace.legendgroup) & (pl.col("slice") == "operation"))
        expected = dict(part.select("group", "accuracy").iter_rows())
        for x, (accuracy, *_), plus, minus in zip(
            trace.x, trace.customdata, trace.error_y.array, trace.error_y.arrayminus, strict=True
        ):
            assert accuracy == pytest.approx(expected[x])
            assert plus >= 0 and minus >= 0
    turn_fig = plots.slice_accuracy(by_slice, "turn_index")
    assert list(turn_fig.data[0].x)[:3] == ["0", "1", "2"]  # numeric order, drawn as lines
    assert turn_fig.data[0].mode == "lines+markers"


def test_heatmap_counts_every_wrong_turn_once(two_dev_runs: Run) -> None:
    fig = plots.error_heatmap(two_dev_runs.turns)
    total = sum(sum(row) for row in fig.data[0].z)
    assert total == two_dev_runs.turns.filter(~pl.col("correct")).height
    one = plots.error_heatmap(two_dev_runs.turns, system="claude 06-35")
    assert sum(sum(row) for row in one.data[0].z) == 1490 - 1238


def test_flag_counts_table_and_plot(two_dev_runs: Run) -> None:
    counts = checks.flag_counts(two_dev_runs.checks)
    assert counts["category"].cast(pl.String).to_list() == [
        "mislabel",
        "unit_inconsistency",
        "sign_inconsistency",
        "missing_value",
    ]
    fig = plots.flag_counts(counts)
    assert list(fig.data[0].y) == counts["n_turns"].to_list()
    assert "Data-quality flags per category" in tables.flag_counts(counts).markup


def test_checks_table_shows_evidence_escaped(two_dev_runs: Run) -> None:
    markup = tables.checks_table(two_dev_runs.checks, limit=5000).markup
    sign = two_dev_runs.checks.filter(pl.col("category") == "sign_inconsistency")
    for evidence in sign["evidence"].to_list():
        assert escape(evidence) in markup


def test_drilldown_has_a_section_per_group_with_its_failures(two_dev_runs: Run) -> None:
    turns = two_dev_runs.turns.filter(pl.col("system") == "claude 06-35")
    markup = tables.drilldown(turns, "error_type", limit=1000).markup
    counts = dict(turns.filter(~pl.col("correct")).group_by(pl.col("error_type").cast(pl.String)).len().iter_rows())
    found = dict(
        (group, int(n)) for group, n in re.findall(r"Error type: <b>([a-z ()]+)</b> \((\d+) failed turns?\)", markup)
    )
    assert found == {words.plain(group): n for group, n in counts.items()}, "the groups in words"
    assert "extraction failure" in found, "the names in the words of the one mapping"
