"""Run a function under a CPU-time limit in a sandbox worker process: the one place that knows about time limits.

Every SymPy or LaTeX-parsing call in the package goes through :func:`call_with_limit`. The call is sent
to a persistent worker subprocess (``python -m workbench.grading.limits``) as a length-prefixed pickle
of the function (by reference), its arguments and keyword arguments; the caller waits for the reply
with ``select.poll``.

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

Workers

- are started with :class:`subprocess.Popen` in a session of their own, pre-import SymPy,
  ``latex2sympy2_extended`` and ``math_verify`` (when installed) so that a call does not pay for the
  imports, and cap their address space at :data:`WORKER_MEMORY_LIMIT` bytes, so a runaway expression
  ends in ``MemoryError`` (status ``error``) or a timeout rather than eating the machine;
- are kept in a small idle pool (at most ``os.cpu_count()`` idle workers), guarded by a lock, so
  several threads can call at once, each with a worker of its own;
- exit when their standard input closes or their parent process goes away, so a crashed caller does
  not leave them behind; :func:`shutdown_workers` (also registered with :mod:`atexit`) stops them;
- are never shared across ``fork``: a forked child forgets its parent's workers and starts its own.

The limit counts from the moment the request is handed to a ready worker (the worker's CPU time is
read just before). Starting a fresh worker (about half a second, once per worker) is not counted
against it, but is included in :attr:`Limited.seconds`.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import logging
import math
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Generic, TypeVar

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

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: CPU seconds one call may take unless the caller says otherwise.
DEFAULT_TIME_LIMIT: float = 2.0

#: The wall-clock safety net is ``max(SAFETY_NET_FACTOR x limit, limit + SAFETY_NET_MARGIN)`` seconds.
SAFETY_NET_FACTOR: float = 10.0
#: See :data:`SAFETY_NET_FACTOR`.
SAFETY_NET_MARGIN: float = 30.0

#: Address-space cap of a worker process, in bytes (``RLIMIT_AS``).
WORKER_MEMORY_LIMIT: int = 4 * 1024**3

#: Modules a worker imports before it says it is ready, so calls do not pay for them (nor count
#: the imports against their CPU limit: a fresh worker and a warm one give the same verdicts).
_PRELOAD_MODULES = (
    "sympy",
    "latex2sympy2_extended",
    "math_verify",
    "workbench.grading.symbolic",
    "workbench.grading.equivalence",
)
#: Functions a worker calls (module, name) before it says it is ready: first-use work of the parsers,
#: which would otherwise count against the first call's CPU limit in each fresh worker.
_WARM_UP_CALLS = (("workbench.grading.symbolic", "warm_up"),)
#: Loggers silenced in workers: math-verify warns once per process that its own timeouts are off.
_QUIET_LOGGERS = ("math_verify", "latex2sympy2_extended")

_HEADER = struct.Struct("!Q")  # length prefix of every message, both directions
_STARTUP_LIMIT = 120.0  # seconds a new worker may take to import its modules
_MAX_MESSAGE_CHARS = 500  # exception messages sent back are cut to this length
_PARENT_CHECK_INTERVAL = 1.0  # seconds between a worker's checks that its parent is alive
_MIN_WAIT = 0.01  # shortest sleep between two reads of a worker's CPU time (the kernel counts in ticks)
_EXIT_WAIT = 2.0  # seconds to wait for the exit status of a worker whose output closed
_READY = "ready"
#: ``-m`` warns if the package's ``__init__`` has already imported this module; harmless for a worker.
_RUNPY_WARNING = "ignore:'workbench.grading.limits' found in sys.modules:RuntimeWarning"
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


class LimitStatus(StrEnum):
    """How a limited call ended."""

    OK = "ok"
    TIMEOUT = "timeout"
    ERROR = "error"


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


def _worker_environment() -> dict[str, str]:
    """The caller's environment, plus the package's root on ``PYTHONPATH`` if it is not installed there."""
    env = dict(os.environ)
    installed = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    if _PACKAGE_ROOT not in installed:  # a source checkout or editable install: make -m find workbench
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH", "")) if p)
    return env


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


class _WorkerGone(Exception):
    """The worker's pipe closed before a whole message went through."""


