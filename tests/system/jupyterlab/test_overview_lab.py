"""01-overview and 02-error-slices in a real JupyterLab with a live kernel, as an analyst uses them.

Each template runs with Run All on the bundled ConvFinQA run; then, in Chromium at 1280x800, the
failed-turns grid is sorted by turn, searched for a record id, a row opens the turn's panel (its
document text, the raw output with two dollar amounts as text), a click on a point of the
operation plot filters the grid (one line names the filter; a button clears it), and Annotate in
the panel writes an event, under the template's annotator, into the store the template names.

A linked plot is laid out at its output's width, its subtitle under its title, and again when that
width changes (the side panel closed, the window narrower): plotly's widget drew it before
JupyterLab attached the output, at plotly's default 700 px with the subtitle over the title, and
never again. What the tests wait for is that layout, whatever the machine's load.
"""

from __future__ import annotations

import re
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from lab_harness import ACTION_TIMEOUT_MS, RENDER_TIMEOUT_MS, Lab, shot, template_copy

#: A failed turn of the bundled run whose raw output holds three dollar amounts.
RECORD = "Double_ABMD/2006/page_75.pdf"
DOLLARS = "approximated $821,000, $824,000 and $1,262,000 for the fiscal years ended March 31, 2004, 2005 and 2006, respectively"
#: Words of that record's document (its text before the table).
DOCUMENT = "abiomed , inc . and subsidiaries notes to consolidated financial statements"
ANNOTATOR = "lab analyst"


def _events(store: Path) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(store)) as conn:
        return conn.execute(
            "SELECT kind, annotator, record_id, turn, category, corrected_answer FROM events WHERE kind = 'annotation'"
        ).fetchall()


def _turn_cells(grid: Any) -> list[int]:
    """The turn column of the grid's rows on screen (third column: system, record id, turn)."""
    return [int(t) for t in grid.locator("tbody tr td:nth-child(3)").all_inner_texts()]


def _sorted_turns(grid: Any, reverse: bool) -> list[int]:
    """The turn column once the rows on screen are in that order: the header's sort mark can be
    drawn before the kernel's sorted page arrives (seen under load)."""
    deadline = time.monotonic() + ACTION_TIMEOUT_MS / 1000
    turns = _turn_cells(grid)
    while (not turns or turns != sorted(turns, reverse=reverse)) and time.monotonic() < deadline:
        time.sleep(0.2)
        turns = _turn_cells(grid)
    return turns


def _count(grid: Any) -> str:
    return grid.locator(".wb-grid-count").inner_text()


def _wait_count(grid: Any, pattern: str) -> None:
    grid.locator(".wb-grid-count", has_text=re.compile(pattern)).wait_for(timeout=ACTION_TIMEOUT_MS)


def _search(grid: Any, text: str, pattern: str) -> None:
    grid.locator(".wb-grid-search").fill(text)
    _wait_count(grid, pattern)


def _open_and_annotate(page: Any, grid: Any, store: Path, name: str) -> None:
    """Search the record, open its failed row's panel, check what it shows, annotate it."""
    _search(grid, RECORD, r"^Showing 1–1 of 1 ")
    row = grid.locator("tbody tr").first
    assert RECORD in row.inner_text()
    row.click()
    panel = page.locator(".wb-turn-panel").first
    panel.wait_for(timeout=ACTION_TIMEOUT_MS)
    panel.locator(".wb-doc", has_text=DOCUMENT).first.wait_for(timeout=ACTION_TIMEOUT_MS)
    # the raw output: its dollar amounts and spaces intact, nothing typeset as maths
    assert DOLLARS in panel.locator("pre.wb-raw").inner_text()
    assert panel.locator("mjx-container").count() == 0
    assert grid.locator("mjx-container").count() == 0
    panel.scroll_into_view_if_needed()
    shot(page, f"{name}-4-panel")

    panel.locator("select").first.select_option(label="Mislabel")
    panel.get_by_placeholder("the right gold answer (optional)").fill("1262")
    panel.get_by_role("button", name="Save annotation").click()
    panel.locator(".wb-panel-status").get_by_text(re.compile(r"^Saved annotation #\d+: Mislabel")).wait_for(
        timeout=ACTION_TIMEOUT_MS
    )
    panel.locator("td", has_text=ANNOTATOR).first.wait_for(timeout=ACTION_TIMEOUT_MS)
    shot(page, f"{name}-6-annotated")
    assert ("annotation", ANNOTATOR, RECORD, 4, "mislabel", "1262") in _events(store)


