"""05-history written with ``--out`` into a folder other than its ledger's: each run's link starts from
the page's own folder without ``-p page_folder=...`` (the runner passes the ``--out`` folder), so every
link opens that night's report. A folder named explicitly still wins. A relative ``-p folder=...`` is the
caller's (the command run from another folder than the project)."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.system.history.conftest import REPO, nightly
from workbench.cli import main
from workbench.config import PROJECT_VARIABLE
from workbench.pipeline.ledger import LedgerRow, append


@pytest.fixture(scope="module")
def runs(bundled_rows: list[LedgerRow], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A reports folder whose ledger holds 3 nights, each night's rows naming its report in that folder."""
    folder = tmp_path_factory.mktemp("site") / "runs"
    folder.mkdir()
    for index, tonight in enumerate(nightly(bundled_rows, 3, drop_night=0), start=1):
        report = f"night-{index:02d}.html"
        (folder / report).write_text(f"<!DOCTYPE html><title>night {index}</title><h1>night {index}</h1>")
        append(
            folder / "ledger.sqlite", [dataclasses.replace(r, template="01-overview", report=report) for r in tonight]
        )
    return folder


def _links(out: Path) -> list[str]:
    (page,) = [p for p in out.glob("*.html") if p.name != "index.html"]
    text = page.read_text(encoding="utf-8")
    table = text[text.index('<table class="wb-table wb-history"') :]
    return sorted(set(re.findall(r'<a href="([^"]+)"[^>]*>\d+</a>', table[: table.index("</table>")])))


def test_the_links_start_from_the_out_folder(runs: Path) -> None:
    out = runs.parent / "pages" / "history"
    argv = ["report", "--quiet", "--template", "05-history", "--out", str(out), "-p", f"folder={runs}"]
    assert main([*argv, "-p", "n_boot=50"]) == 0
    links = _links(out)
    assert links == [f"../../runs/night-{i:02d}.html" for i in (1, 2, 3)]
    assert all((out / link).resolve().is_file() for link in links), links


def test_a_page_folder_given_still_decides(runs: Path) -> None:
    out = runs.parent / "staged"
    served = runs.parent / "served"
    argv = ["report", "--quiet", "--template", "05-history", "--out", str(out), "-p", f"folder={runs}"]
    assert main([*argv, "-p", "n_boot=50", "-p", f"page_folder={served}"]) == 0
    assert _links(out) == [f"../runs/night-{i:02d}.html" for i in (1, 2, 3)]


def test_relative_folders_from_the_callers_folder(runs: Path) -> None:
    """``-p folder=runs`` run from the folder that holds ``runs``: the ledger is found (before, the folder
    was read from the kernel's folder, the project root: "no run ledger here"), and the page lists its runs."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    env.pop(PROJECT_VARIABLE, None)  # the project is the checkout: its folder is not the caller's
    argv = [sys.executable, "-m", "workbench.cli", "report", "--quiet", "--template", "05-history"]
    argv += ["--out", "pages/relative", "-p", "folder=runs", "-p", "n_boot=50"]
    done = subprocess.run(argv, cwd=runs.parent, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _links(runs.parent / "pages" / "relative") == [f"../../runs/night-{i:02d}.html" for i in (1, 2, 3)]
