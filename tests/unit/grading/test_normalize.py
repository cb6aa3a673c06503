"""Answer normalisation and number reading."""

from __future__ import annotations

import json
import re
import re._parser as sre_parser
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from workbench.grading import patterns
from workbench.grading.normalize import (
    _LONGEST_CLOSED_NO_ANSWER,
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


# ----------------------------------------------------- a long output told from its first characters
def _no_answer_by_normalising(text: str) -> bool:
    """What :func:`is_no_answer` answers, computed the long way: the whole text normalised."""
    return bool(patterns.NO_ANSWER_TEXT.match(normalize_answer(text)))


def test_the_no_answer_forms_but_n_a_are_short() -> None:
    """Every form of NO_ANSWER_TEXT is at most _LONGEST_CLOSED_NO_ANSWER characters long, or
    begins with ``n`` (the open-ended ``n/a ...``), as is_no_answer's shortcut assumes; and under
    the pattern's IGNORECASE only ``n`` and ``N`` are an ``n``."""
    tree = sre_parser.parse(patterns.NO_ANSWER_TEXT.pattern, patterns.NO_ANSWER_TEXT.flags)
    (branch,) = [value for op, value in tree if op is sre_parser.BRANCH]
    longest, open_ended = 0, 0
    for items in branch[1]:
        alternative = sre_parser.SubPattern(tree.state, items)
        if alternative.getwidth()[1] <= _LONGEST_CLOSED_NO_ANSWER:
            longest = max(longest, alternative.getwidth()[1])
            continue
        open_ended += 1
        assert items[0] == (sre_parser.LITERAL, ord("n")), items
    assert longest == _LONGEST_CLOSED_NO_ANSWER and open_ended == 1  # "cannot be determined"; n/a ...
    n_like = {chr(i) for i in range(0x110000) if re.fullmatch("n", chr(i), patterns.NO_ANSWER_TEXT.flags)}
    assert n_like == {"n", "N"}
    assert {chr(i) for i in range(0x110000) if chr(i).lower()[:1] == "n"} == n_like


#: Spellings of no answer and near misses, with what normalisation removes or changes around them.
_FORMS = ["N/A", "n/a", "NA", "n/a -", "N/A:", "na (", "N/A \u2212", "nan", "none", "null", "<unknown>",
          "no answer", "Cannot be determined", "cannot determine", "-", "?", "", "Natalia", "n.a.", "n*/a:",
          "n**/**a: ", "n_/a(", "\u200bn/a-", "18", "The answer is"]  # fmt: skip
_DECOR = " \t\n*_._**__\u200b\u2060\ufeff\u2212\u00a0\u2028\x1c"
_TAILS = st.text(alphabet=_DECOR + "aAnN/:(-)0123456789 xyz\u0130\u03a3", max_size=400)


@settings(max_examples=600, deadline=None)
@given(
    st.text(alphabet=_DECOR, max_size=300),
    st.sampled_from(_FORMS),
    st.text(alphabet=_DECOR, max_size=4),
    _TAILS,
    st.text(alphabet=_DECOR, max_size=300),
)
@example("", "n/a", ":", " x" * 200, "")
@example("*" * 300, "Natalia", "", "a" * 30, "")
@example("_" * 250, "n/a", "", "-" + "y" * 30, "")
def test_is_no_answer_agrees_with_normalising_the_whole_text(
    lead: str, form: str, between: str, tail: str, trail: str
) -> None:
    text = lead + form + between + tail + trail
    assert is_no_answer(text) == _no_answer_by_normalising(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=600))
def test_is_no_answer_agrees_with_normalising_any_text(text: str) -> None:
    assert is_no_answer(text) == _no_answer_by_normalising(text)


def _texts(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def test_is_no_answer_agrees_with_normalising_every_bundled_text() -> None:
    """Every text of the bundled outputs (data/predictions, data/SOURCES.md) and the pathological
    catalogue (tests/fixtures/pathological): outputs, answers, questions."""
    root = Path(__file__).resolve().parents[3]
    files = sorted((root / "data" / "predictions").rglob("*.jsonl"))
    files.append(root / "tests" / "fixtures" / "pathological" / "catalogue.jsonl")
    texts = {text for path in files for line in path.open(encoding="utf-8") for text in _texts(json.loads(line))}
    assert len(texts) > 10_000
    differ = [text[:80] for text in texts if is_no_answer(text) != _no_answer_by_normalising(text)]
    assert differ == []
    assert any(_no_answer_by_normalising(text) for text in texts)


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
