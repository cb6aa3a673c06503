"""Report file names are readable and the same in every checkout: the systems (or the prediction
files' systems, or the dataset) as a slug, and a short hash of the parameters with every path inside
the project taken relative to it (they were ``run-<hash>`` of absolute paths, so every checkout
named the same batch differently)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from workbench.config import project_root
from workbench.report.batch import load_batch
from workbench.report.runner import _from_caller, report_name

BATCH = project_root() / "notebooks" / "bundled.yaml"


def _checkout(root: Path) -> None:
    """A second checkout's files the batch names (empty: only their paths matter to the names)."""
    for job in load_batch(BATCH):
        for value in [job.parameters.get("dataset", ""), *job.parameters.get("predictions", [])]:
            if value and value != "none":
                (root / value).parent.mkdir(parents=True, exist_ok=True)
                (root / value).touch()


def _names(root: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The report names of the bundled batch run from ``root`` (the caller's folder makes paths absolute)."""
    monkeypatch.chdir(root)
    names = []
    for job in load_batch(BATCH):
        parameters = _from_caller({**job.parameters, "graded_dir": f"reports/{job.template}/graded"})
        assert all(str(root) in str(v) for k, v in parameters.items() if k in ("dataset", "graded_dir") and v != "none")
        names.append(report_name(parameters, root))
    return names


def test_two_checkouts_in_different_folders_name_the_same_batch_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "one" / "workbench", tmp_path / "elsewhere" / "deeper" / "wb"
    for root in (first, second):
        root.mkdir(parents=True)
        _checkout(root)
    names = _names(first, monkeypatch)
    assert names == _names(second, monkeypatch)
    assert len(set(names)) == len(names) == 9  # every report of the batch its own name
    print("\n".join(names))
    for name in names:
        assert re.fullmatch(r"[a-z0-9-]+-[0-9a-f]{8}", name), name
    assert names[0].startswith("bundled-")  # default inputs (a graded folder given): the bundled run
    assert [n.rsplit("-", 1)[0] for n in names[3:5]] == ["tora-70b", "rho-math-7b"]
    assert names[2].startswith("claude-sonnet-4-6-06-35-vs-claude-sonnet-4-6-12-48-")


def test_default_inputs_are_bundled_and_a_path_outside_the_project_stays_whole() -> None:
    assert report_name({}) == "bundled"
    inside = report_name({"predictions": ["/a/project/runs/x.jsonl"]}, Path("/a/project"))
    assert inside == report_name({"predictions": ["/b/copy/runs/x.jsonl"]}, Path("/b/copy")) and inside.startswith("x-")
    outside = report_name({"predictions": ["/data/runs/x.jsonl"]}, Path("/a/project"))
    assert outside != inside and outside == report_name({"predictions": ["/data/runs/x.jsonl"]}, Path("/b/copy"))
    assert report_name({"predictions": "/a/project/p/a.jsonl;/a/project/p/b.jsonl"}, Path("/a/project")).startswith(
        "a-vs-b-"
    )
