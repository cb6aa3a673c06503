"""Every page `make report` writes, as a stakeholder reads it: Debian's Chromium (Playwright), offline,
at 1280x800 and on a phone (390x844), on the bundled batch (``notebooks/bundled.yaml``: the ConvFinQA
overview, error slices and comparison, the GSM8K overview, the MATH overviews, error slices and
comparison) run into a temporary folder.

Asserted, on every page:

- at 1280x800 the first screen holds the title and the headline accuracy (the headline table's
  accuracy, or on the error-slices page the overall accuracy that opens the slice table), before
  the changes since the previous run;
- no raw snake_case name (``wrong_value``, ``percent_reading``, ``display_vs_executed``...) in the
  visible text, outside ids (system names, record ids, file names) and code, with every drill-down
  group open; the data's own text (questions, answers, outputs, programs, evidence) is not scanned;
- at 390x844 the failed-turns grid shows each row's record id, answers and reason without
  scrolling sideways (a card per row), and the page itself never scrolls sideways;
- at both widths no visible cell, heading, caption, button or label is cut: its content is no
  wider than its box;
- plotly's toolbar covers no chart title: on a phone there is none, on a wide screen it lies
  beside the title;
- no page is larger than the largest before (3.48 MB, the ConvFinQA error-slices page).

The batch takes a few minutes on two shared cores (marked slow).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from workbench.config import project_root
from workbench.report.batch import load_batch
from workbench.report.runner import ReportResult, run_template

pytest.importorskip(
    "playwright.sync_api", reason="the browser test needs Playwright; install it: pip install -e '.[dev]'"
)

pytestmark = pytest.mark.slow

TIMEOUT_MS = 120_000  # a safety net against a hang, not a budget
#: The largest bundled page before the pages were reworked for issue 30 (02-error-slices of the ConvFinQA run).
LARGEST_PAGE = 3_481_540
WIDE, PHONE = {"width": 1280, "height": 800}, {"width": 390, "height": 844}
#: A name as the graded tables write it: words joined by underscores.
SNAKE = re.compile(r"\b[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+\b")
#: The columns whose cells are the data's own text (questions, answers, outputs, programs, evidence),
#: by their headings: a snake_case word there is the data's, not a name the page should have put in words.
DATA_COLUMNS = frozenset(
    {
        "question",
        "gold answer",
        "gold (executed)",
        "predicted answer",
        "answer graded",
        "raw output",
        "predicted program",
        "gold program",
        "grader's detail",
        "evidence",
        "file",
        "where in the file",
    }
)


@dataclass(frozen=True)
class Report:
    template: str
    benchmark: str
    result: ReportResult

    @property
    def name(self) -> str:
        return f"{self.template}/{self.result.html.name}"


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> list[Report]:
    """Every report of the bundled batch, as `make report` runs it (its jobs, into a temporary folder)."""
    out = tmp_path_factory.mktemp("bundled")
    graded: dict[str, Path] = {}
    reports = []
    for job in load_batch(project_root() / "notebooks" / "bundled.yaml"):
        result = run_template(job.template, parameters=job.parameters, out_dir=out / job.template, graded_sets=graded)
        title = re.search(r"<title>(\w+) error report", result.html.read_text(encoding="utf-8"))
        assert title is not None, result.html
        reports.append(Report(job.template, title.group(1), result))
    assert len(reports) == 9 and {r.benchmark for r in reports} == {"ConvFinQA", "GSM8K", "MATH"}
    return reports


@pytest.fixture
def visit(browser: Any) -> Iterator[Any]:
    """Open a page offline at a viewport: ``visit(html_file, viewport)``; errors and requests are checked after."""
    contexts: list[tuple[Any, list[str], str]] = []

    def open_page(html_file: Path, viewport: dict[str, int]) -> Any:
        context = browser.new_context(offline=True, viewport=viewport)
        problems: list[str] = []
        context.route(
            "**/*", lambda route: route.continue_() if route.request.url.startswith("file://") else route.abort()
        )
        page = context.new_page()
        page.on("request", lambda r: problems.append(r.url) if r.url != html_file.as_uri() else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(html_file.as_uri(), wait_until="load")
        page.wait_for_function("() => document.querySelectorAll('.plotly-figure:not(.js-plotly-plot)').length === 0")
        contexts.append((context, problems, html_file.name))
        return page

    yield open_page
    for context, problems, name in contexts:
        context.close()
        assert problems == [], f"{name}: requests or errors {problems}"


def test_the_first_screen_holds_the_title_and_the_headline_accuracy(bundled: list[Report], visit: Any) -> None:
    for report in bundled:
        page = visit(report.result.html, WIDE)
        title = page.locator("main h1").first
        assert title.bounding_box()["y"] + title.bounding_box()["height"] <= WIDE["height"], report.name
        if page.locator("table.wb-headline").count():
            table = page.locator("table.wb-headline").first
            headers = [t.strip() for t in table.locator("thead th").all_inner_texts()]
            column = next(i for i, h in enumerate(headers) if h.startswith(("Turn execution", "Accuracy")))
            cell = table.locator("tbody tr").first.locator("td").nth(column)
        else:  # the error-slices page: the slice table opens with the overall accuracy
            row = page.locator("table.wb-slices tbody tr").first
            assert "Overall" in row.inner_text(), report.name
            cell = row.locator("td").filter(has_text=re.compile(r"\d%")).first
        box = cell.bounding_box()
        assert cell.is_visible() and re.search(r"\d+\.\d%", cell.inner_text()), report.name
        assert box["y"] + box["height"] <= WIDE["height"], f"{report.name}: the headline accuracy is below the fold"
        changes = page.locator("section.wb-changes")
        assert changes.count() == 1 and changes.bounding_box()["y"] > box["y"], f"{report.name}: the changes come after"
        print(f"{report.name}: title and headline accuracy {cell.inner_text()!r} within the first {WIDE['height']} px")


#: The visible text of the page's main part, as a reader sees it, without code, ids and the data's own text.
_VISIBLE_WORDS = """(dataColumns) => {
  const skip = el => el.closest('code, pre, script, style, .wb-key, .wb-manifest, dialog');
  const dataCell = el => {
    const cell = el.closest('td');
    const table = cell && cell.closest('table');
    if (!table || !table.tHead) { return false; }
    const head = table.tHead.rows[0].cells[cell.cellIndex];
    return !!head && dataColumns.includes(head.textContent.replace(/[\\u2195\\u25b2\\u25bc]/g, '').trim());
  };
  const out = [];
  const walker = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || skip(el) || dataCell(el) || !el.checkVisibility({visibilityProperty: true})) { continue; }
    out.push(node.textContent);
  }
  return out.join(' ');
}"""


def test_no_raw_snake_case_name_is_visible_outside_ids_and_code(bundled: list[Report], visit: Any) -> None:
    import polars as pl

    for report in bundled:
        graded = next(report.result.html.parent.glob(f"{report.result.html.stem}.graded"))
        turns = pl.read_parquet(graded / "turns.parquet", columns=["system", "record_id"])
        ids = sorted(
            {*turns["system"].unique().to_list(), *turns["record_id"].unique().to_list()}, key=len, reverse=True
        )
        page = visit(report.result.html, WIDE)
        for summary in page.locator("details.wb-drill > summary").all():  # every drill-down group open
            summary.click()
        text = page.evaluate(_VISIBLE_WORDS, sorted(DATA_COLUMNS))
        for name in ids:  # ids are names, shown as they are
            text = text.replace(name, " ")
        found = sorted(set(SNAKE.findall(text)))
        print(f"{report.name}: {len(text):,} characters scanned")
        assert found == [], f"{report.name}: raw names on the page: {found}"


def _phone_grid(page: Any) -> dict[str, Any]:
    return dict(
        page.evaluate(
            """() => {
          const table = document.querySelector('table.wb-failed');
          const box = table.closest('.wb-scroll');
          const row = Array.from(table.tBodies[0].rows).find(r => !r.hidden);
          const cells = {};
          for (const td of row.cells) {
            const r = td.getBoundingClientRect();
            cells[td.getAttribute('data-label')] = {left: r.left, right: r.right, shown: td.checkVisibility()};
          }
          return {cells, boxScroll: box.scrollWidth, boxWidth: box.clientWidth,
                  pageScroll: document.documentElement.scrollWidth, viewport: window.innerWidth};
        }"""
        )
    )


def test_on_a_phone_the_failed_turns_grid_shows_the_answers_and_the_reason(bundled: list[Report], visit: Any) -> None:
    overviews = [r for r in bundled if r.template == "01-overview"]
    assert len(overviews) == 4
    for report in overviews:
        page = visit(report.result.html, PHONE)
        page.locator("table.wb-failed").scroll_into_view_if_needed()
        grid = _phone_grid(page)
        # the answers: the gold one and the system's (its answer field, when the outputs have one, and the
        # answer graded, which may have been extracted from the raw output)
        wanted = ["record id", "gold answer", "answer graded", "reason"]
        wanted += ["predicted answer"] if "predicted answer" in grid["cells"] else []
        for label in wanted:
            cell = grid["cells"].get(label)
            assert cell is not None and cell["shown"], f"{report.name}: no {label} in the card: {list(grid['cells'])}"
            assert 0 <= cell["left"] and cell["right"] <= PHONE["width"], f"{report.name}: {label} off screen {cell}"
        assert grid["boxScroll"] <= grid["boxWidth"] + 1, f"{report.name}: the grid scrolls sideways"
        assert grid["pageScroll"] <= grid["viewport"], f"{report.name}: the page scrolls sideways"
        print(f"{report.name} at 390x844: a card shows {', '.join(wanted)}")


#: Every visible element whose content is wider than its box (cut), with its text.
_CUT = """() => {
  const cut = [];
  const selector = 'main th, main td, main caption, main h1, main h2, main h3, main button, main label, '
    + 'main summary, main .wb-count, main .wb-grid-title, main li, main p';
  for (const el of document.querySelectorAll(selector)) {
    /* a long cell is shortened on purpose (its whole text a click away); a grid's caption is for screen readers
       only (the grid's title above shows it) */
    if (!el.checkVisibility({visibilityProperty: true}) || el.closest('td.wb-long, .wb-hidden-caption')) { continue; }
    if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).display !== 'inline') {
      cut.push(el.tagName + ': ' + el.textContent.trim().slice(0, 60) + ' (' + el.scrollWidth + ' > ' + el.clientWidth + ')');
    }
    /* a caption's words run past the box its table scrolls in (cells may: the table scrolls sideways) */
    const box = el.tagName === 'CAPTION' && el.closest('.wb-scroll');
    if (box) {
      const words = document.createRange();
      words.selectNodeContents(el);
      if (words.getBoundingClientRect().right > box.getBoundingClientRect().right + 1) {
        cut.push('CAPTION past its box: ' + el.textContent.trim().slice(0, 60));
      }
    }
  }
  return cut;
}"""


def test_nothing_is_cut_at_either_width(bundled: list[Report], visit: Any) -> None:
    for report in bundled:
        for viewport in (WIDE, PHONE):
            page = visit(report.result.html, viewport)
            cut = page.evaluate(_CUT)
            assert cut == [], f"{report.name} at {viewport['width']} px: {cut[:10]}"
            if viewport is PHONE:
                assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], report.name


def _overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def test_plotly_toolbar_covers_no_chart_title(bundled: list[Report], visit: Any) -> None:
    figures = 0
    for report in bundled:
        phone = visit(report.result.html, PHONE)
        assert phone.locator(".plotly-figure .modebar-container .modebar").count() == 0, report.name
        for figure in phone.locator(".plotly-figure").all():  # every title line inside its figure
            frame = figure.bounding_box()
            for text in figure.locator(".gtitle, .gtitle-subtitle").all():
                box = text.bounding_box()
                assert box is None or box["x"] + box["width"] <= frame["x"] + frame["width"] + 1, report.name
        wide = visit(report.result.html, WIDE)
        for figure in wide.locator(".plotly-figure").all():
            figure.scroll_into_view_if_needed()
            figure.hover()
            bar = figure.locator(".modebar").first
            if not bar.count() or not bar.is_visible():
                continue
            for text in figure.locator(".gtitle, .gtitle-subtitle").all():
                box = text.bounding_box()
                assert box is None or not _overlaps(box, bar.bounding_box()), f"{report.name}: toolbar over a title"
            figures += 1
    assert figures > 0, "no figure with a toolbar was checked"


def test_no_page_grew_past_the_largest_before(bundled: list[Report]) -> None:
    for report in bundled:
        size = report.result.html.stat().st_size
        print(f"{report.name}: {size:,} bytes")
        assert size <= LARGEST_PAGE, f"{report.name}: {size:,} bytes"
