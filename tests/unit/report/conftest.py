"""Fixtures of the runner's unit tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest


@pytest.fixture
def executed(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Papermill replaced by a stand-in (no kernel starts) that records the parameters of every
    template run; the "executed" notebook is the template itself."""
    import papermill

    calls: list[dict[str, Any]] = []

    def execute_notebook(source: str, target: str, *, parameters: dict[str, Any], **_: Any) -> None:
        calls.append({"template": Path(source).stem, **parameters})
        nbformat.write(nbformat.read(source, as_version=4), target)

    monkeypatch.setattr(papermill, "execute_notebook", execute_notebook)
    return calls
