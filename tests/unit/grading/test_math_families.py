"""MATH answer families (issue 19): each case is a real output of the bundled MATH-500 runs
(data/predictions/math, data/SOURCES.md) or an example from Math-Verify's own test suite, with its
origin in a comment; graded as the ``flex`` policy grades on MATH (our extraction from the raw
output, then the cascade with SymPy)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.grading.policies import POLICIES, for_benchmark, grade_answer, select_answer

MATH_RUNS = Path(__file__).resolve().parents[3] / "data" / "predictions" / "math"
RHO_RUNS = {
    "cot": MATH_RUNS / "microsoft-rho-math-7b" / "test_cot_-1_seed0_t0.0_s0_e-1.jsonl",
    "interpreter": MATH_RUNS / "microsoft-rho-math-7b-interpreter" / "test_tora_-1_seed0_t0.0_s0_e-1.jsonl",
}


def _rho(name: str, idx: int) -> tuple[str, str]:
    """``(code[0], answer)`` of item ``idx`` of a bundled MATH-500 run: a real output and its gold."""
    line = RHO_RUNS[name].read_text(encoding="utf-8").splitlines()[idx]
    record = json.loads(line)
    return record["code"][0], record["answer"]


MATH_POLICY = for_benchmark(POLICIES["flex"], "math")

# (output, gold, correct under flexible extraction + the MATH cascade); the source of each in a comment
FAMILIES = [
    # Minerva format (lm-eval minerva_math utils: "Final Answer: The final answer is X. I hope it is correct.")
    (*_rho("cot", 3), True),  # cot idx 3: "...= \\boxed{9}$.\nFinal Answer: The final answer is $9$. I hope..."
    (*_rho("cot", 4), True),  # cot idx 4: "The final answer is Evelyn." for \text{Evelyn}
    (*_rho("cot", 120), True),  # cot idx 120: '"even"' in quotes for \text{even}
    (*_rho("cot", 451), True),  # cot idx 451: "$15.975$ inches" for \frac{639}{40}
    (*_rho("cot", 472), True),  # cot idx 472: 137\frac{1}{2} for "137 \frac{1}{2}"
    (*_rho("cot", 98), True),  # cot idx 98: "$2k + 2$" for "2k+2"
    # doubled backslashes (\\frac) in the answer
    (*_rho("cot", 0), True),  # cot idx 0: "(3, \\frac{\\pi}{2})" for \left( 3, \frac{\pi}{2} \right)
    (*_rho("cot", 420), True),  # cot idx 420: a pmatrix of \\frac entries
    # "Final Answer: <subject> is X" (Math-Verify tests/test_all.py, "Issue #7: Volume extraction", its last line)
    (
        "Therefore, the volume is $5 \\times 6 \\times 4 = 120$. Final Answer: The volume of $ABCDEFGH$ is 120. "
        "I hope it is correct.",
        "$120$",
        True,
    ),
    # Math-Verify tests/test_all.py "Issue #9", its last line
    ("Final Answer: The smallest possible value of $N$ is $\\boxed{14{,}916}$. I hope it is correct.", "$14916$", True),
    # a number glued to a letter is a product: interpreter idx 339 (gold 2k; the harness's pred "2" scored false)
    ("2", "2k", False),
    # tuples, sets, several answers
    (*_rho("interpreter", 144), True),  # interpreter idx 144: \boxed{(15, -29)} for "(15,-29)"
    (*_rho("interpreter", 36), True),  # interpreter idx 36: \boxed{3, 5, 7}
    (*_rho("interpreter", 456), True),  # interpreter idx 456: $\boxed{-2}$ and $\boxed{1}$ for "-2,1"
    (*_rho("cot", 456), False),  # cot idx 456: "-1,-2" for "-2,1"
    # intervals and unions
    (*_rho("cot", 435), True),  # cot idx 435: (-\infty,2)\cup(3,\infty)
    (*_rho("interpreter", 307), False),  # interpreter idx 307: (-\infty, 0) for (-\infty, 0] (upstream: true)
    (*_rho("cot", 383), True),  # cot idx 383: [-2, 7] for "x \in [-2,7]"
    # equations
    (*_rho("cot", 492), True),  # cot idx 492: "y = -2x"
    # numbers written with spaces, mixed numbers (Math-Verify tests/test_all.py, test_number_extraction;
    # tests/test_mixed_number_extraction.py)
    ("1 000", "1000", True),
    ("4 4/9", "40/9", True),
    ("-4 4/9", "-40/9", True),
    ("11 5/6", "71/6", True),
    ("The answer is 4 4/9.", "4", False),
    # a bare LaTeX answer is not cut to its last number (Math-Verify tests/test_all.py test_simple_fraction_notation)
    ("\\frac{10}{9}", "10/9", True),
    ("-\\frac{10}{9}", "-10/9", True),
]


@pytest.mark.parametrize(("output", "gold", "correct"), FAMILIES)
def test_math_answer_families(output: str, gold: str, correct: bool) -> None:
    answer, _, extraction = select_answer(MATH_POLICY, predicted_answer=None, raw_output=output)
    verdict = grade_answer(MATH_POLICY, answer, gold)
    assert verdict.correct is correct, (answer, extraction, verdict.detail)
