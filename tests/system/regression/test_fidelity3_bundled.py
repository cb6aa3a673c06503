"""Grading fidelity 3 (issue 31) on the bundled sets: every verdict and every typed reason it changed,
each with its reason, and the counts per policy of the MATH-500 runs.

The bundled sets (ConvFinQA 2 x 1,490, GSM8K 4 x 1,319, GPT-3 4 x 1,319, MATH-500 2 x 500) were
graded under every policy before the change and after it, and compared row by row (answer, source,
verdict, status, reason): ConvFinQA and GPT-3 did not change at all, GSM8K changed no verdict, and
MATH-500 changed five, all under the ``cascade`` policy (no SymPy), all from wrong to right. Counted
from the bundled files on 2026-11-27; tests/system/regression/test_gsm8k_grading.py and
test_math500_agreement.py keep their own counts and agreement lists, which did not change.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from workbench.config import resolve
from workbench.pipeline.run import grade_run

DATA = Path(__file__).resolve().parents[3] / "data"
RUNS = {
    "cot": (None, DATA / "predictions" / "math" / "microsoft-rho-math-7b" / "test_cot_-1_seed0_t0.0_s0_e-1.jsonl"),
    "interpreter": (
        None,
        DATA / "predictions" / "math" / "microsoft-rho-math-7b-interpreter" / "test_tora_-1_seed0_t0.0_s0_e-1.jsonl",
    ),
    "pot-zeroshot": (
        DATA / "gsm8k" / "test.jsonl",
        DATA / "predictions" / "gsm8k" / "program-of-thoughts" / "gsm8K_zs_s0_e-1_11_19_09_55.jsonl",
    ),
    "tora-code-34b": (DATA / "gsm8k" / "test.jsonl", DATA / "predictions" / "gsm8k" / "tora" / "tora-code-34b.jsonl"),
}

#: Correct answers per policy of the MATH-500 runs (of 500). Only ``cascade`` moved: cot 153 -> 155,
#: interpreter 234 -> 237 (the verdicts of CHANGED_VERDICTS).
MATH500_COUNTS = {
    "cot": {
        "cascade": 155,
        "exact-string": 140,
        "flex": 168,
        "math-verify": 163,
        "official": 140,
        "strict": 166,
        "symbolic": 168,
    },
    "interpreter": {
        "cascade": 237,
        "exact-string": 213,
        "flex": 260,
        "math-verify": 261,
        "official": 218,
        "strict": 260,
        "symbolic": 260,
    },
}

#: Every verdict that changed: (run, record, policy) -> (correct now, reason now, why). All wrong before.
CHANGED_VERDICTS: dict[tuple[str, str, str], tuple[bool, str, str]] = {
    # a choice gold written \text{(C)}: the cascade without SymPy compared "(C)" with "\text{(C)}" as text;
    # the choice rule reads the letter on both sides (the SymPy policies were already right)
    ("cot", "227", "cascade"): (True, "normalised", "'(C)' for the choice \\text{(C)}"),
    ("cot", "255", "cascade"): (True, "normalised", "'The correct answer is (E).' for \\text{(E)}"),
    ("interpreter", "227", "cascade"): (True, "normalised", "'C' for the choice \\text{(C)}"),
    ("interpreter", "255", "cascade"): (True, "normalised", "'(E)' for \\text{(E)}"),
    # two boxes given together, '-2, 1', against the gold '-2,1': the text differed by a space; as items they match
    ("interpreter", "456", "cascade"): (True, "items", "'$\\boxed{-2}$ and $\\boxed{1}$' for '-2,1'"),
}

#: Every typed reason (or compared answer) that changed without a verdict changing, for the policies
#: of the main table: (run, record, policy) -> (correct, reason now, answer now, why). The ``official`` and
#: ``exact-string`` baselines changed only their extracted answer on the choice golds (the letter).
CHANGED_REASONS: dict[tuple[str, str, str], tuple[bool, str, str | None, str]] = {
    # a program's variable name is no value: unparseable, decided without SymPy (it was read as a
    # product of letters, its e as Euler's number)
    **{
        ("pot-zeroshot", "975", p): (False, "unparseable", "return Jerry_cherries", "a variable name")
        for p in ("symbolic", "flex", "strict")
    },
    # a tuple of values against one number: "lists 2 values" (it was unparseable, or "(160, 300)" read
    # as the accounting negative -160300)
    **{
        ("pot-zeroshot", r, p): (False, "wrong_value", a, "several values for one number")
        for r, a in (("16", "(160, 300)"), ("719", "(75, 100)"), ("245", "(14.0, 14.0)"), ("322", "(0, 0)"),
                     ("339", "(0.0, 0.0, 0)"), ("380", "(730.0, 3650.0, 0.0, 3650, 0.0)"), ("687", "(37, 0)"),
                     ("753", "(86, 42)"), ("813", "(7, 7)"))
        for p in ("symbolic", "flex", "strict", "cascade")
    },  # fmt: skip
    **{
        ("pot-zeroshot", r, "cascade"): (False, "wrong_value", a, "several values for one number (no SymPy)")
        for r, a in (("1310", "(1/8, 1/4, 4, 16)"), ("181", "{red_roses: 160, white_carnations: 40, pink_calla_lilies: 200}"),
                     ("279", "{r: 36, s: 6, r9: 45, s9: 15}"), ("420", "{x: 4000, y: 1000, z: 6000}"),
                     ("428", "[{x: 16, y: 20}]"), ("658", "{pork: 50, rice: 30, beans: 40}"))
    },  # fmt: skip
    # "It will take Jay $\boxed{5}$ hours and $\boxed{20}$ minutes": both boxes are the answer (gold 5)
    ("tora-code-34b", "1187", "flex"): (False, "wrong_value", "5, 20", "two boxes joined by 'hours and'"),
    ("tora-code-34b", "1187", "strict"): (False, "wrong_value", "5, 20", "two boxes joined by 'hours and'"),
    # the choice golds: the letter is compared (it was SymPy on c and e, right; b against d or a, wrong)
    **{(run, "227", p): (True, "normalised", "C", "choice letter") for run in ("cot", "interpreter") for p in ("symbolic", "flex", "strict")},
    **{(run, "255", p): (True, "normalised", "E", "choice letter") for run in ("cot", "interpreter") for p in ("symbolic", "flex", "strict")},
    **{("cot", "296", p): (False, "wrong_value", "D", "choice D for B") for p in ("symbolic", "flex", "strict", "cascade")},
    **{("interpreter", "296", p): (False, "wrong_value", "A", "choice A for B") for p in ("symbolic", "flex", "strict", "cascade")},
    # a list of values against one number: "lists N values" (it was "no number could be read")
    ("cot", "290", "cascade"): (False, "wrong_value", "\\frac{7}{2}, 4", "two values for one number"),
    **{("interpreter", "238", p): (False, "wrong_value", "-5, -4, 1", "three values for one") for p in ("symbolic", "flex", "strict", "cascade")},
    **{("interpreter", "464", p): (False, "wrong_value", "-4, 9", "two values for one") for p in ("symbolic", "flex", "strict", "cascade")},
    # the output's last digit was the exponent of \sin^2 x, no answer: a digit after ^ is no number now
    **{("cot", "74", p): (False, "no_answer", None, "the 2 of sin^2 x was read") for p in ("symbolic", "flex", "cascade")},
    # a LaTeX span that does not parse gives way to the last number after it (a failed span must not
    # hide a good one); wrong both times
    **{("cot", "140", p): (False, "wrong_value", "12", "\\gcd(...) does not parse") for p in ("symbolic", "flex")},
    **{("interpreter", "422", p): (False, "wrong_value", "2", "a set equation that does not parse") for p in ("symbolic", "flex")},
}  # fmt: skip


@pytest.fixture(scope="module")
def grades() -> dict[str, pl.DataFrame]:
    """The policy grades of each run, graded once."""
    out = {}
    for name, (dataset, predictions) in RUNS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # program-of-thoughts prompt-only lines
            run = grade_run(resolve(dataset=dataset, predictions=[predictions]))
        out[name] = run.policy_grades.with_columns(pl.col("policy", "reason").cast(pl.String))
    return out


def _row(grades: dict[str, pl.DataFrame], key: tuple[str, str, str]) -> dict[str, Any]:
    run, record, policy = key
    found = grades[run].filter((pl.col("record_id") == record) & (pl.col("policy") == policy))
    assert found.height == 1, key
    return found.row(0, named=True)


@pytest.mark.parametrize("name", list(MATH500_COUNTS))
def test_math500_counts_per_policy(grades: dict[str, pl.DataFrame], name: str) -> None:
    counts = grades[name].group_by("policy").agg(pl.col("correct").sum())
    assert dict(counts.iter_rows()) == MATH500_COUNTS[name]


@pytest.mark.parametrize("key", list(CHANGED_VERDICTS))
def test_the_verdicts_that_changed(grades: dict[str, pl.DataFrame], key: tuple[str, str, str]) -> None:
    correct, reason, why = CHANGED_VERDICTS[key]
    row = _row(grades, key)
    assert (row["correct"], row["reason"]) == (correct, reason), (why, row["detail"])


@pytest.mark.parametrize("key", list(CHANGED_REASONS))
def test_the_reasons_that_changed(grades: dict[str, pl.DataFrame], key: tuple[str, str, str]) -> None:
    correct, reason, answer, why = CHANGED_REASONS[key]
    row = _row(grades, key)
    assert (row["correct"], row["reason"], row["answer"]) == (correct, reason, answer), (why, row["detail"])
