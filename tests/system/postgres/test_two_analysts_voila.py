"""Two analysts, one PostgreSQL store (issue 33, acceptance "Two analysts"): ``workbench triage``'s
Voila (the workbench page template, a kernel started ahead of the page) serves the triage template on
a throwaway cluster's database; two Chromium browsers at 1280x800 (two analysts' machines, no shared
storage) each type a different name in the "Your name" box and triage the fixture's 3 failed turns.

No item is shown to both while it is leased (the items each page showed are disjoint, and the live
leases are two owners' two keys), both analysts' saves are in the store, and each event is recorded
under the name its analyst typed (none under a shared default name). Skips with one line when
Chromium, Playwright or PostgreSQL is missing.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.system.browser.test_triage_browser import ACTION_TIMEOUT_MS, CHROMIUM, RENDER_TIMEOUT_MS
from tests.system.browser.voila_pages import Watch, prepare, serve, shot
from workbench.annotations.backends import open_store

_SAVED = re.compile(r"^saved #\d+$")


def _named(page: Any, name: str, progress: str) -> str:
    """Type ``name`` in the page's name box; wait for ``progress``; return the item's key line."""
    page.get_by_text("Who is annotating?").wait_for(timeout=RENDER_TIMEOUT_MS)
    page.get_by_text(progress).wait_for(timeout=RENDER_TIMEOUT_MS)
    page.get_by_label("Your name").fill(name)
    page.get_by_label("Your name").press("Enter")
    page.get_by_text(f"Annotating as {name} (remembered in this browser).").wait_for(timeout=ACTION_TIMEOUT_MS)
    return str(page.locator(".wb-key").inner_text()).strip()


def _save(page: Any, button: str, progress: str) -> str:
    """Pick the category ``button``, save, wait for ``progress``; return the next item's key line ("" at the end)."""
    page.get_by_role("button", name=button).click()
    page.get_by_text(re.compile(r"^selected: ")).wait_for(timeout=ACTION_TIMEOUT_MS)
    page.get_by_role("button", name="Save (Enter)").click()
    page.get_by_text(_SAVED).wait_for(timeout=ACTION_TIMEOUT_MS)
    page.get_by_text(progress).wait_for(timeout=ACTION_TIMEOUT_MS)
    return str(page.locator(".wb-key").inner_text()).strip() if page.locator(".wb-key").count() else ""


def test_two_analysts_in_voila_share_one_postgresql_store(pg_url: str, tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"the browser test needs Debian's Chromium at {CHROMIUM}; install it: apt-get install -y chromium")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the browser test needs Playwright; install it: pip install -e '.[dev]'"
    )
    notebook = prepare(tmp_path, store=pg_url)
    shown: dict[str, list[str]] = {"Ana": [], "Bo": []}
    with serve(notebook, tmp_path) as (port, _log), sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            watch = Watch(port)
            # two browser contexts: two analysts' browsers, nothing shared (storage, cookies)
            ana, bo = (
                watch.attach(browser.new_context(viewport={"width": 1280, "height": 800}).new_page()) for _ in "ab"
            )
            ana.goto(f"http://127.0.0.1:{port}/", timeout=RENDER_TIMEOUT_MS)
            shown["Ana"].append(_named(ana, "Ana", "0 of 3 done · item 1 of 3"))
            bo.goto(f"http://127.0.0.1:{port}/", timeout=RENDER_TIMEOUT_MS)
            shown["Bo"].append(_named(bo, "Bo", "0 of 3 done · item 2 of 3 · 1 open by other analysts"))
            with open_store(pg_url) as store:
                live = store.leases().live(time.time())
            shot(ana, "triage-two-analysts-ana")
            shot(bo, "triage-two-analysts-bo")

            # Ana saves; item 2 is on Bo's screen, so Ana's next is item 3
            shown["Ana"].append(_save(ana, "4 Mislabel", "1 of 3 done · item 3 of 3 · 1 open by other analysts"))
            # Bo saves; item 3 is on Ana's screen: Bo is at the end
            shown["Bo"].append(
                _save(bo, "2 Unit inconsistency", "2 of 3 done · end of the queue · 1 open by other analysts")
            )
            shot(bo, "triage-two-analysts-bo-done")
            _save(ana, "7 Other", "3 of 3 done · end of the queue")
            shot(ana, "triage-two-analysts-ana-done")
            elsewhere = watch.elsewhere()
        finally:
            browser.close()

    with open_store(pg_url) as store:
        events = store.events()
    saved = [
        (row["annotator"], f"{row['record_id']} · turn {row['turn']} · system {row['system']}", row["category"])
        for row in events.filter(events["kind"] == "annotation").iter_rows(named=True)
    ]
    seen = [key for keys in shown.values() for key in keys if key]
    assert len(seen) == 3 and len(set(seen)) == 3, shown  # no item shown to both analysts
    assert not set(shown["Ana"]) & set(shown["Bo"]), shown
    assert len(live) == 2 and len({owner for owner, _name in live.values()}) == 2, live  # two analysts, two leases
    assert sorted(saved) == sorted(
        [
            ("Ana", shown["Ana"][0], "mislabel"),
            ("Bo", shown["Bo"][0], "unit_inconsistency"),
            ("Ana", shown["Ana"][1], "other"),
        ]
    ), saved
    assert set(events["annotator"].to_list()) == {"Ana", "Bo"}  # every event under its analyst's own name
    assert elsewhere == {"requested": [], "failed": [], "refused": []}, elsewhere
    n_ana, n_bo = (sum(1 for key in shown[name] if key) for name in ("Ana", "Bo"))
    print(
        f"two analysts, one PostgreSQL store: Ana was shown {n_ana} items, Bo {n_bo}, none shared; {len(saved)} saves"
    )
