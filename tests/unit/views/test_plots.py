"""Figures carry the accuracies computed from the graded turns of a real run."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hostile_figures import LINK, MARKUP, SCRIPT, TEX, hostile_turns

from workbench.analysis import slices
from workbench.analysis.slices import MIN_GROUP_N
from workbench.config import resolve
from workbench.pipeline.run import grade_run
from workbench.quality import checks
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


def _points(fig: object) -> dict[tuple[str, str], tuple[float, float, float, int]]:
    """(trace name, x) -> (accuracy, low, high, n) from every trace's customdata."""
    return {
        (trace.name, x): tuple(data)  # type: ignore[misc]
        for trace in fig.data  # type: ignore[attr-defined]
        for x, data in zip(trace.x, trace.customdata, strict=True)
    }


def test_accuracy_by_turn_matches_turns(turns: pl.DataFrame) -> None:
    fig = plots.accuracy_by_turn(turns, n_boot=200, seed=0)
    expected = turns.group_by(pl.col("turn").cast(pl.String)).agg(pl.col("correct").mean(), pl.len()).sort("turn")
    points = _points(fig)
    assert {x for _, x in points} == set(expected["turn"].to_list())
    for turn, accuracy, n in expected.iter_rows():
        name = "claude" if n >= MIN_GROUP_N else f"claude: n &lt; {MIN_GROUP_N}"
        assert points[(name, turn)][0] == pytest.approx(accuracy)
        assert points[(name, turn)][3] == n
    assert list(fig.layout.xaxis.categoryarray) == expected["turn"].to_list()


def test_accuracy_by_operation_orders_by_frequency(turns: pl.DataFrame) -> None:
    fig = plots.accuracy_by_operation(turns, n_boot=200, seed=0)
    counts = turns.group_by("operation").len().sort("len", "operation", descending=[True, False])
    assert list(fig.layout.xaxis.categoryarray) == counts["operation"].to_list()
    by_op = {x: data[0] for (_, x), data in _points(fig).items()}
    lookup = turns.filter(pl.col("operation") == "lookup")["correct"].mean()
    assert by_op["lookup"] == pytest.approx(lookup)


def test_overview_figures_are_the_same_with_the_same_seed(turns: pl.DataFrame) -> None:
    first, again = (plots.accuracy_by_turn(turns, n_boot=100, seed=3) for _ in range(2))
    assert first.to_json() == again.to_json()
    other = plots.accuracy_by_turn(turns, n_boot=100, seed=4)
    assert other.to_json() != first.to_json()


# --------------------------------------------------------------------------- honest groups
def _synthetic_turns() -> pl.DataFrame:
    """One system, 60 conversations: turns 0 to 2 in every one (about 80% right), turns 3 to 10
    in the first six (turn 10 after 9, each too small), all wrong; plus an operation per turn."""
    rows = []
    for c in range(60):
        last = 10 if c < 6 else 2
        for t in range(last + 1):
            rows.append(
                {
                    "system": "s",
                    "record_id": f"c{c:02d}",
                    "turn": t,
                    "correct": (t <= 2 and (c + t) % 5 != 0),
                    "program_correct": None,
                    "operation": "greater" if t > 2 else ("divide" if t % 2 else "subtract"),
                }
            )
    return pl.DataFrame(rows)


def test_every_group_is_drawn_with_its_interval_and_small_ones_marked() -> None:
    turns = _synthetic_turns()
    table = slices.slice_accuracy(turns, ["turn_index", "operation"], n_boot=200, seed=0)
    for name in ("turn_index", "operation"):
        fig = plots.slice_accuracy(table, name)
        part = table.filter(pl.col("slice") == name)
        drawn = 0
        for trace in fig.data:
            assert len(trace.error_y.array) == len(trace.error_y.arrayminus) == len(trace.x)
            small = trace.name.endswith(f"n &lt; {MIN_GROUP_N}")
            for (*_, n), hover in zip(trace.customdata, trace.hovertext, strict=True):
                assert (n < MIN_GROUP_N) == small
                assert f"n &lt; {MIN_GROUP_N}" in hover if small else "n &lt;" not in hover
                drawn += 1
            if small:
                assert all(s.endswith("-open") for s in trace.marker.symbol)
                assert trace.error_y.color == "#9ca3af"
                assert trace.mode == "markers"  # never joined by the line
        assert drawn == part.height  # every group, none left out
    turn_fig = plots.slice_accuracy(table, "turn_index")
    assert list(turn_fig.layout.xaxis.categoryarray) == [str(t) for t in range(11)]  # 10 after 9


