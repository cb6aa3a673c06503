"""Stopping ``workbench triage`` early is one line, not Voila's tracebacks.

``workbench triage`` is started as an analyst starts it (a process of its own, from a project
folder), and stopped at once: as soon as Voila says it is serving, while its pre-started kernel is
still starting (Voila printed "Kernel does not exist" from its kernel pool there), or as soon as
that kernel has started and runs the template (the kernel printed its KeyboardInterrupt), by Ctrl-C
(SIGINT) or SIGTERM. Asserted: no traceback and no error on standard error, one line after the stop
(``workbench triage: stopped.``), exit code 0, and nothing listens on the port afterwards (Voila and
its kernel are gone). The stop is sent on what the server prints, never after a delay.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import closing
from pathlib import Path

import pytest

from workbench.report.serve import STOPPED

REPO = Path(__file__).resolve().parents[3]
#: A safety net against a hang, not a budget: CI machines are busy.
SAFETY_S = 300.0


def _free_port() -> int:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(port: int) -> bool:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _start(project: Path, port: int) -> tuple[subprocess.Popen[str], list[str], threading.Thread]:
    """``workbench triage`` on ``port`` from ``project``; its standard error's lines, as they come
    (all of them once the reader thread has ended)."""
    env = {k: v for k, v in os.environ.items() if k != "JUPYTERHUB_USER"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    argv = [sys.executable, "-m", "workbench.cli", "triage", "--no-browser", "--port", str(port)]
    process = subprocess.Popen(argv, cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    assert process.stderr is not None
    reader = threading.Thread(target=lambda: lines.extend(iter(process.stderr.readline, "")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    return process, lines, reader


def _wait_for(lines: list[str], marker: str, process: subprocess.Popen[str]) -> int:
    """Wait until a line holds ``marker``; the number of lines then."""
    deadline = time.monotonic() + SAFETY_S
    while time.monotonic() < deadline:
        if any(marker in line for line in list(lines)):
            return len(lines)
        if process.poll() is not None:
            pytest.fail(f"workbench triage ended with {process.returncode} before {marker!r}:\n{''.join(lines)}")
        time.sleep(0.05)
    pytest.fail(f"no {marker!r} within {SAFETY_S:.0f} s:\n{''.join(lines)}")


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
@pytest.mark.parametrize("marker", ["Voilà is running at", "Kernel started"], ids=["serving", "kernel-started"])
def test_an_early_stop_is_one_line(tmp_path: Path, stop: signal.Signals, marker: str) -> None:
    port = _free_port()
    process, lines, reader = _start(tmp_path, port)
    try:
        before = _wait_for(lines, marker, process)
        process.send_signal(stop)
        code = process.wait(timeout=SAFETY_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    reader.join(timeout=SAFETY_S)
    said = "".join(lines)
    # Voila's own lines may still come between the marker and the stop; nothing else may
    after = [line for line in lines[before:] if not line.startswith(("[Voila] ", "[IPKernelApp] WARNING", "http"))]
    assert "Traceback" not in said and "ERROR" not in said and "Error" not in said, said[-3000:]
    assert [line.strip() for line in after] == [STOPPED], said[-3000:]
    assert code == 0, said[-3000:]
    assert not _listening(port), "something still listens on the triage's port"


def test_a_stop_before_voila_starts_says_nothing(tmp_path: Path) -> None:
    process, lines, reader = _start(tmp_path, _free_port())
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=SAFETY_S)
    reader.join(timeout=SAFETY_S)
    assert "Traceback" not in "".join(lines) and "Error" not in "".join(lines)
