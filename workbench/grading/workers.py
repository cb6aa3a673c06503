"""The sandbox worker processes that :mod:`workbench.grading.limits` runs limited calls in.

This module owns the processes and their pipes; :mod:`workbench.grading.limits` owns the limits
(what a limit counts, when a call is given up) and the public API, :func:`~workbench.grading.limits.call_with_limit`.

Workers

- are started with :class:`subprocess.Popen` (``python -m workbench.grading.workers``) in a session of
  their own, pre-import SymPy, ``latex2sympy2_extended`` and ``math_verify`` (when installed) so that a
  call does not pay for the imports, and cap their address space at :data:`WORKER_MEMORY_LIMIT` bytes,
  so a runaway expression ends in ``MemoryError`` (status ``error``) or a timeout rather than eating the
  machine;
- talk to the caller in length-prefixed pickles: a request is the function (by reference), its
  arguments and keyword arguments, a reply is ``(status, value, message)``;
- are kept in a small idle pool (at most ``os.cpu_count()`` idle workers), guarded by a lock, so
  several threads can call at once, each with a worker of its own;
- exit when their standard input closes or their parent process goes away, so a crashed caller does
  not leave them behind, at once (:func:`_exit_now`: without the interpreter's teardown, which with
  SymPy loaded would keep the caller's exit waiting); :func:`workbench.grading.limits.shutdown_workers` (also registered with
  :mod:`atexit`) stops them;
- are never shared across ``fork``: a forked child forgets its parent's workers and starts its own.
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
from pathlib import Path
from typing import Any, Protocol

from workbench.grading.status import LimitStatus

__all__ = ["WORKER_MEMORY_LIMIT", "Budget", "WorkerGone", "Worker", "WorkerPool", "POOL", "describe_exit"]

logger = logging.getLogger(__name__)

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
_MAX_MESSAGE_CHARS = 500  # exception messages sent back are cut to this length
_PARENT_CHECK_INTERVAL = 1.0  # seconds between a worker's checks that its parent is alive
_MIN_WAIT = 0.01  # shortest sleep between two reads of a worker's CPU time (the kernel counts in ticks)
_READY = "ready"
#: ``-m`` warns if the package's ``__init__`` has already imported this module; harmless for a worker.
_RUNPY_WARNING = "ignore:'workbench.grading.workers' found in sys.modules:RuntimeWarning"
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


def _worker_environment() -> dict[str, str]:
    """The caller's environment, plus the package's root on ``PYTHONPATH`` if it is not installed there."""
    env = dict(os.environ)
    installed = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    if _PACKAGE_ROOT not in installed:  # a source checkout or editable install: make -m find workbench
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH", "")) if p)
    return env


class Budget(Protocol):
    """What :meth:`Worker.receive` needs of a CPU budget (:mod:`workbench.grading.limits` keeps it)."""

    def left(self) -> float:
        """Seconds of CPU left (``0`` or less when spent)."""
        ...


class WorkerGone(Exception):
    """The worker's pipe closed before a whole message went through."""


def describe_exit(returncode: int | None) -> str:
    """How a worker ended, for a message (``"killed by SIGKILL"``, ``"exit code 1"``).

    Examples
    --------
    >>> describe_exit(None), describe_exit(-9), describe_exit(1)
    ('still running', 'killed by SIGKILL', 'exit code 1')
    """
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


class Worker:
    """One worker subprocess and the parent's non-blocking ends of its pipes."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-W", _RUNPY_WARNING, "-m", "workbench.grading.workers"],
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
                raise WorkerGone(str(exc)) from exc
            data = data[written:]
        return True

    def receive(self, deadline: float, budget: Budget | None = None) -> bytes | None:
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
                raise WorkerGone(str(exc)) from exc
            if not chunk:
                raise WorkerGone("end of output")
            self.pending += chunk

    def wait_ready(self, startup_limit: float) -> None:
        """Wait up to ``startup_limit`` seconds for the worker's ready message."""
        if self.ready:
            return
        message = self.receive(time.monotonic() + startup_limit)
        if message is None:
            raise WorkerGone(f"did not start within {startup_limit:g} s")
        if pickle.loads(message) != _READY:
            raise WorkerGone("sent something other than its ready message")
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


