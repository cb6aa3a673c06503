"""Gold-turn features: operations, answer format, and which earlier turns a turn builds on."""

from __future__ import annotations

import polars as pl
import pytest
from gold_sets import EVERY_LAYOUT
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from workbench.analysis.features import (
    ANSWER_FORMATS,
    FEATURES,
    RARE_OPERATIONS,
    answer_format,
    gold_features,
    turn_dependencies,
)
from workbench.config import project_root
from workbench.grading.equivalence import final_operation
from workbench.grading.program import TableRows, operations, parse_program
from workbench.io.gold import GoldDataset, load_gold
from workbench.schema import KEY_DTYPE


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


# --------------------------------------------------------------------------- one computation per distinct conversation
def _turn_by_turn(turns: pl.DataFrame, tables: dict[str, TableRows]) -> pl.DataFrame:
    """The features as the module defines them, every conversation computed on its own."""
    rows = []
    for (record_id,), conv in turns.sort("record_id", "turn").group_by("record_id", maintain_order=True):
        doc_id = conv["doc_id"][0] if "doc_id" in conv.columns else None
        table = tables.get(doc_id) if doc_id else None
        programs = conv["gold_program"].to_list()
        deps = turn_dependencies(programs, conv["gold_value"].to_list(), table)
        for k, row in enumerate(conv.iter_rows(named=True)):
            program = row["gold_program"]
            ops = list(operations(parse_program(program))) if program and program.strip() else []
            fmt = answer_format(row["gold_answer"], row["gold_executed"], row["question"], final_operation(program))
            distance = row["turn"] - min(deps[k]) if deps[k] else 0
            rare = next((op for op in ops if op in RARE_OPERATIONS), "none")
            rows.append((record_id, row["turn"], ops, rare, fmt, list(deps[k]), distance))
    return pl.DataFrame(rows, schema=FEATURES, orient="row")


@pytest.mark.parametrize("path", EVERY_LAYOUT)
def test_features_are_those_of_each_conversation_computed_alone(path: str) -> None:
    """Conversations that differ only in what the features do not read (a display without %, an
    executed answer that is not yes/no, questions with the same cue, values without programs)
    share one computation; the result is each conversation's own."""
    gold = load_gold(project_root() / path)
    turns = gold.turns
    if gold.benchmark == "gsm8k":  # copies with other golds, a % display, a yes/no, a ratio question
        copy = turns.with_columns(
            (pl.col("record_id").cast(pl.String) + "#1").cast(KEY_DTYPE),
            (pl.col("gold_answer") + "0").alias("gold_answer"),
            pl.col("gold_executed") + "0",
            pl.col("gold_value") * 10,
        )
        odd = pl.int_range(pl.len()) % 5
        other = turns.with_columns(
            (pl.col("record_id").cast(pl.String) + "#2").cast(KEY_DTYPE),
            pl.when(odd == 0).then(pl.col("gold_answer") + "%").otherwise(pl.col("gold_answer")).alias("gold_answer"),
            pl.when(odd == 1).then(pl.lit(" Yes")).otherwise(pl.col("gold_executed")).alias("gold_executed"),
            pl.when(odd == 2)
            .then(pl.lit("what is the ratio of a to b?"))
            .otherwise(pl.col("question"))
            .alias("question"),
        )
        turns = pl.concat([turns, copy, other])
    tables = gold.tables()
    got = gold_features(turns, tables)
    assert got.height == turns.height
    assert_frame_equal(got, _turn_by_turn(turns, tables))