def test_small_groups_do_not_set_the_axis_range() -> None:
    turns = _synthetic_turns()
    table = slices.slice_accuracy(turns, ["turn_index"], n_boot=200, seed=0)
    big = table.filter(pl.col("slice") == "turn_index").filter(~pl.col("too_small"))
    fig = plots.slice_accuracy(table, "turn_index")
    low, high = fig.layout.yaxis.range
    assert low > 0.3  # turns 3..10 at 0% from 6 turns each do not stretch it down to 0
    assert low <= big["low"].min() and high >= big["high"].max()
    (small,) = [t for t in fig.data if t.name.endswith("n &lt; 20")]
    assert all(y == low for y in small.y)  # drawn at the edge, pointing out
    assert set(small.marker.symbol) == {"triangle-down-open"}
    assert all(acc == 0.0 for acc, *_ in small.customdata)  # the true figure stays in the data


def test_paired_forest_is_not_stretched_by_small_groups() -> None:
    comparison = pl.DataFrame(
        {
            "slice": ["overall", "operation", "operation"],
            "group": ["all", "divide", "greater"],
            "n_turns": [400, 200, 4],
            "n_conversations": [100, 80, 4],
            "accuracy_a": [0.8, 0.7, 1.0],
            "accuracy_b": [0.79, 0.68, 0.0],
            "difference": [0.01, 0.02, 1.0],
            "low": [-0.01, -0.03, 1.0],
            "high": [0.03, 0.07, 1.0],
            "a_only": [10, 8, 4],
            "b_only": [6, 4, 0],
            "mcnemar_p": [0.45, 0.39, 0.125],
            "n_unpaired": [0, 0, 0],
        }
    )
    fig = plots.paired_differences(comparison)
    low, high = fig.layout.xaxis.range
    assert high < 50 and low < 0 < high  # in points; the n = 4 group at +100 is clipped
    big, small = fig.data
    assert len(big.error_x.array) == 2 and len(small.error_x.array) == 1
    assert small.x == (high,) and small.marker.symbol == ("triangle-up-open",)
    assert "+100.0 points" in small.hovertext[0] and "n &lt; 20" in small.hovertext[0]
    assert list(fig.layout.yaxis.categoryarray) == ["Overall: all", "Operation: divide", "Operation: greater"]


def test_nothing_to_show_is_said_in_one_sentence() -> None:
    # turn 0 of each conversation alone: single questions, counted as problems (words.slice_item)
    single = _synthetic_turns().filter(pl.col("turn") == 0).with_columns(pl.lit(None, pl.String).alias("operation"))
    op = plots.accuracy_by_operation(single, n_boot=20)
    turn = plots.accuracy_by_turn(single, n_boot=20)
    flags = plots.flag_counts(checks.flag_counts(pl.DataFrame(schema=CHECKS)))
    right = single.with_columns(pl.lit(True).alias("correct"), pl.lit(None, pl.String).alias("error_type"))
    heat = plots.error_heatmap(right)
    for fig, words in (
        (op, "There is no operation in this data (all 60 problems: none)"),
        (turn, "Every question here stands alone (all 60 problems are turn 0)"),
        (flags, "The data-quality checks flagged no gold turn"),
        (heat, "No problem is wrong"),
    ):
        assert fig.data == ()
        (note,) = fig.layout.annotations
        assert note.text.startswith(words) and note.text.endswith(".")


def test_heatmap_names_turns_without_a_gold_program() -> None:
    turns = _synthetic_turns().with_columns(
        pl.lit(None, pl.String).alias("operation"), pl.lit("wrong_value").alias("error_type")
    )
    fig = plots.error_heatmap(turns)
    assert fig.data[0].x == ("no gold program",) and fig.data[0].y == ("wrong value",)


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
        "accuracy_by_turn": plots.accuracy_by_turn(hostile, n_boot=20),
        "accuracy_by_operation": plots.accuracy_by_operation(hostile, n_boot=20),
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
    offered = {name for name in plots.__all__ if name not in ("plot_text", "no_data", "styled")}
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
    names = {t.legendgroup for t in figures["accuracy_by_turn"].data}  # type: ignore[attr-defined]
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
    assert list(first.y) == [plots.plot_text(slices.plain_label(t)) for t in expected]  # in words: "wrong operand"
