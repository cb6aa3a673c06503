"""05-history and the index's history section (issue 34, point 2, acceptance): on the ledger of 12
nightly runs (conftest.py: the bundled runs, noise, a 6-point drop on `divide` planted from night 9
on), `workbench report --template 05-history` draws 12 points per system, rings run 9 of the broken
system (and, by slice, its `divide` chart) and nothing else, lists one row per run and system whose
run number opens that night's report; in Chromium at 1280x800 and 390x844 the charts and the table
fit the screen (no cell runs past its edge; no page scrolls sideways). A folder without a ledger is
one line. Screenshots: /work/notes/shots/history-*.png (WORKBENCH_SHOTS=FOLDER to save them elsewhere)."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.system.browser.conftest import CHROMIUM, browser  # noqa: F401  (the browser fixture)
from tests.system.history.conftest import nightly
from workbench.cli import main
from workbench.pipeline.ledger import LedgerRow, append

SHOTS = Path(os.environ.get("WORKBENCH_SHOTS", "/work/notes/shots"))
RING = "differs from the run before"


@pytest.fixture(scope="module")
def nights(bundled_rows: list[LedgerRow], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A reports folder whose ledger holds the 12 nights, each night's rows naming its report
    (a page of its own in the folder), then the 05-history page written into that folder."""
    folder = tmp_path_factory.mktemp("nightly")
    for index, tonight in enumerate(nightly(bundled_rows, 12, drop_night=9), start=1):
        report = f"night-{index:02d}.html"
        (folder / report).write_text(f"<!DOCTYPE html><title>night {index}</title><h1>night {index}</h1>")
        append(
            folder / "ledger.sqlite", [dataclasses.replace(r, template="01-overview", report=report) for r in tonight]
        )
    argv = ["report", "--quiet", "--template", "05-history", "--out", str(folder)]
    argv += ["-p", f"folder={folder}", "-p", f"page_folder={folder}", "-p", "n_boot=200"]
    assert main(argv) == 0
    return folder


def _page(folder: Path) -> Path:
    (page,) = [p for p in folder.glob("*.html") if not p.name.startswith(("night-", "index"))]
    return page


def _figures(page: Path) -> list[dict[str, Any]]:
    text = page.read_text(encoding="utf-8")
    specs = re.findall(r'<script type="application/json" id="wb-fig-\d+-spec">(.*?)</script>', text, re.S)
    return [json.loads(spec) for spec in specs]


def test_twelve_points_per_system_and_one_ring_on_run_9(nights: Path) -> None:
    figures = _figures(_page(nights))
    overall = figures[0]
    assert overall["layout"]["title"]["text"] == "Accuracy over runs"
    lines = [t for t in overall["data"] if t["name"] != RING]
    assert len(lines) == 2 and all(len(t["x"]) == len(t["y"]) == 12 for t in lines)
    assert [sorted(round(x) for x in t["x"]) for t in lines] == [list(range(1, 13))] * 2
    assert all(t["error_y"]["array"] and len(t["error_y"]["arrayminus"]) == 12 for t in lines)
    # every point carries its night's report, for a click
    assert lines[0]["customdata"] == [f"night-{i:02d}.html" for i in range(1, 13)]
    assert all(t["meta"] == {"opens": "customdata"} for t in overall["data"])  # plots.js opens them on a click
    (ring,) = [t for t in overall["data"] if t["name"] == RING]
    assert [round(x) for x in ring["x"]] == [9] and ring["x"][0] < 9  # the first system's point (left of 9)
    assert "operation divide" in ring["hovertext"][0]
    # by slice: the one ring is in operation's divide chart, run 9; no other chart has one
    rings = {
        fig["layout"]["title"]["text"]: [
            (t["xaxis"], round(x)) for t in fig["data"] if t["name"] == RING for x in t["x"]
        ]
        for fig in figures[1:]
    }
    assert {title: found for title, found in rings.items() if found} == {
        "Accuracy over runs by operation": [(_divide_axis(figures[1]), 9)]
    }, rings


def _divide_axis(fig: dict[str, Any]) -> str:
    """The x axis of the subplot titled divide (plotly's annotations are the subplot titles, in order)."""
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    index = next(i for i, text in enumerate(titles) if text.startswith("divide"))
    return "x" if index == 0 else f"x{index + 1}"


def test_the_table_lists_each_run_and_links_it_to_its_report(nights: Path) -> None:
    text = _page(nights).read_text(encoding="utf-8")
    table = text[text.index('<table class="wb-table wb-history"') :]
    table = table[: table.index("</table>")]
    rows = re.findall(r"<tr>(.*?)</tr>", table[table.index("<tbody>") :], re.S)
    assert len(rows) == 24
    links = re.findall(r'<a href="([^"]+)"[^>]*>(\d+)</a>', table)
    assert sorted({(href, int(n)) for href, n in links}) == [(f"night-{i:02d}.html", i) for i in range(1, 13)]
    differs = [row for row in rows if "operation divide" in row]
    assert len(differs) == 1 and ">9</a>" in differs[0] and "also answer format percent" in differs[0]
    assert "p &lt; 0.001" in differs[0] or "p = 0.0" in differs[0]


