"""ghchen99's ConvFinQA run (100 train conversations, 355 turns; DSL programs from an Azure
OpenAI model): program accuracy by symbolic equivalence, beside exact string match and the
run's own LLM judge, and every turn where equivalence and the judge disagree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from workbench.analysis.metrics import summarize
from workbench.io.gold import load_gold
from workbench.io.predictions import load_predictions
from workbench.pipeline.grade import GradedRun, grade_predictions

SAME = "same computation up to the order of add/multiply arguments"
DIFFERENT = "different computation: the programs disagree at a test point"

#: Program accuracy on the 355 turns, three ways. Computed once from the fixtures.
PROGRAM_ACCURACY = {
    "symbolic": 239,  # our program_correct: equivalent to the gold program (one turn has no verdict)
    "exact": 213,  # predicted_program == expected_program as strings
    "judge": 289,  # the run's LLM judge, results[*].program_correct (summary.program_correct)
}


@pytest.fixture(scope="module")
def ghchen99_run(ghchen99_predictions_path: Path) -> GradedRun:
    gold = load_gold(ghchen99_predictions_path)  # the conversations and gold programs are embedded
    return grade_predictions(gold, load_predictions(ghchen99_predictions_path))


@pytest.fixture(scope="module")
def judge(ghchen99_results_path: Path) -> dict[str, Any]:
    return json.loads(ghchen99_results_path.read_text(encoding="utf-8"))


def _judge_verdicts(judge: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    """The judge's rows by (record_id, turn): ``question_id`` is ``<record id>-<turn>``."""
    out = {}
    for row in judge["results"]:
        record_id, _, turn = row["question_id"].rpartition("-")
        out[(record_id, int(turn))] = row
    return out


def test_program_accuracy_three_ways(
    ghchen99_run: GradedRun, judge: dict[str, Any], ghchen99_predictions_path: Path
) -> None:
    turns = ghchen99_run.turns
    assert turns.height == 355
    raw = json.loads(ghchen99_predictions_path.read_text(encoding="utf-8"))
    pairs = [(t["predicted_program"], t["expected_program"]) for record in raw for t in record["conversation"]]
    verdicts = _judge_verdicts(judge)
    found = {
        "symbolic": int(turns["program_correct"].fill_null(False).sum()),
        "exact": sum(pred == gold for pred, gold in pairs),
        "judge": sum(row["program_correct"] for row in verdicts.values()),
    }
    assert found == PROGRAM_ACCURACY
    assert len(pairs) == len(verdicts) == judge["summary"]["total"] == 355
    assert judge["summary"]["program_correct"] == PROGRAM_ACCURACY["judge"]
    summary = summarize(turns, ghchen99_run.unmatched, ghchen99_run.policy.name, text_metrics=False)
    (row,) = summary.values()
    assert row["n_programs_equivalent"] == PROGRAM_ACCURACY["symbolic"]
    assert row["turn_program_accuracy"] == pytest.approx(PROGRAM_ACCURACY["symbolic"] / 355)
    # every exact string match is also symbolically equivalent
    exact = turns.filter(pl.col("predicted_program") == pl.col("gold_program"))
    assert exact.height == PROGRAM_ACCURACY["exact"]
    assert exact["program_correct"].all()


