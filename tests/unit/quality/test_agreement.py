"""The ``systems_agree`` rule decides each distinct pair of answers once (issue 21) and flags
exactly what comparing every pair of answers of a turn with ``answers_match`` flags.

``agreement._some_agree`` (which turns have two answers that can agree, pairs of numbers filtered
in polars) and ``agreement._Agreement`` (each distinct pair once) are the fast way; every turn
read and ``agreement._answers_agree`` on every pair is the rule as written, reachable here by
replacing the one with the other.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from workbench.grading import patterns
from workbench.io.gold import load_gold
from workbench.io.predictions import load_predictions
from workbench.pipeline.grade import grade_predictions
from workbench.quality import agreement
from workbench.quality.agreement import (
    _Agreement,
    _answers_agree,
    _fast_readings,
    _readings,
    _some_agree,
    agreement_checks,
)
from workbench.quality.flags import CONFIDENCE

REPO = Path(__file__).resolve().parents[3]
BUNDLED = {
    "convfinqa": (
        "data/convfinqa/dev.json",
        [
            "data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6/2026-05-04T06-35-00Z/predictions.jsonl",
            "data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6/2026-05-04T12-48-44Z/predictions.jsonl",
        ],
    ),
    "gsm8k": (
        "data/gsm8k/test.jsonl",
        [
            "data/predictions/gsm8k/tora/tora-70b.jsonl",
            "data/predictions/gsm8k/tora/tora-code-34b.jsonl",
            "data/predictions/gsm8k/program-of-thoughts/gsm8K_s0_e-1_11_17_10_20.jsonl",
            "data/predictions/gsm8k/program-of-thoughts/gsm8K_zs_s0_e-1_11_19_09_55.jsonl",
            "data/predictions/gsm8k/openai-gpt3/example_model_solutions.jsonl",
        ],
    ),
}


@pytest.fixture(scope="module", params=list(BUNDLED))
def bundled_turns(request: pytest.FixtureRequest) -> pl.DataFrame:
    """Every bundled output of one benchmark graded under the main policy (no checks)."""
    dataset, paths = BUNDLED[request.param]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # program-of-thoughts prompt-only lines
        frames = [load_predictions(REPO / path) for path in paths]
    return grade_predictions(load_gold(REPO / dataset), frames, also=[], checks=False, workers=1).turns


def _flag_as_written(row: dict[str, Any], min_systems: int) -> tuple[str, float] | None:
    """The rule as written on one turn's wrong answers (in order): each answer's group is the
    answers ``answers_match`` says agree with it, the largest (first of equal) group decides."""
    answers = list(zip(row["system"], row["answer"], row["reason"], strict=True))
    best: list[tuple[str, str, str]] = []
    for _, answer, _ in answers:
        group = [a for a in answers if _answers_agree(answer, a[1])]
        if len(group) > len(best):
            best = group
    if len(best) < min_systems:
        return None
    share = len(best) / row["n_systems"]
    confidence = min(0.2 + 0.7 * share, 0.95)
    if len(best) < 3:
        confidence = min(confidence, CONFIDENCE["agree_cap_few"])
    if all(reason in {"rounding", "percent_confusion", "scale", "sign_flip"} for _, _, reason in best):
        confidence = min(confidence, CONFIDENCE["agree_near_miss"])
    listed = ", ".join(f"{system}: '{answer}'" for system, answer, _ in best)
    reasons = ", ".join(sorted({reason for _, _, reason in best}))
    how = (
        f"{len(best)} of {row['n_systems']} systems agree on {best[0][1]} ({listed}) but the gold display "
        f"answer is '{row['gold_answer']}' and the executed answer '{row['gold_executed']}' (graded: {reasons})"
    )
    return how, round(confidence, 3)


def _rule_as_written(turns: pl.DataFrame, monkeypatch: pytest.MonkeyPatch, min_systems: int = 2) -> pl.DataFrame:
    """Every turn read, every pair of its answers compared by ``answers_match``, every time."""

    def row_by_row(grouped: pl.DataFrame, agree: object, min_systems: int) -> pl.DataFrame:
        flags = []
        for row in grouped.iter_rows(named=True):
            found = _flag_as_written(row, min_systems)
            if found is not None:
                flags.append({"record_id": row["record_id"], "turn": row["turn"], "evidence": found[0],
                              "confidence": found[1]})  # fmt: skip
        schema = {"record_id": pl.String(), "turn": pl.Int32(), "evidence": pl.String(), "confidence": pl.Float64()}
        return pl.DataFrame(flags, schema=schema)

    with monkeypatch.context() as patched:
        patched.setattr(agreement, "_some_agree", lambda grouped, agree: pl.repeat(True, grouped.height, eager=True))
        patched.setattr(agreement, "_groups", row_by_row)
        return agreement_checks(turns, min_systems=min_systems)


def test_bundled_outputs_flag_the_same_as_every_pair_compared(
    bundled_turns: pl.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    flags = agreement_checks(bundled_turns)
    assert flags.height > 0
    assert_frame_equal(flags, _rule_as_written(bundled_turns, monkeypatch))
    # a turn flagged by fewer systems than agree cannot be: at least two answers agree
    assert flags["evidence"].str.contains(r"^\d+ of \d+ systems agree on ").all()


def _pairs_agree(pairs: list[tuple[str, str]]) -> list[bool]:
    """Whether each pair agrees as ``_some_agree`` finds it (numbers filtered in polars), a pair a turn."""
    return _some_agree(pl.DataFrame({"answer": [[a, b] for a, b in pairs]}), _Agreement()).to_list()


def test_every_pair_of_one_records_answers_decides_as_answers_match(
    bundled_turns: pl.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beyond the wrong answers the rule compares: every pair of distinct answers given to one
    record (right and wrong, any turn), as the polars filter and the pair cache decide it and as
    written; most pairs of numbers are decided without ``answers_match``."""
    answers = (
        bundled_turns.filter(pl.col("answer").is_not_null())
        .group_by("record_id")
        .agg(pl.col("answer").unique(maintain_order=True))
    )
    pairs = [(a, b) for values in answers["answer"].to_list() for i, a in enumerate(values) for b in values[i:]]
    expected = [_answers_agree(a, b) for a, b in pairs]
    calls: list[tuple[str, str]] = []
    with monkeypatch.context() as patched:
        patched.setattr(agreement, "_answers_agree", lambda a, b: calls.append((a, b)) or _answers_agree(a, b))
        found = _pairs_agree(pairs)
    assert found == expected
    assert len(pairs) > 1000
    assert 0 < len(calls) < len(pairs) / 2  # the numeric filter decides most pairs without answers_match


