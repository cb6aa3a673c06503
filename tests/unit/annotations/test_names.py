"""Analysts told apart (issue 33, point 4): no event under a shared default name, a session that
asks before its first save, JUPYTERHUB_USER, and "Model error" only where a system's answer was
graded wrong, always with the system. On the small ConvFinQA fixture."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import workbench
from workbench.annotations import AnnotationSession, QueueItem, Store, open_store
from workbench.annotations.names import name_problem, resolve_name
from workbench.errors import InputError, UsageError
from workbench.pipeline.run import Run

REPO = Path(__file__).resolve().parents[3]
DATASET = REPO / "tests" / "fixtures" / "convfinqa" / "dev_small.json"
PREDICTIONS = REPO / "tests" / "fixtures" / "predictions" / "zarifaziz_dev_small.jsonl"


@pytest.fixture(scope="module")
def run() -> Run:
    return workbench.grade_run(
        workbench.config.resolve(dataset=DATASET, predictions=[str(PREDICTIONS)], systems="claude")
    )


@pytest.mark.parametrize("given", ["", "  ", "analyst", "Analyst ", "user", None])
def test_an_empty_or_shared_name_means_ask(given: str | None) -> None:
    assert resolve_name(given, environ={}) is None
    assert name_problem(given) is not None


def test_a_name_is_kept_and_the_hub_user_wins() -> None:
    assert resolve_name(" ana ", environ={}) == "ana"
    assert resolve_name("", environ={"JUPYTERHUB_USER": "bo"}) == "bo"
    assert resolve_name("analyst", environ={"JUPYTERHUB_USER": "bo"}) == "bo"
    assert resolve_name("ana", environ={"JUPYTERHUB_USER": " "}) == "ana"


def test_the_store_refuses_a_shared_name_and_a_model_error_without_its_system(store: Store) -> None:
    with pytest.raises(InputError, match="'analyst' is a shared default name") as refused:
        store.annotate(annotator="analyst", record_id="r1", turn=0, category="mislabel")
    assert "\n" not in str(refused.value)
    with pytest.raises(InputError, match="a model error needs the system"):
        store.annotate(annotator="ana", record_id="r1", turn=0, category="model_error")
    assert store.events().height == 0


def test_an_unnamed_session_shows_items_and_saves_nothing_until_named(
    run: Run, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    session = AnnotationSession.from_checks(store, run, annotator="analyst")
    assert session.annotator is None and session.item() is not None
    with pytest.raises(UsageError, match="nothing saved: who is annotating") as refused:
        session.submit(category="mislabel")
    assert "\n" not in str(refused.value) and store.events().height == 0
    with pytest.raises(UsageError, match="shared default name"):
        session.set_annotator("analyst")
    session.set_annotator("ana")
    session.submit(category="mislabel")
    assert store.events()["annotator"].to_list() == ["ana"]


def test_the_hub_user_signs_the_events(run: Run, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTERHUB_USER", "carla")
    session = AnnotationSession.from_checks(store, run, annotator="")
    session.submit(category="other")
    assert store.events()["annotator"].to_list() == ["carla"]


def test_model_error_is_refused_where_the_answer_was_graded_right(run: Run, store: Store) -> None:
    session = AnnotationSession.from_checks(store, run, annotator="ana")
    item = session.item()
    assert item is not None and item.correct is True and not item.model_error_allowed
    with pytest.raises(UsageError, match="'Model error' is for a system's answer graded wrong"):
        session.submit(category="model_error")
    assert store.events().height == 0


def test_model_error_on_a_gold_key_records_the_system_and_counts_as_done(run: Run, store: Store) -> None:
    record_id, turn = run.turns.filter(~pl.col("correct")).select("record_id", "turn").row(0)
    session = AnnotationSession(store, run, [QueueItem(record_id, turn, None)], annotator="ana")
    assert session.item().model_error_allowed
    session.submit(category="model_error")
    event = store.events().row(0, named=True)
    assert (event["record_id"], event["turn"], event["system"], event["category"]) == (
        record_id,
        turn,
        "claude",
        "model_error",
    )
    assert session.n_done == 1 and session.current() is None


# --------------------------------------------------------------------------- overlap (issue 33, point 5)
def test_overlap_shows_a_share_of_items_to_two_analysts_blind(run: Run, store_location: str) -> None:
    from workbench.annotations.agreement import agreement

    with open_store(store_location) as mine, open_store(store_location) as theirs:
        ana = AnnotationSession.from_slice(mine, run, annotator="ana", failed_only=False, overlap=0.5, owner="k1")
        doubled = [k for k in ana.queue if ana.doubled(k)]
        assert 0 < len(doubled) < ana.total  # a share, chosen by the key: the same in every session
        while ana.current() is not None:
            ana.submit(category="other")
        assert ana.n_done == ana.total - len(doubled)  # a doubled item waits for a second analyst
        bo = AnnotationSession.from_slice(theirs, run, annotator="bo", failed_only=False, overlap=0.5, owner="k2")
        assert [bo.doubled(k) for k in bo.queue] == [ana.doubled(k) for k in ana.queue]
        seen = []
        while bo.current() is not None:
            seen.append(bo.current())
            assert bo.item().annotation is None  # ana's decision is not shown to bo
            bo.submit(category="other" if len(seen) % 2 else "mislabel")
        assert seen == doubled and bo.n_done == bo.total == ana.n_done
        table = agreement(mine)
        assert table.row(0, named=True)["n"] == len(doubled)


def test_overlap_outside_0_to_1_is_refused(run: Run, store: Store) -> None:
    with pytest.raises(UsageError, match="overlap is the share of items shown to two analysts"):
        AnnotationSession.from_checks(store, run, annotator="ana", overlap=1.5)


def test_the_adjudication_queue_holds_the_disagreements_for_a_third_analyst(run: Run, store: Store) -> None:
    from workbench.annotations.agreement import RULES, decided_by
    from workbench.annotations.queues import session_for

    turns = run.gold.turns.select("record_id", "turn").head(3).rows()
    for (record_id, turn), (ana, bo) in zip(
        turns, [("mislabel", "other"), ("other", "other"), ("mislabel", "missing_value")], strict=True
    ):
        store.annotate(annotator="ana", record_id=record_id, turn=turn, category=ana)
        store.annotate(annotator="bo", record_id=record_id, turn=turn, category=bo)
    cy = session_for(store, run, annotator="cy", queue="adjudicate")
    assert [(k.record_id, k.turn) for k in cy.queue] == [turns[0], turns[2]]
    assert cy.disputes()[(*turns[0], None)] == [("ana", "mislabel"), ("bo", "other")]
    assert cy.n_done == 0
    cy.submit(category="mislabel")
    assert cy.n_done == 1 and (cy.current().record_id, cy.current().turn) == turns[2]
    rules = {(r, t): rule for r, t, rule in decided_by(store).iter_rows()}
    assert [rules[k] for k in turns] == [RULES[2], RULES[1], RULES[3]]
    bo = session_for(store, run, annotator="bo", queue="adjudicate")
    assert bo.current() is None  # bo rated the remaining turn: not bo's to adjudicate
    with pytest.raises(UsageError, match="not one of checks, failed, adjudicate"):
        session_for(store, run, annotator="cy", queue="nope")
