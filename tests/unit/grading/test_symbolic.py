"""Symbolic equivalence through math-verify and SymPy, and cheap LaTeX number reading."""

from __future__ import annotations

import operator
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.grading.limits import call_with_limit, shutdown_workers
from workbench.grading.status import GradeStatus
from workbench.grading.symbolic import MAX_SYMBOLIC_CHARS, SymbolicVerdict, latex_equivalent, latex_number

OK, UNPARSEABLE, TIMEOUT = GradeStatus.OK, GradeStatus.UNPARSEABLE, GradeStatus.TIMEOUT


@pytest.fixture(scope="module", autouse=True)
def _workers() -> Iterator[None]:
    """Start a worker before the timed tests and leave none behind."""
    call_with_limit(operator.add, 0, 0)
    yield
    shutdown_workers()


def _warm() -> None:
    """Make sure a ready worker is waiting, so a timing measures the limit and not a start-up."""
    assert call_with_limit(operator.add, 0, 0).ok


@pytest.mark.parametrize(
    ("pred", "gold", "status", "equivalent"),
    [
        # the grading brief's equivalence table
        ("7(x-3)(x+3)", "7x^2-63", OK, True),  # factored form
        (r"\frac{3}{7}", "3/7", OK, True),  # LaTeX fraction vs plain
        (r"\{1,2\}", r"\{2,1\}", OK, True),  # sets ignore order
        ("(1, 2]", "(1,2]", OK, True),  # spacing inside an interval
        ("(1, 2]", "[1,2]", OK, False),  # openness of an end matters
        ("(1,2)", "(2,1)", OK, False),  # tuples keep order
        (r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", OK, True),
        (r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", r"\begin{pmatrix}1&3\\2&4\end{pmatrix}", OK, False),  # transpose
        (r"\sqrt{8}", r"2\sqrt{2}", OK, True),  # radicals simplify
        ("x^2+2x+1", "(x+1)^2", OK, True),  # expanded vs factored square
        (r"\frac{\pi}{2}", r"\frac{1}{2}\pi", OK, True),  # constants
        ("1000", "1001", OK, False),  # integers are exact
        ("123456789012345678", "123456789012345679", OK, False),  # beyond float precision, still exact
        # text against formulas: the gold decides the kind
        ("yes", "x+1", UNPARSEABLE, False),  # a word cannot be compared with a formula
        ("x+1", "yes", OK, False),  # a text gold: the prediction is not that word
        (r"\text{Yes}", "yes", OK, True),
        ("no", "yes", OK, False),
        # delimiters, equations, shapes, empties
        (r"$\frac{1}{2}$", r"\(0.5\)", OK, True),
        ("x=3", "3", OK, True),  # a predicted equation is reduced to its right-hand side
        (r"\begin{pmatrix}1&2\end{pmatrix}", r"\begin{pmatrix}1\\2\end{pmatrix}", OK, False),  # row vs column
        (r"\{1,2,3\}", r"\{1,2\}", OK, False),
        ("x<1", "x>1", OK, False),
        ("", "1", UNPARSEABLE, False),
        ("1", "   ", UNPARSEABLE, False),
        ("1", r"\frac{3}{0}", UNPARSEABLE, False),  # SymPy refuses to compare with complex infinity
    ],
)
def test_latex_equivalent_table(pred: str, gold: str, status: GradeStatus, equivalent: bool) -> None:
    verdict = latex_equivalent(pred, gold)
    assert isinstance(verdict, SymbolicVerdict)
    assert (verdict.status, verdict.equivalent) == (status, equivalent), verdict.detail
    assert verdict.detail and "\n" not in verdict.detail
    if status is OK:
        assert verdict.gold_parsed is not None  # the gold was read (as a formula or as a word)


def test_detail_names_both_parses_and_the_reason() -> None:
    verdict = latex_equivalent("(1, 2]", "[1,2]")
    assert (verdict.pred_parsed, verdict.gold_parsed) == ("Interval.Lopen(1, 2)", "Interval(1, 2)")
    assert "Interval(1, 2)" in verdict.detail and "Interval.Lopen(1, 2)" in verdict.detail
    assert "open" in verdict.detail
    text = latex_equivalent("yes", "x+1")
    assert "word 'yes'" in text.detail and "x+1" in text.detail


def test_an_unparseable_prediction_is_a_status_not_a_false() -> None:
    verdict = latex_equivalent(r"\frac{", "1")
    assert verdict.status is UNPARSEABLE and not verdict.equivalent
    assert "prediction" in verdict.detail


@pytest.mark.parametrize(
    ("pred", "gold"),
    [
        (r"10^{10^{10^{10}}}", "1"),  # a power tower SymPy tries to evaluate
        ("(" * 5000 + "x" + ")" * 5000, "x"),  # deep nesting
        (r"\frac{" * 2000 + "1" + "}{2}" * 2000, "1"),  # deep \frac nesting
        ("1+" * 500_000 + "1", "2"),  # 1 MB: refused by the size budget, reported as a timeout
    ],
    ids=["power-tower", "nested-parentheses", "nested-frac", "one-megabyte"],
)
def test_time_limit_cases_end_in_a_status_and_say_so(pred: str, gold: str) -> None:
    _warm()
    time_limit = 1.0
    verdict = latex_equivalent(pred, gold, time_limit=time_limit)
    assert not verdict.equivalent
    # a deep-nesting RecursionError may legitimately come back quickly as unparseable
    assert verdict.status in (TIMEOUT, UNPARSEABLE), verdict.detail
    if verdict.status is TIMEOUT:
        assert "gave up after 1.0 s of CPU" in verdict.detail or "budget" in verdict.detail
    # and the next comparison works
    assert latex_equivalent("2", "1+1").equivalent


def test_power_tower_goes_through_the_real_time_limit() -> None:
    _warm()
    verdict = latex_equivalent(r"10^{10^{10^{10}}}", "1", time_limit=0.5)
    assert verdict.status is TIMEOUT
    assert verdict.detail.startswith("gave up after 0.5 s of CPU")


def test_size_budget_is_reported_as_a_timeout_with_the_reason() -> None:
    verdict = latex_equivalent("1", "1" * (MAX_SYMBOLIC_CHARS + 1))
    assert verdict.status is TIMEOUT and not verdict.equivalent
    assert "budget" in verdict.detail and "gold" in verdict.detail


@settings(max_examples=25, deadline=None)
@given(p=st.integers(-60, 60), q=st.integers(1, 60))
def test_frac_equals_slash(p: int, q: int) -> None:
    verdict = latex_equivalent(f"\\frac{{{p}}}{{{q}}}", f"{p}/{q}")
    assert (verdict.status, verdict.equivalent) == (OK, True), verdict.detail
    assert latex_number(f"\\frac{{{p}}}{{{q}}}") == p / q


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (r"\frac{3}{7}", 3 / 7),
        (r"\dfrac{-3}{7}", -3 / 7),
        (r"-\frac34", -0.75),
        (r"\tfrac{1}{4}", 0.25),
        ("3/7", 3 / 7),
        ("1{,}000", 1000.0),
        ("1,000", 1000.0),
        (r"1\,000", 1000.0),
        (r"\$1.33", 1.33),
        (r"-\$5", -5.0),
        (r"15.97\text{ ml}", 15.97),
        (r"12\mathrm{kg}", 12.0),
        (r"0.5\%", 0.5),  # percent kept as written, like normalize.parse_number
        ("14.1%", 14.1),
        (r"\left( 3 \right)", 3.0),  # parentheses group in LaTeX; not an accounting negative
        ("-(3)", -3.0),
        (r"1.5\times10^{3}", 1500.0),
        (r"2.5\cdot10^{-2}", 0.025),
        (r"30^\circ", 30.0),
        (r"\boxed{42}", 42.0),
        (r"$\frac{1}{2}$", 0.5),
        ("\u22123", -3.0),  # unicode minus
        (r"\text{7}", 7.0),
    ],
)
def test_latex_number_reads(text: str, value: float) -> None:
    assert latex_number(text) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize(
    "text",
    [
        "x+1",
        "(1,2)",
        r"2\frac{1}{2}",  # a mixed number: ambiguous in LaTeX
        r"\frac{1}{0}",
        "3 7",  # two numbers
        "yes",
        "",
        r"\sqrt{2}",
        r"\frac{" * 2000 + "1" + "}{2}" * 2000,  # too long and too deep: refused, no recursion
        "1" * 500,
    ],
)
def test_latex_number_refuses_non_numbers(text: str) -> None:
    assert latex_number(text) is None
