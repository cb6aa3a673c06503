"""Inspect AI logs end to end: a real ``inspect eval`` run, offline, with Inspect's mock model,
graded by ``workbench grade LOG`` (no dataset: the targets travel in the log) and reported by
``workbench report``.

The task (``tests/fixtures/inspect/task.py``) has seven GSM8K samples scored by
``match(numeric=True)``: six GSM8K test questions answered by GPT-3's real solutions (lines 0, 1
and 3 right, 2, 5 and 313 wrong for both graders; on 313 Inspect's stored answer '1.2001e+05' is
not what the model wrote, so we read '120,006' from the output) and one written percent answer,
``33.333`` for the gold ``33.33``, which Inspect's scorer (no numeric tolerance) marks wrong and
ours (relative tolerance 0.001) right. ``inspect eval`` runs once for the module, in a network
namespace of its own when the system allows one (``unshare -rn``): the mock model needs no host.
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
UPSTREAM = {f"gsm8k-{i}": i in (0, 1, 3) for i in (0, 1, 2, 3, 5, 313)} | {"written-percent": False}
OURS = {**UPSTREAM, "written-percent": True}


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
    assert (metrics["n_turns"], metrics["n_turns_correct"], metrics["n_unmatched"]) == (7, 4, 0)
    assert (metrics["n_upstream_correct"], metrics["n_upstream_disagreements"]) == (3, 1)
    turns = pl.read_parquet(tmp_path / "turns.parquet")
    assert turns.height == 7 and set(turns["turn"]) == {0}
    rows = {r["record_id"]: r for r in turns.iter_rows(named=True)}
    assert {k: r["upstream_correct"] for k, r in rows.items()} == UPSTREAM
    assert {k: r["correct"] for k, r in rows.items()} == OURS
    written = rows["written-percent"]
    assert (written["gold_answer"], written["answer"], written["answer_source"]) == ("33.33", "33.333", "upstream")
    assert written["reason"] == "rel_tolerance"
    chile = rows["gsm8k-313"]
    assert (chile["answer"], chile["answer_source"], chile["reason"]) == ("120,006", "flex", "rounding")
    assert rows["gsm8k-2"]["reason"] == "wrong_value" and rows["gsm8k-2"]["answer"] == "65000"
    assert "mockllm/model: accuracy 57.1% (4/7 problems), unmatched 0" in out


def test_report_shows_where_we_and_inspect_disagree(logs: dict[str, Path], tmp_path: Path) -> None:
    argv = ["report", "--quiet", "--template", "01-overview", "--dataset", "none"]
    code = main([*argv, "--predictions", str(logs["eval"]), "--out", str(tmp_path)])
    assert code == 0
    (verdicts,) = tmp_path.glob("*.verdicts.parquet")
    table = pl.read_parquet(verdicts)
    assert table.height == 7 and dict(zip(table["record_id"], table["correct"], strict=True)) == OURS
    (graded,) = tmp_path.glob("*.graded")
    turns = pl.read_parquet(graded / "turns.parquet")
    assert dict(zip(turns["record_id"], turns["upstream_correct"], strict=True)) == UPSTREAM
    (page,) = [p for p in tmp_path.glob("*.html") if p.name != "index.html"]
    html = page.read_text(encoding="utf-8")
    assert "GSM8K error report" in html and "1 verdict differs from the upstream grader" in html
    section = html.split("Where our verdict differs from the upstream one", 1)[1].split("Failed problems", 1)[0]
    assert "written-percent" in section and "within 0.1%" in section
    assert "gsm8k-" not in section


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
