"""The vectorised fast path (issue 21) gives the cascade's grades on every input it decides.

Three layers: a regression table (each rule of extraction and of the numeric cascade, the
exact-string and official matchers, the cues, and inputs the fast path must leave to the
cascade), a hypothesis property over generated outputs and answers, and every bundled real output
set graded by ``grade_predictions`` with and without the fast path (identical turns and policy
grades; the fraction of distinct inputs the fast path decides is printed).
"""

from __future__ import annotations

import re
import string
import warnings
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from workbench.grading import patterns
from workbench.grading.cues import percent_cue
from workbench.grading.policies import POLICIES, GradingPolicy, for_benchmark
from workbench.grading.turn import grade_turn
from workbench.io.gold import GoldDataset, load_gold
from workbench.io.link import attach_record_ids, gold_from_predictions
from workbench.io.predictions import load_predictions
from workbench.pipeline import fastpath
from workbench.pipeline.fastpath import OUTPUTS, _cues, decide, models
from workbench.pipeline.grade import grade_predictions

REPO = Path(__file__).resolve().parents[3]

#: The policies the fast path models, the main one first, as grade_predictions orders them.
MODELLED = [POLICIES["symbolic"], *[p for p in POLICIES.values() if models(p) and p.name != "symbolic"]]
FIELDS = ["policy", "correct", "status", "reason", "answer", "answer_source", "extraction_rule", "detail", "pred_value"]


def cascade(frame: pl.DataFrame, policies: Sequence[GradingPolicy], kind: str = "auto") -> pl.DataFrame:
    """What ``grade_turn`` (the cascade) gives each row under each policy, as :data:`OUTPUTS`."""
    out = []
    for i, row in enumerate(frame.iter_rows(named=True)):
        grade = grade_turn(
            predicted_answer=row.get("predicted_answer"),
            predicted_program=row.get("predicted_program"),
            gold_executed=row.get("gold_executed"),
            gold_program=None,
            gold_answer=row.get("gold_answer"),
            raw_output=row.get("raw_output"),
            upstream_answer=row.get("upstream_answer"),
            question=row.get("question"),
            unit=row.get("predicted_unit"),
            kind=kind,  # type: ignore[arg-type]
            policy=policies[0],
            also=policies[1:],
        )
        for p, each in enumerate(grade.policies):
            out.append(
                {
                    "_row": i,
                    "_p": p,
                    "policy": each.policy,
                    "correct": each.verdict.correct,
                    "status": each.verdict.status.value,
                    "reason": each.verdict.reason.value,
                    "answer": each.answer,
                    "answer_source": each.answer_source,
                    "extraction_rule": each.extraction.rule.value if each.extraction else None,
                    "detail": each.verdict.detail,
                    "pred_value": each.verdict.pred_value,
                }
            )
    return pl.DataFrame(out, schema=OUTPUTS)


def fast_equals_cascade(frame: pl.DataFrame, policies: Sequence[GradingPolicy], kind: str = "auto") -> pl.Series:
    """Assert that the fast path's grades equal the cascade's on every row it decides; the rows."""
    rows, fast = decide(frame, policies, kind)  # type: ignore[arg-type]
    expected = cascade(frame, policies, kind).filter(pl.col("_row").is_in(rows.implode()))
    assert fast["_p"].is_sorted() and all(part["_row"].is_sorted() for _, part in fast.group_by("_p"))
    assert_frame_equal(fast.sort("_row", "_p"), expected.sort("_row", "_p"), check_exact=True)
    return rows


def _frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    columns = ("predicted_answer", "raw_output", "upstream_answer", "gold_executed", "gold_answer", "question")
    return pl.DataFrame(
        [{c: r.get(c) for c in (*columns, "predicted_unit", "predicted_program")} for r in rows],
        schema={c: pl.String() for c in (*columns, "predicted_unit", "predicted_program")},
    )


