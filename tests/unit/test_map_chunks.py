"""``map_chunks`` in this process: chunks shared among threads when the first is slow, results in input order."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from workbench import parallel


def _doubled(names: list[str]) -> Callable[[list[int]], list[int]]:
    def fn(xs: list[int]) -> list[int]:
        names.append(threading.current_thread().name)
        return [x * 2 for x in xs]

    return fn


@pytest.mark.parametrize(("after", "shared"), [(-1.0, True), (float("inf"), False)])
def test_chunks_come_back_in_order_on_threads_or_not(
    monkeypatch: pytest.MonkeyPatch, after: float, shared: bool
) -> None:
    monkeypatch.setattr(parallel, "THREAD_CHUNK", 3)
    monkeypatch.setattr(parallel, "THREAD_AFTER", after)  # the first chunk counts as slow, or never
    names: list[str] = []
    items = list(range(20))
    assert parallel.map_chunks(_doubled(names), items, workers=2) == [x * 2 for x in items]
    # two chunks here (the first may wait for a worker to start), then the other 14 items in
    # chunks of 3 on threads, or in one call here
    assert len(names) == (2 + 5 if shared else 3)
    assert names[:2] == [threading.current_thread().name] * 2
    assert all(name.startswith("map-chunks") for name in names[2:]) is shared


def test_one_worker_or_one_chunk_stays_on_this_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "THREAD_AFTER", -1.0)
    for workers, items in ((1, list(range(200))), (2, list(range(2 * parallel.THREAD_CHUNK)))):
        names: list[str] = []
        assert parallel.map_chunks(_doubled(names), items, workers=workers) == [x * 2 for x in items]
        assert names == [threading.current_thread().name]
