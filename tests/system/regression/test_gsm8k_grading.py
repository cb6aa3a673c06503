"""GSM8K end to end on the full-size copies under ``data/``: accuracy under every grading
policy, the upstream figures, every turn where we disagree with OpenAI's own verdicts, gold
that travels in the outputs, BLEU/ROUGE, and the lm-evaluation-harness samples fixture.

Each bundled file is graded once per test module (and worker), on first use.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from workbench.analysis.metrics import upstream_disagreements
from workbench.cli import main
from workbench.config import resolve
from workbench.pipeline.run import Run, grade_run

Graded = tuple[Run, dict[str, dict[str, Any]]]

#: System names each bundled file holds (the keys are those of the ``gsm8k_runs`` fixture).
SYSTEMS = {
    "tora-70b": ["tora-70b"],
    "tora-code-34b": ["tora-code-34b"],
    "pot-fewshot": ["gsm8K_s0_e-1_11_17_10_20"],
    "pot-zeroshot": ["gsm8K_zs_s0_e-1_11_19_09_55"],
    "openai": ["6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"],
}


@pytest.fixture(scope="module")
def graded(gsm8k_runs: dict[str, Path], gsm8k_path: Path) -> Callable[[str], Graded]:
    """``graded(name)``: the run of one bundled file against GSM8K test, and its summary."""
    cache: dict[str, Graded] = {}

    def get(name: str) -> Graded:
        if name not in cache:
            with warnings.catch_warnings():
                # the few-shot file holds two prompt-only lines; tests/unit/io/test_gsm8k.py checks that warning
                warnings.filterwarnings("ignore", message=".*prompt-only lines.*", category=UserWarning)
                run = grade_run(resolve(dataset=gsm8k_path, predictions=[gsm8k_runs[name]]))
            cache[name] = (run, run.summary)
        return cache[name]

    return get


# --------------------------------------------------------------------------- regression
#: Turns correct (of the 1,319 GSM8K test questions) per system and grading policy, computed
#: once from the bundled files and written here on purpose.
#:
#: ``symbolic`` (the default), ``cascade`` and ``official`` grade the system's own answer:
#: ToRA's ``pred``, program-of-thoughts' ``executed`` value, and for OpenAI (no answer field)
#: the answer flexible extraction finds. ``strict`` and ``flex`` extract from the raw output.
#: ``exact-string`` compares text with GSM8K's "#### n" answer. ``math-verify`` (issue 19) is
#: Math-Verify's own parse and verify: on a system's answer field or program value when it has one
#: (program-of-thoughts), else on the whole raw output; counted from the bundled files on
#: 2026-11-23. No other count changed then, and no verdict; the reasons that did: line 146 of
#: ToRA-70B and of ToRA-Code-34B under ``flex`` (a code block and nothing else, cut off before its
#: output: a number was read from the code before, no answer now, wrong both times).
POLICY_COUNTS: dict[str, dict[str, int]] = {
    # ToRA: exact-string misses the 10 answers GSM8K writes with a thousands separator
    # ("#### 1,875" for ToRA's "1875"). strict/flex read the box instead of ToRA's pred: it
    # writes percentages as "20\%" (credited for gold 20 by the percent reading, rightly: the
    # % sign is there; 12 and 14 turns) and "160.0"; strict misses the 11 outputs that end in
    # words ("Four containers were imported"), where flex takes the last number, e.g. "15" in
    # "5 cars drove through the traffic jam in the first 15 minutes".
    "tora-70b": {
        "exact-string": 1102,
        "official": 1112,
        "cascade": 1112,
        "strict": 1103,
        "flex": 1109,
        "symbolic": 1112,
        # Math-Verify's own parse + verify on the raw output (issue 19), shown beside ours
        "math-verify": 1107,
    },
    # a bare number is never read x100 on GSM8K (0.05 for 5, 0.7 for 70 are wrong): see
    # test_gsm8k_answers_are_not_credited_by_a_bare_x100_reading
    "tora-code-34b": {
        "exact-string": 1051,
        "official": 1062,
        "cascade": 1062,
        "strict": 1061,
        "flex": 1062,
        "symbolic": 1062,
        "math-verify": 1057,
    },
    # program-of-thoughts gives executed values: exact-string also misses float noise
    # ("12.000000000000002"), which pass only by rounding to 5 decimals or the tolerance; bare
    # x100 readings (18 for 1800, 3.9 for 390) are wrong, so official and symbolic agree
    "gsm8K_s0_e-1_11_17_10_20": {
        "exact-string": 922,
        "official": 942,
        "cascade": 942,
        "strict": 942,
        "flex": 942,
        "symbolic": 942,
        "math-verify": 934,
    },
    # zero-shot: 183 outputs have no executed value (graded from flexible extraction of the code)
    "gsm8K_zs_s0_e-1_11_19_09_55": {
        "exact-string": 741,
        "official": 754,
        "cascade": 754,
        "strict": 748,
        "flex": 754,
        "symbolic": 754,
        "math-verify": 749,
    },
    # OpenAI GPT-3: exact-string misses thousands separators on either side ("A: 3,000" for
    # "#### 3000", "A: 1875" for "#### 1,875"); every other policy equals the upstream
    # is_correct count (no disagreement: see UPSTREAM_DISAGREEMENTS)
    "6b_finetuning": {
        "exact-string": 284,
        "official": 286,
        "cascade": 286,
        "strict": 286,
        "flex": 286,
        "symbolic": 286,
        "math-verify": 286,
    },
    "6b_verification": {
        "exact-string": 513,
        "official": 515,
        "cascade": 515,
        "strict": 515,
        "flex": 515,
        "symbolic": 515,
        "math-verify": 515,
    },
    "175b_finetuning": {
        "exact-string": 457,
        "official": 458,
        "cascade": 458,
        "strict": 458,
        "flex": 458,
        "symbolic": 458,
        "math-verify": 458,
    },
    "175b_verification": {
        "exact-string": 737,
        "official": 742,
        "cascade": 742,
        "strict": 742,
        "flex": 742,
        "symbolic": 742,
        "math-verify": 742,
    },
}


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_policy_counts(graded: Callable[[str], Graded], name: str) -> None:
    run, summary = graded(name)
    assert list(summary) == SYSTEMS[name]
    found = {
        system: {policy: summary[system]["policies"][policy]["n_correct"] for policy in POLICY_COUNTS[system]}
        for system in SYSTEMS[name]
    }
    assert found == {system: POLICY_COUNTS[system] for system in SYSTEMS[name]}
    for system in SYSTEMS[name]:
        row = summary[system]
        assert row["n_turns"] == row["n_conversations"] == 1319
        assert row["n_unmatched"] == 0
        assert row["n_turns_correct"] == POLICY_COUNTS[system]["symbolic"]  # the main policy fills turns
    assert run.gold.benchmark == "gsm8k"


# --------------------------------------------------------------------------- upstream figures
def test_tora_70b_matches_its_published_accuracy(graded: Callable[[str], Graded]) -> None:
    _, summary = graded("tora-70b")
    n_correct = summary["tora-70b"]["policies"]["symbolic"]["n_correct"]
    assert abs(100 * n_correct / 1319 - 84.3) <= 0.5  # ToRA's paper: 84.3% on GSM8K (1,319)
    assert summary["tora-70b"]["n_predictions"] == 1319


def test_program_of_thoughts_matches_its_published_accuracy(graded: Callable[[str], Graded]) -> None:
    _, summary = graded("pot-fewshot")
    row = summary["gsm8K_s0_e-1_11_17_10_20"]
    n_correct = row["policies"]["symbolic"]["n_correct"]
    # The file answers 1,318 of the 1,319 questions (the last, record 1318, is missing). Our
    # accuracy is 942 / 1,319 gold = 71.42% (the figure the summary reports, a missing answer
    # counting wrong) and 942 / 1,318 rows given = 71.47%; both are within 0.5 of the
    # published 71.6% (Program-of-Thoughts, Codex few-shot, GSM8K).
    assert (row["n_turns"], row["n_predictions"], row["n_missing"]) == (1319, 1318, 1)
    assert row["turn_execution_accuracy"] == n_correct / 1319
    for denominator in (1319, 1318):
        assert abs(100 * n_correct / denominator - 71.6) <= 0.5, denominator


#: Program-of-thoughts zero-shot, beside the published 56.9%: ours is 0.3 points above
#: (754 correct; 1,317 rows given; records 1040 and 1318 missing). Reported, not required to match.
POT_ZEROSHOT = {"upstream_pct": 56.9, "ours_of_1319_gold_pct": 57.16, "ours_of_1317_rows_pct": 57.25}


def test_program_of_thoughts_zero_shot_beside_its_published_accuracy(graded: Callable[[str], Graded]) -> None:
    _, summary = graded("pot-zeroshot")
    row = summary["gsm8K_zs_s0_e-1_11_19_09_55"]
    n_correct = row["policies"]["symbolic"]["n_correct"]
    assert (row["n_predictions"], row["n_missing"]) == (1317, 2)
    found = {
        "upstream_pct": 56.9,
        "ours_of_1319_gold_pct": round(100 * n_correct / 1319, 2),
        "ours_of_1317_rows_pct": round(100 * n_correct / 1317, 2),
    }
    assert found == POT_ZEROSHOT


# --------------------------------------------------------------------------- upstream disagreements
#: Every turn of OpenAI's example solutions where our verdict differs from the file's own
#: ``is_correct``: (system, record_id) -> (our answer, gold, upstream verdict, our reason).
#: Computed from the data, written here on purpose: none. The 14 turns the cascade once
#: credited by a x100 reading ("4200" grams for 42, "8" for 800 ml, "18" books for 1800) were
#: examined: upstream is right on every one, and GSM8K gold is in the unit the question asks,
#: so a bare number is no longer read x100 on GSM8K (`for_benchmark`); "20%" for 20 still counts.
UPSTREAM_DISAGREEMENTS: dict[tuple[str, str], tuple[str, str, bool, str]] = {}


def test_disagreements_with_openai_verdicts_are_the_known_ones(graded: Callable[[str], Graded]) -> None:
    run, summary = graded("openai")
    rows = upstream_disagreements(run.turns)
    found = {
        (r["system"], r["record_id"]): (r["answer"], r["gold_executed"], r["upstream_correct"], r["reason"])
        for r in rows.iter_rows(named=True)
    }
    assert len(found) == rows.height
    new = {k: v for k, v in found.items() if UPSTREAM_DISAGREEMENTS.get(k) != v}
    gone = {k: v for k, v in UPSTREAM_DISAGREEMENTS.items() if k not in found}
    assert found == UPSTREAM_DISAGREEMENTS, f"new or changed: {new}\nno longer disagree: {gone}"
    per_system = {s: summary[s]["n_upstream_disagreements"] for s in SYSTEMS["openai"]}
    assert per_system == {"6b_finetuning": 0, "6b_verification": 0, "175b_finetuning": 0, "175b_verification": 0}


def test_gsm8k_answers_are_not_credited_by_a_bare_x100_reading(graded: Callable[[str], Graded]) -> None:
    run, _ = graded("openai")
    credited = run.turns.filter(
        pl.col("correct") & (pl.col("reason") == "percent_reading") & ~pl.col("answer").str.contains("%")
    )
    assert credited.select("system", "record_id", "answer", "gold_executed").rows() == []


# --------------------------------------------------------------------------- gold in the outputs
@pytest.fixture(scope="module")
def cli_summary(gsm8k_runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``workbench grade tora-70b.jsonl --out DIR``: no dataset, the gold read from the outputs."""
    out = tmp_path_factory.mktemp("tora-70b-no-dataset")
    assert main(["grade", str(gsm8k_runs["tora-70b"]), "--out", str(out)]) == 0
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


