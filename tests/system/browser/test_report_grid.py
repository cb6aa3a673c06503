"""The report's tables as a data grid and the failed-turn panel, in Debian's Chromium (Playwright),
offline, at 1280x800, on the bundled overview (the ConvFinQA dev run: 252 failed turns).

Asserted: at least 10 whole rows of the failed-turns table on screen (measured: row boxes inside the
viewport and the table's box); the grid pages (10/25/50/100/all) and searches with one consistent
count; a click on a row opens the panel of that turn; with the run (documents), the panel shows the
turn's document text with the programs' numbers marked, the conversation so far and the traces; no
request but the page itself. Skips only when Chromium or Playwright is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import polars as pl
import pytest

import workbench
from workbench.pipeline.run import Run, open_run
from workbench.report.runner import ReportResult, render_html, run_template
from workbench.views import tables

TIMEOUT_MS = 120_000  # a safety net against a hang, not a budget
#: A failed turn of the bundled run whose gold and predicted programs use numbers of its document.
RECORD = "Double_ADI/2011/page_81.pdf"
HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'

pytest.importorskip("playwright.sync_api", reason="the browser test needs Playwright")


@pytest.fixture(scope="module")
def overview(tmp_path_factory: pytest.TempPathFactory) -> tuple[ReportResult, Run]:
    out = tmp_path_factory.mktemp("grid")
    result = run_template("01-overview", parameters={"graded_dir": str(out / "graded")}, out_dir=out / "report")
    return result, open_run(out / "graded")


class Offline:
    """A page opened at 1280x800 with the network off, recording every request and error."""

    def __init__(self, browser: Any, html_file: Path) -> None:
        self.context = browser.new_context(offline=True, viewport={"width": 1280, "height": 800})
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.context.route(
            "**/*", lambda route: route.continue_() if route.request.url.startswith("file://") else route.abort()
        )
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.set_default_timeout(TIMEOUT_MS)
        self.url = html_file.as_uri()
        self.page.goto(self.url, wait_until="load")

    def close(self) -> None:
        assert self.requests == [self.url], f"requests other than the page: {self.requests}"
        assert self.errors == [], self.errors
        self.context.close()


@pytest.fixture
def report_page(browser: Any, overview: tuple[ReportResult, Run]) -> Iterator[Any]:
    visit = Offline(browser, overview[0].html)
    yield visit.page
    visit.close()


def _whole_rows(page: Any) -> list[float]:
    """Heights of the failed-turns rows wholly on screen: inside the viewport, below the sticky
    header and inside the table's scrolling box."""
    return list(
        page.evaluate(
            """() => {
            const table = document.querySelector('table.wb-failed');
            const box = table.closest('.wb-scroll').getBoundingClientRect();
            const head = table.tHead.getBoundingClientRect();
            return Array.from(table.tBodies[0].rows).filter(row => {
                const r = row.getBoundingClientRect();
                return !row.hidden && r.height > 0 && r.top >= Math.max(0, head.bottom) - 0.5
                    && r.bottom <= Math.min(window.innerHeight, box.bottom) + 0.5;
            }).map(row => row.getBoundingClientRect().height);
        }"""
        )
    )


def test_at_least_ten_whole_failed_turn_rows_fit_the_screen(
    report_page: Any, overview: tuple[ReportResult, Run]
) -> None:
    page = report_page
    failed = overview[1].turns.filter(~pl.col("correct")).height
    table = page.locator("table.wb-failed")
    assert table.locator("tbody tr").count() == failed == 252  # every failed turn is in the page
    page.locator(".wb-grid-title", has_text="Failed turns").scroll_into_view_if_needed()
    table.evaluate("t => t.closest('.wb-scroll').scrollIntoView({block: 'start'})")
    heights = _whole_rows(page)
    print(f"whole failed-turn rows on screen at 1280x800: {len(heights)}, row heights {sorted(set(heights))} px")
    assert len(heights) >= 10
    # the ids stay in view when the table scrolls sideways
    box = table.locator("xpath=..")
    box.evaluate("b => { b.scrollLeft = b.scrollWidth; }")
    first = table.locator("tbody tr").first
    assert first.locator("td").nth(1).bounding_box()["x"] < box.bounding_box()["x"] + 300
    assert first.locator("td").nth(1).is_visible()


