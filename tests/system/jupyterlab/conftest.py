"""The JupyterLab tests' fixtures (:mod:`lab_harness`): a JupyterLab server and Debian's Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest
from lab_harness import CHROMIUM, browser, lab

__all__ = ["browser", "lab"]

_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without Chromium, every test in this folder skips with the line that says how to get it."""
    if CHROMIUM.exists():
        return
    skip = pytest.mark.skip(
        reason=f"the JupyterLab tests need Debian's Chromium at {CHROMIUM}; install it: apt-get install -y chromium"
    )
    for item in items:
        if _HERE in item.path.resolve().parents:
            item.add_marker(skip)
