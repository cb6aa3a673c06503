"""The offline HTML reports in a real browser: Debian's Chromium, driven by Playwright, with the
network off, opens the 01 and 02 reports of the hostile fixture (``tests/fixtures/hostile/``:
model outputs and a question that are ``<script>`` and ``onerror`` markup).

Asserted: no request but the page itself, no console error or page error (a blocked script
would log one), every plotly figure drawn, no hostile script ran, the hostile text shows as
text, and the tables' search box and sortable headers work. A page of one small table checks
numeric against text order. Runs in about 20 s (two papermill runs); skips only when
Chromium or Playwright is missing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import polars as pl
import pytest

from workbench.report.runner import ReportResult, render_html, run_template
from workbench.views import tables

REPO = Path(__file__).resolve().parents[3]
HOSTILE_DIR = REPO / "tests" / "fixtures" / "hostile"
HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
PARAMS = {
    "dataset": str(HOSTILE_DIR / "dev_small_hostile.json"),
    "predictions": str(HOSTILE_DIR / "zarifaziz_dev_small_hostile.jsonl"),
    "systems": "claude-hostile",
}
#: A conversation with three failed turns among the five (turn 0's question is the hostile one).
RSG = "Double_RSG/2016/page_144.pdf"
TIMEOUT_MS = 120_000  # a safety net against a hang, not a budget: CI machines are busy

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the browser test needs Playwright; install it: pip install -e '.[dev]'"
)


@dataclass
class Visit:
    """A page opened offline, with everything that went wrong or was attempted while it ran."""

    page: Any
    requests: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    def assert_clean(self, url: str) -> None:
        assert self.blocked == [], f"requests the route had to abort: {self.blocked}"
        assert self.requests == [url], f"requests other than the page: {self.requests}"
        assert self.console_errors == [], self.console_errors
        assert self.page_errors == [], self.page_errors


def _visit(browser: Any, html_file: Path) -> Visit:
    """Open ``html_file`` with the network off: the context is offline and a route aborts
    (and records) every request that is not for a ``file://`` URL."""
    context = browser.new_context(offline=True, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    visit = Visit(page)

    def route(handler_route: Any) -> None:
        url = handler_route.request.url
        if url.startswith("file://"):
            handler_route.continue_()
        else:
            visit.blocked.append(url)
            handler_route.abort()

    context.route("**/*", route)
    page.on("request", lambda request: visit.requests.append(request.url))
    page.on("console", lambda message: visit.console_errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: visit.page_errors.append(str(error)))
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(html_file.as_uri(), wait_until="load")
    return visit


def _plotly_outputs(notebook: Path) -> int:
    executed = nbformat.read(notebook, as_version=4)
    return sum(
        "application/vnd.plotly.v1+json" in output.get("data", {})
        for cell in executed.cells
        for output in cell.get("outputs", [])
    )


def _assert_figures_drawn(visit: Visit, notebook: Path) -> int:
    expected = _plotly_outputs(notebook)
    assert expected > 0
    assert visit.page.locator(".plotly-figure").count() == expected
    visit.page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.plotly-figure')).every(d => d.querySelector('svg.main-svg'))"
    )
    return expected


def _assert_not_pwned(visit: Visit) -> None:
    assert visit.page.evaluate("typeof window.__pwned") == "undefined"


def _hostile_cells(visit: Visit, table: str) -> int:
    """How many cells of the tables matching ``table`` hold exactly the hostile text (a long
    cell's whole text is in its ``.wb-full``)."""
    return int(
        visit.page.eval_on_selector_all(
            f"{table} td",
            "(cells, text) => cells.filter(c => (c.querySelector('.wb-full') || c).textContent === text).length",
            HOSTILE,
        )
    )


def _column(visit: Visit, table: Any, header: str) -> list[str | None]:
    """A column's values in the order shown: the ``data-value`` of numeric cells, else the text."""
    index = table.get_by_role("columnheader", name=header, exact=True).evaluate("th => th.cellIndex")
    return list(
        table.locator("tbody tr").evaluate_all(
            "(rows, i) => rows.map(r => r.cells[i].getAttribute('data-value') ?? r.cells[i].textContent)", index
        )
    )


