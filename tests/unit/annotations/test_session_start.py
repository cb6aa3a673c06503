"""A session takes its first lease when it is first asked where it is, not when it is built (issue
33, point 6): the triage template run by a kernel Voila starts ahead of any page holds no item."""

from __future__ import annotations

from pathlib import Path

import pytest

import workbench
from workbench.annotations import AnnotationSession, Store
from workbench.pipeline.run import Run

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures"
NOW = 1_000.0


@pytest.fixture(scope="module")
def run() -> Run:
    return workbench.grade_run(
        workbench.config.resolve(
            dataset=FIXTURES / "convfinqa" / "dev_small.json",
            predictions=[str(FIXTURES / "predictions" / "zarifaziz_dev_small.jsonl")],
        )
    )


def _key(item: object) -> tuple[object, ...]:
    return (item.record_id, item.turn, item.system)  # type: ignore[attr-defined]


def _session(store: Store, run: Run, name: str | None) -> AnnotationSession:
    return AnnotationSession.from_slice(store, run, annotator=name, clock=lambda: NOW, owner=f"kernel-{name}")


def test_a_built_session_holds_nothing_until_asked(store: Store, run: Run) -> None:
    ahead = _session(store, run, None)  # a pre-started kernel: no page, no name yet
    assert not ahead.started and store.leases().live(NOW) == {}
    assert "not started" in repr(ahead)
    assert ahead.total == 3 and ahead.n_done == 0 and ahead.n_held == 0  # read without a lease
    ahead.set_annotator("Ana")  # the page's remembered name arrives first
    assert store.leases().live(NOW) == {}
    assert ahead.current() == ahead.queue[0]  # the page shows the view: now the item is taken
    assert ahead.started and store.leases().live(NOW) == {_key(ahead.queue[0]): ("kernel-None", "Ana")}


def test_the_first_session_asked_gets_the_first_item(store: Store, run: Run) -> None:
    early, late = _session(store, run, "early"), _session(store, run, "late")
    assert late.position == 0 and early.position == 1  # built first, asked second
    early.start()  # a second start changes nothing
    assert early.position == 1 and len(store.leases().live(NOW)) == 2


def test_goto_places_an_unstarted_session_without_taking_the_first_item(store: Store, run: Run) -> None:
    session = _session(store, run, "ana")
    session.goto(2)
    assert session.started and session.position == 2
    assert list(store.leases().live(NOW)) == [_key(session.queue[2])]
