"""Run manifests and the changes since the previous run of a report (the reports themselves, run
twice, in tests/system/report/test_report_changes.py)."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.analysis.changes import build_manifest, compare_runs, read_verdicts
from workbench.config import resolve
from workbench.io.manifest import SCHEMA_VERSION, Manifest
from workbench.pipeline.run import grade_run

REPO = Path(__file__).resolve().parents[3]
GOLD = REPO / "tests/fixtures/convfinqa/dev_small.json"
PREDS = REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl"


def test_runs_written_before_schema_version_still_compare(tmp_path: Path) -> None:
    paths = grade_run(resolve(dataset=GOLD, predictions=[str(PREDS)], systems="claude")).write(tmp_path / "graded")
    summary = json.loads(paths["summary"].read_text(encoding="utf-8"))
    assert summary["schema_version"] == SCHEMA_VERSION
    unversioned = {key: value for key, value in summary.items() if key != "schema_version"}
    current = build_manifest(template="01-overview", parameters={}, summary=summary, html_file="a.html")
    older = build_manifest(template="01-overview", parameters={}, summary=unversioned, html_file="a.html")
    assert (older.inputs, older.metrics) == (current.inputs, current.metrics)
    # a report manifest as written before schema_version: the same keys without it
    previous = {key: value for key, value in older.to_dict().items() if key != "schema_version"}
    previous["created_at"] = "2026-11-20T10:00:00Z"
    assert Manifest.from_dict("report", previous).schema_version == 0
    verdicts = read_verdicts(paths["turns"])
    for current_form in (current, current.to_dict()):
        changes = compare_runs(previous, verdicts, current_form, verdicts)
        assert changes.previous == "2026-11-20T10:00:00Z" and changes.inputs_changed == ()
        assert changes.metrics.height == 7 and set(changes.metrics["delta"].to_list()) == {0.0}
        assert changes.newly_failing.height == changes.newly_passing.height == 0