def test_the_index_shows_each_systems_last_runs_and_links_the_history_page(nights: Path) -> None:
    index = (nights / "index.html").read_text(encoding="utf-8")
    section = index[index.index('<section class="wb-history-index">') :]
    assert f'<a href="{_page(nights).name}">The history page</a>' in section
    for system in (
        "zarifaziz-claude-sonnet-4-6@2026-05-04T06-35-00Z",
        "zarifaziz-claude-sonnet-4-6@2026-05-04T12-48-44Z",
    ):
        assert f"<b>{system}</b>" in section
    # the last six nights, each a link to its report
    assert re.findall(r'href="(night-\d+\.html)"', section) == [f"night-{i:02d}.html" for i in range(7, 13)] * 2
    assert section.count("of 12 runs") == 2


def test_a_folder_without_a_ledger_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    argv = ["report", "--quiet", "--template", "05-history", "-p", f"folder={tmp_path / 'empty'}"]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "no run ledger here (ledger.sqlite in the folder or in its template folders)" in err
    assert "run 'workbench report ... --out FOLDER'" in err


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
def test_the_page_is_readable_in_chromium(nights: Path, browser: Any, width: int, height: int) -> None:  # noqa: F811
    if not CHROMIUM.exists():
        pytest.skip(f"the browser tests need Debian's Chromium at {CHROMIUM}")
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(_page(nights).as_uri())
    page.wait_for_selector(".plotly-figure .main-svg")
    page.wait_for_timeout(500)
    found = page.evaluate(
        """() => {
        const table = document.querySelector('table.wb-history');
        const cells = [...table.querySelectorAll('th, td')].filter(c => c.offsetParent !== null);
        return {
          page: document.documentElement.scrollWidth,
          cellsPast: cells.filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent.slice(0, 40)),
          fontPx: Math.min(...cells.map(c => parseFloat(getComputedStyle(c).fontSize))),
          figures: [...document.querySelectorAll('.plotly-figure')].map(f => [f.getBoundingClientRect().width,
                     f.querySelector('.main-svg') ? f.querySelector('.main-svg').getBoundingClientRect().width : 0]),
          ticks: Math.min(...[...document.querySelectorAll('.plotly-figure .xtick text, .plotly-figure .ytick text')]
                     .map(t => parseFloat(getComputedStyle(t).fontSize))),
        };
    }"""
    )
    assert found["page"] <= width, found  # nothing scrolls the page sideways
    assert found["cellsPast"] == [], found  # no cell's text runs past its edge
    assert found["fontPx"] >= 12 and found["ticks"] >= 11, found
    assert len(found["figures"]) == 6 and all(0 < svg <= box <= width for box, svg in found["figures"]), found
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"history-{width}x{height}.png"), full_page=True)
    page.locator("table.wb-history").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / f"history-{width}x{height}-table.png"))
    # a click on a point of the chart opens its run's report (plots.js follows the point's customdata)
    point = page.locator(".plotly-figure").first.locator(".scatterlayer .trace").first.locator(".points path").nth(2)
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_url(re.compile(r"night-03\.html$"))
    page.go_back()
    page.wait_for_selector(".plotly-figure .main-svg")
    # a run's number opens its report
    page.locator("table.wb-history a", has_text=re.compile(r"^9$")).first.click()
    page.wait_for_url(re.compile(r"night-09\.html$"))
    index = browser.new_page(viewport={"width": width, "height": height})
    index.goto((nights / "index.html").as_uri())
    assert index.evaluate("document.documentElement.scrollWidth") <= width
    index.screenshot(path=str(SHOTS / f"history-index-{width}x{height}.png"), full_page=True)
    page.close()
    index.close()


HOSTILE = '<a href=x>s</a><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'


def test_a_hostile_system_name_stays_text(bundled_rows: list[LedgerRow], tmp_path: Path) -> None:
    """A system named like markup is text in the run table, the index's section and the figure."""
    from workbench.report import history
    from workbench.report.index import write_index
    from workbench.views import history as views

    for index, tonight in enumerate(nightly(bundled_rows[:1], 2), start=1):
        (tmp_path / f"n{index}.html").write_text("night")
        append(
            tmp_path / "ledger.sqlite",
            [dataclasses.replace(r, system=HOSTILE, template="t", report=f"n{index}.html") for r in tonight],
        )
    found = history.open_history(str(tmp_path), page_folder=str(tmp_path))
    over = history.over_runs(found.rows, n_boot=20)
    items, marks = history.run_changes(found.rows)
    markup = views.runs_table(history.runs(found, over, items, marks)).markup
    page = write_index(tmp_path).read_text(encoding="utf-8")
    for text in (markup, page[page.index("wb-history-index") :]):
        assert "<script>window" not in text and "<img" not in text and "<a href=x>" not in text
        assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in text
    figure = views.accuracy_over_runs(over, marks, found.links)
    assert {t.name for t in figure.data} == {HOSTILE.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")}
    assert history.title(found).data.count("\\<script\\>") == 1  # Markdown-escaped in the heading's paragraph
