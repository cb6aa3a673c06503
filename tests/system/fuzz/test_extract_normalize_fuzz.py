"""Extraction and normalisation on hostile text: never raise, return quickly, return the
declared frozen types with a valid status, answer the same twice, and keep their promises."""

from __future__ import annotations

import dataclasses
import math

import pytest
from fuzzkit import (
    LOOKALIKE_MINUS,
    formatted_numbers,
    fuzz_settings,
    hostile_text,
    tried,
    with_thousands,
)
from hypothesis import example, given
from hypothesis import strategies as st

from workbench.grading.compare import read_number
from workbench.grading.extract import Extraction, clean_answer_text, extract_answer, last_boxed
from workbench.grading.normalize import ParsedNumber, normalize_answer, parse_cell_number, parse_number
from workbench.grading.policies import POLICIES, select_answer
from workbench.grading.status import ExtractionRule, ExtractionStatus


def _frozen(value: object) -> None:
    field = dataclasses.fields(value)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field, None)


@fuzz_settings(ci_examples=300)
@given(text=hostile_text, policy=st.sampled_from(("strict", "flex")))
@example(text="\\boxed{" * 4000, policy="strict")  # was quadratic: 8 s (a 1 MB one: hours)
@example(text="\\boxed{" * 3000 + "}" * 3000, policy="flex")  # empty box nested: was quadratic
@example(text="x = \u221212 so", policy="flex")  # the look-alike minus was dropped: 12
@example(text="it is 1e309", policy="flex")  # flex took "1" and credited gold 1
def test_extract_answer_is_total(text: str, policy: str) -> None:
    tried("extract_answer")
    result = extract_answer(text, policy=policy)
    assert isinstance(result, Extraction)
    _frozen(result)
    assert isinstance(result.status, ExtractionStatus) and isinstance(result.rule, ExtractionRule)
    if result.found:
        assert result.answer and result.span is not None
        assert 0 <= result.span[0] <= result.span[1] <= len(text)
    else:
        assert result.answer is None and result.span is None and result.rule is ExtractionRule.NONE
    assert extract_answer(text, policy=policy) == result


@fuzz_settings(ci_examples=150)
@given(text=hostile_text)
def test_clean_answer_text_and_last_boxed_are_total(text: str) -> None:
    tried("clean_answer_text/last_boxed")
    cleaned = clean_answer_text(text)
    boxed = last_boxed(text)
    assert isinstance(cleaned, str) and (boxed is None or isinstance(boxed, str))


@fuzz_settings(ci_examples=150)
@given(number=formatted_numbers(), prose=st.text(alphabet="abc xyz.,\n", max_size=60))
def test_strict_extraction_reads_back_a_hash_answer(number: tuple[str, float], prose: str) -> None:
    tried("extract(#### n) == n")
    text, value = number
    found = extract_answer(f"{prose}\n#### {text}", policy="strict")
    assert found.found and found.rule is ExtractionRule.HASHES
    parsed = parse_number(found.answer or "")
    assert parsed is not None and parsed.value == value


@fuzz_settings(ci_examples=150)
@given(number=formatted_numbers(), minus=st.sampled_from(LOOKALIKE_MINUS))
@example(number=("12", 12.0), minus="\u2015")  # U+2015 was not read as a minus
def test_flex_extraction_keeps_a_look_alike_minus(number: tuple[str, float], minus: str) -> None:
    tried("flex keeps look-alike minus")
    text, value = number
    if value <= 0:
        return
    found = extract_answer(f"the change was {minus}{text} in total", policy="flex")
    parsed = parse_number(found.answer or "")
    assert parsed is not None and parsed.value == -value, found


@fuzz_settings(ci_examples=150)
@given(text=hostile_text, name=st.sampled_from(sorted(POLICIES)), answer=st.none() | hostile_text)
def test_select_answer_is_total(text: str, name: str, answer: str | None) -> None:
    tried("select_answer")
    (chosen, source, extraction) = select_answer(POLICIES[name], predicted_answer=answer, raw_output=text)
    assert chosen is None or isinstance(chosen, str)
    # "raw": the math-verify policy hands the whole output to Math-Verify's own parse (issue 19)
    assert source in ("answer", "program", "upstream", "strict", "flex", "raw", "none")
    assert extraction is None or isinstance(extraction, Extraction)


# --------------------------------------------------------------------------- normalisation
@fuzz_settings(ci_examples=300)
@given(text=hostile_text)
@example(text="_**_")
@example(text="2*3")  # was "23": bold-marker removal joined the operands (2*3 credited for 23)
def test_normalize_answer_is_idempotent(text: str) -> None:
    tried("normalize_answer idempotent")
    once = normalize_answer(text)
    assert normalize_answer(once) == once


@fuzz_settings(ci_examples=300)
@given(text=hostile_text)
def test_number_readers_return_finite_numbers_or_none(text: str) -> None:
    tried("parse_number/read_number/parse_cell_number")
    for reader in (parse_number, read_number):
        number = reader(text)
        assert number is None or (isinstance(number, ParsedNumber) and math.isfinite(number.value))
        if number is not None:
            _frozen(number)
        assert reader(text) == number
    cell = parse_cell_number(text)
    assert cell is None or (isinstance(cell, float) and math.isfinite(cell))


@fuzz_settings(ci_examples=200)
@given(
    number=formatted_numbers(), minus=st.sampled_from(LOOKALIKE_MINUS), invisible=st.sampled_from("\u200b\u2060\ufeff")
)
@example(number=("12", 12.0), minus="\u2015", invisible="\u200b")
def test_look_alike_characters_read_as_their_ascii_twins(number: tuple[str, float], minus: str, invisible: str) -> None:
    tried("look-alike minus / zero-width")
    text, value = number
    body = text.lstrip("-")
    for written in (minus + body, f"{minus} {body}"):
        parsed = parse_number(written)
        assert parsed is not None and parsed.value == -abs(value), written
    spliced = body[:1] + invisible + body[1:]
    assert parse_number(spliced).value == abs(value)  # type: ignore[union-attr]


@fuzz_settings(ci_examples=200)
@given(number=formatted_numbers())
def test_formatting_does_not_change_the_number(number: tuple[str, float]) -> None:
    tried("separators/$/.0 keep the value")
    text, value = number
    variants = [with_thousands(text), f"{text}.0" if "." not in text else text + "0", f"**{text}**"]
    variants.append("-$" + with_thousands(text)[1:] if text.startswith("-") else "$" + with_thousands(text))
    for variant in variants:
        parsed = parse_number(variant)
        assert parsed is not None and parsed.value == value, variant


@fuzz_settings(ci_examples=150)
@given(number=formatted_numbers(), invisible=st.sampled_from("\u200b\u200c\u200d\u2060\ufeff"), at=st.integers(1, 12))
@example(number=("18", 18.0), invisible="\u200b", at=1)  # flex read "8": the invisible split the number
def test_an_invisible_character_does_not_split_a_number(number: tuple[str, float], invisible: str, at: int) -> None:
    tried("zero-width inside an extracted number")
    text, value = number
    spliced = text[:at] + invisible + text[at:]
    output = f"so the total is {spliced} apples"
    found = extract_answer(output, policy="flex")
    parsed = parse_number(found.answer or "")
    assert parsed is not None and parsed.value == value, found
    assert found.span is not None and invisible in output[found.span[0] : found.span[1]] or at >= len(text)
