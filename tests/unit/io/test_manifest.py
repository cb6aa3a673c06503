"""The one manifest type: its layouts, its schema version, and files written before it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from workbench.cleaning.export import export_cleaned
from workbench.config import resolve
from workbench.errors import InputError
from workbench.io.manifest import LAYOUTS, SCHEMA_VERSION, SCHEMA_VERSIONS, UNVERSIONED, Manifest, read_manifest
from workbench.pipeline.run import grade_run
from workbench.schema import ANNOTATION_EVENTS

REPO = Path(__file__).resolve().parents[3]
GOLD = REPO / "tests/fixtures/convfinqa/dev_small.json"
PREDS = REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl"

#: One file of each kind as the workbench wrote it before schema_version (values shortened).
UNVERSIONED_FILES: dict[str, dict[str, Any]] = {
    "graded": {
        "workbench_version": "0.1.0",
        "dataset": {"path": "dev.json", "sha256": "ab", "layout": "convfinqa-reformatted"},
        "predictions": [{"path": "p.jsonl", "sha256": "cd", "system": "s"}],
        "policy": {"name": "cascade"},
        "policies": [{"name": "cascade"}],
        "checks": {"ok": 3},
        "systems": {"s": {"policy": "cascade", "n_turns": 3}},
    },
    "report": {
        "workbench_version": "0.1.0",
        "template": "01-overview",
        "created_at": "2026-11-20T10:00:00Z",
        "parameters": {"dataset": "dev.json"},
        "inputs": {"dataset": {"path": "dev.json", "sha256": "ab"}, "predictions": []},
        "versions": {"python": "3.11.7"},
        "metrics": {"s": {"n_turns": 3}},
        "html": "bundled.html",
    },
    "export": {
        "workbench_version": "0.1.0",
        "created_at": "2026-11-20T10:00:00Z",
        "input": {"path": "dev.json", "sha256": "ab"},
        "annotations": {"snapshot": None, "n_active": 0},
        "parameters": {"keep_excluded": False},
        "output": {"n_records": 1, "n_turns": 3},
        "split": None,
        "files": {"dataset": {"path": "dev.json", "sha256": "ef"}},
    },
}


@pytest.mark.parametrize("kind", list(LAYOUTS))
def test_an_unversioned_file_reads_and_keeps_its_layout(kind: str) -> None:
    old = UNVERSIONED_FILES[kind]
    manifest = Manifest.from_dict(kind, old)  # type: ignore[arg-type]
    assert manifest.schema_version == UNVERSIONED
    written = manifest.to_dict()
    assert list(written) == ["schema_version", *old] and written["schema_version"] == UNVERSIONED
    assert {k: v for k, v in written.items() if k != "schema_version"} == old
    again = Manifest.from_dict(kind, json.loads(manifest.to_json()))  # type: ignore[arg-type]
    assert again == manifest


@pytest.mark.parametrize("kind", list(LAYOUTS))
def test_a_new_manifest_says_its_version_first(kind: str) -> None:
    fields = Manifest.from_dict(kind, UNVERSIONED_FILES[kind]).__dict__  # type: ignore[arg-type]
    manifest = Manifest(**{**fields, "schema_version": SCHEMA_VERSION})
    text = manifest.to_json()
    assert text.startswith('{\n  "schema_version": 1,\n  "workbench_version": ') and text.endswith("}\n")
    assert list(json.loads(text)) == ["schema_version", *(key for key, _, _ in LAYOUTS[kind])]  # type: ignore[index]


def test_each_kind_writes_json_as_it_did() -> None:
    graded = Manifest(kind="graded", inputs={"dataset": {"path": "données.json"}})
    export = Manifest(kind="export", inputs={"dataset": {"path": "données.json"}})
    assert "donn\\u00e9es.json" in graded.to_json() and "données.json" in export.to_json()
    report = Manifest(kind="report", name="t", parameters={"path": Path("a.json")})
    assert json.loads(report.to_json())["parameters"] == {"path": "a.json"}  # what JSON cannot hold, as text


def test_fields_a_kind_does_not_have_are_refused() -> None:
    with pytest.raises(ValueError, match="a graded manifest has no created_at"):
        Manifest(kind="graded", created_at="2026-11-23T12:00:00Z")
    with pytest.raises(ValueError, match="export manifest's inputs are dataset, annotations"):
        Manifest(kind="export", inputs={"predictions": []})
    with pytest.raises(ValueError, match="no manifest kind"):
        Manifest(kind="notebook")  # type: ignore[arg-type]


def test_a_newer_or_foreign_file_is_one_clear_error(tmp_path: Path) -> None:
    newer = {**UNVERSIONED_FILES["report"], "schema_version": SCHEMA_VERSION + 1}
    with pytest.raises(InputError, match="schema_version 2; this workbench reads versions up to 1"):
        Manifest.from_dict("report", newer)
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(UNVERSIONED_FILES["report"]), encoding="utf-8")
    with pytest.raises(InputError, match=r"summary.json: keys .*template.* are not those of a graded manifest"):
        read_manifest(path, "graded")
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(InputError, match="not a JSON object"):
        read_manifest(path, "graded")


def test_summary_json_is_a_graded_manifest(tmp_path: Path) -> None:
    run = grade_run(resolve(dataset=GOLD, predictions=[str(PREDS)], systems="claude"))
    paths = run.write(tmp_path / "graded")
    text = paths["summary"].read_text(encoding="utf-8")
    data = json.loads(text)
    assert list(data) == [
        "schema_version",
        "workbench_version",
        "dataset",
        "predictions",
        "policy",
        "policies",
        "checks",
        "systems",
    ]
    manifest = read_manifest(paths["summary"], "graded")
    # version 2: the policy grades kept once per distinct input (issue 35)
    assert manifest.schema_version == SCHEMA_VERSIONS["graded"] == 2 and manifest.created_at is None
    assert manifest.inputs["predictions"][0]["system"] == "claude"
    assert manifest.to_json() == text
    # the same folder written before schema_version was recorded still reads
    del data["schema_version"]
    paths["summary"].write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    assert read_manifest(paths["summary"], "graded").metrics == manifest.metrics


def test_an_exports_manifest_is_an_export_manifest(tmp_path: Path) -> None:
    no_notes = pl.DataFrame(schema=ANNOTATION_EVENTS).drop("kind", "retracts")
    result = export_cleaned(GOLD, no_notes, tmp_path / "export", parameters={"note": "données"})
    text = result.files["manifest"].read_text(encoding="utf-8")
    assert list(json.loads(text)) == ["schema_version", *UNVERSIONED_FILES["export"]]
    assert '"note": "données"' in text  # non-ASCII kept as it is
    manifest = read_manifest(result.files["manifest"], "export")
    assert manifest.schema_version == SCHEMA_VERSION and manifest.to_dict() == result.manifest
    assert manifest.inputs["dataset"]["path"] == str(GOLD) and manifest.outputs["dataset"]["n_turns"] == 42