# --------------------------------------------------------------------------- regression table
# (row, main policy's reason, decided by the fast path)
TABLE: list[tuple[dict[str, Any], str, bool]] = [
    # extraction: each marker, the last number, no answer
    ({"raw_output": "9 * 2 = 18\n#### 18", "gold_executed": "18"}, "exact", True),
    ({"raw_output": "So the answer is 18.", "gold_executed": "18"}, "exact", True),
    ({"raw_output": "The final answer is $18", "gold_executed": "18"}, "exact", True),
    ({"raw_output": "3 + 4 = <<3+4=7>>7\nA: 7", "gold_executed": "7"}, "exact", True),
    ({"raw_output": "so she pays $\\boxed{18}$ dollars.", "gold_executed": "18"}, "exact", True),
    ({"raw_output": "She makes 16 - 3 = 13 eggs and\nsells them for 26", "gold_executed": "26"}, "exact", True),
    ({"raw_output": "no digits here\nat all", "gold_executed": "3"}, "no_answer", True),
    ({"raw_output": "it costs $5 and\nthen $10 in all", "gold_executed": "10"}, "exact", True),  # after a formula
    ({"raw_output": "so 5 is\nthe $x$", "gold_executed": "5"}, "wrong_value", False),  # a formula ends last
    ({"raw_output": "\u2019quoted\u2019 \u00d7 2 = 8\n#### 8", "gold_executed": "8"}, "exact", True),
    # the numeric cascade: every rule, and every mismatch type
    ({"predicted_answer": "0.14136", "gold_executed": "0.14136"}, "exact", True),
    ({"predicted_answer": "0.141361", "gold_executed": "0.141364"}, "official_round5", True),
    ({"predicted_answer": "1000.4", "gold_executed": "1000"}, "rel_tolerance", True),
    ({"predicted_answer": "1.74", "gold_executed": "1.743"}, "reported_precision", True),
    ({"predicted_answer": "14.1%", "gold_executed": "0.14136"}, "reported_precision", True),
    ({"predicted_answer": "12.57", "gold_executed": "0.12574"}, "percent_reading", True),
    ({"predicted_answer": "12.57", "gold_executed": "0.12574", "predicted_unit": "raw"}, "percent_confusion", True),
    (
        {"predicted_answer": "14.1", "gold_executed": "0.141", "question": "what is the ratio of a to b?"},
        "percent_confusion",
        True,
    ),
    (
        {"predicted_answer": "14.1", "gold_executed": "0.141", "question": "what percentage of sales?"},
        "percent_reading",
        True,
    ),
    ({"predicted_answer": "-18", "gold_executed": "18"}, "sign_flip", True),
    ({"predicted_answer": "186", "gold_executed": "186.4"}, "rounding", True),
    ({"predicted_answer": "1877", "gold_executed": "18770"}, "scale", True),
    ({"predicted_answer": "5", "gold_executed": "18"}, "wrong_value", True),
    ({"predicted_answer": "$1,234.50", "gold_executed": "1234.5"}, "exact", True),
    ({"upstream_answer": "18", "raw_output": "so $\\boxed{18}$", "gold_executed": "18"}, "exact", True),
    # a system's own answer with whitespace around it (program-of-thoughts), a percent word after it
    ({"predicted_answer": "58\n\n", "gold_executed": "58"}, "exact", True),
    ({"predicted_answer": "335  ", "gold_executed": "336"}, "wrong_value", True),
    ({"predicted_answer": "\t$5\r\n", "gold_executed": "5"}, "exact", True),  # official: text '\t$5\r\n'
    ({"upstream_answer": "161\n", "raw_output": "9 + 152 = 161\n#### 161", "gold_executed": "161"}, "exact", True),
    ({"predicted_answer": "22.18 percent", "gold_executed": "0.23091"}, "wrong_value", True),
    ({"predicted_answer": "-14.2 pct ", "gold_executed": "-0.142"}, "exact", True),
    # "percent" holds an "e": not an integer as written (compare._written_integer), unlike "1000%"
    ({"predicted_answer": "1000 percent", "gold_executed": "1001"}, "percent_reading", True),
    ({"predicted_answer": "1000%", "gold_executed": "1001"}, "percent_confusion", True),
    # a scale word: decided by the rules before the scale reading (exact, 5 decimals, tolerance, precision)
    ({"predicted_answer": "3.303 thousand\n", "gold_executed": "3303"}, "exact", True),
    ({"predicted_answer": "$13.693 million", "gold_executed": "13693000"}, "exact", True),
    ({"predicted_answer": "2 thousand", "gold_executed": "2001"}, "rel_tolerance", True),  # not an integer as written
    ({"predicted_answer": "1.74 thousand", "gold_executed": "1743"}, "reported_precision", True),  # to 10
    ({"predicted_answer": "0.5 billion", "gold_executed": "500000000"}, "exact", True),
    # past those, the scale reading (the gold in the answer's unit) where nothing states a unit, and the mismatches
    ({"predicted_answer": "1.5 thousand", "gold_executed": "1.5"}, "exact", True),
    ({"predicted_answer": "1.5 thousands", "gold_executed": "1.5012"}, "rel_tolerance", True),
    ({"predicted_answer": "1.74 thousand", "gold_executed": "1.743"}, "reported_precision", True),
    ({"predicted_answer": "1.0000001 thousand", "gold_executed": "1.000000104"}, "official_round5", True),
    ({"predicted_answer": "-965.635 thousand", "gold_executed": "965635"}, "sign_flip", True),
    ({"predicted_answer": "899.516 thousand", "gold_executed": "768588"}, "wrong_value", True),
    ({"predicted_answer": "1.3693 thousand", "gold_executed": "13.693"}, "percent_reading", True),
    ({"predicted_answer": "$13.693 million", "gold_executed": "136930"}, "percent_reading", True),  # read: 1e11
    ({"predicted_answer": "1.3 thousands", "gold_executed": "1.3"}, "exact", True),
    ({"predicted_answer": "3.303 thousand", "gold_executed": "3.303"}, "exact", True),
    ({"predicted_answer": "33.03 thousand", "gold_executed": "3303"}, "scale", True),
    ({"predicted_answer": "2 million", "gold_executed": "2000"}, "scale", True),  # the gold read: 2e9
    # a unit the question states: the gold is read in it, right or wrong (no unit readings)
    ({"predicted_answer": "1.5 thousand", "gold_executed": "1.5", "question": "in millions?"}, "scale", True),
    ({"predicted_answer": "$1.5 million", "gold_executed": "1500", "question": "in thousands?"}, "exact", True),
    ({"predicted_answer": "2 thousand", "gold_executed": "2.004", "question": "in thousands?"}, "rounding", True),
    ({"predicted_answer": "15 thousand", "gold_executed": "0.15", "question": "in thousands?"}, "rounding", True),
    ({"predicted_answer": "-15.7 thousand", "gold_executed": "15.7", "question": "in thousands"}, "sign_flip", True),
    ({"predicted_answer": "22.5 thousand", "gold_executed": "15704", "question": "in thousands"}, "wrong_value", True),
    ({"predicted_answer": "$15.436 million", "gold_executed": "5829", "question": "in millions"}, "wrong_value", True),
    # a marker's answer followed by words is the number alone (extract.clean_answer_text)
    ({"raw_output": "so it grew.\nThe answer is 4 percent.", "gold_executed": "4"}, "exact", True),
    ({"raw_output": "so \\boxed{9 percent}", "gold_executed": "9"}, "exact", True),
    ({"raw_output": "2 * 1157 = 2314\nAnswer: 2.314 thousand", "gold_executed": "2314"}, "scale", True),
    # flexible extraction does not read code blocks; an output block is not code (extract._blank_code)
    ({"raw_output": "```py\nprint(7)\n```\n```output\n120.0\n```\n53 in all.", "gold_executed": "53"}, "exact", True),
    ({"raw_output": "```python\nprint(2 * 60)\n```\n```output\n120\n```", "gold_executed": "120"}, "exact", True),
    ({"raw_output": "so\n```python\nx = 2\n", "gold_executed": "2"}, "no_answer", True),  # an unclosed block
    ({"raw_output": "it is 5\n```\ny = $3$\n```  ", "gold_executed": "5"}, "exact", True),  # a formula in code
    ({"raw_output": "$```py\nx\n```5 in\nall", "gold_executed": "5"}, "exact", True),  # "$" and 5 apart
    ({"raw_output": "```python\nx = '\\n'\n```\n7", "gold_executed": "7"}, "exact", False),  # a backslash
    # left to the cascade: LaTeX, expressions, scale words, text, programs, rounding ties
    ({"raw_output": "so $\\boxed{\\frac{1}{2}}$", "gold_executed": "0.5"}, "exact", False),
    ({"predicted_answer": "$48.7m", "gold_executed": "48700000"}, "exact", False),
    # a minus sign right after a percentage: Python reads -6, the polars pattern 6
    ({"raw_output": "It grew by\n5%\u22126 points", "gold_executed": "6"}, "sign_flip", False),
    ({"predicted_answer": "48.7 Million", "gold_executed": "48700000"}, "exact", False),
    ({"predicted_answer": "5 Percent", "gold_executed": "0.05"}, "exact", False),
    ({"predicted_answer": "5\u00a0", "gold_executed": "5"}, "exact", False),
    ({"raw_output": "The answer is 4 percent. It grew", "gold_executed": "4"}, "exact", False),
    ({"predicted_answer": "3/4", "gold_executed": "0.75"}, "exact", False),
    ({"predicted_answer": "yes", "gold_executed": "yes"}, "yes_no", False),
    ({"predicted_answer": "1e-05", "gold_executed": "0.00001"}, "exact", False),
    ({"predicted_answer": "0.000015", "gold_executed": "0.00002"}, "official_round5", False),  # a tie
    ({"predicted_program": "divide(1, 2)", "gold_executed": "0.5"}, "exact", False),
    ({"raw_output": "The answer is 4.\n#### 5", "gold_executed": "5"}, "exact", False),
    ({"raw_output": "so 18 d\u00e9j\u00e0", "gold_executed": "18"}, "exact", False),
]


