"""Run a function under a CPU-time limit in a sandbox worker process: the one place that knows about time limits.

Every SymPy or LaTeX-parsing call in the package goes through :func:`call_with_limit`. The call is sent
to a persistent worker subprocess (:mod:`workbench.grading.workers`, which owns the processes, their
pipes and their pool) as a length-prefixed pickle of the function (by reference), its arguments and
keyword arguments; the caller waits for the reply with ``select.poll``.

What the limit counts

- The limit is **CPU seconds of the worker** (user + system time of the worker process, read by the
  caller from ``/proc/<pid>/stat`` while it waits), not wall-clock time: a call that needs 0.3 s of
  CPU gets the same verdict on an idle machine and on one where six other jobs share the cores.
  The caller sleeps in ``poll`` for as long as the worker could at most have left (CPU time cannot
  run faster than the clock), reads the worker's CPU time when it wakes, and stops when the limit
  is spent. Nothing here uses alarm signals, interval timers or ``RLIMIT_CPU``, in the caller or in
  the worker.
- A **wall-clock safety net** stays: a call that has not answered after
  :func:`wall_clock_safety_net` seconds (``max(10 x limit, limit + 30 s)``; a worker blocked on
  something that is not CPU, or starved of CPU for that long) is a timeout too, with a message
  saying that the safety net fired.
- Where ``/proc`` is not available (not Linux), the limit counts wall-clock time.

When either limit is reached, the worker and its process group are killed and discarded, a
replacement starts in the background, and the call returns status ``timeout``. It works the same
from the main thread, from other threads, from daemonic ``multiprocessing.Pool`` workers and from
``concurrent.futures.ProcessPoolExecutor`` workers (workers are plain subprocesses, not
``multiprocessing`` children).

The limit counts from the moment the request is handed to a ready worker (the worker's CPU time is
read just before). Starting a fresh worker (about half a second, once per worker) is not counted
against it, but is included in :attr:`Limited.seconds`.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import pickle
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from workbench.grading.status import LimitStatus
from workbench.grading.workers import POOL, WORKER_MEMORY_LIMIT, WorkerGone, describe_exit

__all__ = [
    "DEFAULT_TIME_LIMIT",
    "WORKER_MEMORY_LIMIT",
    "LimitStatus",
    "Limited",
    "call_with_limit",
    "wall_clock_safety_net",
    "start_worker",
    "shutdown_workers",
]

T = TypeVar("T")

#: CPU seconds one call may take unless the caller says otherwise.
DEFAULT_TIME_LIMIT: float = 2.0

#: The wall-clock safety net is ``max(SAFETY_NET_FACTOR x limit, limit + SAFETY_NET_MARGIN)`` seconds.
SAFETY_NET_FACTOR: float = 10.0
#: See :data:`SAFETY_NET_FACTOR`.
SAFETY_NET_MARGIN: float = 30.0

_STARTUP_LIMIT = 120.0  # seconds a new worker may take to import its modules
_EXIT_WAIT = 2.0  # seconds to wait for the exit status of a worker whose output closed


@dataclass(frozen=True, slots=True)
class Limited(Generic[T]):
    """The outcome of one :func:`call_with_limit`.

    Attributes
    ----------
    status
        ``ok`` when the function returned, ``timeout`` when it ran out of time, ``error`` when it
        raised (or the worker could not run it).
    value
        The function's return value when ``status`` is ``ok``, else ``None``.
    message
        ``""`` when ``ok``; ``"gave up after 2.0 s of CPU"`` for a timeout (or a sentence saying
        that the wall-clock safety net fired); ``"ExcType: message"`` for an error.
    seconds
        Wall time the call took, including any worker start-up.
    cpu_seconds
        CPU seconds (user + system) the worker spent on the call, as the kernel counts them (in
        ticks of usually 10 ms); ``None`` where a process's CPU time cannot be read (no ``/proc``)
        or the call never reached a worker.
    """

    status: LimitStatus
    value: T | None
    message: str
    seconds: float
    cpu_seconds: float | None = None

    @property
    def ok(self) -> bool:
        """Whether the function returned a value."""
        return self.status is LimitStatus.OK


def wall_clock_safety_net(limit: float) -> float:
    """Wall-clock seconds after which a call is given up whatever CPU time it used.

    Examples
    --------
    >>> wall_clock_safety_net(2.0), wall_clock_safety_net(5.0)
    (32.0, 50.0)
    """
    return max(SAFETY_NET_FACTOR * limit, limit + SAFETY_NET_MARGIN)


try:
    _CLOCK_TICKS = float(os.sysconf("SC_CLK_TCK"))
except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
    _CLOCK_TICKS = 100.0


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` from ``/proc/<pid>/stat``; ``None`` if unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            data = stat.read()
        fields = data.rsplit(b")", 1)[1].split()  # the command name, in parentheses, may hold spaces
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS  # fields 14 and 15: utime, stime
    except (OSError, IndexError, ValueError):
        return None


class _CpuBudget:
    """The CPU seconds a worker may still spend on one call, measured from the caller."""

    def __init__(self, pid: int, limit: float) -> None:
        self.pid = pid
        self.limit = limit
        self.start = _cpu_seconds(pid)
        self.used: float | None = 0.0 if self.start is not None else None

    @property
    def measurable(self) -> bool:
        return self.start is not None

    def update(self) -> float | None:
        """Read the worker's CPU time; return the seconds it has used on this call."""
        if self.start is not None:
            now = _cpu_seconds(self.pid)
            if now is not None:
                self.used = max(0.0, now - self.start)
        return self.used

    def left(self) -> float:
        """Seconds of CPU left (at most the limit; ``0`` or less when spent)."""
        used = self.update()
        return self.limit - (used or 0.0)


