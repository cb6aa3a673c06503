"""The 02 error-slices page on a phone (390x844, Debian's Chromium, offline) when its inputs have long
names: the overview names each input file in code (a file outside the project shows as its folder's
name and its own), and a nightly job's folder name can run to 60 characters without a place to break.
That one word made the page 461 px wide and scroll sideways. Asserted: the page never scrolls
sideways, every path in code stays on the screen (it wraps inside its line), and every block of code
scrolls in its own box. The same page at 1280x800 keeps each short path on one line.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from workbench.report.runner import run_template

pytest.importorskip(
    "playwright.sync_api", reason="the browser test needs Playwright; install it: pip install -e '.[dev]'"
)

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures"
#: A nightly job's run folder: one word of 64 characters (underscores and digits give no place to break).
LONG_FOLDER = "claude_sonnet_4_6_nightly_outputs_2026_05_04T06_35_00Z_full_dev"
PHONE, WIDE = {"width": 390, "height": 844}, {"width": 1280, "height": 800}
TIMEOUT_MS = 120_000  # a safety net against a hang, not a budget

#: Where each code element and block lies, and how wide the page is, with every folded part open.
_MEASURE = """() => {
  for (const d of document.querySelectorAll('main details')) { d.open = true; }
  const codes = Array.from(document.querySelectorAll('main code')).filter(c => !c.closest('pre'))
    .filter(c => c.checkVisibility());
  const blocks = Array.from(document.querySelectorAll('main pre')).filter(p => p.checkVisibility());
  return {
    page: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
    codes: codes.map(c => ({text: c.textContent, right: c.getBoundingClientRect().right,
                            lines: c.getClientRects().length})),
    blocks: blocks.map(p => ({right: p.getBoundingClientRect().right, scrolls: getComputedStyle(p).overflowX})),
  };
}"""


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 02 page of the small ConvFinQA fixture, its predictions in a folder with a long name."""
    inputs = tmp_path_factory.mktemp("inputs") / LONG_FOLDER
    inputs.mkdir()
    predictions = inputs / "predictions_claude_sonnet_4_6.jsonl"
    shutil.copy(FIXTURES / "predictions" / "zarifaziz_dev_small.jsonl", predictions)
    parameters = {
        "dataset": str(FIXTURES / "convfinqa" / "dev_small.json"),
        "predictions": str(predictions),
        "n_boot": 50,
    }
    result = run_template("02-error-slices", parameters=parameters, out_dir=tmp_path_factory.mktemp("r02"))
    assert LONG_FOLDER in result.html.read_text(encoding="utf-8"), "the overview no longer names the input file"
    return result.html


def _measure(browser: Any, page_file: Path, viewport: dict[str, int]) -> dict[str, Any]:
    context = browser.new_context(offline=True, viewport=viewport)
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(page_file.as_uri(), wait_until="load")
        return dict(page.evaluate(_MEASURE))
    finally:
        context.close()


def test_the_02_page_never_scrolls_sideways_on_a_phone_with_a_long_path(browser: Any, page_file: Path) -> None:
    found = _measure(browser, page_file, PHONE)
    long_path = [c for c in found["codes"] if LONG_FOLDER in c["text"]]
    assert long_path, f"no code names the input file: {[c['text'] for c in found['codes']]}"
    assert found["page"] <= PHONE["width"], f"the page is {found['page']} px wide at {PHONE['width']} px"
    off_screen = [c for c in found["codes"] if c["right"] > PHONE["width"]]
    assert off_screen == [], f"code past the screen's edge: {off_screen}"
    assert all(c["lines"] > 1 for c in long_path), f"the long path did not wrap: {long_path}"
    assert found["blocks"], "no block of code (the run manifest) on the page"
    for block in found["blocks"]:
        assert block["right"] <= PHONE["width"] and block["scrolls"] in ("auto", "scroll"), block
    print(f"at 390x844: page {found['page']} px; {len(found['codes'])} code paths, {len(found['blocks'])} blocks")


def test_the_02_page_keeps_short_paths_whole_on_a_wide_screen(browser: Any, page_file: Path) -> None:
    found = _measure(browser, page_file, WIDE)
    assert found["page"] <= WIDE["width"]
    short = [c for c in found["codes"] if len(c["text"]) <= 40]
    assert short and all(c["lines"] == 1 for c in short), short