# --------------------------------------------------------------------------- generated number spellings
_SPELLINGS = ["{}", "{:,}", "${:,}", "{}%", "{} percent", "{} million", "${} million", "{} thousand", "{}k", "-{}"]
_FACTORS = [1.0, 1.0005, 0.9995, 1.0015, 1.003, 0.98, 100.0, 0.01, 10.0, 1e3, 1e-3, 1e6, 1e-6, -1.0, 0.0]


def _spell(value: float, how: str, decimals: int) -> str:
    number = round(abs(value), decimals)
    if how == "{:,}" or how == "${:,}":
        return how.format(number)
    return how.format(f"{number:.{decimals}f}" if decimals else f"{number:.0f}")


@settings(max_examples=400)
@given(
    base=st.one_of(
        st.integers(min_value=0, max_value=10**7).map(float),
        st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False),
    ),
    factor=st.sampled_from(_FACTORS),
    spelled=st.tuples(st.sampled_from(_SPELLINGS), st.sampled_from(_SPELLINGS)),
    decimals=st.tuples(st.integers(0, 6), st.integers(0, 6)),
)
def test_generated_numbers_decide_as_answers_match(
    base: float, factor: float, spelled: tuple[str, str], decimals: tuple[int, int]
) -> None:
    a = _spell(base, spelled[0], decimals[0])
    b = _spell(base * factor, spelled[1], decimals[1])
    assert _pairs_agree([(a, b), (a, a)]) == [_answers_agree(a, b), _answers_agree(a, a)], (a, b)
    assert _Agreement()(a, b) == _answers_agree(a, b), (a, b)


@settings(max_examples=300)
@given(
    number=st.from_regex(patterns.FAST_NUMBER, fullmatch=True),
    pad=st.tuples(st.sampled_from(["", " ", "\n\n", "\t", "  \r\n"]), st.sampled_from(["", " ", "\n\n", "\t"])),
)
def test_numbers_read_in_polars_are_read_as_answers_match_reads_them(number: str, pad: tuple[str, str]) -> None:
    """An answer ``_fast_readings`` reads agrees with itself and has the value ``read_number`` gives."""
    text = pad[0] + number + pad[1]
    fast = _fast_readings(pl.Series([text]))
    agrees, reading = _readings(text)
    if fast.is_empty():
        return
    assert agrees and reading is not None, text
    fraction, value, in_scale_units = reading
    assert value == in_scale_units
    assert math.isclose(fast["value"][0], value, rel_tol=1e-12) and math.isclose(
        fast["fraction"][0], fraction, rel_tol=1e-12
    )


def test_numbers_read_in_polars() -> None:
    """Read by the one fast number reader (``workbench.io.numbers``); a value a float may not hold
    exactly (1e9 or more, over 20 digits) and ``-0`` are left to ``answers_match``."""
    answers = ["121\n\n", "-$1,234.5", "12.5%", "1.2 million", "x", "1" * 400, "1e5", "1,000,000,000", "-0"]
    assert _fast_readings(pl.Series(answers)).rows() == [
        ("121\n\n", 121.0, 121.0, False),
        ("-$1,234.5", -1234.5, -1234.5, False),
        ("12.5%", 12.5, 0.125, True),
    ]


