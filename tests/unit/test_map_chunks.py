"""``map_chunks`` in this process: chunks shared among threads when the caller says enough items
wait on workers (decided from the whole run, not from a clock), results in input order."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from workbench import parallel


def _doubled(names: list[str]) -> Callable[[list[int]], list[int]]:
    def fn(xs: list[int]) -> list[int]:
        names.append(threading.current_thread().name)
        return [x * 2 for x in xs]

    return fn


@pytest.mark.parametrize(("waiting", "shared"), [(20, True), (3, True), (2, False), (0, False)])
def test_chunks_come_back_in_order_on_threads_or_not(
    monkeypatch: pytest.MonkeyPatch, waiting: int, shared: bool
) -> None:
    monkeypatch.setattr(parallel, "THREAD_CHUNK", 3)
    monkeypatch.setattr(time, "perf_counter", lambda: pytest.fail("map_chunks looked at the clock"))
    names: list[str] = []
    items = list(range(20))
    assert parallel.map_chunks(_doubled(names), items, workers=2, waiting=waiting) == [x * 2 for x in items]
    # with at least THREAD_CHUNK items waiting: all 20 items in chunks of 3 on threads; else one call here
    assert len(names) == (7 if shared else 1)
    assert all(name.startswith("map-chunks") for name in names) is shared


def test_one_worker_or_one_chunk_stays_on_this_thread() -> None:
    for workers, items in ((1, list(range(200))), (2, list(range(parallel.THREAD_CHUNK)))):
        names: list[str] = []
        assert parallel.map_chunks(_doubled(names), items, workers=workers, waiting=len(items)) == [
            x * 2 for x in items
        ]
        assert names == [threading.current_thread().name]
