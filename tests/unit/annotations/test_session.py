"""The annotation session over a real graded run (the small ConvFinQA fixture): queues from
a slice and from the checks, submit / skip / undo, progress, and the triage item.

The store is conftest.py's ``store`` / ``store_location``: SQLite here, PostgreSQL in
tests/system/postgres/test_store_suite_postgres.py."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import workbench
from workbench.annotations import AnnotationSession, QueueItem, Store, TraceView, TriageItem, open_store
from workbench.errors import InputError, UsageError
from workbench.grading.program import execute_program, literal_numbers, parse_program
from workbench.pipeline.run import Run
from workbench.schema import ANNOTATION_EVENTS

REPO = Path(__file__).resolve().parents[3]
DATASET = REPO / "tests" / "fixtures" / "convfinqa" / "dev_small.json"
PREDICTIONS = REPO / "tests" / "fixtures" / "predictions" / "zarifaziz_dev_small.jsonl"


@pytest.fixture(scope="module")
def run() -> Run:
    graded = workbench.grade_run(
        workbench.config.resolve(dataset=DATASET, predictions=[str(PREDICTIONS)], systems="claude")
    )
    assert graded.checks.height > 0, "the fixture needs data-quality flags for the checks queue"
    return graded


@pytest.fixture(scope="module")
def two_system_run() -> Run:
    """The same predictions graded as two systems."""
    return workbench.grade_run(
        workbench.config.resolve(dataset=DATASET, predictions=[str(PREDICTIONS)] * 2, systems=["a", "b"])
    )


def _failed_keys(run: Run) -> list[tuple[str, int, str]]:
    return (
        run.turns.filter(~pl.col("correct"))
        .select("record_id", "turn", "system")
        .sort("record_id", "turn", "system")
        .rows()
    )


# --------------------------------------------------------------------------- queues
def test_queue_from_slice_failed_turns(run: Run, store: Store) -> None:
    session = AnnotationSession.from_slice(store, run, annotator="ana")
    expected = _failed_keys(run)
    assert expected, "the fixture has failed turns"
    assert [(k.record_id, k.turn, k.system) for k in session.queue] == expected
    assert session.total == len(expected) and session.position == 0 and session.n_done == 0
    assert session.current() == QueueItem(*expected[0])


def test_queue_from_slice_group(run: Run, store: Store) -> None:
    divide = run.turns.filter(pl.col("operation") == "divide")
    everything = AnnotationSession.from_slice(
        store, run, annotator="ana", slice_name="operation", group="divide", failed_only=False
    )
    assert everything.total == divide.height
    keys = [(k.record_id, k.turn, k.system) for k in everything.queue]
    assert keys == sorted(keys)
    assert set(keys) == set(divide.select("record_id", "turn", "system").rows())
    failed = AnnotationSession.from_slice(
        store, run, annotator="ana", slice_name="operation", group="divide", system="claude"
    )
    assert [(k.record_id, k.turn, k.system) for k in failed.queue] == (
        divide.filter(~pl.col("correct")).select("record_id", "turn", "system").sort("record_id", "turn").rows()
    )
    assert 0 < failed.total < everything.total


def test_queue_from_slice_refuses_bad_arguments(run: Run, store: Store) -> None:
    with pytest.raises(UsageError, match="no group 'modulo'.*divide"):
        AnnotationSession.from_slice(store, run, annotator="ana", slice_name="operation", group="modulo")
    with pytest.raises(UsageError, match="slice_name and group go together"):
        AnnotationSession.from_slice(store, run, annotator="ana", slice_name="operation")
    with pytest.raises(UsageError, match="no system 'gpt'.*claude"):
        AnnotationSession.from_slice(store, run, annotator="ana", system="gpt")
    with pytest.raises(UsageError):
        AnnotationSession.from_slice(store, run, annotator="ana", slice_name="colour", group="red")
    with pytest.raises(UsageError, match="not a turn of this run"):
        AnnotationSession(store, run, [QueueItem("nope", 0, None)], annotator="ana")


def test_queue_from_checks_most_confident_first(run: Run, store: Store) -> None:
    session = AnnotationSession.from_checks(store, run, annotator="ana")
    per_turn = run.checks.group_by("record_id", "turn").agg(pl.col("confidence").max())
    assert session.total == per_turn.height
    assert all(k.system is None for k in session.queue)
    confidence = {(r, t): c for r, t, c in per_turn.rows()}
    shown = [confidence[(k.record_id, k.turn)] for k in session.queue]
    assert shown == sorted(shown, reverse=True)
    top = run.checks.sort("confidence", descending=True).row(0, named=True)
    assert session.current() == QueueItem(top["record_id"], top["turn"], None)


def test_queue_from_checks_filters(run: Run, store: Store) -> None:
    category = run.checks["category"].cast(pl.String)[0]
    only = AnnotationSession.from_checks(store, run, annotator="ana", categories=[category])
    assert only.total == run.checks.filter(pl.col("category") == category).select("record_id", "turn").n_unique()
    highest = run.checks["confidence"].max()
    confident = AnnotationSession.from_checks(store, run, annotator="ana", min_confidence=highest)
    assert confident.total == run.checks.filter(pl.col("confidence") == highest).height
    assert AnnotationSession.from_checks(store, run, annotator="ana", min_confidence=1.01).current() is None
    with pytest.raises(UsageError, match="unknown check category 'typo'"):
        AnnotationSession.from_checks(store, run, annotator="ana", categories=["typo"])


# --------------------------------------------------------------------------- moving and writing
def test_submit_writes_and_advances(run: Run, store: Store) -> None:
    session = AnnotationSession.from_slice(store, run, annotator="ana")
    first = session.current()
    event_id = session.submit(category="model_error", note="picked the wrong row", corrected_answer="4")
    assert session.position == 1 and session.n_done == 1
    row = store.events().row(0, named=True)
    assert row["event_id"] == event_id
    assert (row["record_id"], row["turn"], row["system"]) == (first.record_id, first.turn, first.system)
    assert (row["annotator"], row["category"], row["note"], row["corrected_answer"]) == (
        "ana",
        "model_error",
        "picked the wrong row",
        "4",
    )
    session.previous()
    item = session.item()
    assert item.annotation is not None and item.annotation["event_id"] == event_id
    assert set(item.annotation) == {c for c in ANNOTATION_EVENTS if c not in ("kind", "retracts")}


def test_invalid_submit_writes_nothing_and_stays(run: Run, store: Store) -> None:
    session = AnnotationSession.from_slice(store, run, annotator="ana")
    with pytest.raises(InputError, match="field 'corrected_program'"):
        session.submit(category="mislabel", corrected_program="divide(4,")
    assert session.position == 0 and store.events().height == 0
    assert session.undo() is None


def test_skip_previous_goto(run: Run, store: Store) -> None:
    session = AnnotationSession.from_slice(store, run, annotator="ana", failed_only=False)
    session.skip()
    assert session.position == 1 and store.events().height == 0
    session.previous()
    session.previous()
    assert session.position == 0
    session.goto(session.total)
    assert session.current() is None and session.item() is None
    session.skip()
    assert session.position == session.total
    with pytest.raises(UsageError, match="queue is exhausted"):
        session.submit(category="other")
    with pytest.raises(UsageError, match=f"from 0 to {session.total}"):
        session.goto(session.total + 1)
    session.goto(2)
    assert session.current() == session.queue[2]


def test_undo_retracts_and_returns_to_the_item(run: Run, store: Store) -> None:
    session = AnnotationSession.from_slice(store, run, annotator="ana", failed_only=False)
    a = session.submit(category="other")
    session.skip()
    b = session.submit(category="mislabel")
    assert session.position == 3 and session.n_done == 2
    undo_b = session.undo()
    assert session.position == 2 and session.current() == session.queue[2]
    assert session.n_done == 1
    retraction = store.events().filter(pl.col("event_id") == undo_b).row(0, named=True)
    assert (retraction["kind"], retraction["retracts"], retraction["annotator"]) == ("retraction", b, "ana")
    undo_a = session.undo()
    assert session.position == 0 and session.n_done == 0 and undo_a > undo_b
    assert session.undo() is None  # nothing left to undo
    assert store.active().height == 0
    assert store.events()["kind"].to_list() == ["annotation", "annotation", "retraction", "retraction"]
    assert a < b


def test_two_sessions_on_one_store_see_each_others_work(run: Run, store_location: str) -> None:
    with open_store(store_location) as mine, open_store(store_location) as theirs:
        ana = AnnotationSession.from_slice(mine, run, annotator="ana")
        bo = AnnotationSession.from_slice(theirs, run, annotator="bo")
        assert (ana.position, bo.position) == (0, 1)  # item 0 is on ana's screen: bo's queue skips it
        ana.submit(category="model_error")
        assert ana.position == 2  # item 1 is bo's
        assert bo.n_done == 1
        assert bo.build_item(bo.queue[0]).annotation["annotator"] == "ana"
        bo.submit(category="model_error")
        assert ana.n_done == 2 and bo.position == 3
        bo.undo()  # bo's undo takes back bo's own annotation only
        assert ana.n_done == 1 and mine.active()["annotator"].to_list() == ["ana"] and bo.position == 1


def test_gold_and_system_annotations_are_different_keys(run: Run, store: Store) -> None:
    turn = run.turns.filter(~pl.col("correct")).row(0, named=True)
    gold_key = QueueItem(turn["record_id"], turn["turn"], None)
    system_key = QueueItem(turn["record_id"], turn["turn"], turn["system"])
    session = AnnotationSession(store, run, [gold_key, system_key], annotator="ana")
    session.submit(category="mislabel")
    assert session.n_done == 1 and session.item().annotation is None
    assert session.build_item(gold_key).annotation["category"] == "mislabel"


# --------------------------------------------------------------------------- the item
def test_item_from_a_failed_turn(run: Run, store: Store) -> None:
    session = AnnotationSession.from_slice(store, run, annotator="ana")
    session.goto(session.total - 1)  # a later turn of its conversation, so it has history
    key = session.current()
    item = session.item()
    assert isinstance(item, TriageItem) and item.key == key
    turn = run.turns.filter(
        pl.col("record_id") == key.record_id, pl.col("turn") == key.turn, pl.col("system") == key.system
    ).row(0, named=True)
    assert (item.question, item.gold_answer, item.gold_executed) == (
        turn["question"],
        turn["gold_answer"],
        turn["gold_executed"],
    )
    assert (item.predicted_answer, item.answer_graded, item.correct) == (
        turn["predicted_answer"],
        turn["answer"],
        False,
    )
    assert item.reason == str(turn["reason"]) and item.error_type == str(turn["error_type"])
    assert item.detail == turn["detail"]

    # conversation: every earlier turn, with the system's answers
    gold = run.gold.turns.filter(pl.col("record_id") == key.record_id, pl.col("turn") < key.turn).sort("turn")
    assert key.turn > 0
    assert [(t, q, a) for t, q, a, _ in item.conversation] == gold.select("turn", "question", "gold_answer").rows()
    answers = dict(
        run.turns.filter(pl.col("record_id") == key.record_id, pl.col("system") == key.system)
        .select("turn", "predicted_answer")
        .rows()
    )
    assert [p for t, _, _, p in item.conversation] == [answers[t] for t, *_ in item.conversation]

    # traces: what execute_program gives with the document's table
    doc_id = run.gold.turns.filter(pl.col("record_id") == key.record_id)["doc_id"][0]
    table = run.gold.tables([doc_id]).get(doc_id)
    gold_result = execute_program(turn["gold_program"], table=table)
    assert item.gold_trace == TraceView(
        program=turn["gold_program"],
        status="ok",
        value=gold_result.answer,
        steps=tuple(s.describe() for s in gold_result.steps),
        message="",
    )
    assert item.gold_trace.steps
    assert item.predicted_trace is not None
    assert item.predicted_trace.program == turn["predicted_program"]
    assert item.predicted_trace.steps == tuple(
        s.describe() for s in execute_program(turn["predicted_program"], table=table).steps
    )

    # numbers: the literals of both programs
    gold_numbers = {n.value for n in literal_numbers(parse_program(turn["gold_program"]))}
    predicted_numbers = {n.value for n in literal_numbers(parse_program(turn["predicted_program"]))}
    assert gold_numbers and gold_numbers <= item.numbers_used
    assert item.numbers_used == frozenset(gold_numbers | predicted_numbers)

    # the document
    document = run.gold.documents.filter(pl.col("doc_id") == doc_id).row(0, named=True)
    grid = json.loads(document["table_json"])
    assert item.table_columns == tuple(grid["columns"])
    assert len(item.table_rows) == len(grid["rows"])
    assert [row[0] for row in item.table_rows] == [row[0] for row in grid["rows"]]
    assert all(isinstance(cell, str) for row in item.table_rows for cell in row)
    assert (item.pre_text, item.post_text) == (document["pre_text"], document["post_text"])
    assert item.annotation is None


def test_item_from_a_flag_carries_the_evidence(run: Run, store: Store) -> None:
    session = AnnotationSession.from_checks(store, run, annotator="ana")
    item = session.item()
    key = item.key
    checks = run.checks.filter(pl.col("record_id") == key.record_id, pl.col("turn") == key.turn)
    assert {f[3] for f in item.flags} == set(checks["evidence"].to_list())
    category, rule, confidence, evidence = item.flags[0]
    assert (category, rule, confidence) == (
        str(checks["category"][0]),
        checks["rule"][0],
        checks["confidence"].max(),
    )
    assert evidence and any(ch.isdigit() for ch in evidence)
    # a system-less key of a one-system run shows that system's answer
    turn = run.turns.filter(pl.col("record_id") == key.record_id, pl.col("turn") == key.turn).row(0, named=True)
    assert item.predicted_answer == turn["predicted_answer"] and item.correct == turn["correct"]
    assert all(p is not None for *_, p in item.conversation)


def test_system_less_item_of_a_two_system_run_has_no_prediction(two_system_run: Run, store: Store) -> None:
    session = AnnotationSession.from_checks(store, two_system_run, annotator="ana")
    item = session.item()
    assert item.key.system is None
    assert (item.predicted_answer, item.answer_graded, item.correct, item.predicted_trace) == (None, None, None, None)
    assert all(p is None for *_, p in item.conversation)
    assert item.flags and item.gold_trace.status == "ok"
    by_system = AnnotationSession.from_slice(store, two_system_run, annotator="ana", system="b")
    assert {k.system for k in by_system.queue} == {"b"}
    assert by_system.item().predicted_answer is not None
