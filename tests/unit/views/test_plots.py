"""Figures carry the accuracies computed from the graded turns of a real run."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hostile_figures import LINK, MARKUP, SCRIPT, TEX, hostile_turns

from workbench.config import resolve
from workbench.pipeline.run import grade_run
from workbench.schema import CHECKS
from workbench.views import plots

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def turns() -> pl.DataFrame:
    cfg = resolve(
        dataset=REPO / "tests/fixtures/convfinqa/dev_small.json",
        predictions=[str(REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl")],
        systems="claude",
    )
    return grade_run(cfg).turns


def test_accuracy_by_turn_matches_turns(turns: pl.DataFrame) -> None:
    fig = plots.accuracy_by_turn(turns)
    (trace,) = fig.data
    expected = turns.group_by("turn").agg(pl.col("correct").mean()).sort("turn")
    assert list(trace.x) == expected["turn"].to_list()
    assert list(trace.y) == pytest.approx(expected["correct"].to_list())
    assert trace.name == "claude"


def test_accuracy_by_operation_orders_by_frequency(turns: pl.DataFrame) -> None:
    fig = plots.accuracy_by_operation(turns)
    counts = turns.group_by("operation").len().sort("len", "operation", descending=[True, False])
    assert list(fig.layout.xaxis.categoryarray) == counts["operation"].to_list()
    (trace,) = fig.data
    by_op = dict(zip(trace.x, trace.y, strict=True))
    lookup = turns.filter(pl.col("operation") == "lookup")["correct"].mean()
    assert by_op["lookup"] == pytest.approx(lookup)


# --------------------------------------------------------------------------- hostile text
@pytest.fixture(scope="module")
def hostile(turns: pl.DataFrame) -> pl.DataFrame:
    return hostile_turns(turns)


def _every_figure(hostile: pl.DataFrame) -> dict[str, object]:
    """Each figure :mod:`workbench.views.plots` offers, built from the hostile turns."""
    from workbench.analysis import comparison, slices
    from workbench.quality import checks

    by_slice = slices.slice_accuracy(hostile, ["operation", "turn_index", "error_type"], n_boot=20, seed=0)
    counts = checks.flag_counts(pl.DataFrame(schema=CHECKS))
    counts = pl.concat([counts, pl.DataFrame({"category": [LINK, SCRIPT], "n_flags": [2, 3], "n_turns": [2, 3]})])
    paired = comparison.compare_systems(hostile, LINK, SCRIPT, ["operation"], n_boot=20, seed=0)
    return {
        "accuracy_by_turn": plots.accuracy_by_turn(hostile),
        "accuracy_by_operation": plots.accuracy_by_operation(hostile),
        "slice_accuracy:operation": plots.slice_accuracy(by_slice, "operation"),
        "slice_accuracy:turn_index": plots.slice_accuracy(by_slice, "turn_index"),
        "slice_accuracy:titled": plots.slice_accuracy(by_slice, "error_type", title=f"errors of {LINK}"),
        "error_heatmap": plots.error_heatmap(hostile),
        "error_heatmap:one system": plots.error_heatmap(hostile, system=LINK),
        "flag_counts": plots.flag_counts(counts),
        "paired_differences": plots.paired_differences(paired),
        "paired_differences:titled": plots.paired_differences(paired, title=f"{LINK} vs {SCRIPT}"),
    }


def test_plots_offers_no_figure_this_test_misses() -> None:
    offered = {name for name in plots.__all__ if name != "plot_text"}
    assert offered == {
        "accuracy_by_turn",
        "accuracy_by_operation",
        "slice_accuracy",
        "error_heatmap",
        "flag_counts",
        "paired_differences",
    }


def test_no_figure_carries_live_markup_from_the_data(hostile: pl.DataFrame) -> None:
    """System names, operations, error types, categories and titles with ``<a href>``,
    ``<script>`` and TeX ``$\\href`` reach every figure as escaped text (entities plotly draws
    as the characters), in names, ticks, category orders, titles and hover text."""
    figures = _every_figure(hostile)
    for name, fig in figures.items():
        spec = fig.to_json()  # type: ignore[attr-defined]
        for bad in MARKUP:
            assert bad not in spec, (name, bad)
    names = {t.name for t in figures["accuracy_by_turn"].data}  # type: ignore[attr-defined]
    assert names == {plots.plot_text(LINK), plots.plot_text(SCRIPT), plots.plot_text(TEX)}
    assert plots.plot_text(LINK) == '&lt;a href="http://evil.example/"&gt;x&lt;/a&gt;'
    assert plots.plot_text(TEX) == r"&#36;\href{http://evil.example/}{tex}&#36;"
    op_axis = figures["accuracy_by_operation"].layout.xaxis.categoryarray  # type: ignore[attr-defined]
    assert plots.plot_text(f"{SCRIPT}{LINK}") in op_axis
    heat = figures["error_heatmap"].data[0]  # type: ignore[attr-defined]
    assert plots.plot_text(LINK) in heat.y
    print({name: len(fig.to_json()) for name, fig in figures.items()})  # type: ignore[attr-defined]


def test_heatmap_order_is_the_same_whatever_order_the_turns_come_in(turns: pl.DataFrame) -> None:
    """Rows and columns by count, ties by name: the report of the same run is the same page
    (group_by's order varies from run to run; without the tie-breaker the heatmap did too)."""
    wrong = turns.filter(~pl.col("correct"))
    figures = [plots.error_heatmap(wrong.sample(fraction=1.0, shuffle=True, seed=seed)) for seed in range(8)]
    first = figures[0].data[0]
    assert first.y and first.x
    for fig in figures[1:]:
        assert (fig.data[0].x, fig.data[0].y, fig.data[0].z) == (first.x, first.y, first.z)
    counts = wrong.group_by(pl.col("error_type").cast(pl.String)).len()
    expected = counts.sort("len", "error_type", descending=[True, False])["error_type"].to_list()
    assert list(first.y) == [plots.plot_text(t) for t in expected]
