"""Figures carry the accuracies computed from the graded turns of a real run."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from workbench import plots
from workbench.config import resolve
from workbench.run import grade_run

REPO = Path(__file__).resolve().parents[1]


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