@pytest.mark.parametrize(("row", "reason", "decided"), TABLE, ids=[str(i) for i in range(len(TABLE))])
def test_regression_table(row: dict[str, Any], reason: str, decided: bool) -> None:
    frame = _frame([row])
    rows = fast_equals_cascade(frame, MODELLED)
    assert (rows.len() == 1) is decided
    assert cascade(frame, MODELLED)["reason"][0] == reason


@pytest.mark.parametrize("benchmark", ["gsm8k", "math", "convfinqa"])
def test_the_table_under_each_benchmark(benchmark: str) -> None:
    """``for_benchmark`` turns off the x100 reading of a bare number (GSM8K, MATH) and reads the
    gold as LaTeX (MATH): the fast path follows."""
    policies = [for_benchmark(p, benchmark) for p in MODELLED]
    rows = fast_equals_cascade(_frame([row for row, _, _ in TABLE]), policies)
    assert rows.len() == sum(decided for _, _, decided in TABLE)


def test_policies_it_does_not_model_are_left_to_the_cascade() -> None:
    assert not models(POLICIES["math-verify"])
    rows, grades = decide(_frame([{"predicted_answer": "18", "gold_executed": "18"}]), [POLICIES["math-verify"]])
    assert rows.is_empty() and grades.is_empty()
    rows, grades = decide(_frame([{"predicted_answer": "18", "gold_executed": "18"}]), MODELLED, "text")
    assert rows.is_empty()


