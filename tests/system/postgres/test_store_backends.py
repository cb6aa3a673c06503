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
