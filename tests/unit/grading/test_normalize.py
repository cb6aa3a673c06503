"""Answer normalisation and number reading."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from workbench.grading.normalize import (
    is_no_answer,
    normalize_answer,
    parse_cell_number,
    parse_number,
)


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("  **\u221214.1%**. ", "-14.1%"),
        ("__Yes__", "yes"),
        ("12.5 .", "12.5"),
        ("a\t\n b", "a b"),
        ("_**_", ""),  # removing ** leaves __, which is a marker too
    ],
)
def test_normalize_answer(text: str, normal: str) -> None:
    assert normalize_answer(text) == normal


@pytest.mark.parametrize(
    ("text", "value", "is_percent", "decimals"),
    [
        ("14.1%", 14.1, True, 1),
        ("-14.1%", -14.1, True, 1),
        ("\u221214.1 percent", -14.1, True, 1),
        ("$ 1,234.50", 1234.5, False, 2),
        ("(1,234.50)", -1234.5, False, 2),
        ("+3", 3.0, False, 0),
        ("- $ 5", -5.0, False, 0),
        (".07", 0.07, False, 2),
        ("1,234,567.891", 1234567.891, False, 3),
        ("3.", 3.0, False, 0),
        ("**0.5**", 0.5, False, 1),
    ],
)
def test_parse_number_reads_single_numbers(text: str, value: float, is_percent: bool, decimals: int) -> None:
    number = parse_number(text)
    assert number is not None
    assert (number.value, number.is_percent, number.decimals) == (value, is_percent, decimals)
    assert number.fraction == pytest.approx(value / 100 if is_percent else value)


@pytest.mark.parametrize("text", ["N/A", "", "about 3", "1,23", "12 34", "3 and 4", "1e999", "yes"])
def test_parse_number_rejects_what_is_not_one_number(text: str) -> None:
    assert parse_number(text) is None


@pytest.mark.parametrize(
    ("cell", "value"),
    [
        ("-1299 ( 1299 )", -1299.0),
        ("$ 78.25", 78.25),
        ("(4)", -4.0),
        ("5%", 5.0),
        ("2019", 2019.0),
        ("n/a", None),
        ("", None),
        (" - ", None),
    ],
)
def test_parse_cell_number(cell: str, value: float | None) -> None:
    assert parse_cell_number(cell) == value


@pytest.mark.parametrize(
    "text",
    [
        "N/A",
        "n/a",
        "<UNKNOWN>",
        "unknown",
        "none",
        "NaN",
        "-",
        "?",
        "no answer",
        "cannot be determined",
        "N/A - fiscal 2015 not given",
        "N/A: not disclosed",
        "  ",
        None,
    ],
)
def test_no_answer_forms(text: str | None) -> None:
    assert is_no_answer(text)


@pytest.mark.parametrize("text", ["0", "no", "none of them is 5", "-3", "3 (n/a)"])
def test_answers_that_are_not_no_answer(text: str) -> None:
    assert not is_no_answer(text)


# --------------------------------------------------------------------------- properties
@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(), st.text(alphabet="_* .\t-\u2212%$()1aN/A")))
@example("_**_")
@example("_*_*_ .")
def test_normalize_answer_is_idempotent(text: str) -> None:
    once = normalize_answer(text)
    assert normalize_answer(once) == once


finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15)


@settings(max_examples=200, deadline=None)
@given(finite)
def test_parse_number_reads_back_six_decimal_format(value: float) -> None:
    text = f"{value:.6f}"
    number = parse_number(text)
    assert number is not None
    assert number.value == float(text)
    assert number.value == pytest.approx(value, abs=1e-6)
    assert number.decimals == 6 and not number.is_percent


@settings(max_examples=200, deadline=None)
@given(finite)
def test_parse_number_reads_back_thousands_separators(value: float) -> None:
    text = f"{value:,.6f}"
    number = parse_number(text)
    assert number is not None
    assert number.value == float(text.replace(",", ""))
    assert number.value == pytest.approx(value, abs=1e-6)


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_parse_number_reads_back_repr(value: float) -> None:
    number = parse_number(repr(value))
    assert number is not None and number.value == value


def test_the_fast_paths_scale_words_are_the_written_out_scale_exponents() -> None:
    """``patterns.FAST_SCALE_WORD`` (what the fast path reads after a number) is the written-out
    words of ``SCALE_EXPONENTS``, each read in the plural too."""
    from workbench.grading import patterns
    from workbench.grading.normalize import SCALE_EXPONENTS

    words = patterns.FAST_SCALE_WORD.split("|")
    assert set(words) == {w for w in SCALE_EXPONENTS if len(w) > 3 and not w.endswith("s")}
    assert all(SCALE_EXPONENTS[w + "s"] == SCALE_EXPONENTS[w] for w in words)
