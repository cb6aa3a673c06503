"""The triage asks who is annotating (issue 33, point 4): Voila serves ``03-triage.ipynb`` with no
annotator; Debian's Chromium at 1280x800 sees the "Your name" box, a save before a name is refused
in one line, the typed name signs the event, and a second page in the same browser (another
kernel) takes the remembered name without asking. Skips only when Chromium or Playwright is missing.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from tests.system.browser.test_triage_browser import (
    ACTION_TIMEOUT_MS,
    CHROMIUM,
    RENDER_TIMEOUT_MS,
    REPO,
    _free_port,
    _wait_for_port,
)
from tests.system.browser.voila_pages import prepare

#: Screenshots of the prompt go here when ``WORKBENCH_SHOTS`` names a folder.
SHOTS = os.environ.get("WORKBENCH_SHOTS", "")


def _shot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"))


def _annotators(store: Path) -> list[str]:
    with closing(sqlite3.connect(store)) as conn:
        return [row[0] for row in conn.execute("SELECT annotator FROM events ORDER BY event_id")]


def test_voila_asks_for_the_name_once_per_browser(tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"the browser test needs Debian's Chromium at {CHROMIUM}; install it: apt-get install -y chromium")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the browser test needs Playwright; install it: pip install -e '.[dev]'"
    )
    store = tmp_path / "annotations.sqlite"
    notebook = prepare(tmp_path, store=str(store))  # Voila injects no parameters
    port = _free_port()
    log = tmp_path / "voila.log"
    env = {k: v for k, v in os.environ.items() if k != "JUPYTERHUB_USER"}
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "voila", str(notebook), "--no-browser", f"--port={port}"],
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
        try:
            _wait_for_port(port, server, log)
            with sync_api.sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                try:
                    page = context.new_page()
                    page.goto(f"http://127.0.0.1:{port}/", timeout=RENDER_TIMEOUT_MS)
                    page.get_by_text("Who is annotating?").wait_for(timeout=RENDER_TIMEOUT_MS)
                    _shot(page, "triage-name-prompt")
                    page.get_by_role("button", name="4 Mislabel").click()
                    page.get_by_role("button", name="Save (Enter)").click()
                    page.get_by_text("nothing saved: type your name in the 'Your name' box above first").wait_for(
                        timeout=ACTION_TIMEOUT_MS
                    )
                    assert _annotators(store) == []
                    page.get_by_label("Your name").fill("analyst")
                    page.get_by_role("button", name="Use this name").click()
                    page.get_by_text("Not used: 'analyst' is a shared default name").wait_for(timeout=ACTION_TIMEOUT_MS)
                    page.get_by_label("Your name").fill("Dana")
                    page.get_by_label("Your name").press("Enter")
                    page.get_by_text("Annotating as Dana (remembered in this browser).").wait_for(
                        timeout=ACTION_TIMEOUT_MS
                    )
                    page.get_by_role("button", name="4 Mislabel").click()
                    page.get_by_role("button", name="Save (Enter)").click()
                    page.get_by_text("1 of 3 done").wait_for(timeout=ACTION_TIMEOUT_MS)
                    _shot(page, "triage-name-given")
                    page.close()
                    # the same browser, a new page and kernel: the name comes back without asking
                    again = context.new_page()
                    again.goto(f"http://127.0.0.1:{port}/", timeout=RENDER_TIMEOUT_MS)
                    again.get_by_text("Annotating as Dana (remembered in this browser).").wait_for(
                        timeout=RENDER_TIMEOUT_MS
                    )
                    again.get_by_role("button", name="2 Unit inconsistency").click()
                    again.get_by_role("button", name="Save (Enter)").click()
                    again.get_by_text("2 of 3 done").wait_for(timeout=ACTION_TIMEOUT_MS)
                    again.close()
                finally:
                    browser.close()
        finally:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=15)
    assert _annotators(store) == ["Dana", "Dana"]