def _assert_sorts(table: Any, visit: Visit, header: str, key: Any) -> None:
    """Clicking the header sorts ascending, clicking again descending, with ``aria-sort``."""
    th = table.get_by_role("columnheader", name=header, exact=True)
    assert th.get_attribute("aria-sort") == "none"
    th.get_by_role("button").click()
    ascending = _column(visit, table, header)
    assert ascending == sorted(ascending, key=key) and th.get_attribute("aria-sort") == "ascending"
    assert th.locator(".wb-arrow").inner_text() == "\u25b2"
    th.get_by_role("button").click()
    descending = _column(visit, table, header)
    assert descending == sorted(ascending, key=key, reverse=True) and th.get_attribute("aria-sort") == "descending"
    assert th.locator(".wb-arrow").inner_text() == "\u25bc"
    assert len(set(ascending)) > 1, f"column {header} has one value: sorting it proves nothing"


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[ReportResult, float]]:
    out = tmp_path_factory.mktemp("hostile-reports")
    made: dict[str, tuple[ReportResult, float]] = {}
    for template, extra in (
        ("01-overview", {"graded_dir": str(out / "graded")}),
        ("02-error-slices", {"n_boot": 50}),
        (
            "04-compare-systems",
            {
                "predictions": f"{PARAMS['predictions']};{REPO / 'tests/fixtures/predictions/zarifaziz_dev_small_12-48-44Z.jsonl'}",
                "systems": "hostile;claude 12-48",
                "n_boot": 50,
            },
        ),
    ):
        started = time.monotonic()
        result = run_template(template, parameters={**PARAMS, **extra}, out_dir=out / template)
        made[template] = (result, time.monotonic() - started)
    return made


def test_overview_report_is_inert_offline_and_its_failed_turns_table_searches_and_sorts(
    browser: Any, reports: dict[str, tuple[ReportResult, float]]
) -> None:
    result, _ = reports["01-overview"]
    source = result.html.read_text(encoding="utf-8")
    assert HOSTILE not in source and "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in source
    turns = pl.read_parquet(result.html.parent.parent / "graded" / "turns.parquet")
    failed = turns.filter(~pl.col("correct"))
    hostile_fields = failed.select("question", "predicted_answer", "predicted_program", "answer", "raw_output")
    expected_hostile = sum(int((hostile_fields[c] == HOSTILE).sum()) for c in hostile_fields.columns)
    assert failed.height == 5 and expected_hostile == 11

    visit = _visit(browser, result.html)
    try:
        page = visit.page
        _assert_figures_drawn(visit, result.notebook)
        _assert_not_pwned(visit)

        table = page.locator("table.wb-failed")
        assert table.count() == 1
        shown = table.get_by_text("<script>window.__pwned=1</script>", exact=False)
        assert shown.count() > 0 and shown.first.is_visible()
        assert _hostile_cells(visit, "table.wb-failed") == expected_hostile
        assert table.get_by_role("columnheader", name="raw output", exact=True).count() == 1

        rows = table.locator("tbody tr")
        search = page.get_by_role("searchbox", name="Search Failed turns (5)")
        count = page.locator(".wb-tools").filter(has=search).locator(".wb-count")
        assert rows.count() == failed.height
        assert count.inner_text() == f"Showing 1\u2013{failed.height} of {failed.height} rows"
        search.fill(RSG.lower())  # case-insensitive
        matching = failed.filter(pl.col("record_id") == RSG).height
        assert matching == 3
        assert table.locator("tbody tr:visible").count() == matching
        assert count.inner_text() == f"Showing 1\u2013{matching} of {matching} rows (filtered from {failed.height})"
        assert set(table.locator("tbody tr:visible td:nth-child(2)").all_inner_texts()) == {RSG}
        search.fill("no such text anywhere")
        assert (
            table.locator("tbody tr:visible").count() == 0
            and count.inner_text() == f"Showing 0 of 0 rows (filtered from {failed.height})"
        )
        search.fill("")
        assert table.locator("tbody tr:visible").count() == failed.height

        _assert_sorts(table, visit, "turn", float)
        _assert_sorts(table, visit, "record id", str.lower)
        _assert_not_pwned(visit)
        visit.assert_clean(result.html.as_uri())
    finally:
        visit.page.context.close()


def test_error_slices_report_is_inert_offline_and_its_tables_work(
    browser: Any, reports: dict[str, tuple[ReportResult, float]]
) -> None:
    result, _ = reports["02-error-slices"]
    visit = _visit(browser, result.html)
    try:
        page = visit.page
        _assert_figures_drawn(visit, result.notebook)
        _assert_not_pwned(visit)

        sortable = page.locator("table.wb-table[data-wb-sortable]")
        assert sortable.count() == page.locator(".wb-search").count() > 0
        assert page.locator("table.wb-checks").count() == 1

        # the drill-down by error type: open every group, the hostile outputs show as text
        drill = page.locator("details.wb-drill").filter(has_text="Error type:")
        assert drill.count() > 0
        for i in range(drill.count()):
            drill.nth(i).locator("summary").first.click()
        shown = drill.get_by_text("<script>window.__pwned=1</script>", exact=False)
        assert shown.count() > 0 and shown.first.is_visible()
        assert _hostile_cells(visit, "details.wb-drill") > 0

        checks = page.locator("table.wb-checks")
        _assert_sorts(checks, visit, "confidence", float)
        page.get_by_role("searchbox", name="Search Data-quality flags (2)").fill("UNIT inconsistency")
        assert checks.locator("tbody tr:visible").count() == 1
        _assert_not_pwned(visit)
        visit.assert_clean(result.html.as_uri())
    finally:
        visit.page.context.close()


