"""`workbench report` adds a row per system to the ledger of its reports folder (issue 34, point 1),
which `workbench check` then reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.cli import main
from workbench.pipeline.graded import file_sha256
from workbench.pipeline.ledger import ledger_path, read_ledger

REPO = Path(__file__).resolve().parents[3]
GOLD = REPO / "tests/fixtures/convfinqa/dev_small.json"
PREDICTIONS = [
    REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl",
    REPO / "tests/fixtures/predictions/zarifaziz_dev_small_12-48-44Z.jsonl",
]


def test_a_report_adds_a_row_per_system(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "nightly"
    argv = ["report", "--dataset", str(GOLD), "--out", str(out), "--quiet"]
    for path in PREDICTIONS:
        argv += ["--predictions", str(path)]
    assert main(argv) == 0
    html = [line.split(": ", 1)[1] for line in capsys.readouterr().out.splitlines() if line.startswith("html: ")]
    rows = read_ledger(ledger_path(out), with_verdicts=True)
    assert [r.system for r in rows] == ["zarifaziz_dev_small", "zarifaziz_dev_small_12-48-44Z"]
    for row, path in zip(rows, PREDICTIONS, strict=True):
        assert row.source == "report" and row.template == "01-overview" and row.benchmark == "convfinqa"
        assert row.report == Path(html[0]).name
        assert row.gold_sha256 == file_sha256(GOLD) and row.predictions_sha256 == file_sha256(path)
        assert row.parameters["predictions"] == [str(p) for p in PREDICTIONS]
        assert {g["slice"] for g in row.slices} >= {"overall", "operation", "turn_index", "answer_format"}
        assert row.verdicts.filter(row.verdicts["slice"] == "overall").height == 42
    assert main(["check", str(out)]) == 0  # one run: nothing to compare with, said on stderr
    assert "no previous run in the ledger" in capsys.readouterr().err