def test_gold_carried_in_the_outputs_grades_the_same(
    cli_summary: dict[str, Any], graded: Callable[[str], Graded]
) -> None:
    assert cli_summary["dataset"]["layout"] == "carried-in-predictions"
    assert cli_summary["dataset"]["benchmark"] == "gsm8k"
    assert cli_summary["dataset"]["n_turns"] == 1319
    without = {name: p["n_correct"] for name, p in cli_summary["systems"]["tora-70b"]["policies"].items()}
    _, summary = graded("tora-70b")
    with_dataset = {name: p["n_correct"] for name, p in summary["tora-70b"]["policies"].items()}
    assert without == with_dataset == POLICY_COUNTS["tora-70b"]


def test_text_scores_use_the_gold_set_solutions(cli_summary: dict[str, Any], graded: Callable[[str], Graded]) -> None:
    """BLEU/ROUGE compare the raw output with the gold set's solution text: GSM8K's answer
    (ending "#### n") when the dataset is given; without it, the copy the outputs carry
    (ToRA's gt_cot, which has no "#### n" line). The references differ, so do the scores, by
    a little; documented in the README."""
    _, summary = graded("tora-70b")
    without, with_dataset = cli_summary["systems"]["tora-70b"]["text"], summary["tora-70b"]["text"]
    assert with_dataset["bleu"] == pytest.approx(5.87, abs=0.005)
    assert with_dataset["rougeL"] == pytest.approx(35.08, abs=0.005)
    assert without["bleu"] == pytest.approx(5.85, abs=0.005)
    assert without["rougeL"] == pytest.approx(34.56, abs=0.005)