# --------------------------------------------------------------------------- hypothesis
_numbers = st.one_of(
    st.integers(-10**7, 10**7).map(str),
    *[st.decimals(-10**6, 10**6, places=k, allow_nan=False, allow_infinity=False).map(lambda d: format(d, "f"))
      for k in (1, 2, 3, 5)],
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False).filter(lambda x: x == 0 or abs(x) > 1e-6).map(repr),
    st.sampled_from(["0", "0.5", "1,234", "1,234.5", "12.57", "0.12574", "0.1257", "14.1", "100", "1e-05", ".5"]),
)  # fmt: skip
_decorated = st.tuples(st.sampled_from(["", "-", "$", "-$"]), _numbers, st.sampled_from(["", "%", "."])).map(
    lambda t: t[0] + t[1].lstrip("-") + t[2] if t[0] else t[1] + t[2]
)
#: A system's own answer as real ones come: whitespace around it (program-of-thoughts prints
#: ``'5\\n\\n'``), a percent or scale word after it, in any case and spacing (only some are decided).
_spaces = st.sampled_from(["", "", " ", "  ", "\n", "\n\n", "\t", "\r\n", " \n", "\x0b", "\u00a0"])
_words_after = st.sampled_from(
    ["", "", " percent", "percent", " pct", "pct", " Percent", "  percent", " %", " per cent"]
    + [" thousand", "million", " millions", " billion", " Million", " m", "bn", " thousand %", " trillion"]
)
_answers = st.tuples(_spaces, _decorated, _words_after, _spaces).map(
    lambda t: t[0] + (t[1].removesuffix("%") + t[2] if t[2] else t[1]) + t[3]
)
_words = st.sampled_from(["so", "the total is", "she pays", "answer:", "The answer is", "Final answer:", "#### ",
                          "A: ", "\\boxed{", "}", "$", "\n", " ", ", ", "=", "<<2*3=6>>", "```", "%", "/", "and",
                          "\u2019", "\u00e9", "million", "I hope it is correct.", "```python\n", "```output\n",
                          "\n```\n", "``` output \n", "x = 5 % 2\nprint($3)", "$5 percent"])  # fmt: skip
