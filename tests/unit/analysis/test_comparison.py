"""Comparing the two bundled claude-sonnet-4-6 dev runs (06-35-00Z and 12-48-44Z), and any
number of systems: three GSM8K files, and OpenAI's file of four systems a line."""

from __future__ import annotations

import itertools
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.analysis import comparison
from workbench.analysis.metrics import summarize
from workbench.analysis.stats import mcnemar_exact
from workbench.config import resolve
from workbench.errors import UsageError
from workbench.pipeline.run import Run, grade_run
from workbench.views import tables

A, B = "claude 06-35", "claude 12-48"
REPO = Path(__file__).resolve().parents[3]
GSM8K = REPO / "tests/fixtures/predictions/gsm8k"
#: Three GSM8K systems, three files, in this order (not alphabetical: tora first).
THREE_FILES = [
    GSM8K / "tora-70b_first_20.jsonl",
    GSM8K / "pot_fewshot_lines_1-12_1052-1056.jsonl",
    GSM8K / "pot_zeroshot_first_20.jsonl",
]
THREE = ["tora-70b_first_20", "pot_fewshot_lines_1-12_1052-1056", "pot_zeroshot_first_20"]
#: OpenAI's four systems, in the order of each line's keys.
FOUR = ["6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"]


@pytest.fixture(scope="module")
def paired(two_dev_runs: Run) -> pl.DataFrame:
    return comparison.compare_systems(two_dev_runs.turns, A, B, n_boot=1000, seed=0)


def test_metric_intervals_agree_with_the_summary(two_dev_runs: Run) -> None:
    intervals = comparison.metric_intervals(two_dev_runs.turns, n_boot=500)
    summary = summarize(two_dev_runs.turns, two_dev_runs.unmatched, "symbolic", text_metrics=False)
    for system in (A, B):
        part = dict(intervals.filter(pl.col("system") == system).select("metric", "accuracy").iter_rows())
        for key, value in part.items():
            assert value == pytest.approx(summary[system][key]), (system, key)
        bounds = intervals.filter(pl.col("system") == system)
        assert (bounds["low"] <= bounds["accuracy"]).all() and (bounds["accuracy"] <= bounds["high"]).all()
    first = intervals.filter((pl.col("system") == A) & (pl.col("metric") == "turn_execution_accuracy")).row(
        0, named=True
    )
    assert (first["n_correct"], first["n_turns"], first["n_conversations"]) == (1238, 1490, 421)


def test_systems_table_has_the_seed_report_layout(two_dev_runs: Run) -> None:
    table = comparison.systems_table(comparison.metric_intervals(two_dev_runs.turns, n_boot=200))
    assert table.columns == [
        "system",
        "Conversation execution accuracy",
        "Conversation program accuracy",
        "Turn execution accuracy",
        "Turn program accuracy",
    ]
    assert table["Turn execution accuracy"][0].startswith("83.1% [")


def test_paired_overall_difference(paired: pl.DataFrame) -> None:
    overall = paired.filter(pl.col("slice") == "overall").row(0, named=True)
    # the 4 turns of the conversation the second run lacks are unpaired, not counted wrong
    assert overall["n_turns"] == 1486
    assert overall["n_unpaired"] == 4
    assert overall["difference"] == pytest.approx((overall["a_only"] - overall["b_only"]) / overall["n_turns"])
    assert overall["low"] <= overall["difference"] <= overall["high"]
    assert overall["mcnemar_p"] == pytest.approx(mcnemar_exact(overall["a_only"], overall["b_only"]))
    assert overall["accuracy_a"] - overall["accuracy_b"] == pytest.approx(overall["difference"])
    # regression figures of the two real runs (stated in the README and the closing note)
    assert (overall["a_only"], overall["b_only"]) == (18, 5)
    assert overall["difference"] == pytest.approx(13 / 1486)
    assert overall["mcnemar_p"] == pytest.approx(0.0106, abs=1e-4)
    assert 0 < overall["low"] < overall["difference"] < overall["high"] < 0.02


