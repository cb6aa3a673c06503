"""The failed-turn panel in a real JupyterLab: a server on 127.0.0.1 with a token, Debian's Chromium
(driven by Playwright) at 1280x800 runs a notebook that shows the panel, reads what it shows, annotates
from it, and the SQLite store must hold the event.

What it checks that the headless tests cannot: the raw output's two dollar amounts ("$2.7 million and
$37.8 million") reach the screen as text, while JupyterLab's MathJax, which typesets a control output
beside it, leaves the panel alone; the form's controls work in the browser; the outcome is one line.

This runs within ``make test`` (no marker deselects it); it takes about a minute (a JupyterLab server
and a kernel), more on a busy machine. It skips only when Chromium or Playwright is missing.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
DEV_SMALL = REPO / "tests" / "fixtures" / "convfinqa" / "dev_small.json"
PREDICTIONS = REPO / "tests" / "fixtures" / "predictions" / "zarifaziz_dev_small.jsonl"
#: A failed turn whose raw output holds two dollar amounts.
RSG = ("zarifaziz_dev_small", "Double_RSG/2016/page_144.pdf", 2)
DOLLARS = "current liabilities of $2.7 million and $37.8 million, respectively"
SHOTS = Path(os.environ.get("WORKBENCH_SHOTS", "")) if os.environ.get("WORKBENCH_SHOTS") else None
#: JupyterLab, its kernel and the grading before the panel shows: safety nets against a hang, not budgets.
RENDER_TIMEOUT_MS = 300_000
ACTION_TIMEOUT_MS = 120_000


def _free_port() -> int:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, server: subprocess.Popen[bytes], log: Path, timeout_s: float = 300.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"jupyter lab exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    pytest.fail(f"jupyter lab did not listen on port {port} within {timeout_s:.0f} s:\n{log.read_text()[-3000:]}")


def _notebook(store: Path) -> dict[str, Any]:
    """A notebook that grades the fixture, shows the panel of :data:`RSG` (row 2 of 3, a grid's
    ``navigate`` standing in), and, as a control, an HTML output whose ``$...$`` MathJax typesets."""
    cells = [
        "import workbench\nfrom IPython.display import HTML\nfrom workbench.widgets.turn_panel import TurnPanel",
        f"run = workbench.grade_run(workbench.config.resolve(dataset={str(DEV_SMALL)!r}, "
        f"predictions=[{str(PREDICTIONS)!r}]))",
        f"panel = TurnPanel(run, store={str(store)!r}, annotator='lab analyst')\n"
        "steps = []\npanel.navigate = steps.append\n"
        f"panel.show({RSG!r}, position=(1, 3))",
        "HTML('<p class=\"wb-mathjax-control\">control: $x^2$ and $y$</p>')",
        "panel.widget",
    ]
    return {
        "cells": [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
            for source in cells
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _events(store: Path) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(store)) as conn:
        return conn.execute(
            "SELECT kind, annotator, record_id, turn, system, category, corrected_answer FROM events ORDER BY event_id"
        ).fetchall()


def test_panel_in_jupyterlab_shows_dollars_as_text_and_annotates(tmp_path: Path, browser: Any) -> None:
    store = tmp_path / "annotations.sqlite"
    (tmp_path / "panel.ipynb").write_text(json.dumps(_notebook(store)), encoding="utf-8")
    port, token = _free_port(), secrets.token_hex(16)
    log = tmp_path / "lab.log"
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
    }
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={tmp_path}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.news_url=None",
        "--LabApp.extension_manager=readonly",
    ]
    if os.geteuid() == 0:  # a container's root: JupyterLab refuses it without this
        command.append("--allow-root")
    # no news toast over the page: the notification settings say "never fetch"
    settings = tmp_path / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}), encoding="utf-8")
    outside: list[str] = []
    with log.open("wb") as out:
        server = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            _wait_for_port(port, server, log)
            page = browser.new_page(viewport={"width": 1280, "height": 800})

            def route(route: Any) -> None:
                url = route.request.url
                if url.startswith(("http://127.0.0.1:", "ws://127.0.0.1:")):
                    route.continue_()
                else:  # would leave the machine: recorded and refused
                    outside.append(url)
                    route.abort()

            page.route("**/*", route)
            try:
                page.goto(f"http://127.0.0.1:{port}/lab/tree/panel.ipynb?token={token}", timeout=RENDER_TIMEOUT_MS)
                page.locator(".jp-Notebook").first.wait_for(timeout=RENDER_TIMEOUT_MS)
                # the kernel is up (the status bar says so) before Run All
                page.get_by_text(re.compile(r"Python 3 \(ipykernel\) \| Idle")).wait_for(timeout=RENDER_TIMEOUT_MS)
                page.get_by_role("menuitem", name="Run", exact=True).click()
                page.get_by_role("menuitem", name=re.compile(r"^Run All Cells")).click()
                panel = page.locator(".wb-turn-panel")
                panel.wait_for(timeout=RENDER_TIMEOUT_MS)

                # MathJax is at work in this JupyterLab (the control is typeset) but not in the panel
                page.locator(".wb-mathjax-control mjx-container").first.wait_for(timeout=ACTION_TIMEOUT_MS)
                raw = panel.locator("pre.wb-raw")
                assert DOLLARS in raw.inner_text()
                assert panel.locator("mjx-container").count() == 0
                assert "Double_RSG/2016/page_144.pdf, turn 2" in panel.locator(".wb-panel-title").inner_text()
                assert "row 2 of 3" in panel.locator(".wb-panel-title").inner_text()
                document = panel.locator(".wb-doc").inner_text()
                assert "republic services" in document and "fuel hedges" in document
                if SHOTS is not None:
                    panel.scroll_into_view_if_needed()
                    page.screenshot(path=str(SHOTS / "panel-jupyterlab-1280.png"))

                # annotate: a category, a corrected answer, Save; one line says what was saved
                panel.locator("select").select_option(label="Mislabel")
                panel.get_by_placeholder("the right gold answer (optional)").fill("37.8")
                panel.get_by_role("button", name="Save annotation").click()
                status = panel.locator(".wb-panel-status")
                status.get_by_text(re.compile(r"^Saved annotation #1: Mislabel")).wait_for(timeout=ACTION_TIMEOUT_MS)
                panel.locator("td", has_text="lab analyst").first.wait_for(timeout=ACTION_TIMEOUT_MS)
                if SHOTS is not None:
                    panel.locator(".wb-annotate").scroll_into_view_if_needed()
                    page.screenshot(path=str(SHOTS / "panel-jupyterlab-annotated-1280.png"))

                # a program that does not parse: one line, no traceback on the screen
                panel.get_by_placeholder(re.compile(r"^the right gold program")).fill("subtract(2.7,")
                panel.get_by_role("button", name="Save annotation").click()
                status.get_by_text(re.compile(r"^Error: annotation: field 'corrected_program'")).wait_for(
                    timeout=ACTION_TIMEOUT_MS
                )
                assert "Traceback" not in panel.inner_text()
                if SHOTS is not None:
                    page.screenshot(path=str(SHOTS / "panel-jupyterlab-error-1280.png"))
            except Exception:
                page.screenshot(path=str(tmp_path / "failed.png"))  # what the page showed, beside lab.log
                raise
            finally:
                page.close()
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=20)

    assert _events(store) == [("annotation", "lab analyst", RSG[1], RSG[2], None, "mislabel", "37.8")]
    assert outside == [], f"requests to other hosts: {outside}"
