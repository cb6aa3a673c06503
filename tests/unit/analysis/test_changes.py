"""Run manifests and the changes since the previous run of a report (the reports themselves, run
twice, in tests/system/report/test_report_changes.py)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from workbench.analysis.changes import build_manifest, compare_runs, read_verdicts
from workbench.config import resolve
from workbench.io.manifest import SCHEMA_VERSIONS, Manifest
from workbench.pipeline.run import grade_run

REPO = Path(__file__).resolve().parents[3]
GOLD = REPO / "tests/fixtures/convfinqa/dev_small.json"
PREDS = REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl"
PREDS_LATER = REPO / "tests/fixtures/predictions/zarifaziz_dev_small_12-48-44Z.jsonl"


def test_runs_written_before_schema_version_still_compare(tmp_path: Path) -> None:
    paths = grade_run(resolve(dataset=GOLD, predictions=[str(PREDS)], systems="claude")).write(tmp_path / "graded")
    summary = json.loads(paths["summary"].read_text(encoding="utf-8"))
    assert summary["schema_version"] == SCHEMA_VERSIONS["graded"] == 2
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


def _nightly(tmp_path: Path, source: Path, stamp: str, *, break_first: bool = False) -> Path:
    """A fixture run placed as a nightly job leaves it: ``<model>/<run timestamp>/predictions.jsonl``;
    with ``break_first`` the first answer the run got right is made wrong (a regression)."""
    folder = tmp_path / "zarifaziz-claude-sonnet-4-6" / stamp
    folder.mkdir(parents=True)
    lines = source.read_text(encoding="utf-8").splitlines()
    if break_first:
        i = next(i for i, line in enumerate(lines) if json.loads(line)["correct"])
        row = json.loads(lines[i])
        row["predicted_answer"], row["predicted_calculation"] = "-987654", None
        lines[i] = json.dumps(row)
    target = folder / "predictions.jsonl"
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def test_systems_named_after_their_run_folders_are_matched_from_night_to_night(tmp_path: Path) -> None:
    nights = []
    for stamp, source in (("2026-05-04T06-35-00Z", PREDS), ("2026-05-04T12-48-44Z", PREDS_LATER)):
        night = _nightly(tmp_path, source, stamp, break_first=source == PREDS_LATER)
        run = grade_run(resolve(dataset=GOLD, predictions=[str(night)]))
        paths = run.write(tmp_path / stamp)
        summary = json.loads(paths["summary"].read_text(encoding="utf-8"))
        manifest = build_manifest(template="01-overview", parameters={}, summary=summary, html_file="a.html")
        nights.append((manifest, read_verdicts(paths["turns"]), run.turns))
    (first, first_verdicts, first_turns), (second, second_verdicts, second_turns) = nights
    assert list(first.metrics) == ["zarifaziz-claude-sonnet-4-6@2026-05-04T06-35-00Z"]
    changes = compare_runs(first.to_dict(), first_verdicts, second, second_verdicts)
    (match,) = changes.matches
    assert match.previous.endswith("06-35-00Z") and match.current.endswith("12-48-44Z")
    assert match.how == "same name without the run-folder timestamp" and changes.unmatched is None
    accuracy = changes.metrics.filter(pl.col("metric") == "turn_execution_accuracy").row(0, named=True)
    assert accuracy["previous"] == first_turns["correct"].mean()
    assert accuracy["current"] == second_turns["correct"].mean()
    keys = ["record_id", "turn"]
    joined = first_turns.select(*keys, "correct").join(second_turns.select(*keys, "correct"), on=keys, suffix="_2")
    flipped_down = joined.filter(pl.col("correct") & ~pl.col("correct_2")).height
    flipped_up = joined.filter(~pl.col("correct") & pl.col("correct_2")).height
    assert flipped_down + flipped_up > 0  # the two runs differ: the test compares something
    assert (changes.newly_failing.height, changes.newly_passing.height) == (flipped_down, flipped_up)
    assert set(changes.newly_failing["system"]) <= {match.current}
    assert changes.inputs_changed == (f"predictions of {match.current}",)


def test_systems_that_cannot_be_matched_say_why_and_compare_nothing(tmp_path: Path) -> None:
    run = grade_run(resolve(dataset=GOLD, predictions=[str(PREDS), str(PREDS_LATER)], systems="a;b"))
    paths = run.write(tmp_path / "graded")
    summary = json.loads(paths["summary"].read_text(encoding="utf-8"))
    then = build_manifest(template="01-overview", parameters={}, summary=summary, html_file="a.html")
    renamed = {"systems": {"c": summary["systems"]["a"], "d": summary["systems"]["b"]}}
    now = build_manifest(template="01-overview", parameters={}, summary={**summary, **renamed}, html_file="a.html")
    verdicts = read_verdicts(paths["turns"])
    flipped = verdicts.with_columns(pl.col("system").replace({"a": "c", "b": "d"}), ~pl.col("correct"))
    changes = compare_runs(then, verdicts, now, flipped)
    assert changes.matches == () and changes.metrics.height == 0
    assert changes.newly_failing.height == changes.newly_passing.height == 0
    assert changes.unmatched == (
        "No system of this run (c, d) has the name of one of the previous run (a, b), with or without run-folder "
        "timestamps; name them with --system to compare them from run to run."
    )
