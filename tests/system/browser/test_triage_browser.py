"""The triage template as an app: Voila serves ``notebooks/03-triage.ipynb`` on localhost, Debian's
Chromium (driven by Playwright) at 1280x800 clicks and types in it, and the SQLite store must hold the
events; a second page (another kernel) shares the queue, and a new page resumes where the work stopped.

This runs within ``make test`` (no marker deselects it); it takes about a minute (three pages, each a
kernel running the notebook), more on a busy machine. It skips only when Chromium or Playwright is missing.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from tests.system.browser.voila_pages import REPO, _free_port, _wait_for_port, prepare

CHROMIUM = Path("/usr/bin/chromium")
#: Voila executes the whole notebook (grading included) before the page shows the widget.
RENDER_TIMEOUT_MS = 240_000  # safety nets against a hang, not budgets: CI machines are busy
ACTION_TIMEOUT_MS = 120_000
NOTE = "gold contradicts the table <b>really</b>"


def _events(store: Path) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(store)) as conn:
        return conn.execute(
            "SELECT event_id, kind, annotator, category, note, record_id, turn, system FROM events ORDER BY event_id"
        ).fetchall()


def _inside(page, name: str) -> bool:  # type: ignore[no-untyped-def]
    """Whether the button named ``name`` lies wholly inside the 1280x800 viewport (no scrolling)."""
    box = page.get_by_role("button", name=name, exact=True).bounding_box()
    return (
        box is not None
        and box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= 1280
        and (box["y"] + box["height"] <= 800)
    )


def test_voila_app_fits_the_screen_resumes_and_shares_the_queue(tmp_path: Path) -> None:
    """At 1280x800: the first item's category buttons and Save are on the first screen; a click and
    a key press are saved; a second analyst's page (another kernel) skips the item on the first
    one's screen; after two saves and a skip, a new page resumes at item 3; no request leaves
    127.0.0.1."""
    if not CHROMIUM.exists():
        pytest.skip(f"the browser test needs Debian's Chromium at {CHROMIUM}; install it: apt-get install -y chromium")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the browser test needs Playwright; install it: pip install -e '.[dev]'"
    )

    store = tmp_path / "annotations.sqlite"
    notebook = prepare(tmp_path, store=str(store), annotator="browser")  # Voila injects no parameters

    port = _free_port()
    log = tmp_path / "voila.log"
    outside: list[str] = []
    first_item_s: list[float] = []
    started = time.monotonic()
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "voila", str(notebook), "--no-browser", f"--port={port}", "--show_tracebacks=True"],
            cwd=REPO,  # voila.json there: 127.0.0.1 and the page's Content-Security-Policy
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_for_port(port, server, log)
            with sync_api.sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])

                def open_page(progress: str):  # type: ignore[no-untyped-def]
                    page = browser.new_page(viewport={"width": 1280, "height": 800})

                    def route(route) -> None:  # type: ignore[no-untyped-def]
                        url = route.request.url
                        if url.startswith(("http://127.0.0.1:", "ws://127.0.0.1:")):
                            route.continue_()
                        else:  # would leave the machine: recorded and refused
                            outside.append(url)
                            route.abort()

                    page.route("**/*", route)
                    asked = time.monotonic()
                    page.goto(f"http://127.0.0.1:{port}/", timeout=RENDER_TIMEOUT_MS)
                    page.get_by_text(progress).wait_for(timeout=RENDER_TIMEOUT_MS)
                    first_item_s.append(time.monotonic() - asked)
                    return page

                try:
                    ana = open_page("0 of 3 done · item 1 of 3")
                    # the whole decision on the first screen
                    buttons = [b.inner_text() for b in ana.locator(".wb-triage-view .widget-button").all()]
                    categories = [b for b in buttons if b[:1].isdigit()]
                    assert len(categories) == 7, buttons
                    off_screen = [n for n in [*categories, "Save (Enter)", "Undo (u, ctrl+z)"] if not _inside(ana, n)]
                    assert not off_screen, f"not on the first 1280x800 screen: {off_screen}"
                    assert ana.evaluate("document.scrollingElement.scrollTop") == 0

                    # a click, a typed note, Save
                    ana.get_by_role("button", name="4 Mislabel").click()
                    ana.get_by_text("selected: Mislabel").wait_for(timeout=ACTION_TIMEOUT_MS)
                    ana.get_by_placeholder("why (optional)").fill(NOTE)
                    ana.get_by_role("button", name="Save (Enter)").click()
                    saved = ana.get_by_text(re.compile(r"^saved #\d+$"))
                    saved.wait_for(timeout=ACTION_TIMEOUT_MS)
                    first_id = int(saved.inner_text().split("#")[1])
                    ana.get_by_text("1 of 3 done · item 2 of 3").wait_for(timeout=ACTION_TIMEOUT_MS)
                    after_click = _events(store)

                    # keys (ipyevents): with the mouse over the item, 2 then Enter
                    ana.locator(".wb-question").hover()
                    ana.keyboard.press("2")
                    ana.get_by_text("selected: Unit inconsistency").wait_for(timeout=ACTION_TIMEOUT_MS)
                    ana.keyboard.press("Enter")
                    ana.get_by_text("2 of 3 done · item 3 of 3").wait_for(timeout=ACTION_TIMEOUT_MS)

                    # a second analyst (another kernel, another process): item 3 is on ana's screen
                    bo = open_page("2 of 3 done · end of the queue · 1 open by other analysts")
                    bo.close()

                    # ana skips item 3 (its lease is released); a new page resumes there
                    ana.get_by_role("button", name="Skip (s, →)").click()
                    ana.get_by_text("2 of 3 done · end of the queue").wait_for(timeout=ACTION_TIMEOUT_MS)
                    ana.close()
                    again = open_page("2 of 3 done · item 3 of 3")
                    again.close()
                finally:
                    browser.close()
            after_keys = _events(store)
        finally:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=15)
    elapsed = time.monotonic() - started

    assert len(after_click) == 1, after_click
    event_id, kind, annotator, category, note, record_id, turn, system = after_click[0]
    assert (event_id, kind, annotator, category, note) == (first_id, "annotation", "browser", "mislabel", NOTE)
    assert system is not None  # a failed turn of the run's system
    assert [row[3] for row in after_keys] == ["mislabel", "unit_inconsistency"]
    assert outside == [], f"requests to other hosts: {outside}"
    # figures, not budgets (CI machines are busy)
    print(f"first item {', '.join(f'{s:.1f}' for s in first_item_s)} s after each page request; test {elapsed:.0f} s")
