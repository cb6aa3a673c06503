"""The live grid on a large run, and what a notebook shows without a kernel, in a real JupyterLab.

* A GSM8K-shaped run of 105,520 problems (the ten problems of
  ``tests/fixtures/predictions/gsm8k/plain_id_response_pred_gold.jsonl``, ToRA-Code-34B's outputs
  with their gold, copied under new ids in canonical columns; four of the ten are wrong): the exported page holds at most 2,000 failed rows, the
  kernel's grid pages through all of them: its last page ends with the run's last failed row, and
  a search finds a row far past the first 2,000.
* The saved output of the failed-turns grid opened without its kernel (an executed notebook
  reopened later, untrusted): the first page of rows only, text left-aligned, the raw output's
  dollar amounts as text, and one line saying how to browse the rest.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from lab_harness import ACTION_TIMEOUT_MS, RENDER_TIMEOUT_MS, REPO, Lab, shot

FIXTURE = REPO / "tests" / "fixtures" / "predictions" / "gsm8k" / "plain_id_response_pred_gold.jsonl"
#: Problems in the large run: as many as the 105,520-turn run the issue names.
N_PROBLEMS = 105_520


def _large_run(folder: Path) -> Path:
    rows = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]
    path = folder / "large-gsm8k.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for i in range(N_PROBLEMS):
            row = rows[i % len(rows)]
            shaped = {"record_id": str(i), "turn": 0, "question": row["prompt"], "raw_output": row["response"]}
            out.write(json.dumps({**shaped, "gold_answer": row["gold"]}, ensure_ascii=False) + "\n")
    return path


def _code(source: str) -> dict[str, Any]:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}


def _notebook(cells: list[dict[str, Any]]) -> str:
    return json.dumps(
        {
            "cells": cells,
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def test_grid_pages_and_searches_a_large_run(lab: Lab) -> None:
    path = _large_run(lab.root)
    cells = [
        _code("import workbench\nfrom workbench.widgets import grid"),
        _code(f"run = workbench.grade_run(workbench.config.resolve(predictions=[{str(path)!r}]))"),
        _code("failed = grid.failed_turns(run, limit=2000)\nkeys = failed.grid.keys_in_order()"),
        # what the test compares with: the number of failed rows, the last one, one far past 2,000
        _code("print('FAILED', len(keys), 'LAST', keys[-1], 'FAR', keys[len(keys) * 3 // 4])"),
        _code("failed"),
    ]
    (lab.root / "large.ipynb").write_text(_notebook(cells), encoding="utf-8")
    with lab.session("large.ipynb", "lab-large") as page:
        lab.run_all(page)
        printed = page.get_by_text(re.compile(r"^FAILED \d+ LAST ")).first
        printed.wait_for(timeout=RENDER_TIMEOUT_MS)
        match = re.match(r"FAILED (\d+) LAST (\[.*?\]) FAR (\[.*?\])", printed.inner_text())
        assert match, printed.inner_text()
        n_failed, last, far = int(match.group(1)), json.loads(match.group(2)), json.loads(match.group(3))
        assert n_failed > 2_000 * 4, "the run must fail far more rows than a page holds"

        grid = page.locator(".wb-grid").last
        grid.wait_for(timeout=RENDER_TIMEOUT_MS)
        total = f"{n_failed:,}"
        grid.locator(".wb-grid-count", has_text=f"of {total} failed problems").wait_for(timeout=ACTION_TIMEOUT_MS)

        # the last page ends with the run's last failed row
        grid.get_by_role("button", name="Last page »").click()
        grid.locator(".wb-grid-count", has_text=re.compile(rf"–{total} of {total} ")).wait_for(
            timeout=ACTION_TIMEOUT_MS
        )
        assert json.loads(grid.locator("tbody tr").last.get_attribute("data-wb-key")) == last
        grid.scroll_into_view_if_needed()
        shot(page, "lab-large-1-last-page")

        # a search finds a row three quarters of the way through the failed rows
        grid.locator(".wb-grid-search").fill(far[1])
        grid.locator(".wb-grid-count", has_text=re.compile(r"^Showing 1–\d+ of \d+ failed problems \(")).wait_for(
            timeout=ACTION_TIMEOUT_MS
        )
        found = [json.loads(k) for k in grid.locator("tbody tr").evaluate_all("rows => rows.map(r => r.dataset.wbKey)")]
        assert far in found
        shot(page, "lab-large-2-searched")


def test_saved_output_without_a_kernel_shows_the_first_page(lab: Lab) -> None:
    workbench = pytest.importorskip("workbench")
    from workbench.widgets import grid

    run = workbench.open_or_grade(workbench.config.resolve(), "")
    failed = grid.failed_turns(run, limit=2000)
    bundle = failed._repr_mimebundle_()
    n_failed = failed.grid.all_rows
    assert n_failed > grid.FIRST_PAGE
    output = {"output_type": "display_data", "metadata": {}, "data": {k: v for k, v in bundle.items()}}
    cell = {**_code("failed"), "execution_count": 1, "outputs": [output]}
    (lab.root / "saved.ipynb").write_text(_notebook([cell]), encoding="utf-8")
    with lab.session("saved.ipynb", "lab-saved") as page:
        table = page.locator(".jp-OutputArea-output table.wb-failed").first
        table.wait_for(timeout=RENDER_TIMEOUT_MS)
        assert table.locator("tbody tr").count() == grid.FIRST_PAGE
        note = page.locator(".jp-OutputArea-output", has_text=f"of {n_failed:,} failed turns").first
        assert "live kernel" in note.inner_text()
        # text left-aligned; numbers (the turn) right-aligned
        question = table.locator("tbody tr").first.locator("td").nth(3)
        assert question.evaluate("td => getComputedStyle(td).textAlign") in ("left", "start")
        # the raw output of the first failed row keeps its dollar amounts and spaces
        page.get_by_text("$821,000, $824,000 and $1,262,000").first.wait_for(
            state="attached", timeout=ACTION_TIMEOUT_MS
        )
        assert page.locator(".jp-OutputArea-output mjx-container").count() == 0
        table.scroll_into_view_if_needed()
        shot(page, "lab-saved-1-first-page")