def _callable_name(func: Callable[..., Any]) -> str:
    module = getattr(func, "__module__", None) or "?"
    name = getattr(func, "__qualname__", None) or repr(func)
    return f"{module}.{name}"


def call_with_limit(
    func: Callable[..., T],
    *args: Any,
    time_limit: float | None = None,
    wall_limit: float | None = None,
    **kwargs: Any,
) -> Limited[T]:
    """Run module-level ``func(*args, **kwargs)`` in a sandbox worker process, at most ``time_limit`` CPU seconds.

    The function travels by reference (its module and name), so it must be importable in a fresh
    interpreter: a module-level function of an installed or importable module, not a lambda, a
    closure or a function defined in ``__main__`` or a notebook. Arguments and the return value
    travel as pickles. A call never hangs and never raises for anything ``func`` does: a timeout,
    an exception, an unpicklable argument or result, or a worker that dies are all reported in the
    returned :class:`Limited`.

    Parameters
    ----------
    func
        A module-level function.
    *args, **kwargs
        Passed to ``func``.
    time_limit
        CPU seconds the worker may spend on ``func``, counted from the moment a ready worker has
        the request; :data:`DEFAULT_TIME_LIMIT` when ``None``. Wall-clock seconds where a
        process's CPU time cannot be read (no ``/proc``).
    wall_limit
        The wall-clock safety net in seconds; :func:`wall_clock_safety_net` of the limit when
        ``None``. It is never shorter than ``time_limit``.

    Returns
    -------
    Limited
        ``status`` ``ok`` with ``value``, ``timeout`` (the worker was killed; ``message`` says
        which limit it reached), or ``error`` with ``"ExcType: message"``.

    Raises
    ------
    ValueError
        If ``time_limit`` or ``wall_limit`` is not a positive finite number.

    Examples
    --------
    >>> import math
    >>> call_with_limit(math.factorial, 10).value
    3628800
    >>> call_with_limit(math.sqrt, -1.0).message
    'ValueError: math domain error'
    >>> result = call_with_limit(math.factorial, 10**6, time_limit=0.2)  # seconds of CPU
    >>> result.status, result.message
    (<LimitStatus.TIMEOUT: 'timeout'>, 'gave up after 0.2 s of CPU')

    A worker that waits without computing uses no CPU; the wall-clock safety net stops it:

    >>> import time
    >>> call_with_limit(time.sleep, 5, time_limit=0.1, wall_limit=0.3).message
    'gave up after 0.3 s of wall-clock time (the safety net; the CPU limit is 0.1 s)'
    """
    limit = DEFAULT_TIME_LIMIT if time_limit is None else float(time_limit)
    if not (math.isfinite(limit) and limit > 0):
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    net = wall_clock_safety_net(limit) if wall_limit is None else float(wall_limit)
    if not (math.isfinite(net) and net > 0):
        raise ValueError(f"wall_limit must be a positive number of seconds, got {wall_limit!r}")
    net = max(net, limit)
    start = time.monotonic()
    budget: _CpuBudget | None = None

    def done(status: LimitStatus, value: Any, message: str) -> Limited[T]:
        cpu = round(budget.used, 3) if budget is not None and budget.used is not None else None
        return Limited(status, value if status is LimitStatus.OK else None, message, time.monotonic() - start, cpu)

    try:
        call = pickle.dumps((func, args, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
        payload = pickle.dumps((list(sys.path), call), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # the call cannot be sent; say why instead of raising
        return done(LimitStatus.ERROR, None, f"cannot send {_callable_name(func)}: {type(exc).__name__}: {exc}")

    for attempt in range(2):  # an idle worker that died unnoticed gets one retry on a fresh worker
        try:
            worker, generation = POOL.checkout()
        except OSError as exc:  # no process could be started (process or file limits)
            return done(LimitStatus.ERROR, None, f"could not start a worker: {type(exc).__name__}: {exc}")
        clean = False
        try:
            try:
                worker.wait_ready(_STARTUP_LIMIT)
            except WorkerGone as exc:
                return done(
                    LimitStatus.ERROR, None, f"worker could not start: {exc} ({describe_exit(worker.proc.poll())})"
                )
            budget = _CpuBudget(worker.proc.pid, limit)
            sent_at = time.monotonic()
            # with CPU accounting the wall clock is only the safety net; without it, the limit itself
            deadline = sent_at + (net if budget.measurable else limit)
            try:
                sent = worker.send(payload, deadline)
            except WorkerGone:
                if attempt == 0:
                    budget = None
                    continue
                raise
            reply = worker.receive(deadline, budget if budget.measurable else None) if sent else None
            if reply is None:
                used = budget.update()  # before the kill: a dead process has no CPU time to read
                POOL.discard(worker, generation, replace=True)
                clean = True  # already discarded
                if not budget.measurable:
                    return done(LimitStatus.TIMEOUT, None, f"gave up after {limit} s")
                if used is not None and used < limit:  # the CPU limit was not reached: the wall clock was
                    return done(
                        LimitStatus.TIMEOUT,
                        None,
                        f"gave up after {net} s of wall-clock time (the safety net; the CPU limit is {limit} s)",
                    )
                return done(LimitStatus.TIMEOUT, None, f"gave up after {limit} s of CPU")
            status, value, message = pickle.loads(reply)
            budget.update()
            POOL.checkin(worker, generation)
            clean = True
            return done(LimitStatus(status), value, message)
        except WorkerGone as exc:
            with contextlib.suppress(subprocess.TimeoutExpired):  # its output closed: it is exiting
                worker.proc.wait(timeout=_EXIT_WAIT)
            detail = describe_exit(worker.proc.poll())
            POOL.discard(worker, generation, replace=True)
            clean = True
            return done(LimitStatus.ERROR, None, f"worker died while running {_callable_name(func)} ({exc}; {detail})")
        except Exception as exc:  # a reply that cannot be unpickled here, for instance
            return done(LimitStatus.ERROR, None, f"{type(exc).__name__}: {exc}")
        finally:
            if not clean:  # died, raised, or interrupted (KeyboardInterrupt): its state is unknown
                POOL.discard(worker, generation, replace=False)
    raise AssertionError("unreachable")  # pragma: no cover


def start_worker() -> None:
    """Start one worker in the background when this process has none, so that the first limited
    call of a grading run does not wait for a fresh interpreter to import SymPy: the worker
    starts while the cheap rules run. Returns at once; a worker that is never used is stopped
    at exit like any other.

    Examples
    --------
    >>> start_worker()
    >>> import operator
    >>> call_with_limit(operator.mul, 6, 7).value
    42
    """
    POOL.start_if_empty()


def shutdown_workers() -> None:
    """Stop every idle worker of this process; workers in use stop when their call returns.

    Registered with :mod:`atexit`. Calling it is always safe, and later calls start new workers.

    Examples
    --------
    >>> shutdown_workers()
    >>> import operator
    >>> call_with_limit(operator.add, 2, 3).value
    5
    >>> shutdown_workers()
    """
    POOL.shutdown()


atexit.register(shutdown_workers)
