"""Views of every pair of systems: the table and the matrix, with the figures of real runs
(OpenAI's four GSM8K systems of one file) and hostile system names."""

from __future__ import annotations

import itertools
import re
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
    assert "p adjusted for 6 comparisons (Holm)" in markup
    first = pairs.row(0, named=True)
    shown = views.difference_text(first["difference"], first["low"], first["high"])
    assert shown.endswith("]") and f"<td>{shown}</td>" in rows[0]


def test_the_table_fits_its_columns_and_counts_problems(pairs: pl.DataFrame) -> None:
    """Eight columns (the p-values before the counts behind them), counted in problems for
    single questions; the counts are the pair's own."""
    markup = views.pairs_table(pairs, "problem").markup
    header = re.findall(r"<th(?: [^>]*)?>(.*?)</th>", markup[: markup.index("<tbody>")])
    assert header == [
        "system A",
        "system B",
        "A minus B [95% interval]",
        "p, Holm-adjusted",
        "McNemar p",
        "right: only A / only B",
        "paired problems",
        "unpaired problems",
    ]
    first = pairs.row(0, named=True)
    assert f"<td>{first['a_only']} / {first['b_only']}</td><td>20</td><td>0</td>" in markup
    assert ">paired turns</th>" in views.pairs_table(pairs).markup  # the default counts turns


def test_the_matrix_is_row_minus_column(pairs: pl.DataFrame) -> None:
    fig = views.pairs_matrix(pairs, FOUR)
    heat = fig.data[0]
    assert list(heat.x) == ["1", "2", "3", "4"] and list(heat.y) == [f"{i}  {name}" for i, name in enumerate(FOUR, 1)]
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
    assert "&lt;a href" in fig.data[0].y[0] and "&#36;x&#36;" in fig.data[0].y[1]


def test_no_pairs_is_one_sentence() -> None:
    empty = pl.DataFrame(schema={"system_a": pl.String, "system_b": pl.String})
    assert "No pair of systems to compare." in views.pairs_table(empty).markup


def test_long_names_are_shortened_on_the_axes_only() -> None:
    runs = [f"zarifaziz-claude-sonnet-4-6@2026-05-04T{t}Z" for t in ("06-35-00", "12-48-44")]
    assert views.short_names(runs) == ["…04T06-35-00Z", "…04T12-48-44Z"]
    long = ["pot_fewshot_lines_1-12_1052-1056", "pot_zeroshot_first_20", "tora-70b_first_20"]
    shown = views.short_names(long)
    assert shown[1:] == long[1:] and len(shown[0]) <= views.AXIS_NAME_CHARS and shown[0].startswith("pot_fewshot")
    # a name that fits stays whole beside one that is shortened
    assert views.short_names(["rho-math-7b", "rho-math-7b-interpreter"], width=20) == ["rho-math-7b", "…7b-interpreter"]
    bundled = ["claude-sonnet-4-6 06-35", "claude-sonnet-4-6 12-48"]  # the names bundled.yaml gives
    assert views.short_names(bundled) == bundled
    # shortening that would make two names equal is not done
    twins = ["a" * 30 + "1" + "b" * 10, "a" * 30 + "2" + "b" * 10]
    assert views.short_names(twins) == twins
    pairs = pl.DataFrame({"system_a": [runs[0]], "system_b": [runs[1]], "n_turns": [1486], "difference": [13 / 1486],
                          "low": [0.002], "high": [0.016], "mcnemar_p": [0.0106], "p_holm": [0.0106]})  # fmt: skip
    heat = views.pairs_matrix(pairs, runs).data[0]
    assert list(heat.y) == ["1  …04T06-35-00Z", "2  …04T12-48-44Z"]
    assert runs[0] in heat.hovertext[0][1] and runs[1] in heat.hovertext[0][1]
    assert heat.zmax == views.MIN_COLOUR_REACH  # +0.9 points is drawn pale
