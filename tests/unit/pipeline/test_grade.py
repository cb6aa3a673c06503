"""Grading prediction tables against gold: the graded turns, unmatched rows, and metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from workbench.analysis.metrics import accuracy_by, conversations, summarize
from workbench.grading.policies import POLICIES
from workbench.io.gold import GoldDataset, load_gold
from workbench.io.predictions import load_predictions
from workbench.pipeline import fastpath, grade
from workbench.pipeline.grade import GradedRun, grade_predictions
from workbench.schema import GRADED_TURNS

CLAUDE = "zarifaziz-claude-sonnet-4-6@2026-05-04T06-35-00Z"


@pytest.fixture(scope="module")
def claude_run(dev_gold: GoldDataset, claude_run_path: Path) -> GradedRun:
    return grade_predictions(dev_gold, load_predictions(claude_run_path))


@pytest.fixture(scope="module")
def claude_summary(claude_run: GradedRun) -> dict:
    return summarize(claude_run.turns, claude_run.unmatched, claude_run.policy.name)[CLAUDE]


def test_bundled_run_is_graded_turn_by_turn(claude_run: GradedRun) -> None:
    turns = claude_run.turns
    assert claude_run.systems == (CLAUDE,)
    assert turns.schema == pl.Schema(GRADED_TURNS)
    assert turns.height == 1490
    assert turns.select("system", "record_id", "turn").is_duplicated().sum() == 0
    assert claude_run.unmatched.height == 0
    assert turns["status"].cast(pl.String).is_in(["no_prediction"]).sum() == 0
    # every row says why: correct rows carry a match rule, wrong rows a mismatch type
    match_rules = {
        "exact",
        "normalised",
        "yes_no",
        "official_round5",
        "rel_tolerance",
        "reported_precision",
        "percent_reading",
    }
    reasons = turns.select(pl.col("correct"), pl.col("reason").cast(pl.String))
    assert reasons.filter(pl.col("correct"))["reason"].is_in(list(match_rules)).all()
    assert not reasons.filter(~pl.col("correct"))["reason"].is_in(list(match_rules)).any()


def test_bundled_run_metrics_match_upstream(claude_summary: dict, claude_summary_path: Path) -> None:
    upstream = json.loads(claude_summary_path.read_text(encoding="utf-8"))["breakdown"]
    assert claude_summary["n_turns"] == upstream["n_turns"] == 1490
    assert claude_summary["n_conversations"] == upstream["n_records"] == 421
    assert abs(claude_summary["turn_execution_accuracy"] - 0.835) <= 0.015
    # our per-turn verdicts differ from upstream on 10 turns (tests/unit/grading/test_compare.py
    # lists them): 1238 of 1490 against 1244; conversations right on every turn: 308 of 421
    # against upstream's 310
    assert upstream["n_records_all_correct"] == 310
    assert claude_summary["n_turns_correct"] == 1238
    assert claude_summary["all_turns_correct_rate"] == 308 / 421
    assert claude_summary["n_upstream_correct"] == 1244 and claude_summary["n_upstream_disagreements"] == 10
    assert claude_summary["n_missing"] == claude_summary["n_unmatched"] == 0
    assert claude_summary["n_predictions"] == 1490
    assert sum(claude_summary["reasons"].values()) == 1490
    # the run has programs (its calculations), so program accuracy is reported
    assert 0 < claude_summary["turn_program_accuracy"] < 1


def test_conversations_are_derived_from_turns(claude_run: GradedRun) -> None:
    turns = claude_run.turns
    convs = conversations(turns)
    assert convs.height == 421
    last = (
        turns.sort("turn")
        .group_by("system", "record_id")
        .agg(
            pl.col("correct").last().alias("last_correct"),
            pl.col("correct").all().alias("all_ok"),
            pl.len().alias("n"),
        )
    )
    joined = convs.join(last, on=["system", "record_id"], how="inner")
    assert joined.height == 421
    assert (joined["final_turn_correct"] == joined["last_correct"]).all()
    assert (joined["all_turns_correct"] == joined["all_ok"]).all()
    assert (joined["n_turns"] == joined["n"]).all()
    # is_last_turn marks exactly one turn per conversation, the one final_turn_correct reads
    assert turns["is_last_turn"].sum() == 421
    wrong_first = convs.filter(pl.col("first_error_turn").is_not_null())
    assert (~wrong_first["all_turns_correct"]).all()


def test_accuracy_by_group(claude_run: GradedRun) -> None:
    by_type = accuracy_by(claude_run.turns, "has_type2_question")
    assert by_type["n_turns"].sum() == 1490
    assert by_type["n_correct"].sum() == claude_run.turns["correct"].sum()


# --------------------------------------------------------------------------- small runs
def test_unmatched_and_missing_predictions(tmp_path: Path, dev_small_path: Path) -> None:
    gold = load_gold(dev_small_path)
    turns = gold.turns.sort("record_id", "turn")
    first_id, n_first = turns.row(0, named=True)["record_id"], turns.row(0, named=True)["n_turns"]
    path = tmp_path / "partial.jsonl"
    rows = [
        {"record_id": first_id, "turn": 0, "predicted_answer": turns.row(0, named=True)["gold_executed"]},
        {"record_id": "Single_NOPE/2001/page_1.pdf-1", "turn": 0, "predicted_answer": "1"},
        {"record_id": first_id, "turn": n_first, "predicted_answer": "2"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = grade_predictions(gold, load_predictions(path))

    unmatched = run.unmatched.sort("source_location")
    assert unmatched["source_location"].to_list() == ["line 2", "line 3"]
    assert unmatched["why"].to_list() == [
        "record_id not in dev_small.json",
        f"turn {n_first} is out of range for a {n_first}-turn conversation",
    ]

    graded = run.turns
    assert graded.height == gold.turns.height  # one row per gold turn, answered or not
    answered = graded.filter((pl.col("record_id") == first_id) & (pl.col("turn") == 0)).row(0, named=True)
    assert answered["correct"] and str(answered["status"]) == "ok"
    missing = graded.filter(pl.col("status") == "no_prediction")
    assert missing.height == gold.turns.height - 1
    assert not missing["correct"].any()
    assert set(missing["reason"].cast(pl.String)) == {"no_prediction"}

    summary = summarize(run.turns, run.unmatched, run.policy.name)["partial"]
    assert summary["n_unmatched"] == 2
    assert summary["n_missing"] == gold.turns.height - 1
    assert summary["n_predictions"] == 1
    assert summary["n_turns_correct"] == 1


def test_a_parquet_scan_grades_as_the_table_it_holds(tmp_path: Path, dev_small_path: Path) -> None:
    """``grade_predictions`` takes LazyFrames (``pl.scan_parquet``): the same turns, policy grades
    and unmatched rows (in full, carried gold included) as from the table the file holds."""
    gold = load_gold(dev_small_path)
    first = gold.turns.sort("record_id", "turn").row(0, named=True)
    rows = [
        {"record_id": first["record_id"], "turn": 0, "predicted_answer": first["gold_executed"], "question": "q?"},
        {"record_id": "Single_NOPE/2001/page_1.pdf-1", "turn": 0, "predicted_answer": "1", "question": "kept?"},
    ]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    table = load_predictions(path)
    table.write_parquet(tmp_path / "run.parquet")
    from_table = grade_predictions(gold, table)
    from_scan = grade_predictions(gold, [pl.scan_parquet(tmp_path / "run.parquet")])
    assert_frame_equal(from_scan.turns, from_table.turns)
    assert_frame_equal(from_scan.policy_grades, from_table.policy_grades)
    assert_frame_equal(from_scan.unmatched, from_table.unmatched)
    assert from_scan.unmatched["question"].to_list() == ["kept?"]
    # every row matched: the unmatched table is empty, with the predictions' columns
    matched = grade_predictions(gold, pl.scan_parquet(tmp_path / "run.parquet").head(1))
    assert matched.unmatched.height == 0
    assert matched.unmatched.columns == from_table.unmatched.columns


def test_two_systems_are_graded_side_by_side(tmp_path: Path, dev_small_path: Path) -> None:
    gold = load_gold(dev_small_path)
    first = gold.turns.row(0, named=True)
    path = tmp_path / "both.csv"
    path.write_text(
        "system,record_id,turn,predicted_answer\n"
        f"good,{first['record_id']},{first['turn']},{first['gold_executed']}\n"
        f"bad,{first['record_id']},{first['turn']},-999999\n",
        encoding="utf-8",
    )
    run = grade_predictions(gold, load_predictions(path))
    assert run.systems == ("good", "bad")
    assert run.turns.height == 2 * gold.turns.height
    key = (pl.col("record_id") == first["record_id"]) & (pl.col("turn") == first["turn"])
    verdicts = dict(run.turns.filter(key).select("system", "correct").iter_rows())
    assert verdicts == {"good": True, "bad": False}


def test_program_only_predictions_are_executed(tmp_path: Path, dev_small_path: Path) -> None:
    gold = load_gold(dev_small_path)
    first = gold.turns.row(0, named=True)
    path = tmp_path / "programs.jsonl"
    path.write_text(
        json.dumps({"record_id": first["record_id"], "turn": first["turn"], "predicted_program": first["gold_program"]})
        + "\n",
        encoding="utf-8",
    )
    row = (
        grade_predictions(gold, load_predictions(path))
        .turns.filter(pl.col("status") != "no_prediction")
        .row(0, named=True)
    )
    assert row["answer_source"] == "program"
    assert row["correct"] and row["program_correct"]
    assert str(row["program_status"]) == "ok"


@pytest.mark.parametrize("fixture", ["ghchen99_predictions_path", "ghchen99_results_path"])
def test_ghchen99_graded_against_embedded_gold(
    fixture: str, request: pytest.FixtureRequest, ghchen99_predictions_path: Path
) -> None:
    gold = load_gold(ghchen99_predictions_path)
    run = grade_predictions(gold, load_predictions(request.getfixturevalue(fixture)))
    (summary,) = summarize(run.turns, run.unmatched, run.policy.name).values()
    assert summary["n_turns"] == 355 and summary["n_conversations"] == 100
    assert summary["n_missing"] == summary["n_unmatched"] == 0
    turns = run.turns
    # program accuracy: share of turns whose program is equivalent to the gold program
    assert summary["turn_program_accuracy"] == pytest.approx(turns["program_correct"].fill_null(False).mean())
    # a verdict on every turn except where the model wrote an empty program (one turn)
    no_verdict = turns.filter(pl.col("program_correct").is_null())
    assert no_verdict["predicted_program"].str.strip_chars().to_list() == [""]
    last = turns.filter(pl.col("is_last_turn"))
    assert summary["conversation_program_accuracy"] == pytest.approx(last["program_correct"].mean())
    assert 0.5 < summary["turn_program_accuracy"] < 1
    assert 0 < summary["conversation_program_accuracy"] < summary["turn_program_accuracy"]
    # the first turn reads 174247 where the gold is 206588: wrong answer, wrong program
    first = turns.filter((pl.col("record_id") == "Single_JKHY/2009/page_28.pdf-3") & (pl.col("turn") == 0))
    assert first.select("correct", "program_correct").row(0) == (False, False)


# --------------------------------------------------------------------------- scale (issue 21)
def test_the_fast_path_in_slices_grades_as_in_one_call(
    dev_gold: GoldDataset, claude_run_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``fastpath.decide`` called on slices of the distinct inputs (``DECIDE_GRADES``, here 700
    grades: 116 inputs under six modelled policies, of ~2,900) gives the turns, policy grades and
    checks of one call."""
    second = claude_run_path.parents[1] / "2026-05-04T12-48-44Z" / "predictions.jsonl"
    preds = [load_predictions(claude_run_path), load_predictions(second)]
    whole = grade_predictions(dev_gold, preds, workers=1)
    calls: list[int] = []
    real = fastpath.decide

    def counting(frame: pl.DataFrame, *args: Any, **kwargs: Any) -> tuple[pl.Series, pl.DataFrame]:
        calls.append(frame.height)
        return real(frame, *args, **kwargs)

    monkeypatch.setattr(grade, "DECIDE_GRADES", 700)
    monkeypatch.setattr(fastpath, "decide", counting)
    sliced = grade_predictions(dev_gold, preds, workers=1)
    assert len(calls) > 10 and max(calls) <= 700 // 6
    assert whole.fast_path_rows is not None and whole.fast_path_rows == sliced.fast_path_rows > 2000
    for name in ("turns", "policy_grades", "checks"):
        assert_frame_equal(getattr(sliced, name), getattr(whole, name))