def _describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


def _callable_name(func: Callable[..., Any]) -> str:
    module = getattr(func, "__module__", None) or "?"
    name = getattr(func, "__qualname__", None) or repr(func)
    return f"{module}.{name}"


class _Worker:
    """One worker subprocess and the parent's non-blocking ends of its pipes."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-W", _RUNPY_WARNING, "-m", "workbench.grading.limits"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
            env=_worker_environment(),
            start_new_session=True,  # own process group: a kill reaches anything it started
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.wfd = self.proc.stdin.fileno()
        self.rfd = self.proc.stdout.fileno()
        os.set_blocking(self.wfd, False)
        os.set_blocking(self.rfd, False)
        self.ready = False
        self.pending = bytearray()  # bytes read past the end of the last message

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, payload: bytes, deadline: float) -> bool:
        """Write one message; ``False`` if the deadline passed first."""
        data = memoryview(_HEADER.pack(len(payload)) + payload)
        poller = select.poll()
        poller.register(self.wfd, select.POLLOUT)
        while data:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if not poller.poll(max(1, math.ceil(remaining * 1000))):
                continue
            try:
                written = os.write(self.wfd, data)
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError) as exc:
                raise _WorkerGone(str(exc)) from exc
            data = data[written:]
        return True

    def receive(self, deadline: float, budget: _CpuBudget | None = None) -> bytes | None:
        """Read one message; ``None`` if the deadline passed or the worker spent ``budget`` first."""
        poller = select.poll()
        poller.register(self.rfd, select.POLLIN)
        needed: int | None = None
        while True:
            if needed is None and len(self.pending) >= _HEADER.size:
                (needed,) = _HEADER.unpack_from(self.pending)
            if needed is not None and len(self.pending) >= _HEADER.size + needed:
                message = bytes(self.pending[_HEADER.size : _HEADER.size + needed])
                del self.pending[: _HEADER.size + needed]
                return message
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if budget is not None:
                left = budget.left()
                if left <= 0:
                    return None
                # CPU time cannot run faster than the clock: sleep until the budget could be spent
                remaining = min(remaining, max(left, _MIN_WAIT))
            if not poller.poll(max(1, math.ceil(remaining * 1000))):
                continue
            try:
                chunk = os.read(self.rfd, 1 << 20)
            except BlockingIOError:
                continue
            except OSError as exc:
                raise _WorkerGone(str(exc)) from exc
            if not chunk:
                raise _WorkerGone("end of output")
            self.pending += chunk

    def wait_ready(self, deadline: float) -> None:
        if self.ready:
            return
        message = self.receive(deadline)
        if message is None:
            raise _WorkerGone(f"did not start within {_STARTUP_LIMIT:g} s")
        if pickle.loads(message) != _READY:
            raise _WorkerGone("sent something other than its ready message")
        self.ready = True

    def close(self) -> None:
        """Ask the worker to exit by closing its input; it finishes nothing further."""
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()

    def kill(self) -> None:
        """Kill the worker and its process group now; reap it in the background."""
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.proc.kill()
        self.retire()

    def retire(self) -> None:
        """Close the pipes (an idle worker then exits) and reap the process in the background."""
        self.close()
        threading.Thread(target=self.proc.wait, name="limits-reaper", daemon=True).start()

    def forget(self) -> None:
        """Drop a worker inherited through ``fork``: close this process's copies of its pipes only."""
        self.close()
        self.proc.returncode = 0  # not our child: keep Popen from waiting for it


