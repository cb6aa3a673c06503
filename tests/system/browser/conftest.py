"""What the report browser tests share: Debian's Chromium (every test here skips, saying how to
install it, when it is missing) and one browser per test module, driven by Playwright."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: Debian's Chromium: the browser the tests drive (Playwright's own download does not work offline).
CHROMIUM = Path("/usr/bin/chromium")
_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without Chromium, every test in this folder skips with the line that says how to get it."""
    if CHROMIUM.exists():
        return
    skip = pytest.mark.skip(
        reason=f"the browser tests need Debian's Chromium at {CHROMIUM}; install it: apt-get install -y chromium"
    )
    for item in items:
        if _HERE in item.path.resolve().parents:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium for the module's pages."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the browser tests need Playwright; install it: pip install -e '.[dev]'"
    )
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()
