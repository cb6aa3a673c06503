"""Serve the triage app: Voila as a child process that a stop (Ctrl-C, SIGTERM, SIGHUP) ends in one line.

Voila stopped early prints its own tracebacks: while its pre-started kernel is still starting
("Kernel does not exist", from its kernel pool), while that kernel runs the notebook (the kernel's
KeyboardInterrupt), or while Voila is still importing. None of them is an error of the analyst's:
the server was asked to stop, and it stops. So ``workbench triage`` runs Voila in a session of its
own (the terminal's Ctrl-C reaches this process only), passes everything Voila writes to standard
error through until a stop, then asks Voila to stop (SIGTERM, which Voila handles by shutting its
kernels down), waits for it, and drops the shutdown's messages: the CLI says one line instead
(:data:`STOPPED`). A second stop does not wait for Voila's shutdown: it ends Voila's process group
(its kernels end when their parent does). A Ctrl-C in the first second, while the CLI itself is
still importing, is the command's own line (:data:`workbench.__main__.STOPPED`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from types import FrameType
from typing import IO, NamedTuple

__all__ = ["STOPPED", "Served", "serve"]

#: The one line said when the analyst stops the server.
STOPPED = "workbench triage: stopped."
#: The signals that stop the server.
_STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: How long Voila may take to shut its kernels down before it is ended (a safety net, not a budget).
_SHUTDOWN_S = 30.0


def _send(process: subprocess.Popen[bytes], sig: signal.Signals, *, group: bool = False) -> None:
    try:
        os.killpg(process.pid, sig) if group else process.send_signal(sig)
    except ProcessLookupError:  # it has ended already
        pass


def _pass_through(source: IO[bytes], target: IO[bytes], stopped: threading.Event) -> None:
    """Copy ``source`` to ``target`` line by line until a stop; after it, read and drop (so the
    writer never blocks on a full pipe)."""
    for line in iter(source.readline, b""):
        if not stopped.is_set():
            target.write(line)
            target.flush()


class Served(NamedTuple):
    """How the server ended: its exit code, and whether the analyst stopped it (then say :data:`STOPPED`)."""

    code: int
    stopped: bool


def serve(argv: Sequence[str], env: Mapping[str, str], *, err: IO[bytes] | None = None) -> Served:
    """Run ``argv`` (Voila, :func:`workbench.report.templates.voila_command`) until it ends or is stopped.

    Parameters
    ----------
    argv, env
        The command and its whole environment.
    err
        Where Voila's standard error goes until a stop (default: this process's).

    Returns
    -------
    Served
        Voila's exit code (0 when the analyst stopped it), and whether a stop ended it.
    """
    target = err if err is not None else sys.stderr.buffer
    stopped = threading.Event()
    started: list[subprocess.Popen[bytes]] = []  # Voila, once started

    def stop(signum: int, frame: FrameType | None) -> None:
        again = stopped.is_set()  # a second stop: do not wait for the shutdown
        stopped.set()
        for process in started:
            _send(process, signal.SIGKILL if again else signal.SIGTERM, group=again)

    previous = {sig: signal.signal(sig, stop) for sig in _STOPS}  # before Voila starts: none is left running
    try:
        process = subprocess.Popen(list(argv), env=dict(env), stderr=subprocess.PIPE, start_new_session=True)
        started.append(process)
        if stopped.is_set():  # stopped while it started
            _send(process, signal.SIGTERM)
        assert process.stderr is not None
        reader = threading.Thread(target=_pass_through, args=(process.stderr, target, stopped), daemon=True)
        reader.start()
        deadline: float | None = None
        while True:
            try:
                code = process.wait(timeout=0.5)  # a signal's handler runs between two waits
                break
            except subprocess.TimeoutExpired:
                if not stopped.is_set():
                    continue
                deadline = deadline if deadline is not None else time.monotonic() + _SHUTDOWN_S
                if time.monotonic() > deadline:  # asked to stop, and still shutting down
                    _send(process, signal.SIGKILL, group=True)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    reader.join(timeout=5.0)
    return Served(0, True) if stopped.is_set() else Served(code, False)
