"""The `workbench` command: grading end to end and one clear line for each bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from workbench.cli import main
from workbench.schema import CHECKS, keys_as_keys

REPO = Path(__file__).resolve().parents[3]
GOLD = REPO / "tests/fixtures/convfinqa/dev_small.json"
PREDS = REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl"
CLAUDE = REPO / "data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6/2026-05-04T06-35-00Z/predictions.jsonl"


def _lines(path: Path) -> list[str]:
    return PREDS.read_text(encoding="utf-8").splitlines()


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_grade_writes_tables_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "grade", str(GOLD), str(PREDS), "--system", "claude", "--out", str(tmp_path))
    assert code == 0, err
    summary = json.loads((tmp_path / "summary.json").read_text())
    metrics = summary["systems"]["claude"]
    assert metrics["n_turns"] == 42 and metrics["n_unmatched"] == 0 and metrics["n_missing"] == 0
    for key in (
        "turn_execution_accuracy",
        "conversation_execution_accuracy",
        "all_turns_correct_rate",
        "turn_program_accuracy",
        "conversation_program_accuracy",
    ):
        assert 0.0 <= metrics[key] <= 1.0
    turns = pl.read_parquet(tmp_path / "turns.parquet")
    convs = pl.read_parquet(tmp_path / "conversations.parquet")
    assert turns.height == 42 and convs.height == 12
    assert metrics["turn_execution_accuracy"] == pytest.approx(turns["correct"].mean())
    assert summary["dataset"]["sha256"] and summary["predictions"][0]["system"] == "claude"
    assert "claude: turn execution accuracy" in out


def test_grade_writes_the_data_quality_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The full dev set: checks.parquet holds every flag with its evidence, and the command
    line says how many turns each category flags."""
    dev = REPO / "data" / "convfinqa" / "dev.json"
    code, out, err = _run(capsys, "grade", str(dev), str(CLAUDE), "--out", str(tmp_path))
    assert code == 0, err
    checks = pl.read_parquet(tmp_path / "checks.parquet")
    assert checks.schema["record_id"] == pl.String  # keys are text in the file, categories once read
    assert keys_as_keys(checks).schema == pl.Schema(CHECKS)
    assert checks.columns[:3] == ["record_id", "turn", "category"]
    assert {"evidence", "confidence"} <= set(checks.columns)
    one = checks.filter((pl.col("record_id") == "Single_CDNS/2018/page_31.pdf-1") & (pl.col("turn") == 2))
    assert "unit_inconsistency" in one["category"].cast(pl.String).to_list()
    assert any("1877" in e and "18770" in e for e in one["evidence"].to_list())
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["checks"] == {str(c): n for c, n in checks.group_by("category").len().iter_rows()}
    assert "data-quality flags (turns): mislabel" in out