class WorkerPool:
    """Idle workers, checked out one per call; a lock guards the lists, never the I/O."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.freed = threading.Condition(self.lock)  # a worker came back, went, or may be started
        self.pid = os.getpid()
        self.idle: list[Worker] = []
        self.busy: set[Worker] = set()
        self.starting = 0  # workers being started for a checkout, outside the lock
        self.generation = 0
        self.max_idle = max(2, os.cpu_count() or 2)
        # at most this many calls at once: on two cores a third worker only adds its start-up
        # (0.9 s of CPU), as when two gradings of a batch each grade in two threads
        self.max_busy = self.max_idle

    def _check_pid(self) -> None:
        # Called with the lock held. A forked child that skipped the at-fork hook must not talk to
        # its parent's workers: forget them and start afresh.
        if self.pid != os.getpid():
            for worker in [*self.idle, *self.busy]:
                worker.forget()
            self.idle, self.busy, self.pid, self.starting = [], set(), os.getpid(), 0
            self.generation += 1

    def after_fork_in_child(self) -> None:
        self.lock = threading.Lock()  # another thread may have held it at the fork
        self.freed = threading.Condition(self.lock)
        self.starting = 0
        self._check_pid()

    def checkout(self) -> tuple[Worker, int]:
        """An idle worker, else a new one; while :attr:`max_busy` calls run, wait for one to end."""
        with self.lock:
            self._check_pid()
            while True:
                while self.idle:
                    worker = self.idle.pop()  # the warmest: workers still starting wait at the front
                    if worker.alive():
                        self.busy.add(worker)
                        return worker, self.generation
                    worker.kill()
                if len(self.busy) + self.starting < self.max_busy:
                    break
                self.freed.wait()
            generation = self.generation
            self.starting += 1
        try:
            worker = Worker()  # outside the lock: fork+exec takes a few milliseconds
        finally:
            with self.lock:
                self.starting -= 1
                self.freed.notify()
        with self.lock:
            self.busy.add(worker)
        return worker, generation

    def checkin(self, worker: Worker, generation: int) -> None:
        retired: Worker | None = worker  # the worker to let go: this one, or the oldest idle one
        with self.lock:
            self.busy.discard(worker)
            self.freed.notify()
            if generation == self.generation and self.pid == os.getpid():
                retired = None
                if len(self.idle) >= self.max_idle:
                    retired = self.idle.pop(0)  # the pool is full: the worker just used stays, the oldest goes
                self.idle.append(worker)
        if retired is not None:
            retired.retire()

    def discard(self, worker: Worker, generation: int, *, replace: bool) -> None:
        """Kill a worker whose state is unknown; start a replacement so the next call finds one warm.

        After a timeout, two workers are kept: while one imports SymPy, the other (started at the
        previous timeout) is ready, so a run of hostile answers pays about one limit each rather
        than a limit plus an interpreter start-up."""
        worker.kill()
        with self.lock:
            self.busy.discard(worker)
            self.freed.notify()
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
            fresh = Worker()
        except OSError:
            logger.exception("could not start a worker")
            return False
        with self.lock:
            if generation == self.generation and self.pid == os.getpid():
                self.idle.insert(0, fresh)
                self.freed.notify()
                return True
        fresh.kill()
        return False

    def start_if_empty(self) -> None:
        """Start one worker in the background when this process has none (idle or busy)."""
        with self.lock:
            self._check_pid()
            if self.idle or self.busy:
                return
            generation = self.generation
        self.start(generation)

    def shutdown(self) -> None:
        with self.lock:
            self._check_pid()
            idle, self.idle = self.idle, []
            self.generation += 1  # workers still checked out are closed when they come back
            self.freed.notify_all()
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


#: This process's workers.
POOL = WorkerPool()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: POOL.after_fork_in_child())

# ---------------------------------------------------------------------------------------------
# The worker side: ``python -m workbench.grading.workers``
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


def _exit_now() -> None:
    """End the worker at once, with status 0: flush what it printed, run its :mod:`atexit`
    handlers (coverage's, when it measures subprocesses), and skip the interpreter's teardown.

    With SymPy loaded the teardown (clearing every module, collecting its objects) takes about
    0.2 s of CPU, and seconds on a loaded machine; the caller's
    :func:`~workbench.grading.limits.shutdown_workers`, run when the caller exits, waits for
    idle workers to end, so a grading process would otherwise end up to a second later than its
    work. A worker holds nothing that needs the teardown: no open files, its protocol pipe
    written with unbuffered ``os.write``.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()  # what a normal exit would run first
    os._exit(0)


if __name__ == "__main__":
    _serve()
    _exit_now()
