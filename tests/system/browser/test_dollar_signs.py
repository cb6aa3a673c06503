"""A ``$`` in the data is a dollar sign on the report page: a raw output with two amounts ("$821,000
... $824,000 ... 2005 and 2006, respectively") reads the same in the failed-turns grid (its whole
text, one click away) and in the turn's panel, signs and spaces intact, in Debian's Chromium,
offline. (JupyterLab, which runs MathJax over HTML outputs: test_notebook_tables_lab.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import polars as pl
import pytest

from workbench.report.runner import render_html
from workbench.views import tables

pytest.importorskip(
    "playwright.sync_api", reason="the browser test needs Playwright; install it: pip install -e '.[dev]'"
)

#: A financial output with two amounts: between two ``$`` a TeX typesetter sees "821,000 in 2005 and ".
RAW = (
    "The liability was $821,000 at the end of 2005 and $824,000 at the end of 2006, so the change "
    "between 2005 and 2006, respectively, is 3,000."
)
QUESTION = "what was the change from $5 to $6?"


def _failed_turn() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "system": ["claude"],
            "record_id": ["Single_X/2006/page_1.pdf"],
            "turn": [1],
            "question": [QUESTION],
            "gold_answer": ["3000"],
            "predicted_answer": ["$3,000"],
            "answer": ["3000"],
            "reason": ["wrong_value"],
            "correct": [False],
            "raw_output": [RAW],
        }
    )


def test_dollar_amounts_in_an_output_stay_text_on_the_page(browser: Any, tmp_path: Path) -> None:
    cell = nbformat.v4.new_code_cell("tables.failed_turns(turns)")
    block = tables.failed_turns(_failed_turn())
    cell.outputs = [nbformat.v4.new_output("display_data", data=block._repr_mimebundle_())]
    page_file = tmp_path / "dollars.html"
    page_file.write_text(render_html(nbformat.v4.new_notebook(cells=[cell]), title="dollars"), encoding="utf-8")
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto(page_file.as_uri(), wait_until="load")
        row = page.locator("table.wb-failed tbody tr").first
        assert row.locator("td").nth(3).inner_text() == QUESTION
        long = row.locator("td.wb-long details")
        long.locator("summary").click()
        assert long.locator(".wb-full").inner_text() == RAW  # the whole output: every $ and space
        row.locator("td").first.click()
        panel = page.locator("dialog.wb-detail[open]")
        assert panel.locator("pre.wb-raw").inner_text() == RAW
        assert panel.locator(".wb-question").inner_text() == QUESTION
        assert page.locator("mjx-container, .MathJax, math").count() == 0
    finally:
        context.close()