_outputs = st.lists(st.one_of(_decorated, _words), min_size=0, max_size=8).map(" ".join)
_marked = st.tuples(
    st.sampled_from(["She has 3 apples", "2 + 3 = <<2+3=5>>5", "the rate is 12%", "so x = 4.50", ""]),
    st.sampled_from(["\n#### ", "\nA: ", " The answer is ", " Final Answer: The final answer is ", " so $\\boxed{",
                     "\nthen ", " "]),
    _decorated,
    st.sampled_from(["", ".", "}$.", " dollars", "\n"]),
).map("".join)  # fmt: skip
#: Outputs that hold code and ``output`` blocks, as tool-using models write them (ToRA): flexible
#: extraction reads the last number outside code.
_code = st.lists(
    st.one_of(_decorated, st.sampled_from(["x = ", "print(", ")", "$", "\n", " ", "%", "/", "# 5 apples", "```"])),
    max_size=6,
).map("".join)
_coded = st.tuples(
    st.sampled_from(["", "Let me compute.\n", "so $5$ and 3\n", "it is 7 "]),
    st.sampled_from(["```python\n", "```\n", "``` output\n", "```output\n", "```py `\n", "```Output\n"]),
    _code,
    st.sampled_from(["\n```", "\n```\n", "", "```"]),
    st.sampled_from(["", "\n```output\n", "```output\n", "```python\n"]),
    st.one_of(st.just(""), _decorated),
    st.sampled_from(["\n```", "\n```\n", "", "\n"]),
    st.sampled_from(["", "\n", " Therefore the total comes to ", "\n$", "Answer: "]),
    st.one_of(st.just(""), _decorated),
    st.sampled_from(["", " in the end.", "\n\n", "  ", " percent", "```\n"]),
).map("".join)
_questions = st.sampled_from(
    [None, "what is the ratio of a to b?", "what percentage of sales?", "how many eggs?", "(in millions)"]
)
_rows = st.fixed_dictionaries(
    {
        "predicted_answer": st.one_of(
            st.none(), st.none(), _decorated, _answers, st.sampled_from(["N/A", " 18", "18 apples", " \n"])
        ),
        "raw_output": st.one_of(st.none(), _outputs, _marked, _coded),
        "upstream_answer": st.one_of(st.none(), st.none(), _decorated, _answers),
        "gold_executed": st.one_of(_decorated, st.sampled_from(["yes", "\\frac{1}{2}", ""])),
        "gold_answer": st.one_of(st.none(), _decorated, st.sampled_from(["'18'", " 18 "])),
        "question": _questions,
        "predicted_unit": st.sampled_from([None, "percent", "ratio", "raw", "none"]),
    }
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(_rows, min_size=1, max_size=6), benchmark=st.sampled_from(["convfinqa", "gsm8k", "math"]))
def test_fast_path_equals_the_cascade_where_it_decides(rows: list[dict[str, Any]], benchmark: str) -> None:
    policies = [for_benchmark(p, benchmark) for p in MODELLED]
    decided = fast_equals_cascade(_frame(rows), policies)
    event(f"the fast path decides {'some' if decided.len() else 'no'} rows")


_own_answers = st.fixed_dictionaries(
    {
        "predicted_answer": st.one_of(st.none(), _answers),
        "upstream_answer": st.one_of(st.none(), _answers),
        "raw_output": st.one_of(st.none(), _marked, _coded),
        "gold_executed": _decorated,
        "question": _questions,
        "predicted_unit": st.sampled_from([None, None, "percent", "ratio", "raw"]),
    }
)


