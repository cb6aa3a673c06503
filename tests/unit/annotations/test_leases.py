"""Shared queues: leases in the store (two sessions never get one item while a lease is live; a
released or expired lease returns the item), resuming at the first open item, and a store written
before leases existed. Time is injected (no clocks).

The store is conftest.py's ``store`` / ``store_location``: SQLite here, PostgreSQL in
tests/system/postgres/test_store_suite_postgres.py; ``test_sqlite_...`` tests are about the file only."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

import workbench
from workbench.annotations import AnnotationSession, AnnotationStore, Store, leases, open_store
from workbench.errors import UsageError
from workbench.pipeline.run import Run

REPO = Path(__file__).resolve().parents[3]
DATASET = REPO / "tests" / "fixtures" / "convfinqa" / "dev_small.json"
PREDICTIONS = REPO / "tests" / "fixtures" / "predictions" / "zarifaziz_dev_small.jsonl"


class Clock:
    """Seconds that move only when the test says so."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def run() -> Run:
    return workbench.grade_run(
        workbench.config.resolve(dataset=DATASET, predictions=[str(PREDICTIONS)], systems="claude")
    )


def _session(store: Store, run: Run, name: str, clock: Clock, owner: str = "") -> AnnotationSession:
    session = AnnotationSession.from_slice(store, run, annotator=name, failed_only=False, clock=clock, owner=owner)
    assert session.total >= 6, "the fixture needs a few turns"
    return session


def test_two_sessions_never_share_a_live_item(run: Run, store_location: str) -> None:
    clock = Clock()
    with open_store(store_location) as mine, open_store(store_location) as theirs:
        # one name, two owners (as two analysts' kernels are): the leases still differ
        ana = _session(mine, run, "sam", clock, owner="kernel-1")
        bo = _session(theirs, run, "sam", clock, owner="kernel-2")
        seen_together = []
        for _ in range(4):
            assert ana.current() != bo.current()
            seen_together.append((ana.position, bo.position))
            ana.submit(category="other")
            clock.now += 10
            bo.skip()
        assert seen_together == [(0, 1), (2, 3), (4, 5), (6, 7)]
        assert bo.n_held == 1 and ana.n_held == 1  # each sees the other's item on screen
        # goto an item the other holds is refused in one line; back passes over it
        with pytest.raises(UsageError, match="on sam's screen"):
            bo.goto(ana.position)


def test_an_expired_or_released_lease_returns_the_item(run: Run, store: Store) -> None:
    clock = Clock()
    ana = _session(store, run, "ana", clock)
    first = ana.current()
    bo = _session(store, run, "bo", clock)
    assert bo.current() == ana.queue[1]
    # ana's lease runs out: a new session takes item 1 again
    clock.now += leases.LEASE_SECONDS + 1
    cy = _session(store, run, "cy", clock)
    assert cy.current() == first
    # cy skips: the item is released, the next new session gets it
    cy.skip()
    assert leases.holder(store, leases_key(first), now=clock.now) is None
    di = _session(store, run, "di", clock)
    assert di.current() == first
    # closing gives every lease back
    di.close()
    assert leases.holder(store, leases_key(first), now=clock.now) is None
    # touch renews: ana's own lease is live again only if no one took the item
    assert ana.touch() is True and leases.holder(store, leases_key(first), now=clock.now) == "ana"


def leases_key(item) -> leases.Key:  # type: ignore[no-untyped-def]
    return (item.record_id, item.turn, item.system)


def test_reopening_resumes_at_the_first_open_item(run: Run, store_location: str) -> None:
    clock = Clock()
    with open_store(store_location) as store:
        session = _session(store, run, "ana", clock)
        session.submit(category="mislabel")
        session.submit(category="other")
        session.close()
    # a restart: a new store handle and a new session read where the work stopped
    with open_store(store_location) as store:
        again = _session(store, run, "ana", clock)
        assert again.position == 2 and again.n_done == 2
        # an undo in another session puts item 1 back in the queue for the next opening
        events = store.events()
        store.retract(int(events["event_id"][0]), annotator="bo")
        again.close()
        assert _session(store, run, "ana", clock).position == 0


def test_sqlite_a_store_from_before_leases_is_read_and_migrated_in_place(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with AnnotationStore(path) as store:
        store.annotate(annotator="ana", record_id="r", turn=0, category="other")
    with closing(sqlite3.connect(path)) as conn:  # an old store: the events table only
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] == [
            "events",
            "sqlite_sequence",
        ]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        inode = path.stat().st_ino
    with AnnotationStore(path) as store:
        assert leases.holder(store, ("r", 0, None), now=1.0) is None  # read without the table
        assert leases.held_by_others(store, owner="x", now=1.0) == set()
        assert leases.acquire(store, ("r", 0, None), owner="x", annotator="ana", now=1.0)
        assert store.events().height == 1 and store.active()["category"].to_list() == ["other"]
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == version  # older workbenches still open it
        assert conn.execute("SELECT kind, owner FROM leases").fetchall() == [("lease", "x")]
    assert path.stat().st_ino == inode  # migrated in place, not a copied file


def test_release_by_another_owner_does_nothing(store: Store) -> None:
    key = ("r", 1, "sys")
    assert leases.release(store, key, owner="a", now=0.0) is False  # nothing leased yet
    assert leases.acquire(store, key, owner="a", annotator="ana", now=0.0)
    assert leases.release(store, key, owner="b", now=1.0) is False
    assert leases.holder(store, key, now=1.0) == "ana"
    assert leases.release_owner(store, owner="a", now=2.0) == 1
    assert leases.holder(store, key, now=2.0) is None


def test_a_session_opened_again_in_one_process_keeps_the_item(run: Run, store: Store) -> None:
    """A template's cells run again: the new session of the same analyst shows the same item."""
    clock = Clock()
    first = _session(store, run, "ana", clock)
    first.skip()
    again = _session(store, run, "ana", clock)
    assert again.owner == first.owner and again.position == 0  # item 0 was released by the skip
    other = _session(store, run, "bo", clock)
    assert other.position == 2  # items 0 and 1 are open on ana's screens


def test_sqlite_recover_keeps_the_leases(tmp_path: Path) -> None:
    """Issue 33 (carried): a recovered store keeps who holds which item (live leases, in order)."""
    from workbench.annotations.recovery import recover_store

    source = tmp_path / "annotations.sqlite"
    with AnnotationStore(source) as store:
        store.annotate(annotator="ana", record_id="r1", turn=0, category="other")
        assert leases.acquire(store, ("r1", 0, None), owner="s1", annotator="ana", now=100.0)
        assert leases.acquire(store, ("r2", 1, "gpt"), owner="s2", annotator="bo", now=100.0)
        assert leases.release(store, ("r2", 1, "gpt"), owner="s2", now=101.0)
    done = recover_store(source)
    with AnnotationStore(done.path, create=False) as recovered:
        assert leases.holder(recovered, ("r1", 0, None), now=102.0) == "ana"
        assert leases.holder(recovered, ("r2", 1, "gpt"), now=102.0) is None
        assert not leases.acquire(recovered, ("r1", 0, None), owner="s9", annotator="cy", now=102.0)
        assert recovered.snapshot()["n_events"] == 1
