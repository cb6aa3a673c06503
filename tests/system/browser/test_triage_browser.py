"""The triage template as an app: Voila serves ``notebooks/03-triage.ipynb`` on localhost, Debian's
Chromium (driven by Playwright) clicks and types in it, and the SQLite store must hold the event.

This runs within ``make test`` (no marker deselects it); it takes about 10-20 s, most of it Voila
executing the notebook. It skips only when Chromium or Playwright is missing.
"""

from __future__ import annotations

import re
import socket
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import papermill
import pytest

REPO = Path(__file__).resolve().parents[3]
TEMPLATE = REPO / "notebooks" / "03-triage.ipynb"
CHROMIUM = Path("/usr/bin/chromium")
#: Voila executes the whole notebook (grading included) before the page shows the widget.
RENDER_TIMEOUT_MS = 240_000  # safety nets against a hang, not budgets: CI machines are busy
ACTION_TIMEOUT_MS = 120_000
NOTE = "gold contradicts the table <b>really</b>"


def _free_port() -> int:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, server: subprocess.Popen[bytes], log: Path, timeout_s: float = 300.0) -> None:
    """Wait until the server accepts connections (a GET would start a kernel, so only connect)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"voila exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    pytest.fail(f"voila did not listen on port {port} within {timeout_s:.0f} s:\n{log.read_text()[-3000:]}")


def _events(store: Path) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(store)) as conn:
        return conn.execute(
            "SELECT event_id, kind, annotator, category, note, record_id, turn, system FROM events ORDER BY event_id"
        ).fetchall()


def test_voila_app_saves_a_click_and_a_key_press(tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"the browser test needs Debian's Chromium at {CHROMIUM}; install it: apt-get install -y chromium")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the browser test needs Playwright; install it: pip install -e '.[dev]'"
    )

    store = tmp_path / "annotations.sqlite"
    notebook = tmp_path / "03-triage.ipynb"
    # Voila injects no parameters: papermill writes a copy with the parameters cell for the fixture.
    papermill.execute_notebook(
        str(TEMPLATE),
        str(notebook),
        parameters={
            "dataset": str(REPO / "tests/fixtures/convfinqa/dev_small.json"),
            "predictions": str(REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl"),
            "store": str(store),
            "annotator": "browser",
            "queue": "checks",
        },
        prepare_only=True,
        kernel_name="python3",
        progress_bar=False,
    )

    port = _free_port()
    log = tmp_path / "voila.log"
    started = time.monotonic()
    with log.open("wb") as out:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "voila",
                str(notebook),
                "--no-browser",
                f"--port={port}",
                "--Voila.ip=127.0.0.1",
                "--show_tracebacks=True",
            ],
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_for_port(port, server, log)
            with sync_api.sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
                try:
                    page = browser.new_page(viewport={"width": 1400, "height": 1600})
                    page.goto(f"http://127.0.0.1:{port}/", timeout=RENDER_TIMEOUT_MS)
                    mislabel = page.get_by_role("button", name="4 Mislabel")
                    mislabel.wait_for(timeout=RENDER_TIMEOUT_MS)
                    page.get_by_text("done 0 / in queue 2 (item 1 of 2)").wait_for(timeout=ACTION_TIMEOUT_MS)

                    # a click, a typed note, Save
                    mislabel.click()
                    page.get_by_text("selected: Mislabel").wait_for(timeout=ACTION_TIMEOUT_MS)
                    page.get_by_placeholder("why (optional)").fill(NOTE)
                    page.get_by_role("button", name="Save (Enter)").click()
                    saved = page.get_by_text(re.compile(r"^saved #\d+$"))
                    saved.wait_for(timeout=ACTION_TIMEOUT_MS)
                    first_id = int(saved.inner_text().split("#")[1])
                    page.get_by_text("done 1 / in queue 2 (item 2 of 2)").wait_for(timeout=ACTION_TIMEOUT_MS)
                    after_click = _events(store)

                    # keys (ipyevents): with the mouse over the item, 2 then Enter
                    page.locator(".wb-question").hover()
                    page.keyboard.press("2")
                    page.get_by_text("selected: Unit inconsistency").wait_for(timeout=ACTION_TIMEOUT_MS)
                    page.keyboard.press("Enter")
                    page.get_by_text("done 2 / in queue 2 (end of the queue)").wait_for(timeout=ACTION_TIMEOUT_MS)
                    page.get_by_text("All 2 items done (2 annotated)", exact=False).wait_for(timeout=ACTION_TIMEOUT_MS)
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
    assert (record_id, turn, system) == ("Single_UNP/2008/page_77.pdf-2", 4, None)  # the most confident flag
    assert [row[3] for row in after_keys] == ["mislabel", "unit_inconsistency"]
    assert after_keys[1][5:] == ("Single_CDNS/2018/page_31.pdf-1", 2, None)
    print(f"the browser test took {elapsed:.0f} s")  # a figure, not a budget (CI machines are busy)
