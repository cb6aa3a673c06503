"""The last answer family of issue 19: a number written with a decimal comma where the comma is
unambiguous ("12,75 €"), while a thousands separator ("1,234") and MATH lists ("1,2", "-2,1",
"2, 4 or 6") read as they did.

Origins (each case names one; none is made up to fit the rule):

* ``issue 19``: the example strings of the issue itself;
* ``Oracle ILE``: Oracle's *International Language Environments Guide*, "Numeric formats"
  (docs.oracle.com/cd/E19455-01/806-0169/overview-9/index.html): 4294967295 written
  ``4.294.967.295,000`` (German, Italian, Norwegian, Spanish) and ``4,294,967,295.000``
  (US and GB English);
* ``agavi de_DE``: agavi/trac-ticket-attachments ``1134/result.php``, the output of a
  ``DecimalFormatter`` under ``LOCALE=de_DE`` ("9,95" -> 9.95, "9.999,95" -> 9999.95,
  "9.999.999,95" -> 9999999.95) and ``en_US`` ("9,999.95" -> 9999.95);
* ``MATH-500 <idx>``: the ``gt`` and the rho-math-7b ``answer`` of that item in
  ``data/predictions/math/microsoft-rho-math-7b/test_cot_-1_seed0_t0.0_s0_e-1.jsonl``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.grading.compare import answers_match, read_number
from workbench.grading.extract import extract_answer
from workbench.grading.normalize import parse_decimal_comma, parse_number
from workbench.grading.policies import POLICIES, for_benchmark
from workbench.grading.turn import grade_turn

MATH = for_benchmark(POLICIES["symbolic"], "math").numbers
GSM8K = for_benchmark(POLICIES["symbolic"], "gsm8k").numbers

# --------------------------------------------------------------------------- one number
# (text, value) read by parse_number
READS = [
    ("12,75 €", 12.75),  # issue 19
    ("€12,75", 12.75),  # issue 19, the currency before
    ("EUR 12,75", 12.75),  # issue 19 ("EUR 12" as the finance family writes a code) with its comma
    ("4.294.967.295,000", 4294967295.0),  # Oracle ILE, German/Italian/Norwegian/Spanish
    ("4,294,967,295.000", 4294967295.0),  # Oracle ILE, US/GB English: unchanged
    ("9.999,95", 9999.95),  # agavi de_DE
    ("9.999.999,95", 9999999.95),  # agavi de_DE
    ("9,999.95", 9999.95),  # agavi en_US: unchanged
    ("1,234.56", 1234.56),  # issue 19 brief: comma thousands, dot decimal, unchanged
    ("1,234", 1234.0),  # issue 19 brief: three digits after the comma stay thousands
    ("1,234,567", 1234567.0),  # issue 19 brief
    ("58,500", 58500.0),  # MATH-500 343 (gt and answer)
]


@pytest.mark.parametrize(("text", "value"), READS)
def test_parse_number_reads_an_unambiguous_decimal_comma(text: str, value: float) -> None:
    number = parse_number(text)
    assert number is not None
    assert number.value == pytest.approx(value, rel=1e-12)


# text that parse_number leaves alone: lists of MATH-500 and a comma with no currency or dot groups
NOT_ONE_NUMBER = [
    "1,-2",  # MATH-500 25 (gt)
    "3,5,7",  # MATH-500 36 (gt)
    "-2,1",  # MATH-500 456 (gt and answer)
    "(-2,1)",  # MATH-500 (a tuple gt of the same file: "(-2,1)")
    "9,95",  # agavi de_DE: 9.95 there, but alone it may be a list; read only against one number
]


@pytest.mark.parametrize("text", NOT_ONE_NUMBER)
def test_a_bare_comma_pair_is_not_one_number_for_parse_number(text: str) -> None:
    assert parse_number(text) is None
    assert read_number(text) is None


# --------------------------------------------------------------------------- verdicts
# (pred, gold, policy, correct, reason)
VERDICTS = [
    ("12,75 €", "12.75", None, True, "exact"),  # issue 19
    ("€12,75", "12.75", None, True, "exact"),  # issue 19
    ("12,75", "12.75", None, True, "exact"),  # issue 19 brief: decided as with the currency
    ("9,95", "9.95", GSM8K, True, "exact"),  # agavi de_DE, against one number
    ("9.999,95", "9999.95", None, True, "exact"),  # agavi de_DE
    ("1,234", "1.234", None, False, "scale"),  # issue 19 brief: thousands, as today
    ("1,234.56", "1234.56", None, True, "exact"),  # issue 19 brief
    # MATH lists and tuples keep their verdicts
    ("1,-2", "1,-2", MATH, True, None),  # MATH-500 25
    ("3, 5, 7", "3,5,7", MATH, True, None),  # MATH-500 36
    ("-2,1", "-2,1", MATH, True, None),  # MATH-500 456
    ("2, 4 or 6", r"\{2,4,6\}", MATH, True, None),  # issue 19
    ("(1, 3), (5, 2)", "(1,3),(5,2)", MATH, True, None),  # issue 19
    ("58,500", "58,500", MATH, True, "exact"),  # MATH-500 343
]


@pytest.mark.parametrize(("pred", "gold", "policy", "correct", "reason"), VERDICTS)
def test_decimal_comma_verdicts(pred: str, gold: str, policy, correct: bool, reason: str | None) -> None:
    verdict = answers_match(pred, gold) if policy is None else answers_match(pred, gold, policy=policy)
    assert verdict.correct is correct, verdict.detail
    if reason is not None:
        assert verdict.reason.value == reason


def test_grade_turn_symbolic_and_flex_read_the_euro_amount() -> None:
    # issue 19: the three strings that were unparseable
    turn = grade_turn(predicted_answer="12,75 €", predicted_program=None, gold_executed="12.75", gold_program=None)
    assert turn.verdict.correct and turn.verdict.pred_value == 12.75
    for raw in ("The answer is 12,75 €", "€12,75"):
        flex = grade_turn(
            predicted_answer=None,
            predicted_program=None,
            gold_executed="12.75",
            gold_program=None,
            raw_output=raw,
            policy=for_benchmark(POLICIES["flex"], "gsm8k"),
        )
        assert flex.verdict.correct, (raw, flex.verdict.detail)
        assert extract_answer(raw).answer in ("12,75 €", "€12,75")


def test_decimal_comma_reports_its_precision() -> None:
    number = parse_number("12,5 %")
    assert number is not None and number.is_percent and number.decimals == 1 and number.fraction == 0.125
    assert parse_decimal_comma("-€12,75") is not None and parse_decimal_comma("-€12,75").value == -12.75


# --------------------------------------------------------------------------- property
CURRENCIES = ("", "€", "$", "£", "EUR ", "USD ")
SUFFIXES = ("", " €", " EUR", " euros")


@settings(max_examples=300, deadline=None)
@given(
    whole=st.integers(min_value=0, max_value=10**9),
    fraction=st.one_of(
        st.text(alphabet="0123456789", min_size=1, max_size=2),
        st.text(alphabet="0123456789", min_size=4, max_size=8),
    ),
    grouped=st.booleans(),
    before=st.sampled_from(CURRENCIES),
    after=st.sampled_from(SUFFIXES),
    negative=st.booleans(),
)
def test_a_decimal_comma_reads_the_value_the_dot_reads(
    whole: int, fraction: str, grouped: bool, before: str, after: str, negative: bool
) -> None:
    sign = "-" if negative else ""
    dot_text = f"{sign}{before}{whole}.{fraction}{after}"
    digits = f"{whole:,}".replace(",", ".") if grouped else str(whole)
    comma_text = f"{sign}{before}{digits},{fraction}{after}"
    dot = parse_number(dot_text)
    comma = parse_decimal_comma(comma_text, bare=True)
    assert dot is not None and comma is not None, (dot_text, comma_text)
    assert comma.value == dot.value and comma.decimals == dot.decimals == len(fraction)
    if before or after or (grouped and whole >= 1000):  # a currency or dot groups: one number alone
        number = parse_number(comma_text)
        assert number is not None and number.value == dot.value
        assert answers_match(comma_text, f"{sign}{whole}.{fraction}").correct
    assert answers_match(comma_text, f"{sign}{whole}.{fraction}", policy=GSM8K).correct
