"""Inspect AI logs end to end: a real ``inspect eval`` run, offline, with Inspect's mock model,
graded by ``workbench grade LOG`` (no dataset: the targets travel in the log) and reported by
``workbench report``.

The task (``tests/fixtures/inspect/task.py``) has six GSM8K-style samples scored by
``match(numeric=True)``: ``ducks``, ``robe`` and ``house`` are right and ``sprints`` and
``glasses`` wrong for both graders; ``girls`` answers ``33.333`` percent for the gold ``33.33``,
which Inspect's scorer (no numeric tolerance) marks wrong and ours (relative tolerance 0.001)
right. ``inspect eval`` runs once for the module, in a network namespace of its own when the
system allows one (``unshare -rn``): the mock model needs no host.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from workbench.cli import main

pytest.importorskip("inspect_ai")

TASK_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "inspect"
INSPECT = Path(sys.executable).with_name("inspect")

#: What Inspect's ``match(numeric=True)`` says, and what we say, sample by sample.
UPSTREAM = {"ducks": True, "robe": True, "house": True, "sprints": False, "girls": False, "glasses": False}
OURS = {**UPSTREAM, "girls": True}


def _offline(command: list[str]) -> list[str]:
    """``command`` in a network namespace without any interface but loopback, when allowed."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-rn", "true"], capture_output=True, check=False).returncode == 0:
        return [unshare, "-rn", *command]
    return command


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One ``inspect eval`` run: ``{"eval": <the .eval log>, "json": <the same log as .json>}``."""
    root = tmp_path_factory.mktemp("inspect")
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(root / "data"),  # Inspect's traces and buffers, not the user's
        "XDG_CACHE_HOME": str(root / "cache"),
        "PYTHONDONTWRITEBYTECODE": "1",
        # were anything to try a host, it would fail rather than reach it
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "",
    }
    for key in [k for k in env if k.endswith("_API_KEY")]:
        del env[key]
    command = [str(INSPECT), "eval", "task.py", "--model", "mockllm/model", "--log-format", "eval"]
    command += ["--log-dir", str(root / "eval"), "--display", "none"]
    done = subprocess.run(
        _offline(command), cwd=TASK_DIR, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (log,) = (root / "eval").glob("*.eval")
    convert = [str(INSPECT), "log", "convert", str(log), "--to", "json", "--output-dir", str(root / "json")]
    done = subprocess.run(convert, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    (as_json,) = (root / "json").glob("*.json")
    return {"eval": log, "json": as_json}


@pytest.mark.parametrize("kind", ["eval", "json"])
def test_grade_reads_the_log_without_a_dataset(
    logs: dict[str, Path], kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["grade", str(logs[kind]), "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert summary["dataset"]["layout"] == "carried-in-predictions" and summary["dataset"]["benchmark"] == "gsm8k"
    metrics = summary["systems"]["mockllm/model"]
    assert (metrics["n_turns"], metrics["n_turns_correct"], metrics["n_unmatched"]) == (6, 4, 0)
    assert (metrics["n_upstream_correct"], metrics["n_upstream_disagreements"]) == (3, 1)
    turns = pl.read_parquet(tmp_path / "turns.parquet")
    assert turns.height == 6 and set(turns["turn"]) == {0}
    rows = {r["record_id"]: r for r in turns.iter_rows(named=True)}
    assert {k: r["upstream_correct"] for k, r in rows.items()} == UPSTREAM
    assert {k: r["correct"] for k, r in rows.items()} == OURS
    girls = rows["girls"]
    assert (girls["gold_answer"], girls["answer"], girls["answer_source"]) == ("33.33", "33.333", "upstream")
    assert girls["reason"] == "rel_tolerance"
    assert rows["sprints"]["reason"] == "wrong_value" and rows["sprints"]["answer"] == "360"
    assert "mockllm/model: turn execution accuracy 66.7% (4/6)" in out


def test_report_shows_where_we_and_inspect_disagree(logs: dict[str, Path], tmp_path: Path) -> None:
    argv = ["report", "--quiet", "--template", "01-overview", "--dataset", "none"]
    code = main([*argv, "--predictions", str(logs["eval"]), "--out", str(tmp_path)])
    assert code == 0
    (verdicts,) = tmp_path.glob("*.verdicts.parquet")
    table = pl.read_parquet(verdicts)
    assert table.height == 6 and dict(zip(table["record_id"], table["correct"], strict=True)) == OURS
    (graded,) = tmp_path.glob("*.graded")
    turns = pl.read_parquet(graded / "turns.parquet")
    assert dict(zip(turns["record_id"], turns["upstream_correct"], strict=True)) == UPSTREAM
    (page,) = tmp_path.glob("run-*.html")
    html = page.read_text(encoding="utf-8")
    assert "GSM8K error report" in html and "1 verdicts differ from the upstream grader" in html
    section = html.split("Where our verdict differs from the upstream one", 1)[1].split("Failed problems", 1)[0]
    assert "girls" in section and "rel_tolerance" in section
    assert "ducks" not in section and "sprints" not in section


def test_without_the_extra_grade_says_how_to_install_it(
    logs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # as if inspect-ai were not installed
    code = main(["grade", str(logs["json"]), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith(f"workbench: error: {logs['json']}: this is an Inspect AI log")
    assert line.endswith("Fix: pip install 'workbench[inspect]'")
