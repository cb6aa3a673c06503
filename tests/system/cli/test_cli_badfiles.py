"""Bad files through ``workbench grade`` and ``workbench report --config``: a non-zero exit, one
line on stderr, no traceback, and the previous output left as it was; unmatched rows counted and
shown."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from badfile_cases import CASES, DEV_SMALL, Case

from workbench.cli import main

REPO = Path(__file__).resolve().parents[3]

#: A handful of catalogue cases, graded against their gold through the command line.
CLI_CASES = [
    "truncated:zarifaziz-jsonl:cut mid-line 3",
    "non-UTF-8:canonical-csv:latin-1 byte on line 3",
    "duplicate key:zarifaziz-jsonl:'record_id' twice on line 3",
    "duplicate row:canonical-parquet:row 3 again at the end",
    "mixed schemas:zarifaziz-jsonl:line 5 canonical",
    "wrong type:zarifaziz-jsonl:answer an object",
    "empty:canonical-csv:0 bytes",
    "truncated:convfinqa-reformatted:cut mid-object",  # a bad gold file
    "duplicate key:convfinqa-reformatted:'cash provided by operating activities' twice",
    "hostile JSON:zarifaziz-jsonl:100,000-deep array on line 3",  # was a RecursionError traceback
    "hostile JSON:zarifaziz-jsonl:100,000-digit number on line 3",  # was a ValueError traceback
    "hostile JSON:convfinqa-reformatted:100,000-deep object in record 1",
    "hostile JSON:convfinqa-reformatted:executed answer 1e999999",  # was graded: 'inf' matched it
]
BY_ID = {case.id: case for case in CASES}
PREVIOUS = {"summary.json": '{"previous": true}\n', "turns.parquet": "previous bytes"}


def _previous_output(out: Path) -> None:
    out.mkdir(parents=True)
    for name, text in PREVIOUS.items():
        (out / name).write_text(text, encoding="utf-8")


def _assert_previous_output_intact(out: Path) -> None:
    assert sorted(p.name for p in out.iterdir()) == sorted(PREVIOUS), "nothing new written"
    for name, text in PREVIOUS.items():
        assert (out / name).read_text(encoding="utf-8") == text


def _files(tmp_path: Path, case: Case) -> tuple[Path, Path]:
    """(gold, predictions) for ``case``: the bad file in its place, the clean fixture in the other."""
    folder = tmp_path / "run"
    folder.mkdir()
    bad = folder / case.source.filename
    bad.write_bytes(case.make())
    if case.source.loader == "gold":
        preds = REPO / "tests" / "fixtures" / "predictions" / "zarifaziz_dev_small.jsonl"
        return bad, preds
    assert case.source.gold is not None
    return case.source.gold, bad


@pytest.mark.parametrize("case_id", CLI_CASES)
def test_grade_rejects_a_bad_file_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], case_id: str) -> None:
    case = BY_ID[case_id]
    gold, preds = _files(tmp_path, case)
    out = tmp_path / "out"
    _previous_output(out)
    code = main(["grade", str(gold), str(preds), "--out", str(out)])
    stdout, stderr = capsys.readouterr()
    assert code == 2
    assert "Traceback" not in stdout + stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    bad = preds if case.source.loader == "predictions" else gold
    assert lines[0].startswith(f"workbench: error: {bad}: "), lines[0]
    assert "Fix: " in lines[0]
    _assert_previous_output_intact(out)


def test_grade_of_a_bad_file_creates_no_output_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold, preds = _files(tmp_path, BY_ID["truncated:zarifaziz-jsonl:cut mid-line 3"])
    out = tmp_path / "never"
    assert main(["grade", str(gold), str(preds), "--out", str(out)]) == 2
    capsys.readouterr()
    assert not out.exists()


@pytest.mark.parametrize(
    ("case_id", "n", "why"),
    [
        ("unknown record:zarifaziz-jsonl:record_id not in gold", 1, "record_id not in dev_small.json"),
        ("turn out of range:canonical-csv:turn 7", 1, "is out of range for a"),
    ],
)
def test_grade_counts_and_shows_unmatched_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case_id: str, n: int, why: str
) -> None:
    case = BY_ID[case_id]
    gold, preds = _files(tmp_path, case)
    out = tmp_path / "out"
    code = main(["grade", str(gold), str(preds), "--system", "claude", "--out", str(out)])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    assert "Traceback" not in stdout + stderr
    warnings = [line for line in stderr.splitlines() if line.startswith("workbench: warning:")]
    assert len(warnings) == 1 and f"{preds}: {n} prediction row" in warnings[0] and why in warnings[0]
    assert f"unmatched {n}" in stdout
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["systems"]["claude"]["n_unmatched"] == n


def test_report_config_with_a_bad_batch_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = BY_ID["duplicate key:batch-yaml:'template' twice in report 2"]
    batch = tmp_path / case.source.filename
    batch.write_bytes(case.make())
    code = main(["report", "--config", str(batch)])
    stdout, stderr = capsys.readouterr()
    assert code == 2 and "Traceback" not in stdout + stderr
    assert stderr.strip().splitlines() == [
        f"workbench: error: {batch}: line 6: field 'template': key 'template' appears twice in one mapping "
        "(a YAML reader would keep only the last). Fix: remove or rename one of the two"
    ]


def test_annotations_import_of_a_bad_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = BY_ID["non-UTF-8:annotation-csv:latin-1 byte on line 3"]
    path = tmp_path / case.source.filename
    path.write_bytes(case.make())
    store = tmp_path / "store.sqlite"
    code = main(["annotations", "import", str(path), "--store", str(store)])
    stdout, stderr = capsys.readouterr()
    assert code == 2 and "Traceback" not in stdout + stderr
    [line] = stderr.strip().splitlines()
    assert line.startswith(f"workbench: error: {path}: line 3: byte 0xe9 at byte offset ")
    assert "re-encode the file as UTF-8" in line


def test_grade_in_a_subprocess_prints_no_traceback(tmp_path: Path) -> None:
    """The installed command, not just ``main``: exit code 2, one line, no traceback."""
    gold, preds = _files(tmp_path, BY_ID["mixed schemas:zarifaziz-jsonl:line 5 canonical"])
    out = tmp_path / "out"
    _previous_output(out)
    done = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "grade", str(DEV_SMALL), str(preds), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stdout + done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"workbench: error: {preds}: line 5: field 'turn_idx': the file mixes two schemas")
    _assert_previous_output_intact(out)