#: Outputs whose numbers touch: a ``%`` before a number, a fraction before decimals (the
#: calculator annotations ``<<80/26.6=3.0>>``), signs and separators, with characters no number
#: holds between them, over several lines; the last number decides flexible extraction.
_glued = st.lists(
    st.one_of(
        _decorated,
        st.sampled_from(["5", "26", "2.5", ".5", "80", "1,234", "3.0", "%", "/", " / ", "$", "-", "\u2212", "\u2013",
                         "=", "<<", ">>", " ", "  ", "\n", "x", "e", "E5", "+", ",", ".", "apples", "$x$", "is"]),
        st.sampled_from(["5%\u22126", "5%\u20136", "5%-6", "5%$6", "5%.5", "5%6", "80/26.6", "3 / 4.5", "1/2.5",
                         "<<80/26.666666666666668=3.0>>", "3/4.", "2%%5"]),
    ),
    min_size=1,
    max_size=12,
).map(lambda parts: "So\n" + "".join(parts))  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(
        st.fixed_dictionaries({"raw_output": _glued, "gold_executed": _decorated, "question": _questions}),
        min_size=1,
        max_size=6,
    ),
    benchmark=st.sampled_from(["convfinqa", "gsm8k"]),
)
@example(
    rows=[{"raw_output": "It grew by\n5%\u22126 points", "gold_executed": "6", "question": None}], benchmark="gsm8k"
)
def test_the_last_number_where_numbers_touch(rows: list[dict[str, Any]], benchmark: str) -> None:
    policies = [for_benchmark(p, benchmark) for p in MODELLED]
    decided = fast_equals_cascade(_frame(rows), policies)
    event(f"the fast path decides {decided.len()} of {len(rows)} rows")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(_own_answers, min_size=1, max_size=6), benchmark=st.sampled_from(["convfinqa", "gsm8k"]))
def test_own_answers_with_whitespace_and_percent_words(rows: list[dict[str, Any]], benchmark: str) -> None:
    """A system's own answer as real outputs write it, against plain golds: the fast path decides
    most of these, so the property is exercised on them (not only on the rows it leaves)."""
    policies = [for_benchmark(p, benchmark) for p in MODELLED]
    decided = fast_equals_cascade(_frame(rows), policies)
    padded = [rows[i]["predicted_answer"] for i in decided.to_list() if rows[i]["predicted_answer"] is not None]
    padded = [answer for answer in padded if answer != answer.strip()]
    event(f"the fast path decides {'some' if decided.len() else 'no'} rows; {'some' if padded else 'no'} padded")


@st.composite
def _scaled_pairs(draw: st.DrawFn) -> dict[str, Any]:
    """An answer with a scale word and a gold near its value, or near it in the answer's unit ("1.5
    thousand" for 1.5: the scale reading): equal, within the tolerance, at the answer's precision,
    a little or much off, scaled, of the other sign."""
    words = {"thousand": 3, "thousands": 3, "million": 6, "millions": 6, "billion": 9, "trillion": 12}
    word = draw(st.sampled_from(sorted(words)))
    mantissa = draw(st.decimals(0, 10**4, places=draw(st.integers(0, 4)), allow_nan=False, allow_infinity=False))
    factors = ["1", "1", "1.0004", "0.9993", "1.01", "-1", "10", "0.001", "100", "0.01", "0.5", "1000"]
    exponent = draw(st.sampled_from([words[word], words[word], 0]))
    gold = mantissa.scaleb(exponent) * Decimal(draw(st.sampled_from(factors)))
    gold += Decimal(draw(st.sampled_from([0, 0, 1, -3, 40, 0.5])))
    sign, cur = draw(st.sampled_from(["", "-"])), draw(st.sampled_from(["", "$"]))
    space, pad = draw(st.sampled_from([" ", ""])), draw(_spaces)
    return {
        "predicted_answer": f"{sign}{cur}{mantissa:f}{space}{word}{pad}",
        "gold_executed": format(gold.normalize(), "f") if gold == gold.to_integral() else f"{gold:f}",
        "question": draw(_questions),
        "predicted_unit": draw(st.sampled_from([None, None, "percent", "millions"])),
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(_scaled_pairs(), min_size=1, max_size=6), benchmark=st.sampled_from(["convfinqa", "gsm8k"]))
@example(  # -0.0 and 0.0 in one call: polars holds them equal, their details differ ("-0", "0")
    rows=[
        {"predicted_answer": a, "gold_executed": "0", "question": None, "predicted_unit": None}
        for a in ("-0 billion", "0 billion", "0 billion")
    ],
    benchmark="convfinqa",
)
def test_answers_with_scale_words(rows: list[dict[str, Any]], benchmark: str) -> None:
    policies = [for_benchmark(p, benchmark) for p in MODELLED]
    decided = fast_equals_cascade(_frame(rows), policies)
    event(f"the fast path decides {'some' if decided.len() else 'no'} rows")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(
                st.none(), st.text(max_size=40), _questions, st.sampled_from(["PERCENT?", "ratio\u00e9", "pctx"])
            ),
            st.sampled_from([None, None, "percent", "Ratio ", "raw", "kg"]),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_cues_read_in_polars_are_percent_cue(pairs: list[tuple[str | None, str | None]]) -> None:
    frame = pl.DataFrame(pairs, schema={"question": pl.String, "predicted_unit": pl.String}, orient="row")
    assert _cues(frame).to_list() == [percent_cue(q, u) for q, u in pairs]


