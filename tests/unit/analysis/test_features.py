"""Gold-turn features: operations, answer format, and which earlier turns a turn builds on."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.analysis.features import ANSWER_FORMATS, FEATURES, gold_features, turn_dependencies
from workbench.grading.program import parse_program
from workbench.io.gold import GoldDataset


@pytest.fixture(scope="module")
def dev_features(dev_gold: GoldDataset) -> pl.DataFrame:
    tables = dev_gold.tables()
    return gold_features(dev_gold.turns, tables).join(dev_gold.turns, on=["record_id", "turn"])


def test_one_row_per_gold_turn_with_the_schema(dev_features: pl.DataFrame, dev_gold: GoldDataset) -> None:
    assert dev_features.height == dev_gold.turns.height == 1490
    assert set(FEATURES) <= set(dev_features.columns)
    assert set(dev_features["answer_format"].unique().to_list()) == set(ANSWER_FORMATS)


def test_dependencies_point_backwards(dev_features: pl.DataFrame) -> None:
    for turn, deps, distance in dev_features.select("turn", "depends_on", "dependency_distance").iter_rows():
        assert all(0 <= j < turn for j in deps)
        assert distance == (turn - min(deps) if deps else 0)


def test_a_program_extending_an_earlier_turns_program_depends_on_it(dev_features: pl.DataFrame) -> None:
    """ConvFinQA writes turn programs cumulatively: ``subtract(a, b)`` then
    ``subtract(a, b), divide(#0, b)``. Each such extension must be found."""
    checked = 0
    for (_,), conv in dev_features.sort("turn").group_by("record_id"):
        programs = conv["gold_program"].to_list()
        deps = conv["depends_on"].to_list()
        for k, program in enumerate(programs):
            for j in range(k):
                earlier = programs[j]
                if earlier and "(" in earlier and program.startswith(earlier + ","):
                    assert j in deps[k], (conv["record_id"][0], j, k, earlier, program)
                    checked += 1
    assert checked > 300  # the dev set has hundreds of cumulative programs


def test_percent_answers_and_yes_no(dev_features: pl.DataFrame) -> None:
    percent = dev_features.filter(pl.col("gold_answer").str.contains("%", literal=True))
    assert percent.height == 381
    assert (percent["answer_format"] == "percent").all()
    yes_no = dev_features.filter(pl.col("gold_executed").is_in(["yes", "no"]))
    assert yes_no.height == 4
    assert (yes_no["answer_format"] == "yes/no").all()
    assert (yes_no["rare_operation"] == "greater").all()


def test_operations_are_listed_in_program_order(dev_features: pl.DataFrame) -> None:
    row = dev_features.filter(pl.col("gold_program") == "subtract(60.94, 25.14), divide(#0, 25.14)").row(0, named=True)
    assert row["gold_operations"] == ["subtract", "divide"]
    assert row["rare_operation"] == "none"


_values = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False).map(lambda v: round(v, 2))


@given(st.lists(_values, min_size=2, max_size=5))
def test_lookups_then_their_sum_depend_on_every_lookup(values: list[float]) -> None:
    """Lookup turns, then a turn adding them up with literal numbers: the last turn builds
    on every lookup; a lookup builds only on earlier lookups of the same value."""
    steps = [f"add({values[0]!r}, {values[1]!r})", *[f"add(#{i}, {v!r})" for i, v in enumerate(values[2:])]]
    programs = [*(repr(v) for v in values), ", ".join(steps)]
    deps = turn_dependencies(programs, [*values, sum(values)])
    assert deps[-1] == tuple(range(len(values)))
    for k, used in enumerate(deps[:-1]):
        assert all(
            values[j] == pytest.approx(values[k], rel=1e-4) or round(values[j], 5) == round(values[k], 5) for j in used
        )


def test_unparseable_programs_have_no_features() -> None:
    assert turn_dependencies(["5", "divide(#0"], [5.0, None]) == [(), ()]
    parse_program("divide(5, 2)")  # sanity: the parser itself is fine
