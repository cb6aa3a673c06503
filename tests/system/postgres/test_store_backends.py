"""The store's interface on both backends: the same events, undo, refusals and leases, on SQLite
(a file) and on PostgreSQL (a throwaway cluster, see conftest.py), chosen only by the location."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from workbench.annotations import leases, open_store
from workbench.errors import InputError, UsageError


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'annotations.sqlite'}"
    return str(request.getfixturevalue("pg_url"))


def test_events_undo_and_active_are_the_same_on_both(location: str) -> None:
    with open_store(location) as store:
        first = store.annotate(annotator="ana", record_id="r1", turn=0, category="mislabel", note="- missing value")
        second = store.annotate(annotator="bo", record_id="r1", turn=0, category="other", system="gpt")
        third = store.annotate(annotator="bo", record_id="r1", turn=0, category="unit_inconsistency")
        undo = store.retract(third, annotator="bo")
        assert (first, second, third, undo) == (1, 2, 3, 4)
        active = store.active().select("event_id", "annotator", "system", "category", "note").rows()
        assert active == [(1, "ana", None, "mislabel", "- missing value"), (2, "bo", "gpt", "other", None)]
        events = store.events()
        assert events.get_column("kind").to_list() == ["annotation"] * 3 + ["retraction"]
        assert events.get_column("retracts").to_list() == [None, None, None, 3]
        assert str(events.schema["created_at"]) == "Datetime(time_unit='us', time_zone='UTC')"
        snap = store.snapshot()
        assert (snap["n_events"], snap["max_event_id"]) == (4, 4)


def test_refusals_are_the_same_on_both(location: str) -> None:
    with open_store(location) as store:
        event = store.annotate(annotator="ana", record_id="r1", turn=0, category="mislabel")
        undo = store.retract(event, annotator="ana")
        with pytest.raises(UsageError, match="already retracted"):
            store.retract(event, annotator="ana")
        with pytest.raises(UsageError, match="is a retraction"):
            store.retract(undo, annotator="ana")
        with pytest.raises(UsageError, match="there is no event 99"):
            store.retract(99, annotator="ana")
        with pytest.raises(InputError, match="category"):
            store.annotate(annotator="ana", record_id="r1", turn=0, category="typo")
        rows = [{"annotator": "ana", "record_id": "r2", "turn": 0, "category": "other"}, {"annotator": ""}]
        with pytest.raises(InputError):
            store.annotate_many(rows, where="batch")
        assert store.snapshot()["n_events"] == 2  # nothing of the refused batch


def test_a_second_handle_sees_every_acknowledged_event(location: str) -> None:
    with open_store(location) as one, open_store(location, create=False) as two:
        ids = one.annotate_many(
            [{"annotator": "ana", "record_id": "r", "turn": t, "category": "other"} for t in range(5)]
        )
        assert two.events().get_column("event_id").to_list() == ids
        assert two.snapshot() == one.snapshot()


def test_leases_expire_and_are_given_back_on_both(location: str) -> None:
    key = ("r1", 0, None)
    other = ("r1", 0, "gpt")
    with open_store(location) as store:
        assert leases.acquire(store, key, owner="s1", annotator="ana", now=100.0)
        assert not leases.acquire(store, key, owner="s2", annotator="bo", now=101.0)
        assert leases.acquire(store, other, owner="s2", annotator="bo", now=101.0)  # a system's turn is another key
        assert leases.holder(store, key, now=101.0) == "ana"
        assert leases.held_by_others(store, owner="s2", now=101.0) == {key}
        assert leases.acquire(store, key, owner="s1", annotator="ana", now=200.0)  # renewed by its owner
        assert leases.acquire(store, key, owner="s2", annotator="bo", now=200.0 + leases.LEASE_SECONDS)  # expired
        assert leases.release(store, key, owner="s2", now=600.0)
        assert not leases.release(store, key, owner="s2", now=600.0)
        assert leases.holder(store, key, now=600.0) is None
        assert leases.release_owner(store, owner="s2", now=102.0) == 1  # the system turn's lease, still live then


def test_two_sessions_racing_for_each_turn_get_it_once(location: str) -> None:
    keys = [(f"r{i}", 0, None) for i in range(20)]
    won: dict[str, list[tuple[str, int, None]]] = {"a": [], "b": []}
    stores = {name: open_store(location) for name in won}
    start = threading.Barrier(2)

    def take(name: str) -> None:
        start.wait()
        for key in keys:
            if leases.acquire(stores[name], key, owner=name, annotator=name, now=1000.0):
                won[name].append(key)

    threads = [threading.Thread(target=take, args=(name,)) for name in won]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for store in stores.values():
        store.close()
    assert sorted(won["a"] + won["b"]) == sorted(keys)  # every turn leased, none twice
    assert not set(won["a"]) & set(won["b"])


def test_the_repr_shows_no_absolute_path_and_no_password(location: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with open_store(location) as store:
        shown = repr(store)
    assert "/tmp/" not in shown.split("?")[0] and "s3cret" not in shown
    assert shown.endswith("open)")


def test_copy_sqlite_to_postgresql_and_back_keeps_everything_and_twice_adds_nothing(
    tmp_path: Path, pg_url: str
) -> None:
    from workbench.annotations.transfer import copy_events

    with open_store(tmp_path / "a.sqlite") as source:
        ids = [
            source.annotate(annotator="ana", record_id="r", turn=t, category="other", note=f"-{t}") for t in range(4)
        ]
        source.retract(ids[1], annotator="bo")
        with open_store(pg_url) as server, open_store(f"sqlite:///{tmp_path / 'back.sqlite'}") as back:
            there = copy_events(source, server)
            home = copy_events(server, back)
            assert (there.added, home.added, there.kept_ids) == (5, 5, True)
            assert source.snapshot() == server.snapshot() == back.snapshot()
            assert back.active().equals(source.active())
            assert copy_events(source, server).added == 0 and copy_events(server, back).added == 0
            # the server goes on numbering after the copied ids
            assert server.annotate(annotator="cy", record_id="r", turn=9, category="other") == 6


def test_a_store_merged_into_another_is_renumbered_with_its_retractions(location: str, tmp_path: Path) -> None:
    from workbench.annotations.transfer import copy_events

    with open_store(tmp_path / "team-b.sqlite") as other, open_store(location) as store:
        store.annotate(annotator="ana", record_id="r", turn=0, category="other")
        theirs = other.annotate(annotator="bo", record_id="s", turn=1, category="mislabel")
        other.retract(theirs, annotator="bo")
        other.annotate(annotator="bo", record_id="s", turn=1, category="missing_value")
        merged = copy_events(other, store)
        assert (merged.added, merged.kept_ids) == (3, False)
        events = store.events().select("event_id", "annotator", "retracts").rows()
        assert events == [(1, "ana", None), (2, "bo", None), (3, "bo", 2), (4, "bo", None)]
        assert store.active().select("record_id", "category").rows() == [("r", "other"), ("s", "missing_value")]
        assert copy_events(other, store).added == 0