# --------------------------------------------------------------------------- every bundled output
BUNDLED = {
    "convfinqa": {
        "dataset": "data/convfinqa/dev.json",
        "predictions": [
            "data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6/2026-05-04T06-35-00Z/predictions.jsonl",
            "data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6/2026-05-04T12-48-44Z/predictions.jsonl",
        ],
    },
    "gsm8k": {
        "dataset": "data/gsm8k/test.jsonl",
        "predictions": [
            "data/predictions/gsm8k/tora/tora-70b.jsonl",
            "data/predictions/gsm8k/tora/tora-code-34b.jsonl",
            "data/predictions/gsm8k/program-of-thoughts/gsm8K_s0_e-1_11_17_10_20.jsonl",
            "data/predictions/gsm8k/program-of-thoughts/gsm8K_zs_s0_e-1_11_19_09_55.jsonl",
            "data/predictions/gsm8k/openai-gpt3/example_model_solutions.jsonl",
        ],
    },
    "math": {
        "dataset": None,
        "predictions": [
            "data/predictions/math/microsoft-rho-math-7b/test_cot_-1_seed0_t0.0_s0_e-1.jsonl",
            "data/predictions/math/microsoft-rho-math-7b-interpreter/test_tora_-1_seed0_t0.0_s0_e-1.jsonl",
        ],
    },
}


def _bundled(name: str) -> tuple[GoldDataset, list[pl.DataFrame]]:
    spec = BUNDLED[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # program-of-thoughts prompt-only lines
        frames = [load_predictions(REPO / path) for path in spec["predictions"]]
    if spec["dataset"] is None:  # MATH-500: the gold is carried in the outputs
        gold = gold_from_predictions(pl.concat(frames, how="vertical_relaxed"), source=spec["predictions"][0])
    else:
        gold = load_gold(REPO / spec["dataset"])
    return gold, [attach_record_ids(frame, gold) for frame in frames]


#: Every policy on ConvFinQA (math-verify graded by the cascade beside the fast path's grades); on
#: GSM8K's 10,552 outputs and MATH's LaTeX the policies the fast path models (math-verify takes minutes).
_MODELLED = [p for p in POLICIES.values() if models(p)]
_ALSO = {"convfinqa": None, "math": _MODELLED, "gsm8k": _MODELLED}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BUNDLED))
def test_bundled_outputs_grade_the_same_with_and_without_the_fast_path(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    gold, frames = _bundled(name)
    counted: list[int] = []
    real_decide = fastpath.decide

    def counting(frame: pl.DataFrame, *args: Any, **kwargs: Any) -> tuple[pl.Series, pl.DataFrame]:
        rows, grades = real_decide(frame, *args, **kwargs)
        counted.extend([frame.height, rows.len()])
        return rows, grades

    monkeypatch.setattr(fastpath, "decide", counting)
    kind = "latex" if gold.benchmark == "math" else "auto"
    runs = {
        fast: grade_predictions(gold, frames, also=_ALSO[name], kind=kind, fast_path=fast) for fast in (False, True)
    }
    assert_frame_equal(runs[True].turns, runs[False].turns)
    assert_frame_equal(runs[True].policy_grades, runs[False].policy_grades)
    inputs, decided = counted
    print(f"{name}: the fast path decides {decided:,} of {inputs:,} distinct inputs ({decided / inputs:.1%})")
    assert decided > 0


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(_glued, _outputs, st.text(alphabet=string.printable + "\u2212\u2013\u2019", max_size=60)))
def test_every_number_python_reads_is_made_of_number_characters(text: str) -> None:
    """What the fast path's unsafe-spot window relies on, on the texts it reads (FAST_TEXT): no
    match of TEXT_NUMBER holds a character outside patterns.NUMBER_CHAR (so either pattern reads
    afresh after one)."""
    whole = re.compile(f"{patterns.NUMBER_CHAR}*")
    for found in patterns.TEXT_NUMBER.finditer(text):
        assert whole.fullmatch(found.group(0)), (text, found.group(0))
