"""Slices over the graded turns table: every turn gets a label in every slice."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from workbench.analysis.slices import (
    MIN_GROUP_N,
    SLICES,
    group_order,
    in_group,
    in_reading_order,
    long_slices,
    present_slices,
    slice_accuracy,
    slice_labels,
)
from workbench.errors import UsageError
from workbench.pipeline.run import Run


def test_every_turn_has_a_label_in_every_slice(two_dev_runs: Run) -> None:
    labels = slice_labels(two_dev_runs.turns)
    assert labels.height == two_dev_runs.turns.height == 2 * 1490
    assert present_slices(two_dev_runs.turns) == [n for n in SLICES if n != "level"]  # ConvFinQA has no levels
    for name in present_slices(two_dev_runs.turns):
        assert labels[name].null_count() == 0, name


def test_long_frame_has_a_row_per_turn_and_slice(two_dev_runs: Run) -> None:
    long = long_slices(two_dev_runs.turns)
    assert long.height == two_dev_runs.turns.height * (len(present_slices(two_dev_runs.turns)) + 1)
    sizes = long.group_by("system", "slice").len()
    assert sizes["len"].unique().to_list() == [1490]


def test_accuracy_by_slice_adds_up_to_the_overall_figure(two_dev_runs: Run) -> None:
    table = slice_accuracy(two_dev_runs.turns, intervals=False)
    overall = table.filter(pl.col("slice") == "overall").select("system", "n_correct")
    per_slice = table.group_by("system", "slice").agg(pl.col("n_correct").sum())
    joined = per_slice.join(overall, on="system", suffix="_overall")
    assert (joined["n_correct"] == joined["n_correct_overall"]).all()
    first = table.filter((pl.col("system") == "claude 06-35") & (pl.col("slice") == "overall")).row(0, named=True)
    assert (first["n_correct"], first["n_turns"]) == (1238, 1490)
    assert "error_type" not in table["slice"].to_list()  # outcomes are not populations


def test_type2_conversations_are_harder(two_dev_runs: Run) -> None:
    """The seed report's finding: type-2 conversations (two questions joined) score lower."""
    table = slice_accuracy(two_dev_runs.turns, ["type2"], intervals=False)
    for system in ("claude 06-35", "claude 12-48"):
        part = dict(table.filter(pl.col("system") == system).select("group", "accuracy").iter_rows())
        assert part["type 2"] < part["type 1"]


def test_in_group_selects_the_same_turns_as_the_label(two_dev_runs: Run) -> None:
    turns = two_dev_runs.turns
    labels = slice_labels(turns, ["operation", "dependency_distance"])
    assert turns.filter(in_group("operation", "divide")).height == labels.filter(pl.col("operation") == "divide").height
    assert (
        turns.filter(in_group("dependency_distance", "2")).height
        == labels.filter(pl.col("dependency_distance") == "2").height
    )


def test_grader_disagreement_marks_percent_unit_answers(two_dev_runs: Run) -> None:
    """Percent answers in percent units ("12.57" for 0.12574) are right under the cascade and
    wrong under exact string match: those turns are where the policies disagree."""
    turns = two_dev_runs.turns.filter(pl.col("system") == "claude 06-35")
    by_percent = turns.filter(pl.col("reason") == "percent_reading")
    assert by_percent.height == 242
    assert by_percent["graders_disagree"].all()


def test_unknown_slice_is_refused() -> None:
    with pytest.raises(UsageError, match="no slice named nope"):
        long_slices(pl.DataFrame(), ["nope"])


def test_numeric_groups_in_numeric_order() -> None:
    assert group_order("dependency_distance", ["3", "10", "0"]) == ["0", "3", "10"]
    assert group_order("turn_index", [str(t) for t in range(12)][::-1]) == [str(t) for t in range(12)]
    assert group_order("n_turns", ["n/a", "9", "10"]) == ["9", "10", "n/a"]  # labels that are not numbers last