def _respelled(number: str, how: int) -> str:
    """``number`` (a :data:`~workbench.grading.patterns.FAST_NUMBER`) written another way, same value."""
    sign, rest = ("-", number[1:]) if number.startswith("-") else ("", number)
    cur, rest = ("$", rest[1:]) if rest.startswith("$") else ("", rest)
    pct, digits = ("%", rest[:-1]) if rest.endswith("%") else ("", rest)
    whole, _, decimals = digits.replace(",", "").partition(".")
    if how == 0:  # trailing zeros
        return f"{sign}{cur}{whole}.{decimals or ''}00{pct}"
    if how == 1:  # thousands separators
        return f"{sign}{cur}{int(whole):,}{'.' + decimals if decimals else ''}{pct}"
    if how == 2:  # a currency sign, or none
        return f"{sign}{'' if cur else '$'}{digits}{pct}"
    return f"  {number}\n"  # whitespace around it


@settings(max_examples=300)
@given(number=st.from_regex(patterns.FAST_NUMBER, fullmatch=True), how=st.integers(0, 3))
def test_two_plain_numbers_of_one_value_agree_as_answers_match_finds(number: str, how: int) -> None:
    """What ``_some_agree`` decides in polars: two plain numbers the reader reads with one value and
    the same ``%`` (or none) agree under ``answers_match`` both ways."""
    other = _respelled(number, how)
    fast = _fast_readings(pl.Series([number, other]))
    if fast.height < 2 or fast["value"][0] != fast["value"][1]:
        return  # beyond the reader (1e9 or more, over 20 digits, -0): left to answers_match
    assert fast["pct"][0] == fast["pct"][1]
    assert _answers_agree(number, other), (number, other)


def test_plain_numbers_of_one_value_are_decided_without_answers_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """Answers spelled differently with one value (``1,200``, ``1200.00``, ``$1,200``) agree in
    polars: no ``answers_match`` call for them, and the flags are the rule as written."""
    spellings = [["1,200", "1200.00", "$1,200"], ["12.5%", "12.50%", "0.125"], ["7.0", "7", "7 million"]]
    rows = [
        {"system": f"s{i}", "record_id": f"r{r}", "turn": 0, "correct": False, "status": "ok", "reason": "wrong_value",
         "answer": answer, "gold_answer": "9", "gold_executed": "9"}
        for r, answers in enumerate(spellings)
        for i, answer in enumerate(answers)
    ]  # fmt: skip
    turns = pl.DataFrame(rows, schema_overrides={"turn": pl.Int32})
    calls: list[tuple[str, str]] = []
    with monkeypatch.context() as patched:
        patched.setattr(agreement, "_answers_agree", lambda a, b: calls.append((a, b)) or _answers_agree(a, b))
        flags = agreement_checks(turns)
    equal = {("1,200", "1200.00"), ("1,200", "$1,200"), ("1200.00", "$1,200"), ("12.5%", "12.50%"), ("7.0", "7")}
    assert not equal & {tuple(sorted(pair, key=[a for r in spellings for a in r].index)) for pair in calls}
    assert calls  # the pairs of another value ("0.125" and "12.5%", "7 million") are compared by answers_match
    assert flags["record_id"].to_list() == ["r0", "r1", "r2"]
    assert flags["evidence"][0].startswith("3 of 3 systems agree on 1,200")
    assert_frame_equal(flags, _rule_as_written(turns, monkeypatch))


# --------------------------------------------------------------------------- generated turns
_POOL = ["5", "5.0", "5%", "0.05", "500", "-5", "5 million", "x", "1/2", "0.5", "50%", "N/A", "5.004", "4.99"]
_REASONS = ["wrong_value", "rounding", "scale", "sign_flip", "percent_confusion"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=st.lists(
        st.lists(st.tuples(st.sampled_from(_POOL), st.sampled_from(_REASONS)), min_size=1, max_size=6),
        min_size=1,
        max_size=8,
    ),
    min_systems=st.integers(1, 3),
)
def test_generated_turns_flag_as_the_rule_as_written(
    records: list[list[tuple[str, str]]], min_systems: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each record's wrong answers (systems in order), under every group size: the largest group,
    the first of equal ones, its systems in order, its confidence, as the rule as written finds them."""
    rows = [
        {"system": f"s{i}", "record_id": f"r{r}", "turn": 0, "correct": False, "status": "ok", "reason": reason,
         "answer": answer, "gold_answer": "7", "gold_executed": None}
        for r, answers in enumerate(records)
        for i, (answer, reason) in enumerate(answers)
    ]  # fmt: skip
    turns = pl.DataFrame(rows, schema_overrides={"turn": pl.Int32, "gold_executed": pl.String})
    flags = agreement_checks(turns, min_systems=min_systems)
    assert_frame_equal(flags, _rule_as_written(turns, monkeypatch, min_systems))
    event(f"{'some' if flags.height else 'no'} flags")
