"""The pool and dedupe paths of grading give exactly the in-process, row-by-row results."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import workbench.parallel
import workbench.pipeline.grade
from workbench.io.gold import GoldDataset, load_gold
from workbench.io.predictions import load_predictions
from workbench.parallel import distinct, map_chunks, same_tables
from workbench.pipeline.grade import grade_predictions

FIXTURES = Path(__file__).parents[1] / "fixtures"
GOLD = FIXTURES / "convfinqa" / "dev_small.json"
PREDS = FIXTURES / "predictions" / "zarifaziz_dev_small.jsonl"


def _replicate(gold: GoldDataset, preds: pl.DataFrame, copies: int) -> tuple[GoldDataset, pl.DataFrame]:
    """``copies`` copies of the gold set and predictions, record and document ids suffixed ``#k``."""

    def suffixed(frame: pl.DataFrame, columns: list[str], k: int) -> pl.DataFrame:
        return frame.with_columns(pl.col(c) + f"#{k}" for c in columns if c in frame.columns)

    turns = pl.concat([suffixed(gold.turns, ["record_id", "doc_id"], k) for k in range(copies)])
    documents = pl.concat([suffixed(gold.documents, ["doc_id"], k) for k in range(copies)])
    many = pl.concat([suffixed(preds, ["record_id"], k) for k in range(copies)])
    return dataclasses.replace(gold, turns=turns, documents=documents), many


@pytest.fixture(scope="module")
def small() -> tuple[GoldDataset, pl.DataFrame]:
    return load_gold(GOLD), load_predictions(PREDS, system="s")


def test_pool_matches_in_process(small, monkeypatch):
    gold, preds = small
    other = preds.with_columns(pl.lit("t").alias("system"))
    inline = grade_predictions(gold, [preds, other], workers=1)
    monkeypatch.setattr(workbench.parallel, "POOL_THRESHOLD", 1)
    monkeypatch.setattr(workbench.parallel, "CHUNK_SIZE", 7)
    pooled = grade_predictions(gold, [preds, other], workers=2)
    assert_frame_equal(pooled.turns, inline.turns)
    assert_frame_equal(pooled.policy_grades, inline.policy_grades)
    assert_frame_equal(pooled.checks, inline.checks)


def test_replicated_run_grades_each_distinct_input_once(small, monkeypatch):
    gold, preds = small
    seen: list[int] = []
    monkeypatch.setattr(workbench.pipeline.grade, "_on_distinct", seen.append)
    once = grade_predictions(gold, preds, workers=1)
    many_gold, many_preds = _replicate(gold, preds, 4)
    many = grade_predictions(many_gold, many_preds, workers=1)
    assert seen[1] == seen[0]  # the copies add no input to grade
    assert 4 * seen[1] <= many.turns.height
    assert many.turns.height == 4 * once.turns.height
    for k in range(4):
        copy = many.turns.filter(pl.col("record_id").cast(pl.String).str.ends_with(f"#{k}"))
        assert copy.drop("record_id").equals(once.turns.drop("record_id"))
        assert (
            copy["record_id"].cast(pl.String).str.replace(f"#{k}$", "").equals(once.turns["record_id"].cast(pl.String))
        )
    grades = many.policy_grades.filter(pl.col("record_id").cast(pl.String).str.ends_with("#2"))
    assert grades.drop("record_id").equals(once.policy_grades.drop("record_id"))


def test_distinct_and_map_chunks_keep_order():
    frame = pl.DataFrame({"a": ["x", "y", "x", None], "b": [1, 2, 1, None]})
    unique, index = distinct(frame, ["a", "b"])
    assert unique.rows() == [("x", 1), ("y", 2), (None, None)]
    assert unique[index].equals(frame)
    assert map_chunks(list, list(range(10)), workers=1) == list(range(10))
    assert same_tables({"d#1": {"r": [1.0]}, "d#0": {"r": [1.0]}}) == {"d#0": "d#0", "d#1": "d#0"}