def test_console_script_is_installed() -> None:
    exe = shutil.which("workbench", path=str(Path(sys.executable).parent))
    assert exe is not None, "the console script `workbench` is not installed in this environment"
    result = subprocess.run([exe, "grade", "--help"], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and "--map" in result.stdout


def _assert_one_clear_line(err: str, *needles: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert "Fix:" in lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def test_missing_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "outputs.csv"
    bad.write_text("record_id,answer\nSingle_MRO/2007/page_134.pdf-1,60.94\n", encoding="utf-8")
    code, _, err = _run(capsys, "grade", str(GOLD), str(bad), "--out", str(tmp_path / "o"))
    assert code == 2
    # no turn is needed (a single-turn file): what is missing is an answer to grade (issue 20)
    _assert_one_clear_line(err, str(bad), "'predicted_answer, predicted_program or raw_output'", "--map")


def test_invalid_json_on_line_n(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _lines(PREDS)
    lines[4] = lines[4][:40]  # truncate the fifth line
    bad = tmp_path / "predictions.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = _run(capsys, "grade", str(GOLD), str(bad), "--out", str(tmp_path / "o"))
    assert code == 2
    _assert_one_clear_line(err, str(bad), "line 5", "invalid JSON")


def test_duplicate_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _lines(PREDS)
    bad = tmp_path / "predictions.jsonl"
    bad.write_text("\n".join([*lines, lines[2]]) + "\n", encoding="utf-8")
    code, _, err = _run(capsys, "grade", str(GOLD), str(bad), "--out", str(tmp_path / "o"))
    assert code == 2
    _assert_one_clear_line(err, str(bad), f"line {len(lines) + 1}", "line 3", "duplicate", "record_id")


def test_map_names_missing_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "outputs.csv"
    src.write_text("rid,q_order,ans\nSingle_MRO/2007/page_134.pdf-1,1,60.94\n", encoding="utf-8")
    code, _, err = _run(
        capsys,
        "grade",
        str(GOLD),
        str(src),
        "--out",
        str(tmp_path / "o"),
        "--map",
        "record_id=report_id_x,turn=q_order:1,predicted_answer=ans",
    )
    assert code == 2
    _assert_one_clear_line(err, str(src), "report_id_x", "rid, q_order, ans")


def test_map_reads_other_shape_with_one_based_turns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "outputs.csv"
    src.write_text(
        "rid,q_order,ans\nSingle_MRO/2007/page_134.pdf-1,1,60.94\nSingle_MRO/2007/page_134.pdf-1,2,99\n",
        encoding="utf-8",
    )
    code, _, err = _run(
        capsys,
        "grade",
        str(GOLD),
        str(src),
        "--out",
        str(tmp_path / "o"),
        "--map",
        "record_id=rid,turn=q_order:1,predicted_answer=ans",
    )
    assert code == 0, err
    turns = pl.read_parquet(tmp_path / "o/turns.parquet").filter(
        pl.col("record_id") == "Single_MRO/2007/page_134.pdf-1"
    )
    assert turns.sort("turn")["correct"].to_list()[:2] == [True, False]  # gold turn 0 = 60.94, turn 1 = 25.14


def test_unknown_record_id_is_counted_and_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _lines(PREDS)
    row = json.loads(lines[0])
    row["record_id"] = "Single_NOPE/2001/page_1.pdf-1"
    out_of_range = json.loads(lines[1])
    out_of_range["turn_idx"] = 40
    bad = tmp_path / "predictions.jsonl"
    bad.write_text("\n".join([*lines, json.dumps(row), json.dumps(out_of_range)]) + "\n", encoding="utf-8")
    code, _, err = _run(capsys, "grade", str(GOLD), str(bad), "--out", str(tmp_path / "o"))
    assert code == 0
    _assert_one_clear_line(
        err,
        str(bad),
        "2 prediction rows",
        f"line {len(lines) + 1}",
        "Single_NOPE/2001/page_1.pdf-1",
        "record_id not in dev_small.json",
    )
    summary = json.loads((tmp_path / "o/summary.json").read_text())
    assert next(iter(summary["systems"].values()))["n_unmatched"] == 2
    unmatched = pl.read_parquet(tmp_path / "o/unmatched.parquet")
    assert sorted(unmatched["why"].to_list())[1].startswith("turn 40 is out of range")


def test_missing_dataset_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "grade", str(tmp_path / "nope.json"), str(PREDS), "--out", str(tmp_path / "o"))
    assert code == 2
    _assert_one_clear_line(err, "nope.json", "file not found")


def test_system_count_must_match_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(
        capsys, "grade", str(GOLD), str(PREDS), "--system", "a", "--system", "b", "--out", str(tmp_path / "o")
    )
    assert code == 2
    _assert_one_clear_line(err, "2 system names for 1 prediction files")


def test_grade_imports_only_what_grading_needs(tmp_path: Path) -> None:
    """A fresh ``workbench grade`` loads no report, annotation or notebook module (issue 21: start-up)."""
    script = (
        "import sys\n"
        "from workbench.cli import main\n"
        f"code = main(['grade', {str(GOLD)!r}, {str(PREDS)!r}, '--out', {str(tmp_path / 'out')!r}])\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('IPython', 'jinja2', 'ipywidgets', 'plotly')\n"
        "                or m.startswith(('workbench.report', 'workbench.annotations', 'workbench.cleaning')))\n"
        "print(code, loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "0 []"
