"""Determinism (issue 8, part 6): the same inputs give byte-identical graded outputs across
processes, engines (local, Dask on a ``LocalCluster``) and worker counts.

Every run is a fresh process (``grade_once.py``); ``summary.json`` carries no timestamp, so
all six files are compared byte for byte.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from reliability_support import NOTES, sha256

from workbench.config import project_root

distributed = pytest.importorskip("distributed")

ROOT = project_root()
GRADE_ONCE = Path(__file__).with_name("grade_once.py")
CASES = {
    "convfinqa-small": [
        "--dataset",
        str(ROOT / "tests/fixtures/convfinqa/dev_small.json"),
        str(ROOT / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl"),
    ],
    "gsm8k-two-systems": [
        "--dataset",
        str(ROOT / "tests/fixtures/gsm8k/test_first_20.jsonl"),
        str(ROOT / "tests/fixtures/predictions/gsm8k/tora-70b_first_20.jsonl"),
        str(ROOT / "tests/fixtures/predictions/gsm8k/pot_zeroshot_first_20.jsonl"),
    ],
}
FILES = (
    "turns.parquet",
    "checks.parquet",
    "policy_inputs.parquet",
    "conversations.parquet",
    "unmatched.parquet",
    "summary.json",
)


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        yield cluster


def grade(out: Path, case: str, *options: str) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, str(GRADE_ONCE), str(out), *CASES[case], *options], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return {name: sha256(out / name) for name in FILES}


@pytest.mark.parametrize("case", list(CASES))
def test_graded_outputs_are_byte_identical(case: str, cluster, tmp_path: Path) -> None:
    runs = {
        "local, 1 worker, run 1": grade(tmp_path / "a", case, "--workers", "1"),
        "local, 1 worker, run 2": grade(tmp_path / "b", case, "--workers", "1"),
        "local, 2 worker processes": grade(tmp_path / "c", case, "--workers", "2"),
        "dask LocalCluster, 2 workers": grade(
            tmp_path / "d", case, "--engine", "dask", "--scheduler", cluster.scheduler_address
        ),
    }
    reference = runs["local, 1 worker, run 1"]
    for name, hashes in runs.items():
        NOTES.append(f"determinism {case}: {name}: turns.parquet sha256 {hashes['turns.parquet']}")
    for name, hashes in runs.items():
        assert hashes == reference, name
    assert "created_at" not in (tmp_path / "a" / "summary.json").read_text(encoding="utf-8")
