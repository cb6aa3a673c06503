"""Grade each distinct input once, and spread many distinct inputs over all cores.

Two pieces, used by :mod:`workbench.pipeline.grade`, :mod:`workbench.analysis.features`,
:mod:`workbench.analysis.taxonomy` and :mod:`workbench.quality.checks`:

* :func:`distinct` groups the rows of a table by the columns a computation depends on,
  so the computation runs once per distinct key and its results are gathered back onto
  every row;
* :func:`map_chunks` applies a function to chunks of items, in this process when there
  are few, else in a process pool (the ``spawn`` context: the grader keeps subprocess
  workers for its time limits and threads, which a forked child would inherit half-way).
  In this process, when the caller knows that items wait on those workers (SymPy, Math-Verify:
  MATH outputs), they are shared among threads, one worker each. Results come back in input
  order whatever the order the chunks finish in.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

import polars as pl

from workbench.grading.program import TableRows

__all__ = [
    "POOL_THRESHOLD", "CHUNK_SIZE", "distinct", "first_rows", "in_pool", "map_chunks", "pool_ahead", "same_tables"
]  # fmt: skip

#: Below this many items :func:`map_chunks` runs in this process (a pool costs ~1 s to start).
POOL_THRESHOLD = 20_000
#: Items per chunk sent to a pool worker.
CHUNK_SIZE = 4_000
#: The last items (as many as the workers' first chunks hold) go in chunks this many times smaller,
#: so that the workers end about together: with whole chunks, one worker may still grade its last
#: while the others wait (a 105,520-turn GSM8K run: about 2.7 s a chunk of 4,000 inputs).
TAIL_SPLIT = 8
#: In this process, when at least :data:`THREAD_CHUNK` items wait on the grader's worker processes
#: (SymPy and Math-Verify calls on MATH outputs: the caller counts them on the whole run), the items
#: are shared among a thread per core in chunks of that size, each thread with a worker of its own
#: (MATH-500, one run: 7.3 -> 5.2 s on two cores); else they go in one call. Where the work runs
#: depends on the items alone, never on the clock, and never changes what it returns.
THREAD_CHUNK = 32

T = TypeVar("T")
R = TypeVar("R")

#: The pool started ahead by :func:`pool_ahead` for this thread's block, with its number of workers.
_AHEAD: ContextVar[tuple[ProcessPoolExecutor, int] | None] = ContextVar("workbench_pool_ahead", default=None)


def distinct(frame: pl.DataFrame, keys: Sequence[str]) -> tuple[pl.DataFrame, pl.Series]:
    """The distinct values of ``keys`` (in order of first appearance) and, for every row of
    ``frame``, the index of its key among them (nulls are equal to nulls).

    Examples
    --------
    >>> rows = pl.DataFrame({"a": [1, 2, 1, None, None], "b": ["x", "y", "x", None, None]})
    >>> unique, index = distinct(rows, ["a", "b"])
    >>> unique.rows(), index.to_list()
    ([(1, 'x'), (2, 'y'), (None, None)], [0, 1, 0, 2, 2])
    """
    if frame.is_empty():
        return frame.select(keys), pl.Series("_key", [], dtype=pl.UInt32)
    # rows grouped by a hash of their keys, then checked equal to the first row of their group:
    # the distinct rows are gathered from ``frame`` (text shared, not copied, as grouping by the
    # keys themselves would: 0.9 GB for a million outputs); a collision takes the exact way
    hashed = (
        # a hash of the columns' hashes: hashing a struct of the texts copies them (0.4 GB)
        frame.select(pl.struct([pl.col(c).hash(seed=0x5EED) for c in keys]).hash(seed=0x5EED).alias("_hash"))
        .with_row_index("_row")
        .with_columns(pl.col("_row").first().over("_hash").alias("_first"))
    )
    repeats = hashed.filter(pl.col("_row") != pl.col("_first"))  # rows whose hash came before
    later, first = repeats.get_column("_row"), repeats.get_column("_first")
    if all(frame.get_column(c).gather(later).eq_missing(frame.get_column(c).gather(first)).all() for c in keys):
        starts = hashed.filter(pl.col("_row") == pl.col("_first")).get_column("_row")
        number = pl.Series("_key", pl.int_range(starts.len(), dtype=pl.UInt32, eager=True))
        position = pl.DataFrame({"_first": starts, "_key": number})
        index = hashed.join(position, on="_first", how="left", maintain_order="left").get_column("_key")
        # gathered from one chunk: a text column's views are copied, not its text (from several
        # chunks the text is copied too)
        return frame.select(keys).rechunk().gather(starts), index
    grouped = (
        frame.select(keys)
        .with_row_index("_row")
        .group_by(list(keys), maintain_order=True)
        .agg(pl.col("_row"))
        .with_row_index("_key")
    )
    index = grouped.select("_key", "_row").explode("_row").sort("_row")["_key"]
    return grouped.select(keys), index


def first_rows(index: pl.Series) -> pl.Series:
    """For each distinct key of :func:`distinct`'s ``index`` (in key order), the first row that
    has it.

    Examples
    --------
    >>> first_rows(pl.Series([0, 1, 0, 2, 1], dtype=pl.UInt32)).to_list()
    [0, 1, 3]
    """
    rows = index.to_frame("_key").with_row_index("_row").group_by("_key", maintain_order=True).agg(pl.first("_row"))
    return rows.get_column("_row")


def same_tables(tables: Mapping[str, TableRows]) -> dict[str, str]:
    """Each ``doc_id`` of ``tables`` mapped to the first (in sorted order) ``doc_id`` whose
    table has the same content, so tables key computations by content, not by document.

    Examples
    --------
    >>> same_tables({"b": {"x": [1.0]}, "a": {"x": [1.0]}, "c": {"y": [2.0]}})
    {'a': 'a', 'b': 'a', 'c': 'c'}
    """
    first: dict[tuple[tuple[str, tuple[float | None, ...]], ...], str] = {}
    return {
        doc_id: first.setdefault(tuple((k, tuple(v)) for k, v in tables[doc_id].items()), doc_id)
        for doc_id in sorted(tables)
    }


def in_pool(n_items: int, workers: int | None = None, threshold: int | None = None) -> bool:
    """Whether :func:`map_chunks` sends ``n_items`` items to a process pool (with the same
    ``workers`` and ``threshold``): more than one worker, and at least ``threshold`` items.

    Examples
    --------
    >>> in_pool(100_000, workers=2), in_pool(100, workers=2), in_pool(100_000, workers=1)
    (True, False, False)
    """
    workers = (os.cpu_count() or 1) if workers is None else workers
    threshold = POOL_THRESHOLD if threshold is None else threshold
    return workers > 1 and n_items >= max(threshold, 1)


def map_chunks(
    fn: Callable[[list[T]], list[R]],
    items: Sequence[T],
    *,
    workers: int | None = None,
    threshold: int | None = None,
    chunk_size: int | None = None,
    waiting: int = 0,
) -> list[R]:
    """``fn`` over chunks of ``items``, concatenated in input order.

    Parameters
    ----------
    fn
        Maps a list of items to one result per item; a picklable (module-level) function
        or :func:`functools.partial` of one when a pool is used.
    items
        The inputs.
    workers
        Processes; ``None`` for all cores, ``1`` to stay in this process.
    threshold
        Fewer items than this stay in this process; :data:`POOL_THRESHOLD` by default.
    chunk_size
        Items per chunk; :data:`CHUNK_SIZE` by default.
    waiting
        How many of ``items`` wait on the grader's worker processes, as the caller knows from
        the whole run: from :data:`THREAD_CHUNK` on, the items graded in this process are
        shared among threads.

    Examples
    --------
    >>> map_chunks(lambda xs: [x * 2 for x in xs], [1, 2, 3], workers=1)
    [2, 4, 6]
    """
    workers = (os.cpu_count() or 1) if workers is None else workers
    chunk_size = CHUNK_SIZE if chunk_size is None else chunk_size
    if workers <= 1:
        return list(fn(list(items)))
    if not in_pool(len(items), workers, threshold):
        if waiting < THREAD_CHUNK or len(items) <= THREAD_CHUNK:
            return list(fn(list(items)))
        return _in_threads(fn, items, workers)
    chunks = _chunks(items, chunk_size, workers)
    ahead = _AHEAD.get()
    if ahead is not None and ahead[1] == min(workers, len(chunks)):  # started by pool_ahead: not shut down here
        done = list(ahead[0].map(fn, chunks))
    else:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(workers, len(chunks)), mp_context=context) as pool:
            done = list(pool.map(fn, chunks))  # map yields in submission order
    return [result for chunk in done for result in chunk]


@contextmanager
def pool_ahead(workers: int | None = None, initializer: Callable[[], None] | None = None) -> Iterator[None]:
    """Start the process pool of :func:`map_chunks` now, for the calls made in this block (on this
    thread) that send as many workers their items; shut it down at the block's end.

    A pool's processes take seconds of CPU to start (Python, the grading modules, then the worker
    processes each starts: ``initializer`` runs in each when it starts), which a caller that is
    about to read its inputs on one core can spend on the other cores instead. Where the items are
    graded, and what comes back, do not change.

    Examples
    --------
    >>> with pool_ahead(workers=1):  # one worker: no pool; map_chunks works in this process
    ...     map_chunks(lambda xs: [x + 1 for x in xs], [1, 2], workers=1)
    [2, 3]
    """
    workers = (os.cpu_count() or 1) if workers is None else workers
    if workers <= 1:
        yield
        return
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=initializer)
    token = _AHEAD.set((pool, workers))
    try:
        for _ in range(workers):  # a spawn pool starts a process per task while none is idle
            pool.submit(os.getpid)
        yield
    except BaseException:
        # an error (bad input, read before the pool is used) is not kept waiting for processes that
        # are still starting: they are stopped (ProcessPoolExecutor has no public way before 3.14)
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    else:
        pool.shutdown(wait=True)
    finally:
        _AHEAD.reset(token)


def _chunks(items: Sequence[T], size: int, workers: int) -> list[list[T]]:
    """``items`` in chunks of ``size``, in order, but the last ``size * workers`` items in chunks of
    ``size / TAIL_SPLIT`` (at least one item each).

    Examples
    --------
    >>> [len(c) for c in _chunks(list(range(96)), 16, 2)]
    [16, 16, 16, 16, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
    """
    cut = max(0, len(items) - size * workers)
    small = max(1, size // TAIL_SPLIT)
    return [list(items[i : min(i + size, cut)]) for i in range(0, cut, size)] + [
        list(items[i : i + small]) for i in range(cut, len(items), small)
    ]


def _in_threads(fn: Callable[[list[T]], list[R]], items: Sequence[T], threads: int) -> list[R]:
    """``fn`` over ``items`` in this process, in chunks of :data:`THREAD_CHUNK` items shared among
    ``threads`` threads, results in input order."""
    chunks = [list(items[i : i + THREAD_CHUNK]) for i in range(0, len(items), THREAD_CHUNK)]
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="map-chunks") as pool:
        done = list(pool.map(fn, chunks))  # map yields in submission order
    return [result for chunk in done for result in chunk]