def _choose(menu: Any, start: str) -> None:
    """Pick the option of a widget's menu whose text starts with ``start`` (ipywidgets writes its
    spaces as no-break spaces)."""
    texts = menu.locator("option").all_text_contents()
    menu.select_option(label=next(t for t in texts if t.replace("\xa0", " ").startswith(start)))


def _chosen(menu: Any) -> str:
    return str(menu.evaluate("s => s.options[s.selectedIndex].textContent")).replace("\xa0", " ")


#: A plotly plot laid out at its element's width (to the pixel), with its x ticks drawn.
_AT_WIDTH = """el => {
  const full = el._fullLayout;
  return !!full && el.clientWidth > 0 && Math.abs(full.width - el.clientWidth) <= 1
    && el.querySelectorAll('.xtick text').length > 0;
}"""


#: What a plotly plot is: its element's width, the width it is laid out at, its x ticks, in the page.
_STATE = """el => ({
  element_width: el.clientWidth, laid_out_width: el._fullLayout ? el._fullLayout.width : null,
  x_ticks: Array.from(el.querySelectorAll('.xtick text')).map(t => t.textContent), in_page: el.isConnected,
})"""


def _laid_out(page: Any, plot: Any, timeout: int = RENDER_TIMEOUT_MS) -> int:
    """Wait until ``plot`` (a linked plot) is laid out at its output's width, its ticks drawn, and
    return that width; its subtitle, if any, starts under its title. On a busy machine the browser
    may draw a widget view well after the kernel is idle, so the wait is the render's."""
    plot.wait_for(state="attached", timeout=timeout)
    try:
        page.wait_for_function(_AT_WIDTH, arg=plot.element_handle(timeout=timeout), timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - said with what the plot was when the wait ended
        raise AssertionError(f"the plot was not laid out at its output's width: {plot.evaluate(_STATE)}") from exc
    title, subtitle = plot.locator(".gtitle").first, plot.locator(".gtitle-subtitle")
    if subtitle.count():
        assert subtitle.first.bounding_box()["y"] >= title.bounding_box()["y"] + title.bounding_box()["height"] - 1, (
            "the plot's subtitle is drawn over its title"
        )
    return int(plot.evaluate("el => el.clientWidth"))


def _relaid_out(page: Any, plot: Any, change: Any) -> None:
    """``change`` the page so that ``plot``'s output changes width; the plot follows it."""
    before = _laid_out(page, plot)
    change()
    page.wait_for_function(
        "([el, before]) => el.clientWidth > 0 && el.clientWidth !== before",
        arg=[plot.element_handle(), before],
        timeout=ACTION_TIMEOUT_MS,
    )
    _laid_out(page, plot, ACTION_TIMEOUT_MS)


def _toggle_left_panel(page: Any) -> None:
    """Close (or open again) JupyterLab's left side panel, as a click on its current tab does."""
    page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab").first.click()


def _click_point(page: Any, plot: Any, group: str) -> None:
    """Click the marker of ``group`` (an x category) in a plotly plot, once it is laid out. The
    plot is brought on screen first, as an analyst scrolls to it before clicking."""
    _laid_out(page, plot)
    plot.scroll_into_view_if_needed(timeout=ACTION_TIMEOUT_MS)
    ticks = plot.locator(".xtick text").all_text_contents()
    assert group in ticks, ticks
    points = plot.locator(".scatterlayer .trace").first.locator(".point")
    points.nth(ticks.index(group)).click(force=True)


def test_overview_grid_panel_plot_and_annotation(lab: Lab, tmp_path: Path) -> None:
    store = tmp_path / "annotations.sqlite"
    notebook = template_copy(lab.root, "01-overview", store=str(store), annotator=ANNOTATOR)
    with lab.session(notebook, "lab-01") as page:
        lab.run_all(page)
        grid = page.locator(".wb-grid").last
        grid.wait_for(timeout=RENDER_TIMEOUT_MS)
        _wait_count(grid, r"^Showing 1–25 of 252 failed turns")
        grid.scroll_into_view_if_needed()
        shot(page, "lab-01-1-grid")

        # sort by turn: ascending, then descending
        grid.get_by_role("button", name="turn", exact=True).click()
        grid.locator("th[aria-sort='ascending']").wait_for(timeout=ACTION_TIMEOUT_MS)
        turns = _sorted_turns(grid, reverse=False)
        assert turns == sorted(turns) and turns[0] == 0
        grid.get_by_role("button", name=re.compile(r"^turn")).click()
        grid.locator("th[aria-sort='descending']").wait_for(timeout=ACTION_TIMEOUT_MS)
        turns = _sorted_turns(grid, reverse=True)
        assert turns == sorted(turns, reverse=True) and turns[0] > 0
        shot(page, "lab-01-2-sorted")

        # the last page holds the last failed row
        grid.get_by_role("button", name="Last page »").click()
        _wait_count(grid, r"^Showing 251–252 of 252 ")
        grid.get_by_role("button", name="« First page").click()
        _wait_count(grid, r"^Showing 1–25 of 252 ")

        # search a record id, open its panel, annotate
        _open_and_annotate(page, grid, store, "lab-01")
        shot(page, "lab-01-3-searched")

        # a click on the operation plot's "divide" point filters the grid to divide
        _search(grid, "", r"^Showing 1–25 of 252 ")
        plot = page.locator(".js-plotly-plot", has=page.locator(".gtitle", has_text="Accuracy by operation")).first
        _click_point(page, plot, "divide")
        line = grid.locator(".wb-grid-filter")
        line.get_by_text(re.compile(r"where operation is divide")).wait_for(timeout=ACTION_TIMEOUT_MS)
        assert re.match(r"^Showing 1–25 of (\d+) failed turns", _count(grid))
        n = int(re.search(r"of (\d+)", _count(grid)).group(1))  # type: ignore[union-attr]
        assert 0 < n < 252 and f"Showing the {n} failed turns" in line.inner_text()
        grid.scroll_into_view_if_needed()
        shot(page, "lab-01-5-filtered")
        grid.get_by_role("button", name="Clear the filter").click()
        _wait_count(grid, r"^Showing 1–25 of 252 ")
        assert not line.is_visible()


def test_error_slices_drilldown_grid(lab: Lab, tmp_path: Path) -> None:
    store = tmp_path / "annotations.sqlite"
    notebook = template_copy(lab.root, "02-error-slices", store=str(store), annotator=ANNOTATOR, graded_dir="")
    with lab.session(notebook, "lab-02") as page:
        lab.run_all(page)
        # the drill-down of the operation slice: a menu of its groups over the live grid
        drill = page.locator(".widget-vbox", has=page.locator(".widget-dropdown", has_text="Operation:")).last
        drill.wait_for(timeout=RENDER_TIMEOUT_MS)
        grid = drill.locator(".wb-grid")
        _wait_count(grid, r"^Showing 1–25 of 252 failed turns")
        menu = drill.locator("select").first
        _choose(menu, "lookup (")
        grid.locator(".wb-grid-filter").get_by_text("where operation is lookup").wait_for(timeout=ACTION_TIMEOUT_MS)
        drill.scroll_into_view_if_needed()
        shot(page, "lab-02-1-group")

        grid.get_by_role("button", name="turn", exact=True).click()
        grid.locator("th[aria-sort='ascending']").wait_for(timeout=ACTION_TIMEOUT_MS)
        turns = _sorted_turns(grid, reverse=False)
        assert turns == sorted(turns)
        shot(page, "lab-02-2-sorted")

        # the operation plot fills its output, and follows it when the side panel closes and opens,
        # and when the window narrows and widens again
        plot = page.locator(".js-plotly-plot", has=page.locator(".gtitle", has_text="Accuracy by operation")).first
        _laid_out(page, plot)
        plot.scroll_into_view_if_needed(timeout=ACTION_TIMEOUT_MS)
        shot(page, "lab-02-3-plot")
        _relaid_out(page, plot, lambda: _toggle_left_panel(page))
        shot(page, "lab-02-3-plot-wider")
        _relaid_out(page, plot, lambda: _toggle_left_panel(page))
        _relaid_out(page, plot, lambda: page.set_viewport_size({"width": 1000, "height": 800}))
        _relaid_out(page, plot, lambda: page.set_viewport_size({"width": 1280, "height": 800}))

        # the operation plot filters this grid too
        _click_point(page, plot, "divide")
        grid.locator(".wb-grid-filter").get_by_text("where operation is divide").wait_for(timeout=ACTION_TIMEOUT_MS)
        assert _chosen(menu).startswith("divide (")
        drill.scroll_into_view_if_needed()
        shot(page, "lab-02-5-filtered")

        _choose(menu, "Every group (")
        _wait_count(grid, r"^Showing 1–25 of 252 ")
        _open_and_annotate(page, grid, store, "lab-02")
