"""Fixtures and the terminal summary of the reliability tests (issue 8)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from reliability_support import FAULTS, NOTES


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    if FAULTS:
        terminalreporter.write_line(f"reliability: faults injected: {len(FAULTS)}")
        for name in sorted(set(FAULTS)):
            terminalreporter.write_line(f"  {FAULTS.count(name):3d} x {name}")
    for line in NOTES:
        terminalreporter.write_line(f"reliability: {line}")


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder an unprivileged user can reach (pytest's tmp_path is private to its owner)."""
    folder = Path(tempfile.mkdtemp(prefix="wb-reliability-"))
    os.chmod(folder, 0o755)
    yield folder
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir():
            os.chmod(path, 0o755)
    shutil.rmtree(folder, ignore_errors=True)