#: Every turn where symbolic equivalence and the LLM judge disagree: (record_id, turn) ->
#: (predicted_program, expected_program, judge verdict, our detail). Computed once from the
#: fixtures and written here on purpose; 71 turns, 60 the judge accepts and we do not, 10 we
#: accept and the judge does not, 1 without a verdict from us.
JUDGE_DISAGREEMENTS: dict[tuple[str, int], tuple[str, str, bool, str | None]] = {
    # 1. The judge accepts a program that answers in percent units: the gold's computation (or
    #    the same with a precomputed difference) followed by multiply(#n, 100). Its value is the
    #    gold's x 100, so it is a different program; the answer check's percent reading is where
    #    this is forgiven, not program equivalence. (25)
    ("Double_ADBE/2009/page_98.pdf", 2): (
        "subtract(191265, 216529), divide(#0, 216529), multiply(#1, 100)",
        "subtract(191265, 216529), divide(#0, 216529)",
        True,
        DIFFERENT,
    ),
    ("Double_ADBE/2011/page_116.pdf", 2): (
        "divide(9212, 1514308), multiply(#0, 100)",
        "divide(9212, 1514308)",
        True,
        DIFFERENT,
    ),
    ("Double_AES/2011/page_230.pdf", 1): (
        "divide(1697, 16088), multiply(#0, 100)",
        "divide(1697, 16088)",
        True,
        DIFFERENT,
    ),
    ("Single_AAPL/2002/page_23.pdf-1", 3): (
        "divide(-2620, 7983), multiply(#0, 100)",
        "subtract(5363, 7983), divide(#0, 7983)",
        True,
        DIFFERENT,
    ),
    ("Single_ADI/2009/page_90.pdf-3", 2): (
        "subtract(18161, 9889), divide(#0, 9889), multiply(#1, 100)",
        "subtract(18161, 9889), divide(#0, 9889)",
        True,
        DIFFERENT,
    ),
    ("Single_AES/2002/page_117.pdf-2", 2): (
        "subtract(6147, 6241), divide(#0, 6241), multiply(#1, 100)",
        "subtract(6147, 6241), divide(#0, 6241)",
        True,
        DIFFERENT,
    ),
    ("Single_APD/2019/page_100.pdf-2", 2): (
        "divide(58.2, 3227.4), multiply(#0, 100)",
        "add(2907.3, 320.1), divide(58.2, #0)",
        True,
        DIFFERENT,
    ),
    ("Single_BLK/2017/page_35.pdf-4", 2): (
        "subtract(196545, 176675), divide(#0, 176675), multiply(#1, 100)",
        "subtract(196545, 176675), divide(#0, 176675)",
        True,
        DIFFERENT,
    ),
    ("Single_CE/2012/page_16.pdf-1", 1): (
        "subtract(83, 78), divide(#0, 78), multiply(#1, 100)",
        "subtract(83, 78), divide(#0, 78)",
        True,
        DIFFERENT,
    ),
    ("Single_CE/2017/page_20.pdf-2", 3): (
        "subtract(78, 119), divide(#0, 119), multiply(#1, 100)",
        "subtract(78, 119), divide(#0, 119)",
        True,
        DIFFERENT,
    ),
    ("Single_FITB/2013/page_163.pdf-3", 3): (
        "subtract(19, 17), divide(#0, 17), multiply(#1, 100)",
        "subtract(19, 17), divide(#0, 17)",
        True,
        DIFFERENT,
    ),
    ("Single_GS/2014/page_62.pdf-2", 2): (
        "subtract(627444, 635092), divide(#0, 635092), multiply(#1, 100)",
        "subtract(627444, 635092), divide(#0, 635092)",
        True,
        DIFFERENT,
    ),
    ("Single_IP/2007/page_19.pdf-2", 2): (
        "divide(349, 2074), multiply(#0, 100)",
        "subtract(2423, 2074), divide(#0, 2074)",
        True,
        DIFFERENT,
    ),
    ("Single_IP/2009/page_36.pdf-1", 2): (
        "divide(2800, 5680), multiply(#0, 100)",
        "multiply(2.8, const_1000), divide(#0, 5680)",
        True,
        DIFFERENT,
    ),
    ("Single_IP/2012/page_57.pdf-2", 2): (
        "divide(2500, 3710), multiply(#0, 100)",
        "multiply(2.5, const_1000), divide(#0, 3710)",
        True,
        DIFFERENT,
    ),
    ("Single_IQV/2018/page_59.pdf-2", 2): (
        "divide(-6, 31), multiply(#0, 100)",
        "subtract(25, 31), divide(#0, 31)",
        True,
        DIFFERENT,
    ),
    ("Single_JKHY/2009/page_28.pdf-3", 3): (
        "divide(25587, 181001), multiply(#0, 100)",
        "subtract(206588, 181001), divide(#0, 181001)",
        True,
        DIFFERENT,
    ),
    ("Single_JPM/2013/page_104.pdf-2", 2): (
        "divide(0.5, 3.2), multiply(#0, 100)",
        "subtract(3.7, 3.2), divide(#0, 3.2)",
        True,
        DIFFERENT,
    ),
    ("Single_MMM/2007/page_38.pdf-2", 3): (
        "subtract(-1367, -1460), divide(#0, -1460), multiply(#1, 100)",
        "subtract(-1367, -1460), divide(#0, -1460)",
        True,
        DIFFERENT,
    ),
    ("Single_MRO/2009/page_127.pdf-1", 1): (
        "subtract(1102, 965), divide(#0, 965), multiply(#1, 100)",
        "subtract(1102, 965), divide(#0, 965)",
        True,
        DIFFERENT,
    ),
    ("Single_RCL/2006/page_37.pdf-2", 1): (
        "subtract(104520, 125385), divide(#0, 125385), multiply(#1, 100)",
        "subtract(104520, 125385), divide(#0, 125385)",
        True,
        DIFFERENT,
    ),
    ("Single_RSG/2008/page_114.pdf-2", 3): (
        "subtract(9362.2, 9244.9), divide(#0, 9244.9), multiply(#1, 100)",
        "subtract(9362.2, 9244.9), divide(#0, 9244.9)",
        True,
        DIFFERENT,
    ),
    ("Single_RSG/2012/page_145.pdf-1", 3): (
        "subtract(164.2, 189.6), divide(#0, 189.6), multiply(#1, 100)",
        "subtract(164.2, 189.6), divide(#0, 189.6)",
        True,
        DIFFERENT,
    ),
    ("Single_STT/2014/page_69.pdf-2", 3): (
        "subtract(3867, 3749), divide(#0, 3749), multiply(#1, 100)",
        "subtract(3867, 3749), divide(#0, 3749)",
        True,
        DIFFERENT,
    ),
    ("Single_SWKS/2010/page_105.pdf-2", 4): (
        "subtract(453257, 364221), divide(#0, 364221), multiply(#1, 100)",
        "subtract(453257, 364221), divide(#0, 364221)",
        True,
        DIFFERENT,
    ),
    # 2. The judge accepts a same-valued program written with numbers the model computed
    #    itself (divide(-524, 1651) for subtract(1127, 1651), divide(#0, 1651)), rounded
    #    (multiply(0.22859, 100)) or rescaled (divide(64100000, 89700000) for divide(64.1, 89.7)).
    #    We compare computations over the document's numbers, so a literal the document does not
    #    show is a different input. (20)
    ("Double_AMT/2010/page_111.pdf", 4): (
        "add(2385610, 98424)",
        "add(1197607, 1188003), add(#0, 98424)",
        True,
        DIFFERENT,
    ),
    ("Double_CB/2008/page_144.pdf", 2): (
        "divide(-524, 1651)",
        "subtract(1127, 1651), divide(#0, 1651)",
        True,
        DIFFERENT,
    ),
    ("Double_DRE/2008/page_49.pdf", 0): ("divide(64100000, 89700000)", "divide(64.1, 89.7)", True, DIFFERENT),
    ("Double_GPN/2018/page_85.pdf", 4): (
        "multiply(1500, 0.0402)",
        "multiply(1.5, const_1000), multiply(#0, 4.02%)",
        True,
        DIFFERENT,
    ),
    ("Double_RCL/2013/page_18.pdf", 2): (
        "subtract(21300000, 18215000)",
        "add(11816000, 6399000), subtract(21300000, #0)",
        True,
        DIFFERENT,
    ),
    ("Double_RCL/2013/page_18.pdf", 4): (
        "multiply(0.22859, 100)",
        "divide(98750, 432000), multiply(#0, const_100)",
        True,
        DIFFERENT,
    ),
    ("Single_CE/2010/page_134.pdf-2", 4): (
        "divide(5923147, 8453601)",
        "add(2530454, 5923147), divide(5923147, #0)",
        True,
        DIFFERENT,
    ),
    ("Single_D/2002/page_39.pdf-2", 3): (
        "multiply(597, 1.07957)",
        "divide(597, 553), multiply(#0, 597)",
        True,
        DIFFERENT,
    ),
    ("Single_ILMN/2006/page_86.pdf-1", 4): (
        "divide(22918, 50583)",
        "subtract(73501, 50583), divide(#0, 50583)",
        True,
        DIFFERENT,
    ),
    ("Single_IP/2007/page_30.pdf-2", 3): (
        "divide(4400, 6700)",
        "multiply(4.4, const_1000), divide(#0, 6700)",
        True,
        DIFFERENT,
    ),
    ("Single_IPG/2014/page_47.pdf-1", 1): (
        "divide(2.7, 24.7)",
        "subtract(27.4, 24.7), divide(#0, 24.7)",
        True,
        DIFFERENT,
    ),
    ("Single_JPM/2009/page_206.pdf-3", 1): (
        "divide(221549, 2)",
        "add(103369, 118180), divide(#0, const_2)",
        True,
        DIFFERENT,
    ),
    ("Single_JPM/2016/page_73.pdf-4", 2): (
        "divide(158.82, 100.0)",
        "subtract(258.82, const_100), divide(#0, const_100)",
        True,
        DIFFERENT,
    ),
    ("Single_LMT/2014/page_31.pdf-2", 3): (
        "divide(10.78, 176.96)",
        "subtract(187.74, 176.96), divide(#0, 176.96)",
        True,
        DIFFERENT,
    ),
    ("Single_MO/2017/page_10.pdf-4", 1): (
        "divide(0.3, 12.8)",
        "subtract(13.1, 12.8), divide(#0, 12.8)",
        True,
        DIFFERENT,
    ),
    ("Single_MRO/2004/page_57.pdf-4", 2): ("divide(-4.3, 5.6)", "subtract(1.3, 5.6), divide(#0, 5.6)", True, DIFFERENT),
    ("Single_RE/2012/page_31.pdf-3", 1): (
        "divide(-54.5, 480.2)",
        "subtract(425.7, 480.2), divide(#0, 480.2)",
        True,
        DIFFERENT,
    ),
    ("Single_RE/2013/page_40.pdf-1", 2): ("add(605.0, 1300.4)", "add(195.0, 410.0), add(#0, 1300.4)", True, DIFFERENT),
    ("Single_SLG/2013/page_133.pdf-4", 3): ("add(8.6, 3.4)", "add(4.5, 4.1), add(#0, 3.4)", True, DIFFERENT),
    ("Single_WRK/2019/page_49.pdf-1", 2): (
        "add(-2269.4, 1780.2)",
        "add(2310.2, -4579.6), add(#0, 1780.2)",
        True,
        DIFFERENT,
    ),
    # 3. The judge accepts a program in other units: operands multiplied out of "millions" or
    #    "billions" (subtract(11300, 6500) for subtract(11.3, 6.5); 4400000000 for 4.4). (7)
    ("Double_AAPL/2008/page_52.pdf", 1): ("subtract(11300, 6500)", "subtract(11.3, 6.5)", True, DIFFERENT),
    ("Double_LKQ/2009/page_77.pdf", 0): ("subtract(49000000, 26600000)", "subtract(49.0, 26.6)", True, DIFFERENT),
    ("Single_IP/2007/page_30.pdf-2", 0): ("4400000000", "4.4", True, DIFFERENT),
    ("Single_IP/2009/page_36.pdf-1", 0): ("2800000000", "2.8", True, DIFFERENT),
    ("Single_JPM/2013/page_104.pdf-2", 0): ("subtract(3700, 3200)", "subtract(3.7, 3.2)", True, DIFFERENT),
    ("Single_SLG/2013/page_133.pdf-4", 0): ("4500000", "4.5", True, DIFFERENT),
    ("Single_VLO/2018/page_99.pdf-1", 0): ("add(1500000000, 1300000000)", "add(1.5, 1.3)", True, DIFFERENT),
    # 4. The judge accepts swapped subtract arguments: the opposite sign of the gold's change. (4)
    ("Single_CDNS/2018/page_82.pdf-3", 0): ("subtract(666009, 662272)", "subtract(662272, 666009)", True, DIFFERENT),
    ("Single_STT/2011/page_94.pdf-3", 2): ("subtract(2.38, 2.8)", "subtract(2.80, 2.38)", True, DIFFERENT),
    ("Single_UPS/2012/page_51.pdf-1", 2): ("subtract(3804, 807)", "subtract(807, 3804)", True, DIFFERENT),
    ("Single_ZBH/2002/page_46.pdf-3", 2): ("subtract(363.9, 156.7)", "subtract(156.7, 363.9)", True, DIFFERENT),
    # 5. The judge accepts a program with a different value: a ratio for a sum
    #    (divide(5171000, 12950000) for add(5171000, 7779000)), a change for a ratio, a
    #    difference for a lookup. (4)
    ("Double_GPN/2007/page_97.pdf", 2): ("divide(5171000, 12950000)", "add(5171000, 7779000)", True, DIFFERENT),
    ("Double_PNC/2014/page_99.pdf", 0): ("subtract(3609, 531)", "531", True, DIFFERENT),
    ("Single_D/2002/page_39.pdf-2", 2): ("subtract(597, 553), divide(#0, 553)", "divide(597, 553)", True, DIFFERENT),
    ("Single_JPM/2013/page_104.pdf-2", 1): ("subtract(3.2, 0.5)", "3.2", True, DIFFERENT),
    # 6. We accept, the judge rejects: the gold program carries steps of earlier turns that its
    #    last step does not use (subtract(75.95, const_100), divide(#0, const_100),
    #    subtract(102.11, const_100)); the model wrote only the computation that gives the
    #    answer. Only the final computation counts for equivalence. (10)
    ("Double_EW/2016/page_36.pdf", 4): (
        "subtract(198.18, const_100)",
        "subtract(265.06, const_100), divide(#0, const_100), subtract(198.18, const_100)",
        False,
        SAME,
    ),
    ("Double_EW/2016/page_36.pdf", 5): (
        "subtract(198.18, const_100), divide(#0, const_100)",
        "subtract(265.06, const_100), divide(#0, const_100), subtract(198.18, const_100), divide(#2, const_100)",
        False,
        SAME,
    ),
    ("Double_UPS/2009/page_33.pdf", 4): (
        "subtract(102.11, const_100)",
        "subtract(75.95, const_100), divide(#0, const_100), subtract(102.11, const_100)",
        False,
        SAME,
    ),
    ("Double_UPS/2009/page_33.pdf", 5): (
        "subtract(102.11, const_100), divide(#0, const_100)",
        "subtract(75.95, const_100), divide(#0, const_100), subtract(102.11, const_100), divide(#2, const_100)",
        False,
        SAME,
    ),
    ("Single_AAL/2015/page_51.pdf-3", 3): (
        "subtract(127, 100), divide(#0, 100)",
        "subtract(175, 100), divide(#0, 100), subtract(127, 100), divide(#2, 100)",
        False,
        SAME,
    ),
    ("Single_CDW/2015/page_34.pdf-2", 3): (
        "subtract(1033.9, 792.9)",
        "subtract(1018.5, 907.0), subtract(1033.9, 792.9)",
        False,
        SAME,
    ),
    ("Single_UPS/2009/page_33.pdf-2", 3): (
        "subtract(102.11, const_100)",
        "subtract(75.95, const_100), divide(#0, const_100), subtract(102.11, const_100)",
        False,
        SAME,
    ),
    ("Single_UPS/2009/page_33.pdf-2", 4): (
        "subtract(102.11, const_100), divide(#0, const_100)",
        "subtract(75.95, const_100), divide(#0, const_100), subtract(102.11, const_100), divide(#2, const_100)",
        False,
        SAME,
    ),
    ("Single_UPS/2010/page_33.pdf-4", 3): (
        "subtract(111.99, 100.0)",
        "subtract(110.57, const_100), divide(#0, const_100), subtract(111.99, const_100)",
        False,
        SAME,
    ),
    ("Single_UPS/2010/page_33.pdf-4", 4): (
        "subtract(111.99, const_100), divide(#0, const_100)",
        "subtract(110.57, const_100), divide(#0, const_100), subtract(111.99, const_100), divide(#2, const_100)",
        False,
        SAME,
    ),
    # 7. No verdict from us (program_correct is null): the model's program is empty; the
    #    judge says wrong. (1)
    ("Double_ADBE/2018/page_66.pdf", 1): ("", "divide(const_100, 9)", False, None),
}


def test_disagreements_with_the_judge_are_the_known_ones(ghchen99_run: GradedRun, judge: dict[str, Any]) -> None:
    verdicts = _judge_verdicts(judge)
    found = {}
    for row in ghchen99_run.turns.iter_rows(named=True):
        key = (row["record_id"], row["turn"])
        judged = verdicts[key]
        # the judge's file and ours hold the same programs
        assert (judged["predicted_program"], judged["expected_program"]) == (
            row["predicted_program"],
            row["gold_program"],
        )
        if row["program_correct"] != judged["program_correct"]:
            found[key] = (
                row["predicted_program"],
                row["gold_program"],
                judged["program_correct"],
                row["program_detail"],
            )
    new = {k: v for k, v in found.items() if JUDGE_DISAGREEMENTS.get(k) != v}
    gone = {k: v for k, v in JUDGE_DISAGREEMENTS.items() if k not in found}
    assert found == JUDGE_DISAGREEMENTS, f"new or changed: {new}\nno longer disagree: {gone}"
    judge_only = sum(1 for v in found.values() if v[2])
    assert (judge_only, len(found) - judge_only) == (60, 11)
