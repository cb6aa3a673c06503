"""``workbench report --template 05-history --out X`` tells the template its folder: the page's links to
each run's report start from ``page_folder``, which the runner fills in from ``--out`` when the template
declares it and the caller named none (before, the user had to repeat ``-p page_folder=X``).

Papermill is replaced by a stand-in that records the parameters each template would get (no kernel
starts): what is checked is the runner's side, in this process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from workbench import cli


def test_the_history_page_is_told_its_out_folder(tmp_path: Path, executed: list[dict[str, Any]]) -> None:
    out = tmp_path / "nightly pages"
    assert cli.main(["report", "--quiet", "--template", "05-history", "--out", str(out)]) == 0
    (call,) = executed
    assert call["template"] == "05-history"
    assert Path(call["page_folder"]) == out.absolute()
    # the caller's own parameters are what the manifest keeps (the folder is the run's, not a choice)
    (manifest,) = out.glob("*.manifest.json")
    assert "page_folder" not in json.loads(manifest.read_text(encoding="utf-8"))["parameters"]


def test_a_page_folder_the_caller_names_is_kept(tmp_path: Path, executed: list[dict[str, Any]]) -> None:
    elsewhere = tmp_path / "served" / "history"
    argv = ["report", "--quiet", "--template", "05-history", "--out", str(tmp_path / "out")]
    assert cli.main([*argv, "-p", f"page_folder={elsewhere}"]) == 0
    assert [call["page_folder"] for call in executed] == [str(elsewhere)]


def test_a_template_without_page_folder_is_not_given_one(tmp_path: Path, executed: list[dict[str, Any]]) -> None:
    repo = Path(__file__).resolve().parents[3]
    argv = ["report", "--quiet", "--template", "01-overview", "--out", str(tmp_path / "out")]
    argv += ["--dataset", str(repo / "tests/fixtures/convfinqa/dev_small.json")]
    argv += ["--predictions", str(repo / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl")]
    assert cli.main(argv) == 0
    (call,) = executed
    assert call["template"] == "01-overview" and "page_folder" not in call


def test_relative_folders_are_the_callers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, executed: list[dict[str, Any]]
) -> None:
    """``-p folder=runs -p page_folder=pages`` from the caller's folder: the kernel runs in the project
    root, where a relative folder named another place ("no run ledger here"); they are made absolute
    from the caller's folder when the report is planned, as the input files and ``--out`` are."""
    (tmp_path / "runs").mkdir()
    monkeypatch.chdir(tmp_path)
    argv = ["report", "--quiet", "--template", "05-history", "--out", "out", "-p", "folder=runs"]
    assert cli.main([*argv, "-p", "page_folder=pages"]) == 0
    (call,) = executed
    assert (call["folder"], call["page_folder"]) == (str(tmp_path / "runs"), str(tmp_path / "pages"))
