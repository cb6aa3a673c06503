"""Time limits: worker processes, CPU-time timeouts and the wall-clock safety net, threads,
process pools, and no alarm signals. No test here asserts how long anything took (that is
bench/limits_overhead.py's job): they assert statuses, values and messages.

The helpers below are module-level so that the workers can import them by reference, as
``call_with_limit`` requires.
"""

from __future__ import annotations

import math
import multiprocessing
import operator
import os
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest

from workbench.grading.limits import (
    DEFAULT_TIME_LIMIT,
    Limited,
    LimitStatus,
    call_with_limit,
    shutdown_workers,
    wall_clock_safety_net,
)

PACKAGE = Path(__file__).resolve().parents[3] / "workbench"


# --- helpers run inside workers ---------------------------------------------------------------


def _spin() -> None:
    while True:
        pass


def _fail(message: str) -> None:
    raise KeyError(message)


def _returns_unpicklable() -> object:
    return lambda: None


def _sleep_then_square(x: int, seconds: float) -> tuple[int, int]:
    time.sleep(seconds)
    return x * x, os.getpid()


def _allocate(n_bytes: int) -> int:
    return len(bytearray(n_bytes))


def _shout() -> str:
    print("printed by the worker, must not corrupt the protocol")
    return "fine"


# --- helpers run inside pool processes ---------------------------------------------------------


def _job_in_child(x: int) -> tuple[bool, str, int | None, str, str, int | None]:
    """Warm up, then one ordinary call and one call that times out; report what happened."""
    daemon = multiprocessing.current_process().daemon
    worker_pid = call_with_limit(os.getpid).value
    ok = call_with_limit(operator.mul, x, 3)
    slow = call_with_limit(_spin, time_limit=0.5)
    return daemon, ok.status.value, ok.value, slow.status.value, slow.message, worker_pid


