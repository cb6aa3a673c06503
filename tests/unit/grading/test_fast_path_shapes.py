"""The vectorised fast path keeps giving exactly the cascade's grades on the shapes grading fidelity 3
(issue 31) taught the cascade: a digit after ``^`` is an exponent (``15 cm^2``), a last number glued to
a colon belongs to a time or ratio (``at 12:00``), several boxes, amounts with units, choice letters.
The fast path decides what it can model and leaves the rest to the cascade; a row it decides must get
the cascade's answer, rule, verdict, reason and detail (tests/unit/pipeline/test_fastpath.py holds the
fast path's own tables; these are the new shapes, written here)."""

from __future__ import annotations

from typing import Any

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.grading.policies import POLICIES, for_benchmark
from workbench.grading.turn import grade_turn
from workbench.pipeline.fastpath import decide, models

MODELLED = [POLICIES["symbolic"], *[p for p in POLICIES.values() if models(p) and p.name != "symbolic"]]
_COLUMNS = ("predicted_answer", "raw_output", "upstream_answer", "gold_executed", "gold_answer", "question")


def _frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    names = (*_COLUMNS, "predicted_unit", "predicted_program")
    return pl.DataFrame([{c: r.get(c) for c in names} for r in rows], schema=dict.fromkeys(names, pl.String()))


def _cascade(row: dict[str, Any], policies: list[Any]) -> list[tuple[object, ...]]:
    grade = grade_turn(
        predicted_answer=row.get("predicted_answer"),
        predicted_program=None,
        gold_executed=row.get("gold_executed"),
        gold_program=None,
        gold_answer=row.get("gold_answer"),
        raw_output=row.get("raw_output"),
        upstream_answer=row.get("upstream_answer"),
        question=row.get("question"),
        unit=row.get("predicted_unit"),
        policy=policies[0],
        also=policies[1:],
    )
    return [
        (
            g.policy,
            g.verdict.correct,
            g.verdict.status.value,
            g.verdict.reason.value,
            g.answer,
            g.answer_source,
            g.extraction.rule.value if g.extraction else None,
            g.verdict.detail,
        )
        for g in grade.policies
    ]


def _fast_equals_cascade(rows: list[dict[str, Any]], policies: list[Any]) -> int:
    decided, grades = decide(_frame(rows), policies)
    for index in decided.to_list():
        fast = grades.filter(pl.col("_row") == index).sort("_p")
        found = [
            (r["policy"], r["correct"], r["status"], r["reason"], r["answer"], r["answer_source"],
             r["extraction_rule"], r["detail"])
            for r in fast.iter_rows(named=True)
        ]  # fmt: skip
        assert found == _cascade(rows[index], policies), rows[index]
    return decided.len()


#: (raw output, gold, decided by the fast path)
TABLE = [
    ("The area is 15 cm^2\nin all", "15", True),  # the 2 of cm^2 is an exponent, to both
    ("so 2^3\nmakes 8 and 10^2", "10", True),
    ("The meeting starts\nat 12:00", "12", False),  # a time: the cascade reads 12:00
    ("ratio 3:2\nso 5 in all", "5", True),  # a colon far from the last number
    ("so it is\n5:", "5", True),  # a colon with no digit after it ("== 19:" in code): a plain last number
    ("so it is\n5:3", "5", False),  # a ratio: left to the cascade, which reads 5:3
    ("He left at 3:30 and\ncame back 2 hours later", "2", True),
    ("$\\boxed{5}$ hours and $\\boxed{20}$ minutes", "5", False),
    ("It weighs\n200 ml and 400 ml", "400", True),  # several lines: the last number
]


def test_the_new_shapes_are_decided_as_the_cascade_decides() -> None:
    for benchmark in ("gsm8k", "convfinqa", "math"):
        policies = [for_benchmark(p, benchmark) for p in MODELLED]
        rows = [{"raw_output": out, "gold_executed": gold} for out, gold, _ in TABLE]
        decided, _ = decide(_frame(rows), policies)
        assert [i in decided.to_list() for i in range(len(TABLE))] == [d for _, _, d in TABLE]
        assert _fast_equals_cascade(rows, policies) == sum(d for _, _, d in TABLE)


_pieces = st.sampled_from(
    ["5", "12", "3", "00", "30", ":", "^", "^2", " cm^2", "12:00", "3:2", "x^2", " ", "\n", "ml", " and ", "=",
     "$", "so ", "at ", "2.5", "-", "%", "10^", ",", ".", ": "]
)  # fmt: skip


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    outputs=st.lists(
        st.lists(_pieces, min_size=1, max_size=10).map(lambda p: "So\n" + "".join(p)), min_size=1, max_size=5
    ),
    gold=st.sampled_from(["5", "12", "2", "30", "0"]),
    benchmark=st.sampled_from(["gsm8k", "convfinqa"]),
)
def test_exponents_and_colons_are_read_alike(outputs: list[str], gold: str, benchmark: str) -> None:
    policies = [for_benchmark(p, benchmark) for p in MODELLED]
    _fast_equals_cascade([{"raw_output": out, "gold_executed": gold} for out in outputs], policies)
