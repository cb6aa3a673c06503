"""Comparing the two bundled claude-sonnet-4-6 dev runs (06-35-00Z and 12-48-44Z)."""

from __future__ import annotations

import polars as pl
import pytest

from workbench.analysis import comparison
from workbench.analysis.metrics import summarize
from workbench.analysis.stats import mcnemar_exact
from workbench.errors import UsageError
from workbench.pipeline.run import Run
from workbench.views import tables

A, B = "claude 06-35", "claude 12-48"


@pytest.fixture(scope="module")
def paired(two_dev_runs: Run) -> pl.DataFrame:
    return comparison.compare_systems(two_dev_runs.turns, A, B, n_boot=1000, seed=0)


def test_metric_intervals_agree_with_the_summary(two_dev_runs: Run) -> None:
    intervals = comparison.metric_intervals(two_dev_runs.turns, n_boot=500)
    summary = summarize(two_dev_runs.turns, two_dev_runs.unmatched, "symbolic", text_metrics=False)
    for system in (A, B):
        part = dict(intervals.filter(pl.col("system") == system).select("metric", "accuracy").iter_rows())
        for key, value in part.items():
            assert value == pytest.approx(summary[system][key]), (system, key)
        bounds = intervals.filter(pl.col("system") == system)
        assert (bounds["low"] <= bounds["accuracy"]).all() and (bounds["accuracy"] <= bounds["high"]).all()
    first = intervals.filter((pl.col("system") == A) & (pl.col("metric") == "turn_execution_accuracy")).row(
        0, named=True
    )
    assert (first["n_correct"], first["n_turns"], first["n_conversations"]) == (1238, 1490, 421)


def test_systems_table_has_the_seed_report_layout(two_dev_runs: Run) -> None:
    table = comparison.systems_table(comparison.metric_intervals(two_dev_runs.turns, n_boot=200))
    assert table.columns == [
        "system",
        "Conversation execution acc.",
        "Conversation program acc.",
        "Turn execution acc.",
        "Turn program acc.",
    ]
    assert table["Turn execution acc."][0].startswith("83.1% [")


def test_paired_overall_difference(paired: pl.DataFrame) -> None:
    overall = paired.filter(pl.col("slice") == "overall").row(0, named=True)
    # the 4 turns of the conversation the second run lacks are unpaired, not counted wrong
    assert overall["n_turns"] == 1486
    assert overall["n_unpaired"] == 4
    assert overall["difference"] == pytest.approx((overall["a_only"] - overall["b_only"]) / overall["n_turns"])
    assert overall["low"] <= overall["difference"] <= overall["high"]
    assert overall["mcnemar_p"] == pytest.approx(mcnemar_exact(overall["a_only"], overall["b_only"]))
    assert overall["accuracy_a"] - overall["accuracy_b"] == pytest.approx(overall["difference"])
    # regression figures of the two real runs (stated in the README and the closing note)
    assert (overall["a_only"], overall["b_only"]) == (18, 5)
    assert overall["difference"] == pytest.approx(13 / 1486)
    assert overall["mcnemar_p"] == pytest.approx(0.0106, abs=1e-4)
    assert 0 < overall["low"] < overall["difference"] < overall["high"] < 0.02


def test_paired_per_slice(paired: pl.DataFrame) -> None:
    for name in ("operation", "turn_index", "type2", "dependency_distance", "answer_format", "dq_category"):
        part = paired.filter(pl.col("slice") == name)
        assert part.height >= 2, name
        # the groups of a slice partition the paired turns
        assert part["n_turns"].sum() == 1486, name
        assert part["a_only"].sum() == paired.filter(pl.col("slice") == "overall")["a_only"][0]
    assert paired["mcnemar_p"].is_between(0, 1).all()


def test_paired_table_and_plot_render(paired: pl.DataFrame) -> None:
    markup = tables.paired_table(paired).markup
    assert f"only {A} right" in markup and "McNemar p" in markup
    from workbench.views.plots import paired_differences

    fig = paired_differences(paired)
    assert len(fig.data[0].y) == paired.height


def test_systems_to_compare_are_checked(two_dev_runs: Run) -> None:
    assert comparison.pick_systems(two_dev_runs.turns) == (A, B)
    with pytest.raises(UsageError, match="no graded system named 'nope'"):
        comparison.pick_systems(two_dev_runs.turns, "nope", B)
    with pytest.raises(UsageError, match="both systems"):
        comparison.pick_systems(two_dev_runs.turns, A, A)
    one = two_dev_runs.turns.filter(pl.col("system") == A)
    with pytest.raises(UsageError, match="needs two systems"):
        comparison.pick_systems(one)