def test_paired_per_slice(paired: pl.DataFrame) -> None:
    for name in ("operation", "turn_index", "type2", "dependency_distance", "answer_format", "dq_category"):
        part = paired.filter(pl.col("slice") == name)
        assert part.height >= 2, name
        # the groups of a slice partition the paired turns
        assert part["n_turns"].sum() == 1486, name
        assert part["a_only"].sum() == paired.filter(pl.col("slice") == "overall")["a_only"][0]
    assert paired["mcnemar_p"].is_between(0, 1).all()


def test_paired_table_and_plot_render(paired: pl.DataFrame) -> None:
    markup = tables.paired_table(paired).markup
    assert f"only {A} right" in markup and "McNemar p" in markup
    from workbench.views.plots import paired_differences

    fig = paired_differences(paired)
    # every group with paired turns is drawn (small groups may be a trace of their own)
    assert sum(len(trace.y) for trace in fig.data) == paired.filter(pl.col("difference").is_not_null()).height


def test_systems_to_compare_are_checked(two_dev_runs: Run) -> None:
    assert comparison.pick_systems(two_dev_runs.turns) == (A, B)
    with pytest.raises(UsageError, match="no graded system named 'nope'"):
        comparison.pick_systems(two_dev_runs.turns, "nope", B)
    with pytest.raises(UsageError, match="both systems"):
        comparison.pick_systems(two_dev_runs.turns, A, A)
    one = two_dev_runs.turns.filter(pl.col("system") == A)
    with pytest.raises(UsageError, match="needs two systems"):
        comparison.pick_systems(one)


# --------------------------------------------------------------------------- any number of systems


@pytest.fixture(scope="module")
def three_gsm8k() -> Run:
    gold = REPO / "tests/fixtures/gsm8k/test_first_20.jsonl"
    with pytest.warns(UserWarning, match="prompt-only"):
        return grade_run(resolve(dataset=gold, predictions=THREE_FILES))


@pytest.fixture(scope="module")
def four_openai() -> Run:
    return grade_run(resolve(dataset=None, predictions=[GSM8K / "openai_example_model_solutions_first_20.jsonl"]))


def test_systems_keep_the_order_given(three_gsm8k: Run, four_openai: Run) -> None:
    assert comparison.given_order(three_gsm8k.turns, three_gsm8k.graded.systems) == THREE
    assert comparison.given_order(four_openai.turns, four_openai.graded.systems) == FOUR
    # without the order given, the systems as they appear (the turns are sorted by name)
    assert comparison.given_order(four_openai.turns) == sorted(FOUR)


def test_one_system_is_refused_in_one_sentence(four_openai: Run) -> None:
    one = four_openai.turns.filter(pl.col("system") == FOUR[0])
    with pytest.raises(
        UsageError, match=r"^comparing systems needs two or more, but only '6b_finetuning' was graded\. Fix"
    ):
        comparison.given_order(one, [FOUR[0]])


def test_every_pair_of_three_files_in_the_order_given(three_gsm8k: Run) -> None:
    order = comparison.given_order(three_gsm8k.turns, three_gsm8k.graded.systems)
    pairs = comparison.all_pairs(three_gsm8k.turns, order, n_boot=200)
    assert pairs.select("system_a", "system_b").rows() == list(itertools.combinations(THREE, 2))
    turns = three_gsm8k.turns
    for row in pairs.iter_rows(named=True):
        a = turns.filter((pl.col("system") == row["system_a"]) & (pl.col("status") != "no_prediction"))
        b = turns.filter((pl.col("system") == row["system_b"]) & (pl.col("status") != "no_prediction"))
        both = a.join(b, on=["record_id", "turn"], suffix="_b")
        assert row["n_turns"] == both.height > 0
        assert row["a_only"] == (both["correct"] & ~both["correct_b"]).sum()
        assert row["b_only"] == (~both["correct"] & both["correct_b"]).sum()
        assert row["n_unpaired"] == a.height + b.height - 2 * both.height
        assert row["mcnemar_p"] == pytest.approx(mcnemar_exact(row["a_only"], row["b_only"]))
        assert row["difference"] == pytest.approx((row["a_only"] - row["b_only"]) / row["n_turns"])
    assert pairs["p_holm"].to_list() == pytest.approx(comparison.holm(pairs["mcnemar_p"].to_list()))