def _alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie (Linux /proc; elsewhere, signal 0)."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc").is_dir():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (FileNotFoundError, IndexError, ProcessLookupError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _gone_within(pids: set[int], seconds: float) -> set[int]:
    """Wait until every pid is gone; return those still alive after ``seconds``."""
    deadline = time.monotonic() + seconds
    alive = {pid for pid in pids if _alive(pid)}
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = {pid for pid in alive if _alive(pid)}
    return alive


@pytest.fixture(scope="module", autouse=True)
def _workers() -> Iterator[None]:
    """Start warm and leave no worker behind."""
    assert call_with_limit(operator.add, 1, 1).value == 2
    yield
    pid = call_with_limit(os.getpid).value
    shutdown_workers()
    assert pid is not None and not _gone_within({pid}, 5.0)


# --- the ordinary paths ------------------------------------------------------------------------


def test_ok_returns_value() -> None:
    result = call_with_limit(operator.add, 2, 3)
    assert isinstance(result, Limited)
    assert result.ok and result.status is LimitStatus.OK
    assert (result.value, result.message) == (5, "")
    assert result.seconds >= 0
    if Path("/proc/self/stat").exists():
        assert result.cpu_seconds is not None and result.cpu_seconds >= 0


def test_keyword_arguments_reach_the_function() -> None:
    assert call_with_limit(sorted, [3, 1, 2], reverse=True).value == [3, 2, 1]


@pytest.mark.parametrize(
    ("func", "args", "message"),
    [
        (math.sqrt, (-1.0,), "ValueError: math domain error"),
        (_fail, ("no such row",), "KeyError: 'no such row'"),
        (operator.truediv, (1, 0), "ZeroDivisionError: division by zero"),
    ],
)
def test_exception_becomes_error_with_message(func: object, args: tuple[object, ...], message: str) -> None:
    result = call_with_limit(func, *args)  # type: ignore[arg-type]
    assert result.status is LimitStatus.ERROR and not result.ok
    assert result.value is None
    assert result.message == message


def test_unpicklable_function_is_an_error_not_a_raise() -> None:
    result = call_with_limit(lambda: 1)
    assert result.status is LimitStatus.ERROR
    assert "cannot send" in result.message


def test_unpicklable_result_is_an_error() -> None:
    result = call_with_limit(_returns_unpicklable)
    assert result.status is LimitStatus.ERROR
    assert "cannot send the result back" in result.message
    assert call_with_limit(operator.neg, 4).value == -4


def test_large_argument_travels() -> None:
    assert call_with_limit(len, "1+" * 500_000 + "1").value == 1_000_001


def test_printing_in_the_worker_does_not_break_the_protocol() -> None:
    assert call_with_limit(_shout).value == "fine"
    assert call_with_limit(operator.add, 1, 2).value == 3


@pytest.mark.parametrize("bad", [0, -1.0, math.inf, math.nan])
def test_time_limit_must_be_positive_and_finite(bad: float) -> None:
    with pytest.raises(ValueError, match="time_limit"):
        call_with_limit(operator.add, 1, 2, time_limit=bad)


# --- timeouts and failures -----------------------------------------------------------------------


_HAS_PROC = Path("/proc/self/stat").exists()


@pytest.mark.parametrize(
    ("func", "args", "message"),
    [
        (_spin, (), "gave up after 0.5 s of CPU" if _HAS_PROC else "gave up after 0.5 s"),
        (
            time.sleep,
            (30,),
            "gave up after 1.0 s of wall-clock time (the safety net; the CPU limit is 0.5 s)"
            if _HAS_PROC
            else "gave up after 0.5 s",
        ),
    ],
    ids=["busy-loop", "sleep"],
)
def test_timeout_is_a_status_and_the_next_call_gets_a_fresh_worker(
    func: object, args: tuple[object, ...], message: str
) -> None:
    before = call_with_limit(os.getpid).value
    # the default safety net for the busy loop (on a busy machine 0.5 s of CPU may take seconds)
    wall_limit = 1.0 if func is time.sleep else None
    result = call_with_limit(func, *args, time_limit=0.5, wall_limit=wall_limit)  # type: ignore[arg-type]
    assert result.status is LimitStatus.TIMEOUT
    assert result.value is None
    assert result.message == message
    after = call_with_limit(os.getpid)
    assert after.ok and after.value != before  # the worker that ran out of time was killed
    assert before is not None and not _gone_within({before}, 5.0)


@pytest.mark.skipif(not _HAS_PROC, reason="CPU time of another process is read from /proc")
def test_the_limit_counts_cpu_time_not_waiting() -> None:
    # 1 s of sleep uses no CPU: under a 0.2 s CPU limit it finishes, and its CPU time is near zero
    call_with_limit(_sleep_then_square, 1, 0.0)  # the worker imports this module once, not in the call below
    result = call_with_limit(_sleep_then_square, 7, 1.0, time_limit=0.2)
    assert result.ok and result.value is not None and result.value[0] == 49, result
    assert result.cpu_seconds is not None and result.cpu_seconds < 0.2
    spun = call_with_limit(_spin, time_limit=0.3)
    assert spun.status is LimitStatus.TIMEOUT and spun.cpu_seconds is not None and spun.cpu_seconds >= 0.3


def test_the_safety_net_is_generous_and_never_below_the_limit() -> None:
    assert wall_clock_safety_net(DEFAULT_TIME_LIMIT) >= 10 * DEFAULT_TIME_LIMIT
    assert wall_clock_safety_net(0.5) == 30.5
    result = call_with_limit(operator.add, 1, 2, time_limit=5, wall_limit=0.001)  # raised to the limit
    assert result.ok and result.value == 3
    with pytest.raises(ValueError, match="wall_limit"):
        call_with_limit(operator.add, 1, 2, wall_limit=math.nan)


def test_worker_death_is_an_error_and_the_pool_recovers() -> None:
    result = call_with_limit(os._exit, 3)
    assert result.status is LimitStatus.ERROR
    assert "worker died" in result.message and "exit code 3" in result.message
    assert call_with_limit(operator.add, 2, 2).value == 4


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is enforced on Linux")
def test_memory_is_capped_in_the_worker() -> None:
    result = call_with_limit(_allocate, 8 * 1024**3, time_limit=10)
    assert result.status is LimitStatus.ERROR
    assert result.message.startswith("MemoryError")
    assert call_with_limit(_allocate, 1024).value == 1024


# --- threads and processes ---------------------------------------------------------------------


def test_concurrent_calls_from_threads() -> None:
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: call_with_limit(_sleep_then_square, i, 0.2, time_limit=10), range(8)))
    assert [r.status for r in results] == [LimitStatus.OK] * 8, [r.message for r in results]
    assert [r.value[0] for r in results if r.value] == [i * i for i in range(8)]
    assert len({r.value[1] for r in results if r.value}) >= 2  # calls ran in separate workers