class _Pool:
    """Idle workers, checked out one per call; a lock guards the lists, never the I/O."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pid = os.getpid()
        self.idle: list[_Worker] = []
        self.busy: set[_Worker] = set()
        self.generation = 0
        self.max_idle = max(2, os.cpu_count() or 2)

    def _check_pid(self) -> None:
        # Called with the lock held. A forked child that skipped the at-fork hook must not talk to
        # its parent's workers: forget them and start afresh.
        if self.pid != os.getpid():
            for worker in [*self.idle, *self.busy]:
                worker.forget()
            self.idle, self.busy, self.pid = [], set(), os.getpid()
            self.generation += 1

    def after_fork_in_child(self) -> None:
        self.lock = threading.Lock()  # another thread may have held it at the fork
        self._check_pid()

    def checkout(self) -> tuple[_Worker, int]:
        with self.lock:
            self._check_pid()
            while self.idle:
                worker = self.idle.pop()  # the warmest: workers still starting wait at the front
                if worker.alive():
                    self.busy.add(worker)
                    return worker, self.generation
                worker.kill()
            generation = self.generation
        worker = _Worker()  # outside the lock: fork+exec takes a few milliseconds
        with self.lock:
            self.busy.add(worker)
        return worker, generation

    def checkin(self, worker: _Worker, generation: int) -> None:
        surplus = None
        with self.lock:
            self.busy.discard(worker)
            if generation == self.generation and self.pid == os.getpid():
                if len(self.idle) >= self.max_idle:
                    surplus = self.idle.pop(0)  # the pool is full: the worker just used stays, the oldest goes
                self.idle.append(worker)
                worker = surplus
        if worker is not None:
            worker.retire()

    def discard(self, worker: _Worker, generation: int, *, replace: bool) -> None:
        """Kill a worker whose state is unknown; start a replacement so the next call finds one warm.

        After a timeout, two workers are kept: while one imports SymPy, the other (started at the
        previous timeout) is ready, so a run of hostile answers pays about one limit each rather
        than a limit plus an interpreter start-up."""
        worker.kill()
        with self.lock:
            self.busy.discard(worker)
            if not (replace and generation == self.generation and len(self.idle) < self.max_idle):
                return
            wanted = 2 - len(self.idle)
        for _ in range(max(1, wanted)):
            if not self.start(generation):
                return

    def start(self, generation: int) -> bool:
        """Start a worker in the background and queue it behind the ready ones; ``False`` when
        none could start or the pool moved on (shut down, or this is a forked child)."""
        try:
            fresh = _Worker()
        except OSError:
            logger.exception("could not start a worker")
            return False
        with self.lock:
            if generation == self.generation and self.pid == os.getpid():
                self.idle.insert(0, fresh)
                return True
        fresh.kill()
        return False

    def shutdown(self) -> None:
        with self.lock:
            self._check_pid()
            idle, self.idle = self.idle, []
            self.generation += 1  # workers still checked out are closed when they come back
        for worker in idle:  # a ready worker exits when its input closes; one still importing is killed
            if worker.ready:
                worker.close()
            else:
                worker.kill()
        deadline = time.monotonic() + 1.0
        for worker in idle:
            try:
                worker.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                worker.kill()


_POOL = _Pool()


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
            worker, generation = _POOL.checkout()
        except OSError as exc:  # no process could be started (process or file limits)
            return done(LimitStatus.ERROR, None, f"could not start a worker: {type(exc).__name__}: {exc}")
        clean = False
        try:
            try:
                worker.wait_ready(time.monotonic() + _STARTUP_LIMIT)
            except _WorkerGone as exc:
                return done(
                    LimitStatus.ERROR, None, f"worker could not start: {exc} ({_describe_exit(worker.proc.poll())})"
                )
            budget = _CpuBudget(worker.proc.pid, limit)
            sent_at = time.monotonic()
            # with CPU accounting the wall clock is only the safety net; without it, the limit itself
            deadline = sent_at + (net if budget.measurable else limit)
            try:
                sent = worker.send(payload, deadline)
            except _WorkerGone:
                if attempt == 0:
                    budget = None
                    continue
                raise
            reply = worker.receive(deadline, budget if budget.measurable else None) if sent else None
            if reply is None:
                used = budget.update()  # before the kill: a dead process has no CPU time to read
                _POOL.discard(worker, generation, replace=True)
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
            _POOL.checkin(worker, generation)
            clean = True
            return done(LimitStatus(status), value, message)
        except _WorkerGone as exc:
            with contextlib.suppress(subprocess.TimeoutExpired):  # its output closed: it is exiting
                worker.proc.wait(timeout=_EXIT_WAIT)
            detail = _describe_exit(worker.proc.poll())
            _POOL.discard(worker, generation, replace=True)
            clean = True
            return done(LimitStatus.ERROR, None, f"worker died while running {_callable_name(func)} ({exc}; {detail})")
        except Exception as exc:  # a reply that cannot be unpickled here, for instance
            return done(LimitStatus.ERROR, None, f"{type(exc).__name__}: {exc}")
        finally:
            if not clean:  # died, raised, or interrupted (KeyboardInterrupt): its state is unknown
                _POOL.discard(worker, generation, replace=False)
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
    with _POOL.lock:
        _POOL._check_pid()
        if _POOL.idle or _POOL.busy:
            return
        generation = _POOL.generation
    _POOL.start(generation)


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
    _POOL.shutdown()


atexit.register(shutdown_workers)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _POOL.after_fork_in_child())


# ---------------------------------------------------------------------------------------------
# The worker side: ``python -m workbench.grading.limits``
# ---------------------------------------------------------------------------------------------


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks: list[bytes] = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _write_message(fd: int, obj: object) -> None:
    try:
        payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # an unpicklable return value becomes an error reply
        message = f"cannot send the result back: {type(exc).__name__}: {exc}"
        payload = pickle.dumps((LimitStatus.ERROR.value, None, message[:_MAX_MESSAGE_CHARS]))
    data = memoryview(_HEADER.pack(len(payload)) + payload)
    while data:
        data = data[os.write(fd, data) :]


def _exception_message(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # str() of an exception can itself fail
        text = "<unprintable>"
    message = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return message if len(message) <= _MAX_MESSAGE_CHARS else message[: _MAX_MESSAGE_CHARS - 3] + "..."


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(_PARENT_CHECK_INTERVAL)
        if os.getppid() != parent:
            os._exit(0)


def _serve() -> None:
    """Answer requests on the original stdin/stdout until stdin closes."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = WORKER_MEMORY_LIMIT if hard == resource.RLIM_INFINITY else min(WORKER_MEMORY_LIMIT, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ImportError, ValueError, OSError):  # not on this platform or not allowed: run uncapped
        pass
    # Keep the protocol pipes private: what func prints goes to stderr, and it reads nothing.
    rfd, wfd = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    threading.Thread(target=_watch_parent, args=(os.getppid(),), name="limits-parent-watch", daemon=True).start()
    for name in _PRELOAD_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    for module_name, function_name in _WARM_UP_CALLS:
        try:
            getattr(importlib.import_module(module_name), function_name)()
        except Exception:  # a warm-up that fails leaves the first call to pay for it
            logger.debug("warm-up %s.%s failed", module_name, function_name, exc_info=True)

    try:
        _write_message(wfd, _READY)
    except OSError:  # the caller went away while we were starting
        return
    known_path: list[str] = list(sys.path)
    while True:
        try:
            header = _read_exact(rfd, _HEADER.size)
            body = None if header is None else _read_exact(rfd, _HEADER.unpack(header)[0])
        except OSError:
            return
        if body is None:  # the caller closed our input: time to go
            return
        reply = _run_request(body, known_path)
        del body
        try:
            _write_message(wfd, reply)
        except OSError:  # the caller went away
            return
        del reply


def _run_request(body: bytes, known_path: list[str]) -> tuple[str, Any, str]:
    """Unpickle one request, run it, and return the reply; ``known_path`` is updated in place."""
    try:
        path, call = pickle.loads(body)
        if path != known_path:  # import what the caller can import (pytest rootdirs, a notebook's cwd)
            sys.path[:] = path
            known_path[:] = path
        func, args, kwargs = pickle.loads(call)
    except BaseException as exc:  # reported to the caller
        return LimitStatus.ERROR.value, None, f"the worker cannot load the call: {_exception_message(exc)}"
    try:
        return LimitStatus.OK.value, func(*args, **kwargs), ""
    except BaseException as exc:  # everything func raises is reported, nothing escapes
        return LimitStatus.ERROR.value, None, _exception_message(exc)


if __name__ == "__main__":
    _serve()
