"""The changes since the previous run on a phone (390x844, Debian's Chromium, offline): the table of
the metrics that moved fits the screen, its headings whole ("Change" was cut to "Char"), and the
long names of nightly systems wrap instead of widening it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import polars as pl
import pytest

from workbench.analysis.changes import Changes, SystemMatch
from workbench.report.runner import render_html
from workbench.views.changes import changes_html

pytest.importorskip(
    "playwright.sync_api", reason="the browser test needs Playwright; install it: pip install -e '.[dev]'"
)

_FLIPPED = {"system": pl.String, "record_id": pl.String, "turn": pl.Int32}
NIGHTLY = ["zarifaziz-claude-sonnet-4-6@2026-05-04T12-48-44Z", "zarifaziz-claude-sonnet-4-6@2026-05-05T02-00-00Z"]


def test_the_changes_table_fits_a_phone(browser: Any, tmp_path: Path) -> None:
    metrics = pl.DataFrame(
        {
            "system": [NIGHTLY[0]] * 3 + [NIGHTLY[1]] * 3,
            "metric": ["turn_execution_accuracy", "conversation_execution_accuracy", "n_turns_correct"] * 2,
            "previous": [0.831, 0.817, 1238.0, 0.82, 0.80, 1222.0],
            "current": [0.819, 0.8, 1221.0, 0.83, 0.81, 1237.0],
            "delta": [-0.012, -0.017, -17.0, 0.01, 0.01, 15.0],
        }
    )
    flipped = pl.DataFrame({"system": [NIGHTLY[0]], "record_id": ["Double_ABMD/2009/page_88.pdf"], "turn": [0]})
    changes = Changes(
        "2026-05-04T12:48:44Z",
        metrics,
        flipped.cast(_FLIPPED),  # type: ignore[arg-type]
        flipped.clear().cast(_FLIPPED),  # type: ignore[arg-type]
        ("predictions",),
        tuple(SystemMatch(name, name.replace("05T02-00-00", "04T12-48-44"), "same name") for name in NIGHTLY),
    )
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A nightly report")])
    page_file = tmp_path / "changes.html"
    page_file.write_text(render_html(notebook, title="nightly", opening=changes_html(changes)), encoding="utf-8")
    context = browser.new_context(offline=True, viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        page.goto(page_file.as_uri(), wait_until="load")
        table = page.locator("table.wb-changes-table")
        assert table.locator("tbody tr").count() == 6
        assert [t.strip() for t in table.locator("thead th").all_inner_texts()] == [
            "System",
            "Metric",
            "Before",
            "Now",
            "Change",
        ]
        fits = table.evaluate(
            """t => {
              const box = t.parentElement;
              const cut = Array.from(t.querySelectorAll('th, td')).filter(c => c.scrollWidth > c.clientWidth + 1
                  || c.getBoundingClientRect().right > box.getBoundingClientRect().right + 1);
              return {box: box.scrollWidth <= box.clientWidth + 1, cut: cut.map(c => c.textContent),
                      page: document.documentElement.scrollWidth};
            }"""
        )
        assert fits == {"box": True, "cut": [], "page": 390}, fits
        assert "-1.2 points" in table.inner_text() and "+1.0 points" in table.inner_text()
    finally:
        context.close()
