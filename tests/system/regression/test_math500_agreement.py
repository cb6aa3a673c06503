"""The bundled MATH-500 runs (issue 19): Rho-Math-7B (few-shot Minerva chain of thought) and
Rho-Math-7B-Interpreter (tool-integrated, ToRA format), with their upstream grader's verdicts
(math-evaluation-harness ``score``; data/SOURCES.md, ../shared data README). Both load as published
(gold = MATH-500 ``answer``, output ``code[0]``, verdict ``score[0]``), and our verdicts agree with
upstream's on at least 98% of the items; every disagreement is listed here with its reason.

Grades 1,000 outputs under every policy, SymPy included: a few minutes.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from workbench.config import resolve
from workbench.io.predictions.upstream import UPSTREAM_DISAGREEMENT_COLUMNS, upstream_disagreements_under
from workbench.pipeline.run import grade_run

MATH_RUNS = Path(__file__).resolve().parents[3] / "data" / "predictions" / "math"
RHO_RUNS = {
    "cot": MATH_RUNS / "microsoft-rho-math-7b" / "test_cot_-1_seed0_t0.0_s0_e-1.jsonl",
    "interpreter": MATH_RUNS / "microsoft-rho-math-7b-interpreter" / "test_tora_-1_seed0_t0.0_s0_e-1.jsonl",
}

#: Upstream's accuracy (the metrics files beside the runs): 32.2% and 52.0% of 500.
UPSTREAM_CORRECT = {"cot": 161, "interpreter": 260}

#: Every item where our main verdict (the ``symbolic`` policy on our own reading of ``code[0]``;
#: the harness's ``pred`` is not used, see workbench/io/predictions/tora.py) differs from the
#: upstream ``score``, and why. Upstream is the wrong one in each.
DISAGREEMENTS = {
    "cot": {
        73: "upstream wrong (data README): \\displaystyle\\frac{3\\sqrt{3}}{4} is the gold \\frac{3\\sqrt{3}}{4}",
        97: "upstream wrong (data README): the model says 'east', the gold is \\text{east} (upstream's gt is '')",
        120: "upstream wrong: '\"even\"' for \\text{even}; the harness kept the quotes and a glued 'Ihopeitiscorrect'",
        255: "upstream wrong: 'The correct answer is (E).' for \\text{(E)}; the harness read '2'",
        257: "upstream wrong: 864 for '864 \\mbox{ inches}^2' (the unit is no part of the value)",
        420: "upstream wrong: the matrix is the gold; the harness kept the doubled backslashes (\\\\frac)",
        451: "upstream wrong: '$15.975$ inches' is 639/40 exactly; the harness read '15.9750Ihopeitiscorrect'",
    },
    "interpreter": {
        25: "upstream wrong (data README): no \\boxed, the harness took '1' for '1,-2'; we read 'f(n)', wrong",
        307: "upstream wrong (data README): (-\\infty,0) for (-\\infty,0]",
        456: "upstream wrong: '$\\boxed{-2}$ and $\\boxed{1}$' is the gold '-2,1'; the harness took the last box",
        467: "upstream wrong: 15 for '15\\mbox{ cm}^2' (the unit is no part of the value)",
    },
}

#: Where Math-Verify (the ``math-verify`` policy, its own reading of the whole output) differs
#: from upstream, and why.
MATH_VERIFY_DISAGREEMENTS = {
    "cot": {
        4: "Math-Verify wrong: 'The final answer is Evelyn.' has no formula, it finds no answer",
        73: "upstream wrong: as above",
        257: "upstream wrong: as above",
        451: "upstream wrong: as above",
    },
    "interpreter": {
        25: "upstream wrong: as above (Math-Verify reads 'f(n)')",
        150: "Math-Verify wrong: the output ends in a RecursionError, no answer; it reads '1' from the code",
        307: "upstream wrong: as above",
        456: "upstream wrong: as above",
        467: "upstream wrong: as above",
    },
}


@pytest.fixture(scope="module")
def rho_runs():  # type: ignore[no-untyped-def]
    """Both runs graded once, without a dataset: the gold travels in the files."""
    return {name: grade_run(resolve(dataset=None, predictions=[path])) for name, path in RHO_RUNS.items()}


def _differ(run, policy: str | None) -> list[int]:  # type: ignore[no-untyped-def]
    found = upstream_disagreements_under(run.turns, run.policy_grades, policy)
    assert tuple(found.columns) == UPSTREAM_DISAGREEMENT_COLUMNS
    return [int(r) for r in found["record_id"]]


@pytest.mark.parametrize("name", list(RHO_RUNS))
def test_math500_runs_load_as_published(rho_runs, name: str) -> None:  # type: ignore[no-untyped-def]
    """The gold is MATH-500's ``answer`` (not the harness's lossy ``gt``), the output ``code[0]``,
    the verdict ``score[0]``; the benchmark is recognised as MATH."""
    run = rho_runs[name]
    turns = run.turns.sort(pl.col("record_id").cast(pl.String).cast(pl.Int64))
    published = [json.loads(line) for line in RHO_RUNS[name].read_text(encoding="utf-8").splitlines()]
    metrics = json.loads(next(RHO_RUNS[name].parent.glob("*_metrics.json")).read_text(encoding="utf-8"))
    assert turns.height == 500
    assert turns["gold_answer"].to_list() == [p["answer"] for p in published]
    assert turns["raw_output"].to_list() == [p["code"][0] for p in published]
    assert turns["upstream_correct"].to_list() == [p["score"][0] for p in published]
    assert turns["upstream_correct"].sum() == UPSTREAM_CORRECT[name] == round(metrics["acc"] * 5)
    assert turns.filter(pl.col("record_id") == "97")["gold_answer"].item() == "\\text{east}"  # its gt is ""


@pytest.mark.parametrize("name", list(RHO_RUNS))
def test_math500_our_verdicts_agree_with_upstream(rho_runs, name: str) -> None:  # type: ignore[no-untyped-def]
    """At least 98% agreement (490 of 500) for the main verdict and for our own extraction
    (``flex``, ``strict``), and every disagreement of the main verdict is listed with its reason."""
    run = rho_runs[name]
    assert _differ(run, None) == sorted(DISAGREEMENTS[name])
    assert _differ(run, "flex") == sorted(DISAGREEMENTS[name])
    assert 500 - len(DISAGREEMENTS[name]) >= 490
    assert len(_differ(run, "strict")) <= 10


@pytest.mark.parametrize("name", list(RHO_RUNS))
def test_math_verify_beside_ours(rho_runs, name: str) -> None:  # type: ignore[no-untyped-def]
    """Math-Verify on ``code[0]`` agrees with upstream on at least 98% too; its disagreements are
    listed, and every turn where it and our main verdict differ is in the grader-disagreement slice."""
    run = rho_runs[name]
    assert _differ(run, "math-verify") == sorted(MATH_VERIFY_DISAGREEMENTS[name])
    grades = run.policy_grades
    ours = grades.filter(pl.col("policy") == "symbolic").select("record_id", "correct")
    theirs = grades.filter(pl.col("policy") == "math-verify").select("record_id", mv="correct")
    both = ours.join(theirs, on="record_id")
    differ = set(both.filter(pl.col("correct") != pl.col("mv"))["record_id"])
    flagged = set(run.turns.filter(pl.col("graders_disagree"))["record_id"])
    assert differ and differ <= flagged
    system = next(iter(run.summary))
    assert run.summary[system]["policies"]["math-verify"]["n_correct"] > 0
