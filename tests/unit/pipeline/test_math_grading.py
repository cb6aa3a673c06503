"""MATH end to end: boxed answers extracted from outputs, LaTeX compared through SymPy.

Gold: the MATH fixtures (real MATH test problems, see data/SOURCES.md). The outputs are
written here: each answer is the gold in another notation (a case per kind of
equivalence: powers, decimals for fractions, thousands separators, tuples, words,
radicals) or a wrong answer of the same kind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.config import resolve
from workbench.pipeline.run import grade_run

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "math"

# (fixture, record_id, output text, correct, reason under the main policy)
OUTPUTS = [
    ("hendrycks_math_test_8.jsonl", "0", "so the value is $\\boxed{10^6}$.", True, "symbolic"),
    ("hendrycks_math_test_8.jsonl", "1", "The probability is \\boxed{0.1}", True, "exact"),
    ("hendrycks_math_test_8.jsonl", "2", "The answer is 7.", False, "wrong_value"),
    ("hendrycks_math_test_8.jsonl", "5", "There are $\\boxed{10080}$ ways.", True, "exact"),
    ("hendrycks_math_test_8.jsonl", "6", "so $\\boxed{\\dfrac{1}{10}}$", True, "exact"),
    ("math500_test_7.json", "0", "In polar form $\\boxed{(3, \\frac{\\pi}{2})}$.", True, "symbolic"),
    ("math500_test_7.json", "0", "In polar form $\\boxed{(\\frac{\\pi}{2}, 3)}$.", False, "wrong_value"),
    ("math500_test_7.json", "1", "so $\\boxed{4.666667}$", True, "official_round5"),
    ("math500_test_7.json", "3", "The winner is \\boxed{\\text{Evelyn}}.", True, "symbolic"),
    ("math500_test_7.json", "3", "The winner is \\boxed{\\text{Bob}}.", False, "wrong_value"),
    ("math500_test_7.json", "5", "The distance is $\\boxed{\\sqrt{117}}$.", True, "symbolic"),
    ("math500_test_7.json", "6", "I could not finish.", False, "no_answer"),
]


def _grade(tmp_path: Path, fixture: str, rows: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
    out = tmp_path / f"{fixture}.outputs.jsonl"
    with out.open("w", encoding="utf-8") as f:
        for record_id, text in rows:
            f.write(json.dumps({"record_id": record_id, "turn": 0, "raw_output": text}) + "\n")
    return grade_run(resolve(dataset=FIXTURES / fixture, predictions=[out], systems=["sys"]))


@pytest.mark.parametrize(("fixture", "record_id", "text", "correct", "reason"), OUTPUTS)
def test_math_outputs_are_graded_by_equivalence(
    tmp_path: Path, fixture: str, record_id: str, text: str, correct: bool, reason: str
) -> None:
    run = _grade(tmp_path, fixture, [(record_id, text)])
    row = run.turns.filter(run.turns["record_id"] == record_id).row(0, named=True)
    assert (row["correct"], row["reason"]) == (correct, reason), row["detail"]
    assert row["detail"]


def test_strict_extraction_needs_a_marker(tmp_path: Path) -> None:
    run = _grade(tmp_path, "hendrycks_math_test_8.jsonl", [("2", "Counting the cases gives 6")])
    grades = {r["policy"]: r for r in run.policy_grades.iter_rows(named=True) if r["record_id"] == "2"}
    assert grades["strict"]["status"] == "no_answer"  # no \boxed, no "the answer is"
    assert grades["flex"]["correct"] and grades["flex"]["extraction_rule"] == "last_number"
    assert run.summary["sys"]["policies"]["flex"]["n_correct"] == 1


def test_gold_solutions_grade_themselves_correct(tmp_path: Path) -> None:
    """Each gold solution, given as an output, is correct under strict extraction."""
    for fixture in ("hendrycks_math_test_8.jsonl", "math500_test_7.json"):
        raw = FIXTURES.joinpath(fixture).read_text(encoding="utf-8")
        records = json.loads(raw) if fixture.endswith(".json") else [json.loads(x) for x in raw.splitlines() if x]
        run = _grade(tmp_path, fixture, [(str(i), r["solution"]) for i, r in enumerate(records)])
        strict = run.policy_grades.filter(run.policy_grades["policy"] == "strict")
        assert strict["correct"].all(), strict.filter(~strict["correct"]).select("record_id", "answer", "detail")
