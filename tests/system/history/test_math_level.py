"""MATH's level as a slice (issue 34, point 2): a MATH-500 run graded against gold that carries each
problem's level records accuracy and n for levels 1 to 5 in its ledger rows, 05-history's level
chart draws one small chart per level, and a ConvFinQA run (no levels) gets no level section."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from tests.system.history.conftest import build_ledger
from workbench.analysis.slices import slice_accuracy
from workbench.cli import main
from workbench.pipeline.graded import read_graded
from workbench.pipeline.ledger import LedgerRow, rows_from_graded
from workbench.report import history
from workbench.views import history as views

REPO = Path(__file__).resolve().parents[3]
#: Rho-Math-7B on MATH-500: each line carries the problem, its MATH solution and level.
RHO = REPO / "data/predictions/math/microsoft-rho-math-7b/test_cot_-1_seed0_t0.0_s0_e-1.jsonl"
RING = "differs from the run before"


@pytest.fixture(scope="module")
def math500(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, object]], Path, list[LedgerRow]]:
    """The run's lines, its graded folder and its ledger rows: graded against MATH-500 written as the
    dataset writes it (``{unique_id, problem, solution, level}``, level a number), taken from the lines."""
    folder = tmp_path_factory.mktemp("math500")
    lines = [json.loads(line) for line in RHO.read_text(encoding="utf-8").splitlines()]
    gold = folder / "math500.jsonl"
    gold.write_text(
        "".join(
            json.dumps(
                {"unique_id": o["idx"], "problem": o["question"], "solution": o["solution"], "level": int(o["level"])}
            )
            + "\n"
            for o in lines
        ),
        encoding="utf-8",
    )
    out = folder / "graded"
    assert main(["grade", str(gold), str(RHO), "--out", str(out)]) == 0
    return lines, out, rows_from_graded(out, source="grade")


def test_a_math500_runs_ledger_rows_have_a_group_per_level(
    math500: tuple[list[dict[str, object]], Path, list[LedgerRow]],
) -> None:
    lines, _, (row,) = math500
    levels = {g["group"]: g for g in row.slices if g["slice"] == "level"}
    assert {group: g["n"] for group, g in levels.items()} == dict(Counter(str(o["level"]) for o in lines))
    assert sorted(levels) == ["1", "2", "3", "4", "5"] and sum(g["n"] for g in levels.values()) == 500
    verdicts = row.verdicts.filter(pl.col("slice") == "level").group_by("group").agg(pl.col("correct").mean())
    for group, accuracy in verdicts.iter_rows():
        assert levels[group]["accuracy"] == pytest.approx(accuracy)
    assert levels["1"]["accuracy"] > levels["5"]["accuracy"]  # MATH's levels are harder as they rise


def test_the_pages_slice_table_has_a_level_section(
    math500: tuple[list[dict[str, object]], Path, list[LedgerRow]],
) -> None:
    _, out, _ = math500
    _, tables, _ = read_graded(out)
    table = slice_accuracy(tables["turns"], intervals=False)  # what 02-error-slices shows by default
    assert table.filter(pl.col("slice") == "level")["group"].to_list() == ["1", "2", "3", "4", "5"]


def test_a_convfinqa_history_says_it_has_no_level(bundled_rows: list[LedgerRow], tmp_path: Path) -> None:
    """ConvFinQA has no levels: its ledger rows hold no level group (no all-n/a rows), and the level chart
    says so in a sentence."""
    assert bundled_rows and not [g for row in bundled_rows for g in row.slices if g["slice"] == "level"]
    build_ledger(tmp_path / "ledger.sqlite", bundled_rows, 2)
    found = history.open_history(str(tmp_path), page_folder=str(tmp_path))
    over = history.over_runs(found.rows, n_boot=20)
    _, marks = history.run_changes(found.rows)
    figure = views.slice_over_runs(over, marks, "level")
    assert figure.data == ()
    assert figure.layout.annotations[0].text == "There is no level in these runs."


def test_the_history_level_chart_draws_a_chart_per_level(
    math500: tuple[list[dict[str, object]], Path, list[LedgerRow]], tmp_path: Path
) -> None:
    _, _, rows = math500
    build_ledger(tmp_path / "ledger.sqlite", rows, 4)
    found = history.open_history(str(tmp_path), page_folder=str(tmp_path))
    over = history.over_runs(found.rows, n_boot=50)
    _, marks = history.run_changes(found.rows)
    figure = views.slice_over_runs(over, marks, "level")
    assert figure.layout.title.text == "Accuracy over runs by level"
    sizes = Counter(str(o["level"]) for o in math500[0])
    assert [a.text for a in figure.layout.annotations] == [f"{level} (n = {sizes[level]})" for level in "12345"]
    lines = [t for t in figure.data if t.name != RING]
    assert len(lines) == 5 and all(len(t.x) == len(t.y) == 4 for t in lines)


def test_a_math500_run_that_carries_its_gold_carries_its_levels(tmp_path: Path) -> None:
    """Graded with its own gold (no dataset: the lines carry the answer and the level), as the bundled reports run it."""
    assert main(["grade", str(RHO), "--out", str(tmp_path)]) == 0
    (row,) = rows_from_graded(tmp_path, source="grade")
    lines = [json.loads(line) for line in RHO.read_text(encoding="utf-8").splitlines()]
    levels = {g["group"]: g["n"] for g in row.slices if g["slice"] == "level"}
    assert levels == dict(Counter(str(o["level"]) for o in lines))
