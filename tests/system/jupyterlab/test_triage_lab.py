"""The triage template in a real JupyterLab (issue 33, point 6): the template takes its first item
when a page shows the view (``wait_for_page``, for Voila's pre-started kernels); in JupyterLab the
notebook's own page shows it, so Run All brings the first item, leased once, under the name the
browser typed. It skips only without Chromium or Playwright (``lab_harness``).
"""

from __future__ import annotations

import time
from pathlib import Path

from lab_harness import ACTION_TIMEOUT_MS, RENDER_TIMEOUT_MS, Lab, shot, template_copy

from workbench.annotations.backends import open_store

REPO = Path(__file__).resolve().parents[3]
DEV_SMALL = REPO / "tests" / "fixtures" / "convfinqa" / "dev_small.json"
PREDICTIONS = REPO / "tests" / "fixtures" / "predictions" / "zarifaziz_dev_small.jsonl"


def test_the_triage_template_shows_its_first_item_in_jupyterlab(lab: Lab, tmp_path: Path) -> None:
    store = tmp_path / "annotations.sqlite"
    name = template_copy(
        lab.root, "03-triage", dataset=str(DEV_SMALL), predictions=str(PREDICTIONS), store=str(store), queue="failed"
    )
    with lab.session(name, "triage-lab") as page:
        lab.run_all(page)
        view = page.locator(".wb-triage-view")
        view.get_by_text("0 of 3 done · item 1 of 3").wait_for(timeout=RENDER_TIMEOUT_MS)
        view.get_by_label("Your name").fill("Kim")
        view.get_by_label("Your name").press("Enter")
        view.get_by_text("Annotating as Kim (remembered in this browser).").wait_for(timeout=ACTION_TIMEOUT_MS)
        shot(page, "triage-jupyterlab-1280")
        view.get_by_role("button", name="4 Mislabel").click()
        view.get_by_role("button", name="Save (Enter)").click()
        view.get_by_text("1 of 3 done · item 2 of 3").wait_for(timeout=ACTION_TIMEOUT_MS)
        with open_store(store) as opened:
            events = opened.events()
            held = opened.leases().live(time.time())
    assert events["annotator"].to_list() == ["Kim"] and events["category"].to_list() == ["mislabel"]
    assert [annotator for _owner, annotator in held.values()] == ["Kim"]  # item 2 is on Kim's screen
