"""Grading fidelity 3 (issue 31): the answer families of the issue, graded end to end as a turn is
graded (extraction from the raw output, which reads what the gold asks for, then the cascade), under
the MATH benchmark's flexible policy and, where the family applies, under GSM8K's.

Every case names where it comes from: a peer's test suite (Math-Verify's ``tests/`` at
huggingface/Math-Verify and its fork wantbook-book/Math-Verify, lm-evaluation-harness, DROP's official
evaluation tests at allenai/allennlp-reading-comprehension ``tests/eval/drop_eval_test.py``), a real
output of the bundled runs (data/SOURCES.md), the issue's own text, or "written here". A wrong verdict
is checked for its typed reason too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.grading import symbolic
from workbench.grading.compare import MatchPolicy, answers_match
from workbench.grading.policies import POLICIES, for_benchmark
from workbench.grading.spans import DROP_PASS_F1, span_scores
from workbench.grading.turn import grade_turn

MATH_RUNS = Path(__file__).resolve().parents[3] / "data" / "predictions" / "math"
RHO = {
    "cot": MATH_RUNS / "microsoft-rho-math-7b" / "test_cot_-1_seed0_t0.0_s0_e-1.jsonl",
    "interpreter": MATH_RUNS / "microsoft-rho-math-7b-interpreter" / "test_tora_-1_seed0_t0.0_s0_e-1.jsonl",
}

MATH = for_benchmark(POLICIES["flex"], "math")
GSM8K = for_benchmark(POLICIES["flex"], "gsm8k")
DROP = for_benchmark(POLICIES["flex"], "drop")


def _rho(name: str, idx: int) -> tuple[str, str]:
    """``(answer, code[0])`` of item ``idx`` of a bundled MATH-500 run: its gold and a real output."""
    record = json.loads(RHO[name].read_text(encoding="utf-8").splitlines()[idx])
    return record["answer"], record["code"][0]


def _grade(gold: str, output: str, benchmark: str):  # type: ignore[no-untyped-def]
    policy = MATH if benchmark == "math" else GSM8K
    return grade_turn(
        predicted_answer=None,
        predicted_program=None,
        gold_executed=gold,
        gold_program=None,
        raw_output=output,
        policy=policy,
        kind="latex" if benchmark == "math" else "auto",  # as workbench grades each benchmark
    )


# (gold, output, correct, reason when wrong or None). Graded under both benchmarks' policies.
BOTH: list[tuple[str, str, bool, str | None]] = [
    # ---- several answers in several boxes: all the boxes together, a set; each box one item
    # Math-Verify tests/test_numina_cases.py
    (r"$$k = 45, n = 2$$", r"$$\boxed{k = 45} \quad \text{and} \quad \boxed{n = 2}$$", True, None),
    (r"$$(2, 2), (6, 2)$$", r"$$\boxed{(2, 2)} \quad \text{and} \quad \boxed{(6, 2)}$$", True, None),
    (r"$$(98, 2), (99, 503)$$", r"$$\boxed{(98, 2)} \quad \text{and} \quad \boxed{(99, 503)}$$", True, None),
    (r"$$(3, 3), (1, 1)$$", r"$$\boxed{(3, 3)} \text{ for part (a) and } \boxed{(1, 1)}$$", True, None),
    (r"$$a_3 = 2, a_{37} = 19$$", r"$$\boxed{a_{37} = 19, \quad a_3 = 2}$$", True, None),
    (r"$$(2, 2), (1, 3), (3, 3)$$", r"$$\boxed{(2, 2), (1, 3), (3, 3)}$$", True, None),
    (r"$$(5, 8), (8, 5)$$", r"$$\boxed{(x, y) = (5, 8) \quad \text{and} \quad (8, 5)}$$", True, None),
    (r"$$6 \text{ and } 8$$", r"$$\boxed{6 \text{ and } 8}$$", True, None),
    # Math-Verify tests/test_open_thoughts.py
    (r"$${1,2,3}$$", r"\boxed{1} and \boxed{2} and \boxed{3}", True, None),
    (r"$${1,2,3}$$", r"\boxed{1},\boxed{2},\boxed{3}", True, None),
    (r"$$143$$", r"$$\boxed{20}$$ \boxed{143}", True, None),  # two formulas, nothing joins them: the last box
    (
        r"$x_{1}=10^{\frac{-5+\sqrt{13}}{6}},\quadx_{2}=10^{\frac{-5-\sqrt{13}}{6}}$",
        r"$\boxed{10^{\frac{\sqrt{13} - 5}{6}}} \quad \text{and} \quad \boxed{10^{-\frac{5 + \sqrt{13}}{6}}}$",
        True,
        None,
    ),
    (
        r"$x_{1}=\frac{1}{2}+\frac{31\sqrt{5}}{216},\quadx_{2}=\frac{1}{2}-\frac{31\sqrt{5}}{216}$",
        r"$\boxed{\dfrac{108 + 31\sqrt{5}}{216}} \quad \text{and} \quad \boxed{\dfrac{108 - 31\sqrt{5}}{216}}$",
        True,
        None,
    ),
    # the issue's own examples
    ("(1,2),(2,1)", r"\boxed{(1, 2)}, \boxed{(2, 1)}", True, None),
    ("1 and -2", r"\boxed{-2} \quad \text{and} \quad \boxed{1}", True, None),
    ("k = 45, n = 2", r"\boxed{k = 45} \quad\text{and}\quad \boxed{n = 2}", True, None),
    # bundled MATH-500, interpreter idx 456: "$\boxed{-2}$ and $\boxed{1}$" for the gold "-2,1"
    (*_rho("interpreter", 456), True, None),
    # bundled MATH-500, interpreter idx 206: a statement between the boxes ("so the ordered pair (m, b)
    # is"): the last box is the answer, the ordered pair of the gold
    (*_rho("interpreter", 206), True, None),
    # written here: a box too few, or one too many, is wrong, and says so
    ("(1,2),(2,1)", r"\boxed{(1, 2)}", False, "wrong_value"),
    ("3", r"so $\boxed{3}$ and $\boxed{5}$", False, "wrong_value"),
    # ---- equation lists against boxed lists (Math-Verify tests/test_numina_cases.py, test_open_thoughts.py)
    (
        r"$$x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}$$",
        r"$$\boxed{x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}}$$",
        True,
        None,
    ),
    (
        r"$y_{1}=-2 x^{2}+4 x+3, y_{2}=3 x^{2}+12 x+10$",
        r"\($y_1 = \boxed{-2(x - 1)^2 + 5} \) and \( y_2 = \boxed{3(x + 2)^2 - 2} \) ",
        True,
        None,
    ),
    # written here: the same roots with the plus-or-minus written out, equal after expansion
    (
        r"\frac{1}{2}, \frac{-1 + \sqrt{13}}{4}, \frac{-1 - \sqrt{13}}{4}",
        r"\boxed{x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}}",
        True,
        None,
    ),
    ("y_1 = x^2+2x+1, y_2 = (x-1)(x+1)", "$y_1 = (x+1)^2$ and $y_2 = x^2-1$", True, None),
    ("y_1 = x^2+2x+1, y_2 = (x-1)(x+1)", "$y_1 = (x+1)^2$ and $y_2 = x^2+1$", False, "wrong_value"),
    # ---- answers with units in words (the issue; the LaTeX forms are MATH-500 cot idx 257, interpreter idx 467)
    ("400, 200", "200 ml and 400 ml", True, None),
    ("15", "15 cm^2", True, None),
    ("864", "864 inches^2", True, None),
    ("15", "The area of the triangle is 15 cm^2.", True, None),
    ("864", r"864 \mbox{ inches}^2", True, None),
    ("400", "200 ml and 400 ml", False, "wrong_value"),  # written here: two amounts for one
    # ---- mixed numbers with percent (Math-Verify tests/test_mixed_number_extraction.py)
    ("40/900", "4 4/9%", True, None),
    ("40/900", "4 4/9 %", True, None),
    ("40/900", "4 4/9percent", True, None),
    ("40/900", "4 4/9 percent", True, None),
    ("40/900", "4 4/9percentage", True, None),
    ("40/900", "4 4/9 percentage", True, None),
    ("40/900", "4 4/9pct", True, None),
    ("40/900", "4 4/9 pct", True, None),
    ("9004/9", "1 000 4/9", True, None),
    ("40/9", "The answer is 4 4/9.", True, None),
    ("4", "The answer is 4 4/9.", False, "wrong_value"),
    ("4", "4 4/0", False, None),  # not a mixed number, not 4
    ("12", "11 6/6", False, None),  # 6/6 is no proper fraction: no 12, no 11
    ("11", "11 6/6", False, None),
    ("2", "4 4/9 2", True, None),
    ("103/9", "11 + 4/9", True, None),
    ("95/9", "11 - 4/9", True, None),
    # ---- times and ratios with a colon: part by part, never a division (the issue; written here)
    ("12:00", "12:00", True, None),
    ("3:2", "3:2", True, None),
    ("12:00", "The meeting starts at 12:00", True, None),
    ("3:2", "The ratio of boys to girls is 3:2.", True, None),
    ("12:00", "12:30", False, "wrong_value"),
    ("1.5", "3:2", False, "wrong_value"),
    ("3:2", "1.5", False, "wrong_value"),
    ("$$A:B=1$$", "$$1$$", True, None),  # Math-Verify tests/test_open_thoughts.py: a ratio set equal to 1
    # ---- display maths ending in a full stop (the issue; Math-Verify tests/test_all.py test_latex_notation)
    (r"\frac{1}{3}", r"\[\frac{1}{3}.\]", True, None),
    (r"\frac{1}{3}", "So the probability is\n\\[\\frac{1}{3}.\\]", True, None),
    ("$9$", "Answer \\[ 9 \\]", True, None),
    ("$9$", "Answer \\[ \n 9 \n \\]", True, None),
    # ---- multiple choice: the letter that stands as the answer
    # Math-Verify tests/test_string_extraction.py (the wantbook-book/Math-Verify fork)
    ("A", "The answer is A.", True, None),
    ("B", "Final answer is B", True, None),
    ("A", "A. Because B is not valid", True, None),
    ("B", "Because B is valid", True, None),
    ("A", "No valid answer here", False, "no_answer"),
    ("B", "A. Because B is not valid", False, "wrong_value"),
    # lm-evaluation-harness MultiChoiceRegexFilter's example responses (lmms-eval's copy of its docs)
    ("B", "The answer is (B)", True, None),
    ("A", "I believe it is (A)", True, None),
    ("C", "(C) seems correct", True, None),
    ("B", "Answer is: B!", True, None),
    # the issue's own
    ("C", "(C)", True, None),
    ("C", "Answer: C", True, None),
    # bundled MATH-500 cot idx 255 ("The correct answer is (E).") and 227, golds written \text{(E)}, \text{(C)}
    (*_rho("cot", 255), True, None),
    (*_rho("cot", 227), True, None),
    # ---- a failed LaTeX span does not hide a good one (Math-Verify tests/test_failed_latex_span.py)
    ("42", r"$42$ and $\sum_{k=0}^n\bigl(k\bigr)$", True, None),
    ("42", r"$\sum_{k=0}^n\bigl(k\bigr)$ and $42$", True, None),
    ("42", r"Final answer is $\sum_{k=0}^n\bigl(k\bigr)$. I hope. 42", True, None),
    ("42", r"Final answer is $\sum_{k=0}^n\bigl(k\bigr)$. I hope. $42$", True, None),
    ("1/2", r"Final answer is $\sum_{k=0}^n\bigl(k\bigr)$. I hope. 1/2", True, None),
    ("0", r"$\sum_{k=0}^n\bigl(k\bigr)$", False, "unparseable"),  # no number inside it is the answer
]


@pytest.mark.parametrize("benchmark", ["math", "gsm8k"])
@pytest.mark.parametrize(("gold", "output", "correct", "reason"), BOTH)
def test_families(gold: str, output: str, correct: bool, reason: str | None, benchmark: str) -> None:
    grade = _grade(gold, output, benchmark)
    verdict = grade.verdict
    assert verdict.correct is correct, (grade.answer, verdict.reason.value, verdict.detail)
    if reason is not None:
        assert verdict.reason.value == reason, verdict.detail
    assert verdict.detail


# ---------------------------------------------------------------------------------------------
# identifiers: a program's variable name is no value, decided without SymPy
# ---------------------------------------------------------------------------------------------
#: bundled GSM8K, program-of-thoughts zero-shot, record 975: its answer field "return Jerry_cherries"
#: (gold 20); the rest written here.
IDENTIFIERS = ["return Jerry_cherries", "Jerry_cherries", "total_cost", "n_apples2", "return num_eggs;"]


@pytest.mark.parametrize("answer", IDENTIFIERS)
@pytest.mark.parametrize("benchmark", ["math", "gsm8k"])
def test_a_variable_name_is_unparseable_without_sympy(
    answer: str, benchmark: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_sympy(*args: object, **kwargs: object) -> object:
        raise AssertionError("SymPy was asked about a variable name")

    monkeypatch.setattr(symbolic, "call_with_limit", no_sympy)
    policy = for_benchmark(POLICIES["symbolic"], benchmark)
    verdict = answers_match(answer, "20", policy=policy.numbers)
    assert (verdict.correct, verdict.status.value, verdict.reason.value) == (False, "unparseable", "unparseable")
    assert "variable" in verdict.detail and "E*" not in verdict.detail


@pytest.mark.parametrize(("answer", "gold"), [("x_1", "x_1"), ("a_{37}", "a_{37}"), ("x_1 + 1", "1 + x_1")])
def test_a_subscripted_variable_is_still_mathematics(answer: str, gold: str) -> None:
    """Written here: a one-letter name with a subscript is a variable of the problem, read by SymPy."""
    assert answers_match(answer, gold, policy=MATH.numbers).correct


# ---------------------------------------------------------------------------------------------
# text spans: DROP's official rules, the reading-comprehension policy
# ---------------------------------------------------------------------------------------------
#: allennlp-reading-comprehension tests/eval/drop_eval_test.py: (predicted spans, gold spans, EM, F1),
#: lists as its get_metrics takes them.
DROP_OFFICIAL: list[tuple[list[str], list[str], float, float]] = [
    (["78"], ["78.0"], 1.0, 1.0),
    (["td"], ["td", "td"], 0.0, 0.5),
    (["td", "td"], ["td"], 0.0, 0.5),
    (["the", "fat", "cat", "the fat", "fat cat", "the fat cat"], ["cat"], 0.0, 0.17),
    (["cat"], ["the", "fat", "cat", "the fat", "fat cat", "the fat cat"], 0.0, 0.17),
    (["the", "fat", "cat", "the fat", "fat cat", "the fat cat"], ["cat", "cat dog"], 0.0, 0.25),
    (["td"], ["the td"], 1.0, 1.0),
    (["the a NOT an ARTICLE the an a"], ["NOT ARTICLE"], 1.0, 1.0),
    (["John Elton"], ["Elton John"], 0.0, 1.0),
    (["50 yard"], ["yard 50"], 0.0, 1.0),
    (["order word right"], ["right word order"], 0.0, 1.0),
    (["Per.i.o.d...."], [".P....e.r,,i;;;o...d,,"], 1.0, 1.0),
    (["Spa     c  e   s     "], ["    Spa c     e s"], 1.0, 1.0),
    (["78-yard"], ["78 yard"], 1.0, 1.0),
    (["78 yard"], ["78-yard"], 1.0, 1.0),
    (["78"], ["78-yard"], 0.0, 0.67),
    (["78-yard"], ["78"], 0.0, 0.67),
    (["This was a triumph"], ["tHIS Was A TRIUMPH"], 1.0, 1.0),
    (["Green bay packers"], ["Green bay packers"], 1.0, 1.0),
    (["Green bay", "packers"], ["Green bay", "packers"], 1.0, 1.0),
    (["Green", "bay", "packers"], ["Green", "bay", "packers"], 1.0, 1.0),
    ([""], ["army"], 0.0, 0.0),
    (["packers"], ["Green bay packers"], 0.0, 0.5),
    (["packers"], ["Green bay"], 0.0, 0.0),
    (["yard"], ["36 yard td"], 0.0, 0.0),
    (["23 yards"], ["43 yards"], 0.0, 0.0),
    (["56 yards"], ["56 yd"], 0.0, 0.5),
    (["26"], ["26 yard td"], 0.0, 0.5),
    (["78-yard", "56", "28", "40", "44", "touchdown"], ["78-yard", "56 yard", "1 yard touchdown"], 0.0, 0.28),
    (["23", "23 yard"], ["23-yard", "56 yards"], 0.0, 0.5),
    (["John Karman", "Joe Hardy"], ["Joe Karman", "John Hardy"], 0.0, 0.5),
    (["ottoman", "Kantakouzenous"], ["ottoman", "army of Kantakouzenous"], 0.0, 0.75),
    (["a"], ["a", "b"], 0.0, 0.5),
    (["b"], ["a", "b"], 0.0, 0.5),
    (["b"], ["b", "a"], 0.0, 0.5),
]


@pytest.mark.parametrize(("pred", "gold", "em", "f1"), DROP_OFFICIAL)
def test_drop_official_figures(pred: list[str], gold: list[str], em: float, f1: float) -> None:
    score = span_scores(pred, gold)
    assert (float(score.exact), score.f1) == (em, f1)


# (output, gold, correct, reason) under the reading-comprehension policy; answers written as text, spans
# cut at ", " and " and "
DROP_VERDICTS: list[tuple[str, str, bool, str]] = [
    ("Mike Tolbert", "Tolbert", True, "span_f1"),  # the issue: F1 0.67
    ("Tom Brady and Peyton Manning", "Peyton Manning, Tom Brady", True, "normalised"),  # the issue: several spans
    ("The answer is Mike Tolbert.", "Tolbert", True, "span_f1"),  # written here: a marker's answer
    ("He threw to\n\nthe Green Bay Packers", "Green Bay Packers", True, "normalised"),  # written here: last line
    ("78 yards", "78", True, "span_f1"),  # drop_eval_test: numbers as numbers (F1 0.67)
    ("12.0", "12", True, "normalised"),  # drop_eval_test test_number_parse
    ("23 yards", "43 yards", False, "wrong_value"),  # drop_eval_test: the numbers differ, F1 0
    ("packers", "Green bay packers", False, "wrong_value"),  # drop_eval_test: F1 0.5
    ("Tom Brady", "Tom Brady, Peyton Manning", False, "wrong_value"),  # written here: half of two spans
    ("John Karman and Joe Hardy", "Joe Karman, John Hardy", False, "wrong_value"),  # drop_eval_test: 0.5
]


@pytest.mark.parametrize(("output", "gold", "correct", "reason"), DROP_VERDICTS)
def test_reading_comprehension_policy(output: str, gold: str, correct: bool, reason: str) -> None:
    grade = grade_turn(
        predicted_answer=None,
        predicted_program=None,
        gold_executed=gold,
        gold_program=None,
        raw_output=output,
        policy=DROP,
    )
    assert (grade.verdict.correct, grade.verdict.reason.value) == (correct, reason), grade.verdict.detail
    assert "DROP" in grade.verdict.detail


def test_the_reading_comprehension_policy() -> None:
    """DROP's pass mark is the policy's, and only the cascade's policies take it: the baselines and
    Math-Verify keep their own rules."""
    assert DROP.numbers.span_f1 == DROP_PASS_F1
    assert for_benchmark(POLICIES["math-verify"], "drop") is POLICIES["math-verify"]
    assert for_benchmark(POLICIES["official"], "drop") is POLICIES["official"]
    strict = MatchPolicy(span_f1=1.0)
    assert not answers_match("Mike Tolbert", "Tolbert", policy=strict).correct
    assert answers_match("Mike Tolbert", "Tolbert", policy=DROP.numbers).correct