def test_columns_joined_beside_the_frame_are_those_of_a_left_join() -> None:
    frame = pl.DataFrame({"k": ["b", "a", "c", None, "a"], "t": [1, 0, 2, 0, 0], "x": [1.0, 2.0, 3.0, 4.0, 5.0]})
    cases = [
        pl.DataFrame({"k": ["a", "b"], "t": [0, 1], "y": ["A", "B"]}),  # one row per key: beside
        pl.DataFrame({"k": ["a", "a"], "t": [0, 0], "y": ["A", "A2"]}),  # a repeated key: a join
        pl.DataFrame({"k": ["a"], "t": [0], "x": [9.0]}),  # a column of the frame's: a join
        pl.DataFrame(
            {"k": [None], "t": [0], "y": ["null key"]}, schema={"k": pl.String, "t": pl.Int64, "y": pl.String}
        ),
    ]
    for right in cases:
        expected = frame.join(right, on=["k", "t"], how="left", maintain_order="left")
        assert_frame_equal(grade._join_left(frame, right, ["k", "t"]), expected)


def test_program_columns_of_fast_path_inputs_are_graded_once_per_program(
    dev_gold: GoldDataset, claude_run_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under the policies the fast path models, the cascade grades only the program columns of
    the inputs it decides: once per (program, gold program, table), each answer sharing them
    getting the same columns as the cascade gives it (the answers re-spelled here)."""
    second = claude_run_path.parents[1] / "2026-05-04T12-48-44Z" / "predictions.jsonl"
    preds = [load_predictions(claude_run_path), load_predictions(second)]
    preds += [p.with_columns(pl.col("predicted_answer") + "0", pl.lit("other").alias("system")) for p in preds[:1]]
    modelled = [p for p in POLICIES.values() if fastpath.models(p)]
    sent: list[int] = []
    real = grade.map_chunks

    def counting(fn: Any, items: list[Any], **kwargs: Any) -> list[Any]:
        sent.append(len(items))
        return real(fn, items, **kwargs)

    monkeypatch.setattr(grade, "map_chunks", counting)
    fast = grade_predictions(dev_gold, preds, also=modelled, workers=1)
    slow = grade_predictions(dev_gold, preds, also=modelled, workers=1, fast_path=False)
    assert_frame_equal(fast.turns, slow.turns)
    assert_frame_equal(fast.policy_grades, slow.policy_grades)
    programs = fast.turns.filter(pl.col("predicted_program").is_not_null()).join(
        dev_gold.turns.select("record_id", "turn", "doc_id"), on=["record_id", "turn"]
    )
    distinct_programs = programs.select("predicted_program", "gold_program", "doc_id").n_unique()
    assert sent[0] <= distinct_programs < programs.height


def _per_key(keys: list[int], policies: int) -> pl.DataFrame:
    """Grade rows of ``keys`` under ``policies`` policies, in the dtypes the grading builds."""
    from workbench.schema import POLICY_GRADES

    rows = [(k, p) for k in keys for p in range(policies)]
    return pl.DataFrame(
        {
            "_key": pl.Series([k for k, _ in rows], dtype=pl.UInt32),
            "_p": pl.Series([p for _, p in rows], dtype=pl.Int64),
            "policy": [f"policy {p}" for _, p in rows],
            "correct": [(k + p) % 2 == 0 for k, p in rows],
            "status": ["ok"] * len(rows),
            "reason": ["exact"] * len(rows),
            "answer": [f"{k}.{p}" for k, p in rows],
            "answer_source": ["answer"] * len(rows),
            "extraction_rule": [None] * len(rows),
            "detail": [f"detail of key {k} under policy {p}" for k, p in rows],
            "pred_value": [k + p / 10 for k, p in rows],
        }
    ).with_columns(pl.col(c).cast(POLICY_GRADES[c]) for c in POLICY_GRADES if c not in ("system", "record_id", "turn"))


@pytest.mark.parametrize("missing", [False, True])
def test_policy_grades_view_of_the_inputs_is_that_of_a_join(missing: bool) -> None:
    """The per-turn view built from the grades kept once per distinct input (issue 35) holds the
    rows a join of the turns with the grades per input and policy would."""
    from workbench.pipeline.policy_inputs import inputs_from_parts, policy_view
    from workbench.schema import POLICY_GRADES

    # five distinct inputs, graded in two parts (the fast path's, the cascade's); seven turns share them
    parts = [_per_key([0, 2, 3], 3), _per_key([1, 4], 3)]
    if missing:  # a key without a row for one policy: not every slot is filled, so the join decides
        parts[1] = parts[1].filter(~((pl.col("_key") == 4) & (pl.col("_p") == 2)))
    turn_keys = pl.DataFrame(
        {
            "system": ["b", "a", "a", "b", "a", "b", "a"],
            "record_id": ["r2", "r1", "r0", "r0", "r2", "r1", "r3"],
            "turn": pl.Series([0, 0, 0, 0, 0, 0, 1], dtype=pl.Int32),
            "_key": pl.Series([4, 1, 0, 0, 3, 2, 4], dtype=pl.UInt32),
        }
    )
    expected = (
        turn_keys.sort("system", "record_id", "turn")
        .join(pl.concat(parts), on="_key", how="inner", maintain_order="left_right")
        .select([pl.col(c).cast(t) for c, t in POLICY_GRADES.items()])
    )
    inputs = inputs_from_parts([p.clone() for p in parts], 5)
    assert inputs.height == 5 and inputs.columns == ["input_key", "policy 0", "policy 1", "policy 2"]
    turns = turn_keys.sort("system", "record_id", "turn")
    got = policy_view(turns.drop("_key"), turns["_key"], inputs)
    assert_frame_equal(got, expected)
    assert got.height == 7 * 3 - 2 * missing  # key 4 is two turns' input
