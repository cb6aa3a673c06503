"""The turn panel asks who is annotating, in a real JupyterLab (issue 33, point 4): with no annotator
(the templates' default now), the panel's "Your name" box asks; a save before a name is refused in
one line; the typed name signs the event; the notebook run again in the same browser takes the
remembered name without asking. It skips only without Chromium or Playwright (``lab_harness``).
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from lab_harness import ACTION_TIMEOUT_MS, RENDER_TIMEOUT_MS, Lab, shot

REPO = Path(__file__).resolve().parents[3]
DEV_SMALL = REPO / "tests" / "fixtures" / "convfinqa" / "dev_small.json"
PREDICTIONS = REPO / "tests" / "fixtures" / "predictions" / "zarifaziz_dev_small.jsonl"
RSG = ("zarifaziz_dev_small", "Double_RSG/2016/page_144.pdf", 2)


def _notebook(store: Path) -> dict[str, Any]:
    cells = [
        "import os\nos.environ.pop('JUPYTERHUB_USER', None)\nimport workbench\n"
        "from workbench.widgets.turn_panel import TurnPanel",
        f"run = workbench.grade_run(workbench.config.resolve(dataset={str(DEV_SMALL)!r}, "
        f"predictions=[{str(PREDICTIONS)!r}]))",
        f"panel = TurnPanel(run, store={str(store)!r}, annotator='')\npanel.show({RSG!r})",
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


def _annotators(store: Path) -> list[str]:
    with closing(sqlite3.connect(store)) as conn:
        return [row[0] for row in conn.execute("SELECT annotator FROM events ORDER BY event_id")]


def test_the_panel_asks_for_the_name_and_the_browser_remembers_it(lab: Lab, tmp_path: Path) -> None:
    store = tmp_path / "annotations.sqlite"
    (lab.root / "named.ipynb").write_text(json.dumps(_notebook(store)), encoding="utf-8")
    with lab.session("named.ipynb", "named") as page:
        lab.run_all(page)
        panel = page.locator(".wb-turn-panel")
        panel.wait_for(timeout=RENDER_TIMEOUT_MS)
        panel.get_by_text("Who is annotating?").wait_for(timeout=ACTION_TIMEOUT_MS)
        panel.locator(".wb-annotate").scroll_into_view_if_needed()
        shot(page, "triage-panel-name-jupyterlab-1280")
        panel.locator("select").select_option(label="Mislabel")
        panel.get_by_role("button", name="Save annotation").click()
        panel.get_by_text("Nothing saved: type your name in the 'Your name' box first").wait_for(
            timeout=ACTION_TIMEOUT_MS
        )
        assert not store.exists() or _annotators(store) == []
        panel.get_by_label("Your name").fill("Lee")
        panel.get_by_role("button", name="Use this name").click()
        panel.get_by_text("Annotating as Lee (remembered in this browser).").wait_for(timeout=ACTION_TIMEOUT_MS)
        panel.get_by_role("button", name="Save annotation").click()
        panel.get_by_text("by Lee.").wait_for(timeout=ACTION_TIMEOUT_MS)
        shot(page, "triage-panel-named-jupyterlab-1280")
        # run again in the same browser: a new panel takes the remembered name
        lab.run_all(page)
        page.locator(".wb-turn-panel").get_by_text("Annotating as Lee (remembered in this browser).").wait_for(
            timeout=RENDER_TIMEOUT_MS
        )
    assert _annotators(store) == ["Lee"]
