"""The stratified train/test split of a cleaned export, on the bundled dev set (421 records)."""

from __future__ import annotations

import polars as pl
import pytest

from workbench.cleaning.split import stratified_split
from workbench.errors import UsageError
from workbench.io.gold import GoldDataset


def split_records(dev_gold: GoldDataset) -> pl.DataFrame:
    return dev_gold.turns.group_by("record_id", maintain_order=True).agg(
        pl.col("n_turns").first(),
        pl.col("has_type2_question").first(),
        (pl.col("gold_program").str.contains("greater|exp")).any().alias("rare"),
    )


def test_stratified_split_is_deterministic_and_balanced(dev_gold: GoldDataset) -> None:
    records = split_records(dev_gold)
    first = stratified_split(records, 0.8, seed=1)
    assert first.equals(stratified_split(records, 0.8, seed=1))
    shuffled = records.sample(fraction=1.0, shuffle=True, seed=5)
    assert dict(stratified_split(shuffled, 0.8, seed=1).select("record_id", "split").iter_rows()) == dict(
        first.select("record_id", "split").iter_rows()
    )  # the row order does not matter
    assert not first.equals(stratified_split(records, 0.8, seed=2))
    assert first["record_id"].to_list() == records["record_id"].to_list()  # each record once
    assert set(first["split"]) == {"train", "test"}
    per_stratum = first.group_by("stratum").agg(pl.len().alias("n"), (pl.col("split") == "train").sum().alias("k"))
    for stratum, n, k in per_stratum.iter_rows():
        assert abs(k - 0.8 * n) <= 1, stratum
    assert (first["split"] == "train").sum() == round(0.8 * records.height)
    rare = first.filter(pl.col("stratum").str.starts_with("rare"))
    assert set(rare["split"]) == {"train", "test"}


@pytest.mark.parametrize("fraction", [0.0, 1.0, 1.5, -0.2])
def test_split_fraction_must_lie_between_0_and_1(dev_gold: GoldDataset, fraction: float) -> None:
    with pytest.raises(UsageError, match="between 0 and 1"):
        stratified_split(split_records(dev_gold), fraction, seed=0)


def test_rare_groups_are_spread_over_both_sides() -> None:
    records = pl.DataFrame(
        {
            "record_id": [f"r{i}" for i in range(12)],
            "n_turns": [3] * 12,
            "has_type2_question": [False] * 12,
            "rare": [True, True, True, True] + [False] * 8,
            "rare_group": ["greater", "greater", "exp", "exp"] + [None] * 8,
        }
    )
    for seed in range(20):
        out = stratified_split(records, 0.9, seed=seed)
        for group in ("rare:greater", "rare:exp"):
            assert set(out.filter(stratum=group)["split"]) == {"train", "test"}, (seed, group)
