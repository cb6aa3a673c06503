"""The reports folder's index.html: every report with its date, benchmark, inputs and headline
figures, linked relatively, escaped, never an absolute path (the reports themselves, run, in
tests/system/report/test_benchmark_pages.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from workbench.analysis.changes import build_manifest
from workbench.config import project_root, resolve
from workbench.io.paths import shown_path
from workbench.pipeline.run import grade_run
from workbench.report.index import index_folder, report_entries, shown_paths, write_index

REPO = Path(__file__).resolve().parents[3]
#: A report started after every file the tests write (an earlier run is one written before it).
NOW = float("inf")
GOLD = REPO / "tests/fixtures/convfinqa/dev_small.json"
PREDS = REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl"
TORA = REPO / "tests/fixtures/predictions/gsm8k/tora-70b_first_20.jsonl"
HOSTILE = '<script>alert(1)</script>"'


def _report(folder: Path, template: str, name: str, summary: dict, created: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    manifest = build_manifest(template=template, parameters={}, summary=summary, html_file=f"{name}.html").to_dict()
    manifest["created_at"] = created
    (folder / f"{name}.manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (folder / f"{name}.html").write_text("<!DOCTYPE html>", encoding="utf-8")


def test_index_lists_every_report_newest_first_with_relative_links_and_inputs(tmp_path: Path) -> None:
    convfinqa = grade_run(resolve(dataset=GOLD, predictions=[str(PREDS)], systems=HOSTILE))
    gsm8k = grade_run(resolve(dataset="none", predictions=[str(TORA)]))
    summaries = []
    for run, name in ((convfinqa, "c"), (gsm8k, "g")):
        summaries.append(json.loads(run.write(tmp_path / f"{name}.graded")["summary"].read_text(encoding="utf-8")))
    reports = tmp_path / "reports"
    _report(reports / "01-overview", "01-overview", "bundled", summaries[0], "2026-11-20T10:00:00Z")
    _report(reports / "02-error-slices", "02-error-slices", "run-1", summaries[1], "2026-11-21T10:00:00Z")
    (reports / "01-overview" / "orphan.manifest.json").write_text('{"template": "01-overview", "html": "gone.html"}')
    (reports / "01-overview" / "bundled.graded").mkdir()
    (reports / "01-overview" / "bundled.graded" / "summary.json").write_text(json.dumps(summaries[0]))

    entries = report_entries(reports)
    assert [e["href"] for e in entries] == ["02-error-slices/run-1.html", "01-overview/bundled.html"]
    newest, oldest = entries
    assert newest["title"] == "GSM8K error report: error slices, error types and data-quality flags"
    assert newest["benchmark"] == "GSM8K" and newest["date"] == "2026-11-21 10:00:00 UTC"
    assert newest["inputs"] == ["tests/fixtures/predictions/gsm8k/tora-70b_first_20.jsonl"]
    correct = gsm8k.turns["correct"].sum()
    assert newest["headline"] == [f"tora-70b_first_20: {correct / 20:.1%} correct, {correct} of 20"]
    assert oldest["inputs"] == [
        "tests/fixtures/convfinqa/dev_small.json",
        "tests/fixtures/predictions/zarifaziz_dev_small.jsonl",
    ]

    page = write_index(reports).read_text(encoding="utf-8")
    assert page.count("<li><h2>") == 2 and '<a href="02-error-slices/run-1.html">' in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&#34;" in page and "<script" not in page
    assert str(REPO) not in page and str(tmp_path) not in page
    assert not re.search(r'href="(/|[a-z]+:)', page), "links are relative"


def test_index_folder_and_paths_as_pages_show_them(tmp_path: Path) -> None:
    assert index_folder(tmp_path / "01-overview", "01-overview") == tmp_path
    assert index_folder(tmp_path / "nightly", "01-overview") == tmp_path / "nightly"
    assert shown_path(tmp_path / "r" / "bundled.graded", tmp_path / "r") == "bundled.graded"
    assert shown_path(PREDS, tmp_path, project_root()) == "tests/fixtures/predictions/zarifaziz_dev_small.jsonl"
    manifest = {"parameters": {"predictions": f"{PREDS};{tmp_path / 'x' / 'p.jsonl'}", "n_boot": 5}}
    assert shown_paths(manifest, tmp_path) == {
        "parameters": {"predictions": "tests/fixtures/predictions/zarifaziz_dev_small.jsonl;x/p.jsonl", "n_boot": 5}
    }


def test_the_previous_run_is_the_same_report_never_another_systems_report_in_the_folder(tmp_path: Path) -> None:
    """Two MATH runs with their own gold (bundled.yaml puts both in reports/01-overview): the
    interpreter's report is not 'changes since' the CoT one; a nightly run of either is."""
    from workbench.report.runner import _previous_run

    def summary(system: str, sha: str) -> dict:
        return {"dataset": {"sha256": sha, "benchmark": "math"}, "systems": {system: {"n_turns": 500}}}

    cot = summary("rho-math-7b", "a")
    _report(tmp_path, "01-overview", "run-cot", cot, "2026-11-20T10:00:00Z")
    assert _previous_run(tmp_path, "01-overview", "run-tora", summary("rho-math-7b-interpreter", "b"), NOW) is None
    assert _previous_run(tmp_path, "02-error-slices", "run-cot", cot, NOW) is None
    tonight = summary("rho-math-7b", "c")  # the same system's outputs of another night
    found = _previous_run(tmp_path, "01-overview", "run-other", tonight, NOW)
    assert found is not None and found[0]["created_at"] == "2026-11-20T10:00:00Z"
    same_gold = summary("gpt", "a")  # a shared gold set: the previous run of the report on it
    assert _previous_run(tmp_path, "01-overview", "run-gpt", same_gold, NOW) is not None
