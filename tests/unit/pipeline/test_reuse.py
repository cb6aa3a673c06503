"""Grades kept across the runs of a batch (:mod:`workbench.pipeline.reuse`) are the grades of grading afresh.

Real outputs: the first lines of the two bundled Rho-Math 7B runs on MATH-500 (chain of thought;
with a code interpreter), which carry their problems' answers; graded alone, then together (the
bundled batch's comparison page), as ``workbench report --config notebooks/bundled.yaml`` does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from polars.testing import assert_frame_equal

from workbench.config import resolve
from workbench.pipeline import grade
from workbench.pipeline.reuse import GradeReuse
from workbench.pipeline.run import Run, grade_run

MATH = Path(__file__).resolve().parents[3] / "data/predictions/math"
COT = MATH / "microsoft-rho-math-7b/test_cot_-1_seed0_t0.0_s0_e-1.jsonl"
TOOL = MATH / "microsoft-rho-math-7b-interpreter/test_tora_-1_seed0_t0.0_s0_e-1.jsonl"
LINES = 12


def _head(source: Path, target: Path, change: int | None = None) -> Path:
    """The first :data:`LINES` lines of ``source``; with ``change``, that line's output (its text, its
    answer and its grader's verdict) gives another answer."""
    lines = source.read_text(encoding="utf-8").splitlines()[:LINES]
    if change is not None:
        row = json.loads(lines[change])
        row |= {"code": ["So the answer is $\\boxed{-12345}$."], "pred": ["-12345"], "score": [False]}
        lines[change] = json.dumps(row)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def _same(a: Run, b: Run) -> None:
    assert_frame_equal(a.turns, b.turns)
    assert_frame_equal(a.graded.policy_inputs, b.graded.policy_inputs)
    assert a.graded.input_keys.equals(b.graded.input_keys)
    assert_frame_equal(a.policy_grades, b.policy_grades)
    assert a.summary == b.summary


@pytest.fixture
def graded_items(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many distinct inputs each cascade call grades (the calls :class:`GradeReuse` lets through)."""
    counts: list[int] = []
    real = grade.map_chunks

    def counted(fn: Any, items: Any, **options: Any) -> Any:
        counts.append(len(items))
        return real(fn, items, **options)

    monkeypatch.setattr(grade, "map_chunks", counted)
    return counts


def test_a_comparison_takes_the_grades_of_its_runs_and_equals_grading_afresh(
    tmp_path: Path, graded_items: list[int]
) -> None:
    cot, tool = _head(COT, tmp_path / "cot.jsonl"), _head(TOOL, tmp_path / "tool.jsonl")
    reuse = GradeReuse()
    alone = [grade_run(resolve(dataset=None, predictions=[p], systems=[s]), reuse=reuse) for p, s in
             ((cot, "cot"), (tool, "tool"))]  # fmt: skip
    assert reuse.reused == 0 and sum(graded_items) > 0
    graded_items.clear()
    both = resolve(dataset=None, predictions=[cot, tool], systems=["cot", "tool"])
    kept = grade_run(both, reuse=reuse)
    assert graded_items == [], "every input of the comparison was graded for its run's own page"
    assert reuse.reused >= 2 * LINES
    _same(kept, grade_run(both))
    # and each run's own grades are those it shows on its own page
    for run, system in zip(alone, ("cot", "tool"), strict=True):
        assert_frame_equal(
            run.turns.drop("graders_disagree"), kept.turns.filter(system=system).drop("graders_disagree")
        )


def test_a_changed_file_is_graded_again_where_it_changed(tmp_path: Path, graded_items: list[int]) -> None:
    """Same name, other bytes: the one changed output is graded, never served its old grade."""
    reuse = GradeReuse()
    path = _head(COT, tmp_path / "cot.jsonl")
    config = resolve(dataset=None, predictions=[path], systems=["cot"])
    before = grade_run(config, reuse=reuse)
    graded_items.clear()
    _head(COT, path, change=3)
    after = grade_run(config, reuse=reuse)
    assert graded_items == [1], "the changed output alone"
    _same(after, grade_run(config))
    record = str(json.loads(COT.read_text(encoding="utf-8").splitlines()[3])["idx"])
    changed = after.turns.filter(record_id=record).row(0, named=True)
    assert (changed["answer"], changed["correct"]) == ("-12345", False)
    assert before.turns.filter(record_id=record).row(0, named=True)["answer"] != "-12345"


def test_other_policies_are_graded_again(tmp_path: Path, graded_items: list[int]) -> None:
    reuse = GradeReuse()
    path = _head(COT, tmp_path / "cot.jsonl")
    grade_run(resolve(dataset=None, predictions=[path], systems=["cot"]), reuse=reuse)
    graded_items.clear()
    flex = resolve(dataset=None, predictions=[path], systems=["cot"], policy="flex")
    kept = grade_run(flex, reuse=reuse)
    assert sum(graded_items) > 0 and reuse.reused == 0
    _same(kept, grade_run(flex))


def test_several_jobs_are_graded_in_one_call_each_under_its_own_context() -> None:
    """``grade_jobs``: the inputs no job graded before, each job's in its own list, in one call; an
    input kept under one context is not taken for another; what it gives equals ``grade`` job by job."""
    calls: list[list[list[str]]] = []

    def upper(pending: list[list[Any]]) -> list[list[str]]:
        calls.append([[row["answer"] for row, _ in job] for job in pending])
        return [[f"{n}:{row['answer'].upper()}" for row, _ in job] for n, job in enumerate(pending)]

    reuse = GradeReuse()
    a, b, c = ({"answer": "a"}, None), ({"answer": "b"}, None), ({"answer": "c"}, None)
    first = reuse.grade_jobs([([a, b], "main"), ([b], "math-verify")], upper)
    assert first == [["0:A", "0:B"], ["1:B"]] and calls == [[["a", "b"], ["b"]]]
    again = reuse.grade_jobs([([b, c], "main"), ([b], "math-verify"), ([], "none")], upper)
    assert again == [["0:B", "0:C"], ["1:B"], []] and calls[-1] == [["c"], [], []]
    assert reuse.grade_jobs([([a], "main"), ([b], "math-verify")], upper) == [["0:A"], ["1:B"]]
    assert len(calls) == 2 and reuse.kept == 4 and reuse.reused == 4
