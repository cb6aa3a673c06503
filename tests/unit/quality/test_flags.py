"""The flag row and the CHECKS table (workbench.quality.flags)."""

from __future__ import annotations

import polars as pl
import pytest

from workbench.quality.flags import checks_frame
from workbench.schema import CHECKS


def test_unknown_category_fails_loudly() -> None:
    row = {"record_id": "R", "turn": 0, "category": "typo", "rule": "x", "evidence": "e", "confidence": 0.5}
    with pytest.raises(pl.exceptions.InvalidOperationError):
        checks_frame([row])
    assert checks_frame([{**row, "category": "mislabel"}]).schema == pl.Schema(CHECKS)