def test_the_grid_pages_and_searches_with_one_count(report_page: Any, overview: tuple[ReportResult, Run]) -> None:
    page = report_page
    turns = overview[1].turns.filter(~pl.col("correct"))
    table = page.locator("table.wb-failed")
    grid = page.locator(".wb-tools").filter(has=page.get_by_role("searchbox", name="Search Failed turns (252)"))
    count = grid.locator(".wb-count")
    visible = table.locator("tbody tr:visible")
    assert visible.count() == 25 and count.inner_text() == "Showing 1\u201325 of 252 rows"
    assert page.locator(".wb-note", has_text="Showing").count() == 0  # the one count is the grid's
    grid.get_by_role("combobox").select_option("10")
    assert visible.count() == 10 and count.inner_text() == "Showing 1\u201310 of 252 rows"
    first_page = visible.locator("td:nth-child(2)").all_inner_texts()
    grid.get_by_role("button", name="Next").click()
    assert count.inner_text() == "Showing 11\u201320 of 252 rows"
    assert visible.locator("td:nth-child(2)").all_inner_texts() != first_page
    grid.get_by_role("combobox").select_option("0")
    assert visible.count() == 252 and count.inner_text() == "Showing 1\u2013252 of 252 rows"
    grid.get_by_role("searchbox").fill(RECORD.lower())
    expected = turns.filter(pl.col("record_id") == RECORD).height
    assert expected >= 2 and visible.count() == expected
    assert count.inner_text() == f"Showing 1\u2013{expected} of {expected} rows (filtered from 252)"


def test_clicking_a_failed_turn_opens_its_panel(report_page: Any) -> None:
    page = report_page
    table = page.locator("table.wb-failed")
    row = table.locator("tbody tr:visible").nth(3)
    record, turn = row.locator("td").nth(1).inner_text(), row.locator("td").nth(2).inner_text()
    question = row.locator("td").nth(3).inner_text().rstrip("…").lstrip("▸ ").strip()
    row.locator("td").first.click()
    dialog = page.locator("dialog.wb-detail[open]")
    assert dialog.count() == 1
    assert dialog.locator(".wb-detail-title").inner_text() == f"{record}, turn {turn}"
    assert question[:30] in dialog.locator(".wb-question").inner_text()
    assert "row 4 of 252" in dialog.locator(".wb-detail-where").inner_text()
    dialog.get_by_role("button", name="Next failed turn").click()
    assert "row 5 of 252" in dialog.locator(".wb-detail-where").inner_text()
    page.keyboard.press("Escape")
    assert page.locator("dialog.wb-detail[open]").count() == 0


def test_the_panel_of_a_run_shows_the_document_with_the_programs_numbers_marked(
    browser: Any, overview: tuple[ReportResult, Run], tmp_path: Path
) -> None:
    run = overview[1]
    cell = nbformat.v4.new_code_cell("tables.failed_turns(run)")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": tables.failed_turns(run).markup})]
    page_file = tmp_path / "failed.html"
    page_file.write_text(render_html(nbformat.v4.new_notebook(cells=[cell]), title="failed"), encoding="utf-8")
    size = page_file.stat().st_size
    print(f"page of the failed-turns table with its detail data: {size:,} bytes")
    visit = Offline(browser, page_file)
    try:
        page = visit.page
        page.get_by_role("searchbox").fill(RECORD.lower())
        row = page.locator("table.wb-failed tbody tr:visible").first
        row.locator("td").first.click()
        dialog = page.locator("dialog.wb-detail[open]")
        document = run.gold.documents.filter(pl.col("doc_id") == RECORD).row(0, named=True)
        shown = dialog.locator(".wb-doc").inner_text()
        assert document["pre_text"][:60] in shown and document["post_text"][-40:].strip() in shown
        assert dialog.locator(".wb-doc mark").count() >= 1  # the numbers a program uses
        assert dialog.locator(".wb-doc-table td").count() > 0
        traces = dialog.locator(".wb-trace")
        assert traces.count() == 2 and dialog.locator(".wb-steps li").count() >= 1
        assert dialog.get_by_text("Verdict of each grading policy").count() == 1
    finally:
        visit.close()


