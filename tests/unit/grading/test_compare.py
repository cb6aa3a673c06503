"""Answer comparison: the match cascade, checked on real outputs and on one case per rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from workbench.grading.compare import (
    DEFAULT_POLICY,
    MAX_ANSWER_CHARS,
    MatchPolicy,
    answer_text,
    answers_match,
)
from workbench.grading.status import GradeStatus, MatchReason

# --------------------------------------------------------------------------- regression
UPSTREAM_TURNS_CORRECT = 1244  # summary.json of the run: per_turn_accuracy 1244/1490 = 83.5%

#: Every turn of the bundled claude-sonnet-4-6 dev run where our verdict differs from the
#: run's own ``correct`` field: (predicted_answer, gold as the run stores it,
#: upstream_correct, our reason). Computed once from the data, written here on purpose.
#: Graded as the product grades them: with the question and the unit the output declares
#: (``predicted_unit``), so "12.57" for 0.12574 declared ``percent`` is a percent reading,
#: while "8.75" for 0.0875 declared ``raw`` is not (upstream agrees on both).
UPSTREAM_DISAGREEMENTS: dict[tuple[str, int], tuple[str, float, bool, str]] = {
    # Reported precision: the prediction is the gold rounded to the two decimals it shows.
    ("Single_BLK/2012/page_160.pdf-1", 1): ("0.42", 0.41754, False, "reported_precision"),
    ("Single_HUM/2017/page_133.pdf-4", 1): ("0.28", 0.28448, False, "reported_precision"),
    # Rounding beyond tolerance: one side is the other rounded more coarsely, but the gap is
    # outside the 1e-3 relative tolerance (or both are integers, which must be exact).
    ("Double_ABMD/2009/page_88.pdf", 0): ("16750000", 16750002.0, True, "rounding"),
    ("Double_PM/2017/page_38.pdf", 4): ("13.45", 0.134, True, "rounding"),
    ("Single_PM/2017/page_38.pdf-2", 1): ("13.44", 0.134, True, "rounding"),
    # Wrong value: off by 0.1%-1%, not a rounding of the gold; upstream is more lenient.
    ("Double_GS/2017/page_143.pdf", 2): ("-39.94", -0.39896, True, "wrong_value"),
    ("Double_PM/2017/page_38.pdf", 5): ("6932", 6955.22388, True, "wrong_value"),
    ("Double_PM/2017/page_38.pdf", 6): ("6.932", 6.95522, True, "wrong_value"),
    # Integers exact: both sides are written as integers, so a near miss is wrong.
    ("Single_ABMD/2004/page_26.pdf-1", 1): ("2005", 2004.0, True, "wrong_value"),
    ("Single_ABMD/2004/page_26.pdf-1", 3): ("4938000", 4926000.0, True, "wrong_value"),
}


def _verdict(row: dict):  # type: ignore[no-untyped-def]
    return answers_match(
        row["predicted_answer"], answer_text(row["gold"]), question=row["question"], unit=row["predicted_unit"]
    )


@pytest.fixture(scope="module")
def claude_rows(claude_run_path: Path) -> list[dict]:
    with claude_run_path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_upstream_figure_is_what_the_run_reports(claude_rows: list[dict], claude_summary_path: Path) -> None:
    summary = json.loads(claude_summary_path.read_text(encoding="utf-8"))
    assert summary["breakdown"]["per_turn_accuracy"]["correct"] == UPSTREAM_TURNS_CORRECT
    assert sum(r["correct"] for r in claude_rows) == UPSTREAM_TURNS_CORRECT
    assert len(claude_rows) == 1490


def test_turn_accuracy_agrees_with_upstream(claude_rows: list[dict]) -> None:
    verdicts = [_verdict(r) for r in claude_rows]
    ours = sum(v.correct for v in verdicts) / len(claude_rows)
    upstream = UPSTREAM_TURNS_CORRECT / len(claude_rows)
    assert abs(ours - upstream) <= 0.015, f"ours {ours:.4f}, upstream {upstream:.4f}"


def test_disagreements_with_upstream_are_the_known_ones(claude_rows: list[dict]) -> None:
    found = {}
    for r in claude_rows:
        verdict = _verdict(r)
        if verdict.correct != r["correct"]:
            found[(r["record_id"], r["turn_idx"])] = (
                r["predicted_answer"],
                r["gold"],
                r["correct"],
                verdict.reason.value,
            )
    new = {k: v for k, v in found.items() if UPSTREAM_DISAGREEMENTS.get(k) != v}
    gone = {k: v for k, v in UPSTREAM_DISAGREEMENTS.items() if k not in found}
    assert found == UPSTREAM_DISAGREEMENTS, f"new or changed: {new}\nno longer disagree: {gone}"


def test_percent_units_are_accepted_by_the_percent_rule(claude_rows: list[dict]) -> None:
    """Answers in percent units ("12.57" for 0.12574) pass by the percent reading, never by
    a loose tolerance: each such pair is at least 100x apart as plain numbers."""
    by_rule = [(r, _verdict(r)) for r in claude_rows]
    percent = [(r, v) for r, v in by_rule if v.reason is MatchReason.PERCENT_READING]
    assert len(percent) == 242
    for row, _ in percent:
        pred, gold = float(row["predicted_answer"]), float(row["gold"])
        assert abs(pred) >= 50 * abs(gold) or abs(gold) >= 50 * abs(pred), row
        assert row["predicted_unit"] == "percent" or "%" in row["predicted_answer"], row
    # and no tolerance match hides a x100 reading
    for _row, verdict in by_rule:
        if verdict.reason is MatchReason.REL_TOLERANCE:
            assert abs(verdict.pred_value - verdict.gold_value) <= 1e-3 * abs(verdict.gold_value)


# --------------------------------------------------------------------------- one case per rule
NO_PERCENT = MatchPolicy(name="no-percent", accept_percent_reading=False)

# (pred, gold, policy, correct, status, reason). Origins: "dev" cases are taken from the
# claude-sonnet-4-6 dev run above; "doc" from the module docstrings; others are made up
# to isolate one rule.
CASES = [
    # exact, after normalisation of %, currency, separators, bold, parentheses
    ("0.14136", "0.14136", DEFAULT_POLICY, True, "ok", "exact"),
    ("14.1%", "0.141", DEFAULT_POLICY, True, "ok", "exact"),
    ("$ 1,234.5", "1234.5", DEFAULT_POLICY, True, "ok", "exact"),
    ("(25)", "-25", DEFAULT_POLICY, True, "ok", "exact"),
    ("**\u221214.1%**.", "-0.141", DEFAULT_POLICY, True, "ok", "exact"),
    # official ConvFinQA rule: equal after rounding to 5 decimals
    ("0.141360001", "0.14136", DEFAULT_POLICY, True, "ok", "official_round5"),
    ("0.000001", "0.000002", DEFAULT_POLICY, True, "ok", "official_round5"),
    # relative tolerance 1e-3 (doc: 0.1082 for 0.10826, dev Single_IPG/2009/page_85.pdf-3)
    ("0.1082", "0.10826", DEFAULT_POLICY, True, "ok", "rel_tolerance"),
    ("100.05", "100", DEFAULT_POLICY, True, "ok", "rel_tolerance"),
    # reported precision: gold rounded to the decimals shown (dev Single_BLK/2012/page_160.pdf-1)
    ("0.42", "0.41754", DEFAULT_POLICY, True, "ok", "reported_precision"),
    ("1.74", "1.743", DEFAULT_POLICY, True, "ok", "reported_precision"),
    ("14.1%", "0.1413", DEFAULT_POLICY, True, "ok", "reported_precision"),
    # percent reading, both directions (doc), and a %-suffixed prediction for a percent gold
    ("12.57", "0.12574", DEFAULT_POLICY, True, "ok", "percent_reading"),
    ("0.1082", "10.82", DEFAULT_POLICY, True, "ok", "percent_reading"),
    ("12.57%", "12.57", DEFAULT_POLICY, True, "ok", "percent_reading"),
    ("12.5%", "12.53", DEFAULT_POLICY, True, "ok", "percent_reading"),
    # ... the same readings rejected when the policy does not accept them
    ("12.57", "0.12574", NO_PERCENT, False, "ok", "percent_confusion"),
    ("0.1082", "10.82", NO_PERCENT, False, "ok", "percent_confusion"),
    ("12.57%", "12.57", NO_PERCENT, False, "ok", "percent_confusion"),
    # yes/no, in any case, true/false as synonyms
    ("yes", "yes", DEFAULT_POLICY, True, "ok", "yes_no"),
    ("No", "no", DEFAULT_POLICY, True, "ok", "yes_no"),
    ("**True**", "yes", DEFAULT_POLICY, True, "ok", "yes_no"),
    ("no", "yes", DEFAULT_POLICY, False, "ok", "wrong_value"),
    ("3", "yes", DEFAULT_POLICY, False, "ok", "wrong_value"),
    # text golds compare normalised text
    ("Revenue ", "revenue", DEFAULT_POLICY, True, "ok", "normalised"),
    # typed mismatches (doc: -42.9% for 0.429)
    ("-42.9%", "0.429", DEFAULT_POLICY, False, "ok", "sign_flip"),
    ("-0.429", "0.429", DEFAULT_POLICY, False, "ok", "sign_flip"),
    ("-12.57", "0.12574", DEFAULT_POLICY, False, "ok", "sign_flip"),
    ("1234", "1.234", DEFAULT_POLICY, False, "ok", "scale"),
    ("12340", "1234", DEFAULT_POLICY, False, "ok", "scale"),
    ("5", "7", DEFAULT_POLICY, False, "ok", "wrong_value"),
    # integers exact (dev Double_ABMD/2009/page_88.pdf turn 0), though within 1e-3
    ("16750000", "16750002", DEFAULT_POLICY, False, "ok", "rounding"),
    ("2005", "2004", DEFAULT_POLICY, False, "ok", "wrong_value"),
    # rounding beyond tolerance: the gold rounded more coarsely (dev Double_PM/2017/page_38.pdf turn 4)
    ("13.45", "0.134", DEFAULT_POLICY, False, "ok", "rounding"),
    # symbolic: LaTeX that is not a plain number goes to SymPy
    ("2\\sqrt{2}", "\\sqrt{8}", DEFAULT_POLICY, True, "ok", "symbolic"),
    ("7(x-3)(x+3)", "7x^2-63", DEFAULT_POLICY, True, "ok", "symbolic"),
    # several answers matched one to one, in any order (issue 31; Math-Verify tests/test_numina_cases.py)
    ("200 ml and 400 ml", "400, 200", DEFAULT_POLICY, True, "ok", "items"),
    (
        r"x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}",
        r"x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}",
        DEFAULT_POLICY,
        True,
        "ok",
        "items",
    ),
    # text spans under DROP's rules (issue 31): F1 0.67 reaches the reading-comprehension pass mark
    ("Mike Tolbert", "Tolbert", MatchPolicy(span_f1=2 / 3), True, "ok", "span_f1"),
    # timeout: a power tower that SymPy cannot finish within the policy's limit
    ("10^{10^{10^{10}}}", "x + 1", MatchPolicy(time_limit=0.5), False, "timeout", "timeout"),
    # no answer (N/A forms seen in model outputs)
    ("N/A", "3", DEFAULT_POLICY, False, "no_answer", "no_answer"),
    ("<UNKNOWN>", "3", DEFAULT_POLICY, False, "no_answer", "no_answer"),
    ("N/A - fiscal 2015 is not in the document", "3", DEFAULT_POLICY, False, "no_answer", "no_answer"),
    ("", "3", DEFAULT_POLICY, False, "no_answer", "no_answer"),
    (None, "3", DEFAULT_POLICY, False, "no_answer", "no_answer"),
    (None, "yes", DEFAULT_POLICY, False, "no_answer", "no_answer"),
    # unparseable
    ("about three", "3", DEFAULT_POLICY, False, "unparseable", "unparseable"),
    ("between 3 and 4", "3", DEFAULT_POLICY, False, "unparseable", "unparseable"),
    # no gold
    ("3", None, DEFAULT_POLICY, False, "no_gold", "no_gold"),
    ("3", "", DEFAULT_POLICY, False, "no_gold", "no_gold"),
    ("3", "   ", DEFAULT_POLICY, False, "no_gold", "no_gold"),
]


@pytest.mark.parametrize(("pred", "gold", "policy", "correct", "status", "reason"), CASES)
def test_match_rules(
    pred: str | None, gold: str | None, policy: MatchPolicy, correct: bool, status: str, reason: str
) -> None:
    verdict = answers_match(pred, gold, policy=policy)
    assert (verdict.correct, verdict.status, verdict.reason) == (
        correct,
        GradeStatus(status),
        MatchReason(reason),
    ), verdict.detail
    assert verdict.detail


def test_every_comparison_reason_has_a_case() -> None:
    covered = {MatchReason(case[5]) for case in CASES}
    # no_prediction is decided by grading (a gold turn without a row), not by comparison
    assert covered == set(MatchReason) - {MatchReason.NO_PREDICTION}


def test_verdict_carries_the_values_compared() -> None:
    verdict = answers_match("14.1%", "0.141")
    assert verdict.pred_value == pytest.approx(0.141)
    assert verdict.gold_value == pytest.approx(0.141)
    no_number = answers_match("yes", "no")
    assert no_number.pred_value is None and no_number.gold_value is None


@pytest.mark.parametrize(("pred", "gold"), [("5e-324", "2"), ("2", "5e-324"), ("1e308", "1e-308"), ("1e-308", "1e308")])
def test_a_quotient_that_underflows_or_overflows_is_a_wrong_value(pred: str, gold: str) -> None:
    verdict = answers_match(pred, gold)  # abs(p / g) is 0.0 or inf: no power of ten to name
    assert (verdict.correct, verdict.reason) == (False, MatchReason.WRONG_VALUE)
    assert verdict.detail.startswith(f"{pred} (")


def test_stricter_tolerance_rejects_what_default_accepts() -> None:
    strict = MatchPolicy(name="strict", rel_tol=1e-6, accept_reported_precision=False)
    assert answers_match("0.1082", "0.10826").correct
    assert answers_match("0.1082", "0.10826", policy=strict).reason is MatchReason.WRONG_VALUE
    lenient_ints = MatchPolicy(name="ints", integers_exact=False)
    assert answers_match("16750000", "16750002", policy=lenient_ints).reason is MatchReason.REL_TOLERANCE


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.14136, "0.14136"),
        (18770.0, "18770"),
        (3, "3"),
        ("yes", "yes"),
        (True, "yes"),
        (False, "no"),
        (" 14.1% ", "14.1%"),
        (1e-05, "1e-05"),
        # no digits lost on large values (dev Double_AMT/2010/page_34.pdf turn 5)
        (22556579533.35, "22556579533.35"),
        (123456789012345.0, "123456789012345"),
    ],
)
def test_answer_text(value: object, text: str) -> None:
    assert answer_text(value) == text


# --------------------------------------------------------------------------- properties
_FORMATS = ("{!r}", "{:.6f}", "{:,.6f}", "{:g}", "{:,.2f}", "{:.3%}", "$ {:,.2f}")


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(_FORMATS))
def test_a_formatted_number_matches_itself(value: float, fmt: str) -> None:
    text = fmt.format(value)
    assume("inf" not in text)  # '{:.3%}' of a value near the float limit overflows
    verdict = answers_match(text, text)
    assert verdict.correct and verdict.reason is MatchReason.EXACT, (text, verdict)


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_executed_value_matches_its_answer_text(value: float) -> None:
    verdict = answers_match(answer_text(value), answer_text(value))
    assert verdict.correct
    assert verdict.gold_value == value


def test_a_gold_answer_over_the_size_cap_is_unparseable_with_the_reason() -> None:
    verdict = answers_match("18", "1" * (MAX_ANSWER_CHARS + 1))
    assert (verdict.correct, verdict.status.value, verdict.reason.value) == (False, "unparseable", "unparseable")
    assert verdict.detail.startswith(f"the gold answer is {MAX_ANSWER_CHARS + 1:,} characters long")
    assert answers_match("18", "18").correct  # and a normal pair is unaffected
