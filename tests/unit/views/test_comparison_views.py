"""Views of every pair of systems: the table and the matrix, with the figures of real runs
(OpenAI's four GSM8K systems of one file) and hostile system names."""

from __future__ import annotations

import itertools
from pathlib import Path

import polars as pl
import pytest

from workbench.analysis import comparison, formats
from workbench.config import resolve
from workbench.pipeline.run import grade_run
from workbench.views import comparison as views

REPO = Path(__file__).resolve().parents[3]
OPENAI = REPO / "tests/fixtures/predictions/gsm8k/openai_example_model_solutions_first_20.jsonl"
FOUR = ["6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"]
LINK = '<a href="http://evil.example/">x</a>'
SCRIPT = "<script>window.__pwned=1</script>$x$"


@pytest.fixture(scope="module")
def pairs() -> pl.DataFrame:
    run = grade_run(resolve(dataset=None, predictions=[OPENAI]))
    return comparison.all_pairs(run.turns, comparison.given_order(run.turns, run.graded.systems), n_boot=200)


def test_the_table_lists_every_pair_in_order_with_both_p_values(pairs: pl.DataFrame) -> None:
    markup = views.pairs_table(pairs).markup
    rows = markup.split("<tr>")[2:]  # after the header row
    assert len(rows) == 6
    for row, (a, b) in zip(rows, itertools.combinations(FOUR, 2), strict=True):
        assert row.startswith(f"<td>{a}</td><td>{b}</td>")
    assert "Every pair of the 4 systems, in the order given (6 pairs)" in markup
    assert "adjusted for 6 comparisons by Holm" in markup
    first = pairs.row(0, named=True)
    shown = views.difference_text(first["difference"], first["low"], first["high"])
    assert shown.endswith("]") and f"<td>{shown}</td>" in rows[0]


def test_the_matrix_is_row_minus_column(pairs: pl.DataFrame) -> None:
    fig = views.pairs_matrix(pairs, FOUR)
    heat = fig.data[0]
    assert list(heat.x) == FOUR and list(heat.y) == FOUR
    z = [list(line) for line in heat.z]
    for row in pairs.iter_rows(named=True):
        i, j = FOUR.index(row["system_a"]), FOUR.index(row["system_b"])
        assert z[i][j] == pytest.approx(row["difference"] * 100)
        assert z[j][i] == pytest.approx(-row["difference"] * 100)
        assert heat.text[i][j].endswith(f"p {formats.p_value(row['p_holm'])}")
    assert all(z[i][i] is None for i in range(4))
    assert heat.zmid == 0 and heat.zmin == -heat.zmax


def test_hostile_names_stay_text(pairs: pl.DataFrame) -> None:
    hostile = pairs.head(1).with_columns(pl.lit(LINK).alias("system_a"), pl.lit(SCRIPT).alias("system_b"))
    markup = views.pairs_table(hostile).markup
    assert "<script>" not in markup and "<a href" not in markup and "&lt;script&gt;" in markup
    fig = views.pairs_matrix(hostile, [LINK, SCRIPT])
    shown = [*fig.data[0].x, *fig.data[0].y, *(t for line in fig.data[0].hovertext for t in line)]
    assert not any("<a " in t or "<script" in t or "$x$" in t for t in shown)
    assert "&lt;a href" in fig.data[0].x[0] and "&#36;x&#36;" in fig.data[0].x[1]


def test_no_pairs_is_one_sentence() -> None:
    empty = pl.DataFrame(schema={"system_a": pl.String, "system_b": pl.String})
    assert "No pair of systems to compare." in views.pairs_table(empty).markup
