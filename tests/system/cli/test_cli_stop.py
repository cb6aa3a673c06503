"""Ctrl-C (SIGINT) early in a ``workbench`` command is one line, never Python's traceback.

Before, a Ctrl-C in the first second of any command, while Python was still importing
``workbench.cli`` (polars, the readers), printed a KeyboardInterrupt traceback: the console script
imported the CLI before any handler was in place. The command is started as the ``workbench`` script
that pip writes for ``[project.scripts]`` starts it (its lines, run with ``python -c``: the script
installed in this environment may predate the entry point), in a process of its own, and stopped:

- at named points of its start-up, each the same on every run: the process sends itself SIGINT as a
  module starts importing (a finder put first on ``sys.meta_path``, that finds nothing): the CLI
  itself, polars (the bulk of the start-up), the last module the CLI imports, and one the command
  imports as it runs (``templates list``);
- from outside, as a terminal's Ctrl-C is, on what the process shows, never after a delay: once
  polars's library is in its memory map (it is importing the CLI), and once ``workbench grade`` on
  the bundled run has started a grading worker (a stop that comes late lands in the grading, where it
  must be one line too); no worker is left running.

Asserted: standard error is the one line ``workbench: stopped.`` (no "Traceback"), exit code 130. A
stop during Python's own start-up, before the entry point runs (its ``site`` module and the
environment's ``.pth`` files), is Python's, and is not tested (see ``workbench/__main__.py``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from workbench.__main__ import STOPPED, STOPPED_CODE

REPO = Path(__file__).resolve().parents[3]
DEV = REPO / "data/convfinqa/dev.json"
RUN = REPO / "data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6/2026-05-04T06-35-00Z/predictions.jsonl"
#: A safety net against a hang, not a budget: CI machines are busy.
SAFETY_S = 300.0


def _entry_script() -> str:
    """What the ``workbench`` script pip writes for ``[project.scripts]`` runs (its ``argv[0]`` fix left out)."""
    spec = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]["workbench"]
    module, _, function = spec.partition(":")
    return f"import re\nimport sys\nfrom {module} import {function}\nsys.exit({function}())\n"


def _stop_at(module: str) -> str:
    """Code that makes the process send itself SIGINT as ``module`` starts importing."""
    return (
        "import os, signal, sys\n"
        "class _StopAt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name == {module!r}:\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "        return None\n"
        "sys.meta_path.insert(0, _StopAt())\n"
    )


def _start(code: str, args: list[str], folder: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    argv = [sys.executable, "-c", code, *args]
    return subprocess.Popen(argv, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _said(process: subprocess.Popen[str]) -> str:
    try:
        _, err = process.communicate(timeout=SAFETY_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return err


def _assert_one_line(process: subprocess.Popen[str], err: str) -> None:
    assert "Traceback" not in err, err[-3000:]
    assert err.splitlines() == [STOPPED], err[-3000:]
    assert process.returncode == STOPPED_CODE == 130, err[-3000:]


@pytest.mark.parametrize(
    "module",
    ["workbench.cli", "polars", "workbench.io.paths", "workbench.report.templates"],
    ids=["cli", "polars", "last-import", "running"],
)
def test_a_stop_at_a_point_of_the_start_up_is_one_line(tmp_path: Path, module: str) -> None:
    process = _start(_stop_at(module) + _entry_script(), ["templates", "list"], tmp_path)
    _assert_one_line(process, _said(process))


def _importing_polars(process: psutil.Process) -> bool:
    """Whether polars's library is in the process's memory map (it is importing the CLI)."""
    try:
        maps = Path(f"/proc/{process.pid}/maps").read_text(encoding="utf-8", errors="replace")
    except OSError:  # it has ended
        return False
    return any("polars" in line and ".so" in line for line in maps.splitlines())


def _grading(process: psutil.Process) -> bool:
    """Whether the process has started a grading worker."""
    return bool(process.children(recursive=True))


@pytest.mark.skipif(not Path("/proc/self/maps").is_file(), reason="reads the process's memory map from /proc")
@pytest.mark.parametrize("when", [_importing_polars, _grading], ids=["importing", "grading"])
def test_ctrl_c_from_outside_is_one_line(tmp_path: Path, when: Callable[[psutil.Process], bool]) -> None:
    process = _start(_entry_script(), ["grade", str(DEV), str(RUN), "--out", str(tmp_path / "graded")], tmp_path)
    watched = psutil.Process(process.pid)
    workers: list[psutil.Process] = []
    deadline = time.monotonic() + SAFETY_S
    try:
        while not when(watched):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"workbench grade ended ({process.returncode}) before the stop:\n{_said(process)[-3000:]}")
            time.sleep(0.002)
        workers = watched.children(recursive=True)
        process.send_signal(signal.SIGINT)
    except psutil.NoSuchProcess:
        pytest.fail(f"workbench grade ended ({process.poll()}) before the stop:\n{_said(process)[-3000:]}")
    _assert_one_line(process, _said(process))
    assert not (tmp_path / "graded" / "summary.json").exists()  # stopped: nothing written
    _, alive = psutil.wait_procs(workers, timeout=SAFETY_S)
    assert not alive, f"grading workers left running: {alive}"
