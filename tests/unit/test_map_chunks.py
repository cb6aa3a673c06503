"""``map_chunks`` in this process: chunks shared among threads when the caller says enough items
wait on workers (decided from the whole run, not from a clock), results in input order."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 300), st.integers(1, 40), st.integers(2, 4))
def test_a_pools_chunks_hold_every_item_once_in_order_the_last_ones_smaller(n: int, size: int, workers: int) -> None:
    chunks = parallel._chunks(list(range(n)), size, workers)
    assert [x for chunk in chunks for x in chunk] == list(range(n))
    assert all(0 < len(chunk) <= size for chunk in chunks)
    tail = [len(chunk) for chunk in chunks if chunk[-1] >= n - size * workers]
    assert all(length <= max(1, size // parallel.TAIL_SPLIT) for length in tail)
