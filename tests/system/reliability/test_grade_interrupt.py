"""Interrupted ``workbench grade`` output (issue 8, part 4): turns.parquet, checks.parquet,
summary.json and the rest are written as a set, so a failure or a kill while writing leaves
the previous outputs whole."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from reliability_support import fault, tree

import workbench.pipeline.graded as outputs
from workbench.config import project_root, resolve
from workbench.pipeline.run import Run, grade_run

ROOT = project_root()
GOLD = ROOT / "tests/fixtures/gsm8k/test_first_20.jsonl"
TORA = ROOT / "tests/fixtures/predictions/gsm8k/tora-70b_first_20.jsonl"
POT = ROOT / "tests/fixtures/predictions/gsm8k/pot_zeroshot_first_20.jsonl"
N_FILES = 6


@pytest.fixture(scope="module")
def runs() -> tuple[Run, Run]:
    return grade_run(resolve(dataset=GOLD, predictions=[TORA])), grade_run(resolve(dataset=GOLD, predictions=[POT]))


@pytest.mark.parametrize("k", range(1, N_FILES + 1))
def test_a_failure_while_writing_leaves_the_previous_outputs(
    k: int, runs: tuple[Run, Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = runs
    out = tmp_path / "graded"
    first.write(out)
    before = tree(out)
    original = outputs.write_atomic_set

    def failing(items: list[tuple[Path, Any]]) -> list[Path]:
        assert len(items) == N_FILES

        def half(tmp: Path, write: Any = items[k - 1][1]) -> None:
            write(tmp)
            tmp.write_bytes(tmp.read_bytes()[:10])
            raise OSError(28, "No space left on device")

        return original([*items[: k - 1], (items[k - 1][0], half), *items[k:]])

    monkeypatch.setattr(outputs, "write_atomic_set", failing)
    fault(f"grade output: writing file {k} of {N_FILES} fails")
    with pytest.raises(OSError, match="No space left"):
        second.write(out)
    assert tree(out) == before
    monkeypatch.setattr(outputs, "write_atomic_set", original)
    second.write(out)
    assert tree(out) != before and not [p for p in out.iterdir() if p.name.endswith(".tmp")]


CHILD = """
import os, signal, sys
import workbench.pipeline.graded as outputs
from workbench.config import resolve
from workbench.pipeline.run import grade_run
gold, predictions, out, k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
original = outputs.write_atomic_set
def killing(items):
    path, write = items[k - 1]
    def half(tmp):
        write(tmp)
        os.kill(os.getpid(), signal.SIGKILL)
    return original([*items[: k - 1], (path, half), *items[k:]])
outputs.write_atomic_set = killing
grade_run(resolve(dataset=gold, predictions=[predictions])).write(out)
"""


@pytest.mark.parametrize("k", [1, 4, N_FILES])
def test_sigkill_while_writing_leaves_the_previous_outputs(k: int, runs: tuple[Run, Run], tmp_path: Path) -> None:
    out = tmp_path / "graded"
    runs[0].write(out)
    before = tree(out)
    child = subprocess.run([sys.executable, "-c", CHILD, str(GOLD), str(POT), str(out), str(k)], capture_output=True)
    assert child.returncode == -signal.SIGKILL, child.stderr
    fault(f"grade output: SIGKILL while writing file {k} of {N_FILES}")
    assert {name: digest for name, digest in tree(out).items() if not name.startswith(".")} == before