def test_benchmark_that_contradicts_the_data_is_one_line(
    gsm8k_runs: dict[str, Path], gsm8k_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The GSM8K dataset fixes the benchmark (gold carried in the outputs would not: --benchmark
    decides its rules, issue 20)."""
    out = tmp_path / "out"
    code = main(["grade", str(gsm8k_path), str(gsm8k_runs["tora-70b"]), "--out", str(out), "--benchmark", "math"])
    _, err = capsys.readouterr()
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines == [
        "workbench: error: --benchmark math was given, but the gold data is gsm8k. "
        "Fix: drop --benchmark, or give a math dataset"
    ]
    assert not (out / "summary.json").exists()


# --------------------------------------------------------------------------- BLEU / ROUGE
#: ToRA-70B's unfiltered outputs (``code[0]``) against GSM8K's reference solutions, 0-100,
#: rounded to 2 decimals: lm-eval's corpus BLEU and mean ROUGE F-measures.
TORA_70B_TEXT = {"bleu": 5.87, "rouge1": 38.35, "rouge2": 14.39, "rougeL": 35.08}


def test_text_scores_of_tora_70b(graded: Callable[[str], Graded]) -> None:
    _, summary = graded("tora-70b")
    text = summary["tora-70b"]["text"]
    assert text["n"] == 1319
    for metric, value in TORA_70B_TEXT.items():
        assert 0 < text[metric] < 100
        assert text[metric] == pytest.approx(value, abs=0.005), metric


# --------------------------------------------------------------------------- lm-eval samples
#: The lm-eval samples fixture (ToRA-70B's first 20 outputs rendered as a ``--log_samples``
#: file), graded with the gold it carries. Upstream (the flexible-extract ``exact_match``)
#: credits 13 of 20; we credit 15.
LM_EVAL_POLICY_COUNTS = {
    "symbolic": 15,
    "exact-string": 13,
    "official": 15,
    "cascade": 15,
    "strict": 15,
    "flex": 16,
    "math-verify": 16,  # Math-Verify on the raw output (issue 19)
}
#: record_id -> (our answer, gold, upstream verdict, our reason). lm-eval's exact_match compares
#: strings, so the boxed "160.0" and "460.0" are wrong there and right here.
LM_EVAL_DISAGREEMENTS = {
    "7": ("160.0", "160", False, "exact"),
    "9": ("460.0", "460", False, "exact"),
}


def test_lm_eval_samples_grade_with_the_gold_they_carry(lm_eval_samples_path: Path) -> None:
    run = grade_run(resolve(dataset=None, predictions=[lm_eval_samples_path]))
    assert (run.gold.layout, run.gold.benchmark, run.gold.turns.height) == ("carried-in-predictions", "gsm8k", 20)
    (system,) = run.graded.systems
    assert system == "tora-70b-rendered"
    summary = run.summary[system]
    assert {name: p["n_correct"] for name, p in summary["policies"].items()} == LM_EVAL_POLICY_COUNTS
    assert (summary["n_upstream_correct"], summary["n_upstream_disagreements"]) == (13, 2)
    rows = upstream_disagreements(run.turns)
    found = {
        r["record_id"]: (r["answer"], r["gold_executed"], r["upstream_correct"], r["reason"])
        for r in rows.iter_rows(named=True)
    }
    assert found == LM_EVAL_DISAGREEMENTS
    # the main policy compares the harness's own flexible-extract answer; on record 18 that is
    # "4" (the last number) where the output boxes 7, so strict extraction is right and we are not
    by_policy = {
        (r["record_id"], r["policy"]): (r["answer"], r["correct"])
        for r in run.policy_grades.filter(pl.col("record_id") == "18").iter_rows(named=True)
    }
    assert by_policy[("18", "symbolic")] == ("4", False)
    assert by_policy[("18", "strict")] == ("7", True)
