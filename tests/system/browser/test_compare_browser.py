"""The comparison report of more than two systems in a real browser (Debian's Chromium, driven by
Playwright, network off): three GSM8K systems from three files (ToRA, program-of-thoughts few-shot
and zero-shot, in that order: not alphabetical), and OpenAI's file of four systems a line, given
without any system name.

Asserted: no request but the page itself and no console or page error; every figure drawn; the
systems table lists the systems in the order given; the table of pairs lists every pair in that
order; the matrix's rows and columns are the systems in that order; at 1280x800 and 390x844 the
page itself never scrolls sideways (wide tables scroll inside their own box). Skips only when
Chromium or Playwright is missing.
"""

from __future__ import annotations

import contextlib
import itertools
from pathlib import Path
from typing import Any

import nbformat
import pytest

from workbench.report.runner import ReportResult, run_template
from workbench.views.comparison import matrix_labels, short_names

REPO = Path(__file__).resolve().parents[3]
GSM8K = REPO / "tests/fixtures/predictions/gsm8k"
TIMEOUT_MS = 120_000  # a safety net against a hang, not a budget: CI machines are busy
THREE_FILES = [
    GSM8K / "tora-70b_first_20.jsonl",
    GSM8K / "pot_fewshot_lines_1-12_1052-1056.jsonl",
    GSM8K / "pot_zeroshot_first_20.jsonl",
]
THREE = [path.stem for path in THREE_FILES]
FOUR = ["6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"]

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the browser test needs Playwright; install it: pip install -e '.[dev]'"
)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[ReportResult, list[str]]]:
    out = tmp_path_factory.mktemp("compare-reports")
    three = run_template(
        "04-compare-systems",
        parameters={
            "dataset": str(REPO / "tests/fixtures/gsm8k/test_first_20.jsonl"),
            "predictions": [str(p) for p in THREE_FILES],
            "n_boot": 50,
        },
        out_dir=out / "three",
    )
    four = run_template(
        "04-compare-systems",
        parameters={
            "dataset": "none",
            "predictions": [str(GSM8K / "openai_example_model_solutions_first_20.jsonl")],
            "n_boot": 50,
        },
        out_dir=out / "four",
    )
    return {"three": (three, THREE), "four": (four, FOUR)}


class _Visit:
    """A page opened offline at one viewport size, recording every request and error."""

    def __init__(self, browser: Any, html: Path, width: int, height: int) -> None:
        self.context = browser.new_context(offline=True, viewport={"width": width, "height": height})
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.context.route(
            "**/*", lambda route: route.continue_() if route.request.url.startswith("file://") else route.abort()
        )
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.set_default_timeout(TIMEOUT_MS)
        self.page.goto(html.as_uri(), wait_until="load")
        self.page.wait_for_function(
            "() => Array.from(document.querySelectorAll('.plotly-figure')).every(d => d.querySelector('svg.main-svg'))"
        )


def _figures(notebook: Path) -> int:
    executed = nbformat.read(notebook, as_version=4)
    return sum(
        "application/vnd.plotly.v1+json" in output.get("data", {})
        for cell in executed.cells
        for output in cell.get("outputs", [])
    )


def _cells(page: Any, table: str, columns: int) -> list[list[str]]:
    """The text of the first ``columns`` cells of each body row of ``table``."""
    return page.eval_on_selector_all(
        f"{table} tbody tr",
        "(rows, n) => rows.map(r => Array.from(r.cells).slice(0, n).map(c => c.textContent.trim()))",
        columns,
    )


def _on_screen(ticks: Any, side: str) -> list[str]:
    """The texts of ``ticks`` in the order they are seen (top to bottom, or left to right)."""
    return ticks.evaluate_all(
        "(ts, side) => ts.map(t => [t.getBoundingClientRect()[side], t.textContent])"
        ".sort((a, b) => a[0] - b[0]).map(p => p[1])",
        side,
    )