def test_category_groups_largest_first_or_in_their_defined_order() -> None:
    assert group_order("operation", ["divide", "add"]) == ["divide", "add"]  # as given without sizes
    sizes = {"lookup": 90, "divide": 400, "add": 90, "exp": 2}
    assert group_order("operation", list(sizes), sizes) == ["divide", "add", "lookup", "exp"]  # ties by name
    assert group_order("type2", ["type 2", "type 1"], {"type 2": 900, "type 1": 10}) == ["type 1", "type 2"]


def test_slice_table_in_reading_order_with_small_groups_marked(two_dev_runs: Run) -> None:
    table = slice_accuracy(two_dev_runs.turns, ["turn_index", "operation", "type2"], n_boot=50, seed=0)
    assert table.columns[-1] == "too_small"
    assert (table["too_small"] == (table["n_turns"] < MIN_GROUP_N)).all()
    for system in ("claude 06-35", "claude 12-48"):
        part = table.filter(pl.col("system") == system)
        assert part["slice"].unique(maintain_order=True).to_list() == ["overall", "turn_index", "operation", "type2"]
        turns = part.filter(pl.col("slice") == "turn_index")
        assert turns["group"].to_list() == [str(t) for t in range(turns.height)]  # 0, 1, 2, ... not by size
        # the turn-7 group is one turn of one conversation: marked, not a finding
        last = turns.row(-1, named=True)
        assert (last["group"], last["n_turns"], last["too_small"]) == ("7", 1, True)
        ops = part.filter(pl.col("slice") == "operation")
        assert ops["n_turns"].to_list() == sorted(ops["n_turns"].to_list(), reverse=True)
        assert part.filter(pl.col("slice") == "type2")["group"].to_list() == ["type 1", "type 2"]
    assert table["system"].unique(maintain_order=True).to_list() == ["claude 06-35", "claude 12-48"]


def test_reading_order_is_the_same_whatever_order_the_rows_come_in(two_dev_runs: Run) -> None:
    table = slice_accuracy(two_dev_runs.turns, intervals=False)
    again = in_reading_order(table.sample(fraction=1.0, shuffle=True, seed=5))
    assert again["slice"][0] == "overall"  # the overall figure first, whatever came first

    def groups(frame: pl.DataFrame) -> dict[tuple[str, str], list[str]]:
        return {
            key: part["group"].to_list() for key, part in frame.partition_by("system", "slice", as_dict=True).items()
        }

    assert groups(again) == groups(table)


def _from_the_long_frame(turns: pl.DataFrame, names: list[str] | None) -> pl.DataFrame:
    """``slice_accuracy(intervals=False)`` as the groups of :func:`long_slices` define it."""
    outcome = pl.col("correct").fill_null(False)
    table = (
        long_slices(turns, names if names is not None else [n for n in present_slices(turns) if n != "error_type"])
        .group_by("system", "slice", "group", maintain_order=True)
        .agg(
            pl.len().cast(pl.Int64).alias("n_turns"),
            outcome.sum().cast(pl.Int64).alias("n_correct"),
            pl.col("record_id").n_unique().cast(pl.Int64).alias("n_conversations"),
            outcome.cast(pl.Float64).mean().alias("accuracy"),
        )
        .with_columns(pl.lit(None, pl.Float64).alias("low"), pl.lit(None, pl.Float64).alias("high"))
    )
    return in_reading_order(table).with_columns((pl.col("n_turns") < MIN_GROUP_N).alias("too_small"))


@pytest.mark.parametrize("names", [None, ["turn_index", "operation"], ["error_type", "dq_category", "n_turns"]])
def test_accuracy_without_intervals_is_that_of_the_long_frame(two_dev_runs: Run, names: list[str] | None) -> None:
    """Grouped slice by slice (no row per turn and slice), the table is the long frame's."""
    turns = two_dev_runs.turns
    shuffled = turns.sample(fraction=1.0, shuffle=True, seed=3)  # groups first seen in another order
    for frame in (turns, shuffled):
        table = slice_accuracy(frame, names, intervals=False)
        assert table.height > 10 and table["low"].null_count() == table.height
        assert_frame_equal(table, _from_the_long_frame(frame, names))
