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

import polars as pl
import pytest
from hypothesis import given, settings
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


def _rule_as_written(turns: pl.DataFrame, monkeypatch: pytest.MonkeyPatch) -> pl.DataFrame:
    """Every turn read, every pair of its answers compared by ``answers_match``, every time."""
    with monkeypatch.context() as patched:
        patched.setattr(agreement, "_some_agree", lambda grouped, agree: pl.repeat(True, grouped.height, eager=True))
        patched.setattr(agreement, "_Agreement", lambda: _answers_agree)
        return agreement_checks(turns)


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
    fast = _fast_readings(pl.Series(["121\n\n", "-$1,234.5", "12.5%", "1.2 million", "x", "1" * 400, "1e5"]))
    assert fast.rows() == [("121\n\n", 121.0, 121.0), ("-$1,234.5", -1234.5, -1234.5), ("12.5%", 12.5, 0.125)]