def test_four_systems_of_one_file_give_six_pairs(four_openai: Run) -> None:
    order = comparison.given_order(four_openai.turns, four_openai.graded.systems)
    pairs = comparison.all_pairs(four_openai.turns, order, n_boot=200)
    assert pairs.select("system_a", "system_b").rows() == list(itertools.combinations(FOUR, 2))
    assert (pairs["n_turns"] == 20).all() and (pairs["n_unpaired"] == 0).all()
    assert (pairs["p_holm"] >= pairs["mcnemar_p"]).all()
    # the chosen pair defaults to the first two given, not the first two by name
    paired = comparison.compare_systems(four_openai.turns, order=order, n_boot=50)
    assert (paired["system_a"][0], paired["system_b"][0]) == (FOUR[0], FOUR[1])
    # one turn per problem: no slice by turn index, number of turns or dependency (each one group)
    slices = set(paired["slice"].to_list())
    assert "overall" in slices and not slices & {"turn_index", "n_turns", "type2", "dependency_distance"}
    named = comparison.compare_systems(four_openai.turns, order=order, names=["turn_index"], n_boot=20)
    assert named["slice"].to_list() == ["overall", "turn_index"]  # slices asked for are kept
    intervals = comparison.metric_intervals(four_openai.turns, order=order, n_boot=20)
    assert list(dict.fromkeys(intervals["system"].to_list())) == FOUR
    # single questions: no conversation-level metric (it would repeat the turn-level one), no program column
    assert comparison.systems_table(intervals).columns == ["system", "Turn execution accuracy"]
    by_turn = comparison.accuracy_by_slice(four_openai.turns, order, ["turn_index"], n_boot=20)
    assert list(dict.fromkeys(by_turn["system"].to_list())) == FOUR


def test_the_pair_of_the_bundled_runs_keeps_its_figures(two_dev_runs: Run, paired: pl.DataFrame) -> None:
    pairs = comparison.all_pairs(two_dev_runs.turns, [A, B], n_boot=1000, seed=0)
    (row,) = pairs.iter_rows(named=True)
    assert (row["system_a"], row["system_b"], row["n_turns"], row["n_unpaired"]) == (A, B, 1486, 4)
    assert (row["a_only"], row["b_only"]) == (18, 5)
    assert row["difference"] == pytest.approx(13 / 1486)  # +0.87 points
    assert row["mcnemar_p"] == pytest.approx(0.0106, abs=1e-4) and row["p_holm"] == row["mcnemar_p"]  # one pair
    overall = paired.filter(pl.col("slice") == "overall").row(0, named=True)
    for key in ("n_turns", "n_conversations", "difference", "low", "high", "mcnemar_p"):
        assert row[key] == pytest.approx(overall[key]), key


def test_a_system_with_no_answer_is_paired_with_nothing(three_gsm8k: Run) -> None:
    turns = three_gsm8k.turns.with_columns(
        pl.when(pl.col("system") == THREE[1]).then(pl.lit("no_prediction")).otherwise(pl.col("status")).alias("status")
    )
    pairs = comparison.all_pairs(turns, THREE, n_boot=20)
    empty = pairs.filter(pl.col("system_b") == THREE[1]).row(0, named=True)
    assert (empty["n_turns"], empty["difference"], empty["mcnemar_p"], empty["n_unpaired"]) == (0, None, 1.0, 20)
    with pytest.raises(UsageError, match="no graded system named 'nope'"):
        comparison.all_pairs(turns, [*THREE, "nope"], n_boot=20)


@given(st.lists(st.floats(min_value=0.0, max_value=1.0, allow_nan=False), max_size=12))
def test_holm_is_the_step_down_adjustment(p_values: list[float]) -> None:
    adjusted = comparison.holm(p_values)
    m = len(p_values)
    ranked = sorted(range(m), key=lambda i: p_values[i])
    for rank, i in enumerate(ranked):
        # the definition: the largest of (m - j) * p_(j) over the p-values ranked before, capped at 1
        expected = max(min(1.0, (m - j) * p_values[ranked[j]]) for j in range(rank + 1))
        assert adjusted[i] == pytest.approx(expected)
        assert p_values[i] <= adjusted[i] + 1e-12 and adjusted[i] <= 1.0
    for i, j in itertools.combinations(range(m), 2):  # the order of the raw p-values is kept
        if p_values[i] < p_values[j]:
            assert adjusted[i] <= adjusted[j]
