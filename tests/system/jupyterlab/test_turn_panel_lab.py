"""The failed-turn panel in a real JupyterLab: a server on 127.0.0.1 with a token, Debian's Chromium
(driven by Playwright) at 1280x800 runs a notebook that shows the panel, reads what it shows, annotates
from it, and the SQLite store must hold the event.

What it checks that the headless tests cannot: the raw output's two dollar amounts ("$2.7 million and
$37.8 million") reach the screen as text, while JupyterLab's MathJax, which typesets a control output
beside it, leaves the panel alone; the form's controls work in the browser; the outcome is one line.

The server and the browser are this folder's (``lab_harness``); it skips only without Chromium or Playwright.
"""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from lab_harness import ACTION_TIMEOUT_MS, RENDER_TIMEOUT_MS, Lab, shot

REPO = Path(__file__).resolve().parents[3]
DEV_SMALL = REPO / "tests" / "fixtures" / "convfinqa" / "dev_small.json"
PREDICTIONS = REPO / "tests" / "fixtures" / "predictions" / "zarifaziz_dev_small.jsonl"
#: A failed turn whose raw output holds two dollar amounts.
RSG = ("zarifaziz_dev_small", "Double_RSG/2016/page_144.pdf", 2)
DOLLARS = "current liabilities of $2.7 million and $37.8 million, respectively"


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


def test_panel_in_jupyterlab_shows_dollars_as_text_and_annotates(lab: Lab, tmp_path: Path) -> None:
    store = tmp_path / "annotations.sqlite"
    (lab.root / "panel.ipynb").write_text(json.dumps(_notebook(store)), encoding="utf-8")
    with lab.session("panel.ipynb", "panel") as page:
        lab.run_all(page)
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
        panel.scroll_into_view_if_needed()
        shot(page, "panel-jupyterlab-1280")

        # annotate: a category, a corrected answer, Save; one line says what was saved
        panel.locator("select").select_option(label="Mislabel")
        panel.get_by_placeholder("the right gold answer (optional)").fill("37.8")
        panel.get_by_role("button", name="Save annotation").click()
        status = panel.locator(".wb-panel-status")
        status.get_by_text(re.compile(r"^Saved annotation #1: Mislabel")).wait_for(timeout=ACTION_TIMEOUT_MS)
        panel.locator("td", has_text="lab analyst").first.wait_for(timeout=ACTION_TIMEOUT_MS)
        panel.locator(".wb-annotate").scroll_into_view_if_needed()
        shot(page, "panel-jupyterlab-annotated-1280")

        # a program that does not parse: one line, no traceback on the screen
        panel.get_by_placeholder(re.compile(r"^the right gold program")).fill("subtract(2.7,")
        panel.get_by_role("button", name="Save annotation").click()
        status.get_by_text(re.compile(r"^Error: annotation: field 'corrected_program'")).wait_for(
            timeout=ACTION_TIMEOUT_MS
        )
        assert "Traceback" not in panel.inner_text()
        shot(page, "panel-jupyterlab-error-1280")

    assert _events(store) == [("annotation", "lab analyst", RSG[1], RSG[2], None, "mislabel", "37.8")]
