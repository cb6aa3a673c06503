"""nbval (--nbval-lax) on every template, parametrized with the small real fixture."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import papermill
import pytest

REPO = Path(__file__).resolve().parents[3]
TEMPLATES = sorted((REPO / "notebooks").glob("*.ipynb"))
FIXTURE_PARAMS = {
    "dataset": str(REPO / "tests/fixtures/convfinqa/dev_small.json"),
    "predictions": str(REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl"),
}
#: Templates that compare systems get both claude runs on the same 12 conversations.
COMPARISON_PARAMS = {
    **FIXTURE_PARAMS,
    "predictions": ";".join(
        str(REPO / "tests/fixtures/predictions" / name)
        for name in ("zarifaziz_dev_small.jsonl", "zarifaziz_dev_small_12-48-44Z.jsonl")
    ),
    "systems": "claude 06-35;claude 12-48",
    "n_boot": 200,
}


def fixture_params(template: Path, tmp_path: Path) -> dict[str, object]:
    params = COMPARISON_PARAMS if "compare" in template.stem else FIXTURE_PARAMS
    if "triage" in template.stem:  # keep test runs out of the default annotation store
        params = {**params, "store": str(tmp_path / "annotations.sqlite")}
    return params


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: p.stem)
def test_template_passes_nbval_on_fixture(template: Path, tmp_path: Path) -> None:
    copy = tmp_path / template.name
    # prepare_only: inject the parameters cell without executing; nbval then runs the copy.
    papermill.execute_notebook(
        str(template),
        str(copy),
        parameters=fixture_params(template, tmp_path),
        prepare_only=True,
        kernel_name="python3",
        progress_bar=False,
    )
    nb = nbformat.read(copy, as_version=4)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval-lax", "-p", "no:cacheprovider", "-q", str(copy)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    n_code = sum(1 for c in nb.cells if c.cell_type == "code")
    assert f"{n_code} passed" in result.stdout, result.stdout[-1000:]
