"""The error-slices template (02) run as a report on the full dev set."""

from __future__ import annotations

import re
from pathlib import Path

from workbench.report.runner import run_template


def test_error_slices_report_prints_flags_and_evidence(tmp_path: Path) -> None:
    """The 02 template on the full dev set and one run: flag counts per category and the
    evidence of the '1877' turn are in the offline HTML."""
    result = run_template("02-error-slices", parameters={"n_boot": 200}, out_dir=tmp_path)
    page = result.html.read_text(encoding="utf-8")
    assert "Data-quality flags per category" in page
    assert "display answer &#39;1877&#39;" in page or "display answer '1877'" in page
    assert "Error type by operation" in page and "Accuracy by operation" in page
    assert not re.search(r"<script[^>]+src=", page)