def test_calls_beyond_the_cap_wait_for_a_worker_instead_of_starting_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two gradings of a batch, each in two threads, asked for four workers on two cores; the pool
    runs at most ``max_busy`` calls at once, and the others wait for a worker to come back."""
    from workbench.grading.workers import POOL

    shutdown_workers()
    monkeypatch.setattr(POOL, "max_busy", 2)
    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(lambda i: call_with_limit(_sleep_then_square, i, 0.2, time_limit=10), range(12)))
    assert [r.status for r in results] == [LimitStatus.OK] * 12, [r.message for r in results]
    assert [r.value[0] for r in results if r.value] == [i * i for i in range(12)]
    assert len({r.value[1] for r in results if r.value}) == 2  # two workers served the twelve calls
    with POOL.lock:
        assert len(POOL.busy) == 0 and POOL.starting == 0


def test_timeouts_from_threads_do_not_disturb_other_calls() -> None:
    def one(i: int) -> Limited[object]:
        if i % 2:
            return call_with_limit(_spin, time_limit=0.5)
        return call_with_limit(operator.mul, i, 10)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(one, range(8)))
    for i, result in enumerate(results):
        if i % 2:
            assert result.status is LimitStatus.TIMEOUT
        else:
            assert (result.status, result.value) == (LimitStatus.OK, i * 10)


def test_calls_from_daemonic_multiprocessing_pool_workers() -> None:
    parent_worker = call_with_limit(os.getpid).value
    with multiprocessing.Pool(2) as pool:
        outcomes = pool.map(_job_in_child, [1, 2, 3, 4])
    for x, (daemon, ok_status, value, slow_status, slow_message, worker_pid) in zip(
        [1, 2, 3, 4], outcomes, strict=True
    ):
        assert daemon
        assert (ok_status, value) == ("ok", 3 * x)
        assert slow_status == "timeout" and slow_message.startswith("gave up after 0.5 s"), slow_message
        assert worker_pid != parent_worker  # a forked child starts its own workers
    # the parent's worker survived the children (they closed their copies of its pipes, nothing more)
    assert call_with_limit(os.getpid).value == parent_worker
    child_workers = {outcome[5] for outcome in outcomes if outcome[5] is not None}
    assert not _gone_within(child_workers, 10.0)  # they exit with the pool's processes


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_calls_from_process_pool_executor(start_method: str) -> None:
    if start_method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {start_method} start method here")
    context = multiprocessing.get_context(start_method)
    with ProcessPoolExecutor(2, mp_context=context) as pool:
        outcomes = list(pool.map(_job_in_child, [5, 6]))
    for x, (_daemon, ok_status, value, slow_status, slow_message, _pid) in zip([5, 6], outcomes, strict=True):
        assert (ok_status, value) == ("ok", 3 * x)
        assert slow_status == "timeout" and slow_message.startswith("gave up after 0.5 s"), slow_message
    assert not _gone_within({outcome[5] for outcome in outcomes if outcome[5] is not None}, 10.0)


def test_shutdown_stops_idle_workers_and_later_calls_still_work() -> None:
    pid = call_with_limit(os.getpid).value
    shutdown_workers()
    assert pid is not None and not _gone_within({pid}, 5.0)
    assert call_with_limit(operator.add, 1, 1).value == 2


def test_package_uses_no_alarm_signals() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}: {needle}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for needle in ("signal.alarm", "setitimer", "SIGALRM")
        if needle in path.read_text(encoding="utf-8")
    ]
    assert offenders == []