def test_the_fast_paths_leftovers_and_the_undecided_inputs_share_one_pool(small, monkeypatch):
    """With Math-Verify (a policy the fast path does not model), the cascade grades it on the inputs
    the fast path decides and every policy on those it does not (LaTeX here): in a pool, both go in
    one call, no worker of this process is started for them, and the grades are the in-process ones."""
    gold, preds = small
    preds = preds.with_columns(
        pl.when(pl.int_range(pl.len()) % 5 == 0)
        .then(pl.lit("so it is $\\frac{1}{2}$"))
        .otherwise(pl.col("predicted_answer"))
        .alias("predicted_answer")
    )
    inline = grade_predictions(gold, preds, workers=1)
    calls: list[str] = []
    real = workbench.pipeline.grade.map_chunks

    def recorded(fn, items, **options):
        calls.append(getattr(fn, "func", fn).__name__)
        return real(fn, items, **options)

    monkeypatch.setattr(workbench.pipeline.grade, "map_chunks", recorded)
    monkeypatch.setattr(workbench.pipeline.grade, "start_worker", lambda: calls.append("start_worker"))
    monkeypatch.setattr(workbench.parallel, "POOL_THRESHOLD", 1)
    monkeypatch.setattr(workbench.parallel, "CHUNK_SIZE", 9)
    pooled = grade_predictions(gold, preds, workers=2)
    assert calls == ["_grade_tagged"]
    assert pooled.fast_path_rows is not None and 0 < pooled.fast_path_rows < pooled.turns.height
    assert_frame_equal(pooled.turns, inline.turns)
    assert_frame_equal(pooled.policy_grades, inline.policy_grades)
    assert pooled.policy_grades.filter(pl.col("answer").str.contains("frac", literal=True)).height > 0


def test_a_large_run_is_graded_in_the_pool_started_before_its_inputs_are_read(monkeypatch):
    """Prediction files of POOL_AHEAD_BYTES or more: the pool is started first (each worker starting
    the grader's worker), the grading's map_chunks calls send their chunks to it, and the grades are
    those of a run graded without it."""
    from workbench.config import resolve
    from workbench.grading.limits import start_worker
    from workbench.pipeline import run

    config = resolve(dataset=GOLD, predictions=[PREDS], systems=["s"])
    monkeypatch.setattr(workbench.parallel, "POOL_THRESHOLD", 1)
    monkeypatch.setattr(workbench.parallel, "CHUNK_SIZE", 11)
    without = run.grade_run(config)  # files smaller than POOL_AHEAD_BYTES: pools started by map_chunks
    started, ahead = [], []
    real_pool, real_map = workbench.parallel.ProcessPoolExecutor, workbench.pipeline.grade.map_chunks

    def pool(*args, **options):
        started.append(options.get("initializer"))
        return real_pool(*args, **options)

    def chunks(fn, items, **options):
        ahead.append(workbench.parallel._AHEAD.get() is not None)
        return real_map(fn, items, **options)

    monkeypatch.setattr(workbench.parallel, "ProcessPoolExecutor", pool)
    monkeypatch.setattr(workbench.pipeline.grade, "map_chunks", chunks)
    monkeypatch.setattr(run, "POOL_AHEAD_BYTES", 1)
    graded = run.grade_run(config)
    assert started[0] is start_worker and ahead and all(ahead)
    assert started.count(start_worker) == 1
    assert workbench.parallel._AHEAD.get() is None  # shut down with the run
    assert_frame_equal(graded.turns, without.turns)
    assert_frame_equal(graded.policy_grades, without.policy_grades)
    assert_frame_equal(graded.checks, without.checks)


def test_bad_input_read_with_a_pool_ahead_gives_the_same_one_line_error(tmp_path, monkeypatch):
    """An error while the inputs are read (the pool started ahead still starting) is the error of a
    run without the pool; the pool is stopped with it."""
    from workbench.config import resolve
    from workbench.errors import InputError
    from workbench.pipeline import run

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"record_id": "1", "turn": 0, "raw_output": "x"}\n{not json\n', encoding="utf-8")
    config = resolve(dataset=None, predictions=[bad], systems=["s"])
    with pytest.raises(InputError) as alone:
        run.grade_run(config)
    monkeypatch.setattr(run, "POOL_AHEAD_BYTES", 1)
    with pytest.raises(InputError) as ahead:
        run.grade_run(config)
    assert str(ahead.value) == str(alone.value) and "line 2" in str(ahead.value)
    assert workbench.parallel._AHEAD.get() is None
