"""Paired intervals when the two systems never disagree (issue 34, point 4): not 0 [0, 0], but
plus or minus the Wilson upper bound of no disagreeing conversation in n, as accuracy does."""

from __future__ import annotations

from pathlib import Path
from statistics import NormalDist

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.analysis.comparison import compare_systems
from workbench.analysis.stats import paired_comparison
from workbench.cli import main

REPO = Path(__file__).resolve().parents[3]
Z2 = NormalDist().inv_cdf(0.975) ** 2


@pytest.fixture(scope="module")
def turns(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    out = tmp_path_factory.mktemp("graded")
    gold = REPO / "tests/fixtures/convfinqa/dev_small.json"
    assert (
        main(
            ["grade", str(gold), str(REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl"), "--out", str(out)]
        )
        == 0
    )
    return pl.read_parquet(out / "turns.parquet")


def test_a_run_against_its_copy_gets_the_wilson_bound_not_zero_width(turns: pl.DataFrame) -> None:
    copy = turns.with_columns(pl.lit("copy").alias("system"))
    table = compare_systems(pl.concat([turns, copy]), turns["system"][0], "copy", n_boot=200)
    assert table.height > 1  # overall and slice groups
    for row in table.filter(pl.col("n_turns") > 0).iter_rows(named=True):
        assert row["a_only"] == row["b_only"] == 0 and row["difference"] == 0.0
        if row["n_conversations"] < 2:
            assert row["low"] is None and row["high"] is None
            continue
        bound = Z2 / (row["n_conversations"] + Z2)
        assert row["low"] == pytest.approx(-bound) and row["high"] == pytest.approx(bound)
        assert row["low"] < 0.0 < row["high"]
    overall = table.filter(pl.col("slice") == "overall").row(0, named=True)
    assert overall["n_conversations"] == turns["record_id"].n_unique() == 12
    assert overall["high"] == pytest.approx(Z2 / (12 + Z2))  # about 24 points either way for 12 conversations


def test_a_pair_that_disagrees_keeps_its_bootstrap_interval(turns: pl.DataFrame) -> None:
    flipped = turns.with_columns(
        pl.lit("flipped").alias("system"), (~pl.col("correct").fill_null(False)).alias("correct")
    )
    row = compare_systems(pl.concat([turns, flipped]), turns["system"][0], "flipped", ["operation"], n_boot=200).row(
        0, named=True
    )
    assert row["a_only"] > 0 and row["low"] <= row["difference"] <= row["high"]
    assert row["low"] > 0.0  # a real difference, not the no-disagreement bound


@settings(max_examples=60, deadline=None)
@given(outcomes=st.lists(st.booleans(), min_size=2, max_size=40), level=st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_no_disagreement_bounds_shrink_with_n_and_hold_zero(outcomes: list[bool], level: float) -> None:
    n = len(outcomes)
    ids = [f"r{i}" for i in range(n)]
    long = pl.DataFrame(
        {
            "system": ["a"] * n + ["b"] * n,
            "record_id": ids * 2,
            "turn": 0,
            "slice": "overall",
            "group": "all",
            "correct": outcomes * 2,
        }
    )
    row = paired_comparison(long, "a", "b", n_boot=50, level=level).row(0, named=True)
    z2 = NormalDist().inv_cdf(1 - (1 - level) / 2) ** 2
    assert row["low"] == pytest.approx(-z2 / (n + z2)) and row["high"] == pytest.approx(z2 / (n + z2))
    wider = paired_comparison(long.head(n - 1).vstack(long.slice(n, n - 1)), "a", "b", n_boot=50, level=level)
    if n - 1 >= 2:
        assert wider["high"][0] > row["high"]