def test_numbers_sort_by_value_text_in_natural_order_and_empty_cells_last(browser: Any, tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {
            "n": [10.0, None, 9.0, -1.5, 100.0],
            "k": [10, 2, None, 100, 9],
            "name": ["item 10", "Item 2", "item 1", None, "ITEM 3"],
            'x"><b onclick=y>': ["a", "b", "c", "d", "e"],
        }
    )
    cell = nbformat.v4.new_code_cell("t")
    block = tables.html_table(frame, caption="Numbers", sortable=True)
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": block.markup})]
    page_file = tmp_path / "table.html"
    page_file.write_text(render_html(nbformat.v4.new_notebook(cells=[cell]), title="table"), encoding="utf-8")

    visit = _visit(browser, page_file)
    try:
        page = visit.page
        table = page.locator("table.wb-table")
        assert page.locator(".wb-count").inner_text() == "Showing 1\u20135 of 5 rows"
        assert page.locator("b").count() == 0  # the column name stayed text
        assert table.get_by_role("columnheader", name='x"><b onclick=y>', exact=True).count() == 1
        button = table.get_by_role("columnheader", name="n", exact=True).get_by_role("button")
        button.click()
        assert _column(visit, table, "n") == ["-1.5", "9.0", "10.0", "100.0", "\u2014"]
        assert table.locator("tbody td:first-child").all_inner_texts()[:4] == ["-1.5", "9", "10", "100"]
        button.click()
        assert _column(visit, table, "n") == ["100.0", "10.0", "9.0", "-1.5", "\u2014"]
        table.get_by_role("columnheader", name="k", exact=True).get_by_role("button").click()
        assert _column(visit, table, "k") == ["2", "9", "10", "100", "\u2014"]
        table.get_by_role("columnheader", name="name", exact=True).get_by_role("button").click()
        assert _column(visit, table, "name") == ["item 1", "Item 2", "ITEM 3", "item 10", "\u2014"]
        page.get_by_role("searchbox", name="Search Numbers").fill("ITEM 1")
        assert table.locator("tbody tr:visible").count() == 2  # item 1 and item 10
        visit.assert_clean(page_file.as_uri())
    finally:
        visit.page.context.close()


def test_the_bare_table_markup_shows_as_a_plain_table_without_the_page_script(browser: Any, tmp_path: Path) -> None:
    """What Jupyter shows: the markup alone, no script. The table is there, unenhanced, no errors."""
    block = tables.html_table(pl.DataFrame({"n": [2, 1], "s": [HOSTILE, "b"]}), caption="Plain", sortable=True)
    page_file = tmp_path / "bare.html"
    page_file.write_text(f"<!DOCTYPE html><html><body>{block.markup}</body></html>", encoding="utf-8")
    visit = _visit(browser, page_file)
    try:
        assert visit.page.locator("table.wb-table tbody tr").count() == 2
        assert visit.page.locator(".wb-search, button").count() == 0
        assert visit.page.get_by_text(HOSTILE).count() == 1
        _assert_not_pwned(visit)
        visit.assert_clean(page_file.as_uri())
    finally:
        visit.page.context.close()


def test_reports_stay_within_their_size(reports: dict[str, tuple[ReportResult, float]]) -> None:
    """Page size only: how long a report takes is measured by bench/, not asserted here."""
    for template, (result, seconds) in reports.items():
        print(f"{template}: {seconds:.1f} s, {result.html.stat().st_size:,} bytes")
        assert result.html.stat().st_size < 8_000_000, f"{template}: {result.html.stat().st_size} bytes"


def test_compare_systems_report_is_inert_offline(browser: Any, reports: dict[str, tuple[ReportResult, float]]) -> None:
    result, _ = reports["04-compare-systems"]
    visit = _visit(browser, result.html)
    try:
        _assert_figures_drawn(visit, result.notebook)
        _assert_not_pwned(visit)
        assert visit.page.locator("table.wb-paired").count() == 1
        assert visit.page.get_by_text("Changes since the previous run").count() == 1
        visit.assert_clean(result.html.as_uri())
    finally:
        visit.page.context.close()