def test_the_panel_of_a_hostile_turn_shows_its_markup_as_text(browser: Any, tmp_path: Path) -> None:
    hostile_dir = Path(__file__).resolve().parents[2] / "fixtures" / "hostile"
    run = workbench.grade_run(
        workbench.config.resolve(
            dataset=hostile_dir / "dev_small_hostile.json",
            predictions=[hostile_dir / "zarifaziz_dev_small_hostile.jsonl"],
        )
    )
    cell = nbformat.v4.new_code_cell("tables.failed_turns(run)")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": tables.failed_turns(run).markup})]
    page_file = tmp_path / "hostile.html"
    page_file.write_text(render_html(nbformat.v4.new_notebook(cells=[cell]), title="hostile"), encoding="utf-8")
    visit = Offline(browser, page_file)
    try:
        page = visit.page
        rows = page.locator("table.wb-failed tbody tr")
        for i in range(rows.count()):
            rows.nth(i).locator("td").first.click()
            dialog = page.locator("dialog.wb-detail[open]")
            assert dialog.count() == 1
            page.keyboard.press("Escape")
        rows.first.locator("td").first.click()
        assert page.locator("dialog.wb-detail").get_by_text(HOSTILE, exact=False).count() > 0
        assert page.locator("dialog.wb-detail img, dialog.wb-detail script").count() == 0
        assert page.evaluate("typeof window.__pwned") == "undefined"
    finally:
        visit.close()


def test_a_drilldown_row_opens_its_panel_from_the_data_the_page_holds_once(
    browser: Any, overview: tuple[ReportResult, Run], tmp_path: Path
) -> None:
    """The error-slices page's three drill-downs of one run: the detail data is in the page once
    (the first drill-down's block), and a row of the last drill-down (inside its collapsible
    section) opens its turn's panel with the document, read from that block."""
    run = overview[1]
    cells = []
    for name in ("error_type", "operation", "dq_category"):
        cell = nbformat.v4.new_code_cell(f"tables.drilldown(run, {name!r})")
        markup = tables.drilldown(run, name).markup
        cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": markup})]
        cells.append(cell)
    page_file = tmp_path / "drill.html"
    page_file.write_text(render_html(nbformat.v4.new_notebook(cells=cells), title="drill"), encoding="utf-8")
    text = page_file.read_text(encoding="utf-8")
    assert text.count('<script type="application/json" class="wb-turn-data">{') == 1, "one data block"
    visit = Offline(browser, page_file)
    try:
        page = visit.page
        section = page.locator("details.wb-drill").last
        section.locator("> summary").click()
        row = section.locator("tbody tr:visible").first
        record = row.locator("td").nth(1).inner_text()
        row.locator("td").nth(1).click()
        dialog = page.locator("dialog.wb-detail[open]")
        assert dialog.count() == 1 and dialog.locator(".wb-detail-title").inner_text().startswith(record)
        document = run.gold.documents.filter(pl.col("doc_id") == record).row(0, named=True)
        assert document["pre_text"][:60] in dialog.locator(".wb-doc").inner_text()
        page.keyboard.press("Escape")
        row.locator("td.wb-long summary").first.click()  # a long cell still opens in place
        assert page.locator("dialog.wb-detail[open]").count() == 0
    finally:
        visit.close()
