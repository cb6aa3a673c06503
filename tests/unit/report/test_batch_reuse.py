"""A batch grades an input its sets share once (issue 35, point 2): the comparison of two runs takes
the grades of each run's own pages (:mod:`workbench.pipeline.reuse`), two reports at a time as one
after another, and writes the graded folder grading afresh writes, byte for byte.

Real outputs: the first lines of the two bundled Rho-Math 7B runs on MATH-500, in the bundled
batch's shape (each run's overview, then their comparison). Papermill is replaced by a stand-in
(no kernel starts): what is checked is the runner's side.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest

from workbench.config import resolve
from workbench.pipeline import reuse as reuse_module
from workbench.pipeline.graded import graded_paths
from workbench.pipeline.run import grade_run
from workbench.report.batch import load_batch, run_batch

MATH = Path(__file__).resolve().parents[3] / "data/predictions/math"
COT = MATH / "microsoft-rho-math-7b/test_cot_-1_seed0_t0.0_s0_e-1.jsonl"
TOOL = MATH / "microsoft-rho-math-7b-interpreter/test_tora_-1_seed0_t0.0_s0_e-1.jsonl"
LINES = 12


@pytest.fixture
def kept(monkeypatch: pytest.MonkeyPatch) -> list[reuse_module.GradeReuse]:
    """Every :class:`GradeReuse` a batch makes; papermill replaced by a stand-in that copies the template."""
    import papermill

    made: list[reuse_module.GradeReuse] = []

    class Recorded(reuse_module.GradeReuse):
        def __init__(self, **options: Any) -> None:
            super().__init__(**options)
            made.append(self)

    def execute_notebook(source: str, target: str, **_: Any) -> None:
        nbformat.write(nbformat.read(source, as_version=4), target)

    monkeypatch.setattr(reuse_module, "GradeReuse", Recorded)
    monkeypatch.setattr(papermill, "execute_notebook", execute_notebook)
    return made


@pytest.mark.parametrize("workers", [1, 2])
def test_the_comparison_takes_its_runs_grades_and_writes_what_grading_afresh_writes(
    tmp_path: Path, kept: list[reuse_module.GradeReuse], workers: int
) -> None:
    cot, tool = tmp_path / "cot.jsonl", tmp_path / "tool.jsonl"
    for source, target in ((COT, cot), (TOOL, tool)):
        target.write_text("\n".join(source.read_text(encoding="utf-8").splitlines()[:LINES]) + "\n", encoding="utf-8")
    config = tmp_path / "batch.yaml"
    config.write_text(
        f"out: {tmp_path / 'out'}\nreports:\n"
        f"  - template: 01-overview\n    dataset: none\n    predictions: [{cot}]\n    systems: [cot]\n"
        f"  - template: 01-overview\n    dataset: none\n    predictions: [{tool}]\n    systems: [tool]\n"
        f"  - template: 04-compare-systems\n    dataset: none\n    predictions: [{cot}, {tool}]\n"
        "    systems: [cot, tool]\n",
        encoding="utf-8",
    )
    outcomes = list(run_batch(load_batch(config), workers=workers))
    assert [o.error for o in outcomes] == [None, None, None]
    (reuse,) = kept
    assert reuse.reused >= 2 * LINES, "every output of the comparison was graded for its run's page"
    (folder,) = (tmp_path / "out/04-compare-systems").glob("*.graded")
    fresh = tmp_path / "fresh"
    grade_run(resolve(dataset=None, predictions=[cot, tool], systems=["cot", "tool"])).write(fresh)
    for name, path in graded_paths(folder).items():
        assert path.read_bytes() == graded_paths(fresh)[name].read_bytes(), name
