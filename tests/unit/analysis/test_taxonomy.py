"""Error types on the real claude-sonnet-4-6 dev runs, and each rule on its own."""

from __future__ import annotations

import polars as pl
import pytest

from workbench.analysis.taxonomy import ErrorEvidence, ErrorType, classify_error, error_types
from workbench.pipeline.run import Run


def test_every_wrong_turn_has_one_error_type_and_correct_turns_none(two_dev_runs: Run) -> None:
    t = two_dev_runs.turns
    assert t.filter(~pl.col("correct") & pl.col("error_type").is_null()).height == 0
    assert t.filter(pl.col("correct") & pl.col("error_type").is_not_null()).height == 0


def test_carried_errors_build_on_an_earlier_wrong_turn(two_dev_runs: Run) -> None:
    t = two_dev_runs.turns
    carried = t.filter(pl.col("error_type") == "carried_error")
    assert carried.height > 50
    wrong = {(s, r, n) for s, r, n in t.filter(~pl.col("correct")).select("system", "record_id", "turn").iter_rows()}
    for system, record, deps in carried.select("system", "record_id", "depends_on").iter_rows():
        assert any((system, record, j) in wrong for j in deps)


def test_missing_turns_of_the_second_run_are_missing_predictions(two_dev_runs: Run) -> None:
    second = two_dev_runs.turns.filter(pl.col("system") == "claude 12-48")
    missing = second.filter(pl.col("status") == "no_prediction")
    assert missing.height == 1490 - 1486
    assert (missing["error_type"] == "missing_prediction").all()


@pytest.mark.parametrize(
    ("record_id", "turn", "expected"),
    [
        # 9223 / 26410 * 100 for divide(17187, 26410): the right operation on another number
        ("Double_ADI/2011/page_81.pdf", 0, "wrong_operand"),
        # 397097677 * 28.85 for divide(397097677, 28.85)
        ("Double_AMT/2008/page_32.pdf", 1, "wrong_operator"),
        # answer "N/A": the system declined, nothing is fished out of its reasoning
        ("Double_AMAT/2013/page_18.pdf", 0, "extraction_failure"),
    ],
)
def test_error_types_of_real_turns(two_dev_runs: Run, record_id: str, turn: int, expected: str) -> None:
    row = two_dev_runs.turns.filter(
        (pl.col("system") == "claude 06-35") & (pl.col("record_id") == record_id) & (pl.col("turn") == turn)
    ).row(0, named=True)
    assert row["correct"] is False
    assert row["error_type"] == expected


def test_rules_in_order() -> None:
    # the status wins over everything else
    assert classify_error(ErrorEvidence("no_prediction", "no_prediction", carried=True)) is ErrorType.MISSING_PREDICTION
    assert classify_error(ErrorEvidence("timeout", "timeout")) is ErrorType.TIMEOUT
    # an equivalent program with a wrong answer is a slip, even when an earlier turn was wrong
    slip = ErrorEvidence("ok", "wrong_value", True, "divide(5, 2)", "divide(5, 2)", 2.6, 2.5, carried=True)
    assert classify_error(slip) is ErrorType.ARITHMETIC_SLIP
    # a carried error outranks the mismatch type
    assert (
        classify_error(ErrorEvidence("ok", "scale", None, None, "divide(5, 2)", 25.0, 2.5, True)).value
        == "carried_error"
    )
    assert classify_error(ErrorEvidence("ok", "scale", None, None, "divide(5, 2)", 25.0, 2.5)).value == "scale"
    assert classify_error(ErrorEvidence("ok", "percent_confusion")).value == "percent"
    assert classify_error(ErrorEvidence("ok", "rounding")).value == "arithmetic_slip"


def test_percent_written_as_a_number_is_not_a_wrong_operator() -> None:
    # (a - b) / b * 100 against subtract(a, b), divide(#0, b): same operations, other numbers
    evidence = ErrorEvidence(
        "ok", "wrong_value", False, "(9 - 7) / 7 * 100", "subtract(8, 7), divide(#0, 7)", 28.6, 0.14
    )
    assert classify_error(evidence) is ErrorType.WRONG_OPERAND


def test_answer_only_turns() -> None:
    # reversed operands of a subtraction is not an operator swap; nothing explains it
    assert classify_error(ErrorEvidence("ok", "wrong_value", None, None, "subtract(5, 3)", 7.0, 2.0)).value == (
        "wrong_value"
    )
    # 5 * 3 for subtract(5, 3)
    assert classify_error(ErrorEvidence("ok", "wrong_value", None, None, "subtract(5, 3)", 15.0, 2.0)).value == (
        "wrong_operator"
    )
    # a lookup answered with another number read
    assert classify_error(ErrorEvidence("ok", "wrong_value", False, "41", "42", 41.0, 42.0)).value == "wrong_operand"


def test_error_type_counts_of_the_bundled_run(two_dev_runs: Run) -> None:
    """Regression table: the 252 wrong turns of claude 06-35 by type (stated in the README's
    error-analysis section and the issue's closing note)."""
    wrong = two_dev_runs.turns.filter((pl.col("system") == "claude 06-35") & ~pl.col("correct"))
    counts = dict(wrong.group_by(pl.col("error_type").cast(pl.String)).len().iter_rows())
    assert counts == {
        "carried_error": 105,
        "wrong_operand": 52,
        "wrong_operator": 44,
        "sign": 16,
        "scale": 13,
        "wrong_value": 9,
        "extraction_failure": 7,
        "percent": 3,
        "arithmetic_slip": 3,
    }


def test_carried_errors_are_looked_up_only_where_a_turn_builds_on_another() -> None:
    # two systems, one conversation each; turn 1 builds on turn 0, turn 2 on a turn nobody graded
    turns = pl.DataFrame(
        {
            "system": ["a", "a", "a", "b", "b", "b"],
            "record_id": ["r"] * 6,
            "turn": [0, 1, 2, 0, 1, 2],
            "correct": [False, False, False, True, False, False],
            "status": ["ok"] * 6,
            "reason": ["scale", "scale", "scale", "exact", "scale", "scale"],
            "program_correct": [None] * 6,
            "predicted_program": [None] * 6,
            "gold_program": [None] * 6,
            "pred_value": [None] * 6,
            "gold_value": [None] * 6,
            "depends_on": [[], [0], [7], [], [0], [7]],
        },
        schema_overrides={"depends_on": pl.List(pl.Int32), "program_correct": pl.Boolean, "pred_value": pl.Float64,
                          "gold_value": pl.Float64, "predicted_program": pl.String, "gold_program": pl.String},
    )  # fmt: skip
    types = turns.with_columns(error_types(turns).alias("error_type"))["error_type"].to_list()
    # a's turn 1 builds on a wrong turn 0; b's turn 0 was right; an ungraded turn carries nothing
    assert types == ["scale", "carried_error", "scale", None, "scale", "scale"]
    # a benchmark of single questions (no turn builds on another) has no carried error
    single = turns.with_columns(pl.lit([], dtype=pl.List(pl.Int32)).alias("depends_on"))
    assert "carried_error" not in error_types(single).to_list()