@pytest.mark.parametrize("case", ["three", "four"])
def test_every_pair_in_the_order_given(
    browser: Any, reports: dict[str, tuple[ReportResult, list[str]]], case: str
) -> None:
    result, systems = reports[case]
    visit = _Visit(browser, result.html, 1280, 800)
    try:
        page = visit.page
        assert visit.requests == [result.html.as_uri()] and visit.errors == []
        assert page.locator(".plotly-figure").count() == _figures(result.notebook) > 0
        assert [row[0] for row in _cells(page, "table.wb-headline", 1)] == systems
        pairs = _cells(page, "table.wb-pairs", 2)
        assert pairs == [list(pair) for pair in itertools.combinations(systems, 2)]
        n = len(pairs)
        assert (
            page.locator("table.wb-pairs caption")
            .inner_text()
            .startswith(f"Every pair of the {len(systems)} systems, in the order given ({n} pairs)")
        )
        # the matrix: rows and columns are the systems in the order given
        matrix = page.locator(".plotly-figure", has_text="Paired difference in points")  # its title, wrapped on a phone
        assert matrix.count() == 1
        rows = _on_screen(matrix.locator(".yaxislayer-above .ytick text"), "top")
        columns = _on_screen(matrix.locator(".xaxislayer-above .xtick text"), "left")
        assert (columns, rows) == matrix_labels(systems)  # numbered; names too long for an axis shortened
        assert rows == [f"{i}  {name}" for i, name in enumerate(short_names(systems), 1)]
        # the one-pair view per slice: the first two given
        assert (
            f"Paired comparison: {systems[0]} minus {systems[1]}"
            in page.locator("table.wb-paired caption").inner_text()
        )
        # a GSM8K page: titled so; one turn per problem, so no turn-index chart, a sentence instead
        assert page.locator("h1").inner_text() == "GSM8K error report: systems compared"
        assert page.locator(".plotly-figure", has_text="Accuracy by turn index").count() == 0
        assert page.get_by_text("GSM8K problems are single questions, so there is no turn index to follow.").count()
    finally:
        visit.context.close()


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_the_comparison_fits_the_window(
    browser: Any, reports: dict[str, tuple[ReportResult, list[str]]], size: tuple[int, int]
) -> None:
    """The pairs table scrolls inside its own box and the matrix is drawn within the window, with
    every cell's text inside its cell."""
    result, systems = reports["four"]
    visit = _Visit(browser, result.html, *size)
    try:
        page = visit.page
        box = page.locator("table.wb-pairs").locator("xpath=..")
        assert box.evaluate("e => e.getBoundingClientRect().right") <= size[0]
        if size[0] >= 1280:  # on a desktop the whole table is in view, p-values and counts included
            assert page.locator("table.wb-pairs").evaluate("e => e.getBoundingClientRect().right") <= size[0]
        matrix = page.locator(".plotly-figure", has_text="Paired difference in points")  # its title, wrapped on a phone
        # plotly draws a figure at its own width first, then fits it to the page: wait for that
        with contextlib.suppress(sync_api.TimeoutError):
            matrix.locator("svg.main-svg").first.evaluate(
                "(svg, w) => new Promise(done => { const t = () => svg.getBoundingClientRect().right <= w ? done() :"
                " setTimeout(t, 200); t(); })",
                size[0],
            )
        assert matrix.locator("svg.main-svg").first.evaluate("e => e.getBoundingClientRect().right") <= size[0]
        texts = matrix.locator(".heatmaplayer text").evaluate_all("ts => ts.map(t => t.getBoundingClientRect().width)")
        cells = len(systems) * (len(systems) - 1)
        assert len([w for w in texts if w > 0]) >= cells  # every off-diagonal cell writes its difference
        width = matrix.locator(".heatmaplayer").evaluate("g => g.getBoundingClientRect().width")
        assert max(texts) <= width / len(systems), "a cell's text is wider than its cell"
        assert visit.errors == []
    finally:
        visit.context.close()
