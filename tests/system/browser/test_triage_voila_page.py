"""The triage as ``workbench triage`` serves it (issue 33, points 6 and the acceptance "Voila without
a CDN"): Voila with the workbench page template and one kernel started ahead of any page.

- A pre-started kernel runs the whole template (a probe cell appended to the copy writes a file when
  it is done) and holds no lease: the store has no lease row at all.
- A page in Debian's Chromium at 1280x800, whose browser remembers the analyst's name, gets that
  kernel; its first item shows and only then is it leased, under the analyst's name. The kernel
  Voila starts next, to refill its pool, runs the template too and takes nothing.
- From the page request until the item is shown, the page asks no other host for anything: no
  request, no failed request and no Content-Security-Policy refusal (checked to be seen: a fetch
  to a CDN made on purpose at the end is refused and recorded). Its HTML names no CDN.

Skips only when Chromium or Playwright is missing (tests/system/browser/conftest.py).
"""

from __future__ import annotations

import re
import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest

from tests.system.browser.test_triage_browser import CHROMIUM, RENDER_TIMEOUT_MS
from tests.system.browser.voila_pages import Watch, prepare, serve, shot, wait_for_markers
from workbench.annotations.backends import open_store

#: A link to another host in the page's HTML (a stylesheet, script, image or module).
_LINK_ELSEWHERE = re.compile(r"""(?:href|src)\s*=\s*["']?(?:https?:)?//(?!127\.0\.0\.1)""", re.IGNORECASE)
_CDNS = ("cdn.jsdelivr.net", "cdnjs.cloudflare.com", "unpkg.com", "fontawesome")


def _lease_rows(store: Path) -> int:
    """Lease rows ever written to the SQLite store (its lease table is made by the first lease)."""
    with closing(sqlite3.connect(store)) as conn:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'leases'").fetchone():
            return 0
        return int(conn.execute("SELECT count(*) FROM leases").fetchone()[0])


def _live(store: Path) -> dict[tuple[str, int, str | None], str]:
    """The leases held now: key -> the analyst's name."""
    with open_store(store) as opened:
        return {key: annotator for key, (_owner, annotator) in opened.leases().live(time.time()).items()}


def test_a_pre_started_kernel_waits_for_the_page_which_asks_no_other_host(tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"the browser test needs Debian's Chromium at {CHROMIUM}; install it: apt-get install -y chromium")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the browser test needs Playwright; install it: pip install -e '.[dev]'"
    )
    store, markers = tmp_path / "annotations.sqlite", tmp_path / "ran"
    notebook = prepare(tmp_path, store=str(store), markers=markers)
    with serve(notebook, tmp_path) as (port, log):
        (ahead,) = wait_for_markers(markers, 1, log)
        assert ahead.read_text() == "True"  # Voila's pre-started kernel ran the template, view included
        assert store.is_file() and _lease_rows(store) == 0, "a kernel with no page took a lease"

        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
            try:
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                # an analyst who named themselves on an earlier visit (analyst.js keeps it)
                context.add_init_script("window.localStorage.setItem('workbench.analyst', 'Ana')")
                watch = Watch(port)
                page = watch.attach(context.new_page())
                asked = time.monotonic()
                response = page.goto(f"http://127.0.0.1:{port}/", timeout=RENDER_TIMEOUT_MS)
                page.get_by_text("0 of 3 done · item 1 of 3").wait_for(timeout=RENDER_TIMEOUT_MS)
                first_item_s = time.monotonic() - asked
                page.get_by_text("Annotating as Ana (remembered in this browser).").wait_for(timeout=RENDER_TIMEOUT_MS)
                html = response.text()
                shot(page, "triage-voila-preheated")
                clean = watch.elsewhere()
                held = _live(store)
                assert "Using pre-heated kernel" in log.read_text()

                # the kernel Voila starts to refill its pool runs the template and takes nothing
                refill = wait_for_markers(markers, 2, log)[-1]
                assert refill.read_text() == "True"
                held_after_refill, rows = _live(store), _lease_rows(store)

                # the watch sees a refusal when there is one: a fetch from a CDN, made on purpose
                page.evaluate("fetch('https://cdn.jsdelivr.net/npm/x.css').catch(() => null)")
                page.wait_for_function("window.__refused.length > 0", timeout=RENDER_TIMEOUT_MS)
                control = watch.elsewhere()
            finally:
                browser.close()

    assert clean == {"requested": [], "failed": [], "refused": []}, clean
    assert not _LINK_ELSEWHERE.search(html), _LINK_ELSEWHERE.search(html)
    assert not [cdn for cdn in _CDNS if cdn in html.lower()]
    assert len(watch.requests) > 10  # the page, its scripts and styles, the kernel's WebSocket: all watched
    assert list(held.values()) == ["Ana"], held  # the page's first item, leased once the page showed it
    assert held_after_refill == held and rows == 1, (held_after_refill, rows)
    assert control["refused"] == ["https://cdn.jsdelivr.net/npm/x.css"], control
    print(
        f"first item {first_item_s:.1f} s after the page request (pre-started kernel); {len(watch.requests)} requests, all to 127.0.0.1:{port}"
    )
