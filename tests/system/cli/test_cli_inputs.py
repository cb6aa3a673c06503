"""Inputs as people have them (issue 20): a single-turn file without a turn column, ``--map``'s
names in the help and errors, and ``--benchmark`` on a plain table."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from workbench.cli import main
from workbench.pipeline.run import open_run
from workbench.schema import PREDICTION_TARGETS

REPO = Path(__file__).resolve().parents[3]
#: The first 10 GSM8K test problems as ``{id, prompt, response, pred, gold}``: ToRA-Code-34B's outputs
#: (tests/fixtures/predictions/gsm8k/make_plain_id_response.py made it).
GSM8K_PLAIN = REPO / "tests/fixtures/predictions/gsm8k/plain_id_response_pred_gold.jsonl"
TORA_CODE_34B = REPO / "data/predictions/gsm8k/tora/tora-code-34b.jsonl"
CONVFINQA = REPO / "tests/fixtures/convfinqa/dev_small.json"
GSM8K_MAP = "record_id=id,raw_output=response,gold_answer=gold"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_a_gsm8k_file_without_turns_grades_with_a_map_and_nothing_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, "grade", str(GSM8K_PLAIN), "--map", GSM8K_MAP, "--out", str(tmp_path / "plain"))
    assert code == 0, err
    # said once each, on standard error: which gold graded it (no dataset named), and single-turn
    assert _lines(err) == [
        f"workbench: note: no dataset was given: graded against the gold answers carried in {GSM8K_PLAIN.name}, "
        "which are not on the bundled ConvFinQA dev set (--dataset FILE names another gold set)",
        f"workbench: note: no turn column in {GSM8K_PLAIN}: every row is turn 0 (single-turn)",
    ]
    summary = json.loads((tmp_path / "plain/summary.json").read_text(encoding="utf-8"))
    assert (summary["dataset"]["layout"], summary["dataset"]["benchmark"]) == ("carried-in-predictions", "gsm8k")
    turns = pl.read_parquet(tmp_path / "plain/turns.parquet").sort(pl.col("record_id").cast(pl.Int64))
    assert turns.height == 10 and turns["turn"].to_list() == [0] * 10
    # ToRA's answers are wrong on problems 2 (10000 for 70000), 4 (140 for 20), 7 (0.8 for 160), 8 (285 for 45)
    assert turns["correct"].to_list() == [True, True, False, True, False, True, True, False, False, True]
    assert turns.filter(~pl.col("correct"))["reason"].cast(pl.String).unique().to_list() == ["wrong_value"]
    assert turns.filter(pl.col("record_id") == "2")["answer"].item() == "10000"
    assert "6/10" in out
    # the same outputs, read by the ToRA adapter (its own file's first 10 lines), get the same verdicts
    tora = tmp_path / "tora-code-34b.jsonl"
    tora.write_text("".join(TORA_CODE_34B.read_text(encoding="utf-8").splitlines(keepends=True)[:10]))
    code, _, err = _run(capsys, "grade", str(tora), "--out", str(tmp_path / "tora"))
    # the adapter knows its problems are single-turn: the one note says which gold graded them
    assert code == 0 and _lines(err) == [
        f"workbench: note: no dataset was given: graded against the gold answers carried in {tora.name}, "
        "which are not on the bundled ConvFinQA dev set (--dataset FILE names another gold set)"
    ]
    by_adapter = pl.read_parquet(tmp_path / "tora/turns.parquet").select("record_id", "correct")
    assert by_adapter.sort(pl.col("record_id").cast(pl.Int64))["correct"].to_list() == turns["correct"].to_list()


def test_a_file_without_turns_is_refused_against_conversations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    preds = tmp_path / "preds.csv"
    preds.write_text("record_id,predicted_answer\nSingle_JKHY/2009/page_28.pdf-3,0.14136\n", encoding="utf-8")
    code, out, err = _run(capsys, "grade", str(CONVFINQA), str(preds), "--out", str(tmp_path / "out"))
    assert code == 2 and not out
    [line] = _lines(err)
    assert line.startswith(f"workbench: error: {preds}: field 'turn': the file has no turn column, but the gold ")
    assert "has conversations of several turns (record '" in line
    assert line.endswith("Fix: name the turn column and its base in --map: turn=COLUMN:0 or turn=COLUMN:1")
    assert not (tmp_path / "out/summary.json").exists()


def test_a_repeated_id_in_a_file_without_turns_is_one_line_naming_both_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    preds = tmp_path / "preds.jsonl"
    rows = [{"id": 1, "response": "18"}, {"id": 2, "response": "3"}, {"id": 1, "response": "20"}]
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, _, err = _run(
        capsys, "grade", str(preds), "--map", "record_id=id,raw_output=response", "--out", str(tmp_path)
    )
    assert code == 2
    assert _lines(err) == [
        f"workbench: error: {preds}: line 3: field 'id': record id '1' appears again (first at line 1) in a file "
        "without a turn column, so the file has turns. Fix: name the turn column and its base in --map: "
        "turn=COLUMN:0 or turn=COLUMN:1"
    ]


def test_map_names_every_field_in_the_help_and_in_its_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["grade", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    described = help_text[help_text.index("--map SPEC") :]
    listed = re.search(r"NAME is one of (.*?)\.", described)
    assert listed is not None
    assert listed.group(1).split(", ") == list(PREDICTION_TARGETS)
    code, _, err = _run(capsys, "grade", str(GSM8K_PLAIN), "--map", "record_id=id,answer=pred", "--out", str(tmp_path))
    assert code == 2
    [line] = _lines(err)
    assert line == f"workbench: error: --map: unknown name 'answer'. Fix: use one of {', '.join(PREDICTION_TARGETS)}"


PLAIN_GOLD = (
    "record_id,turn,question,gold_answer\n"
    "a,0,What share of the revenue is the segment's?,0.42\n"
    "b,0,What is half of one?,\\frac{1}{2}\n"
    "c,0,Simplify 2*k.,2k\n"
    "d,0,How many apples?,18\n"
)
PLAIN_PREDS = "record_id,turn,predicted_answer\na,0,42\nb,0,1/2\nc,0,2k\nd,0,18.0\n"


def test_a_plain_table_declared_math_grades_with_the_math_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold, preds = tmp_path / "gold.csv", tmp_path / "preds.csv"
    gold.write_text(PLAIN_GOLD, encoding="utf-8")
    preds.write_text(PLAIN_PREDS, encoding="utf-8")
    graded = {}
    for benchmark in ("auto", "math"):
        out = tmp_path / benchmark
        code, _, err = _run(capsys, "grade", str(gold), str(preds), "--out", str(out), "--benchmark", benchmark)
        assert code == 0, err
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        turns = pl.read_parquet(out / "turns.parquet").sort("record_id")
        graded[benchmark] = (summary["dataset"], turns.select("correct", pl.col("reason").cast(pl.String)).rows())
    # the layout is the file's, the rules the benchmark's
    assert (graded["auto"][0]["layout"], graded["auto"][0]["benchmark"]) == ("plain-table", "table")
    assert (graded["math"][0]["layout"], graded["math"][0]["benchmark"]) == ("plain-table", "math")
    # a plain table reads a bare 42 as 42% of the gold 0.42; MATH never does, and reads 2k as LaTeX (a product)
    assert graded["auto"][1] == [(True, "percent_reading"), (True, "exact"), (True, "exact"), (True, "exact")]
    assert graded["math"][1] == [(False, "percent_confusion"), (True, "exact"), (True, "symbolic"), (True, "exact")]
    # the folder opens again as graded: under the benchmark it records, without grading
    reopened = open_run(tmp_path / "math")
    assert (reopened.gold.benchmark, reopened.kind, reopened.graded.policy.numbers.latex_gold) == (
        "math",
        "latex",
        True,
    )
    assert reopened.turns.sort("record_id")["correct"].to_list() == [False, True, True, True]


def test_a_benchmark_that_contradicts_a_dataset_is_still_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    preds = REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl"
    code, _, err = _run(capsys, "grade", str(CONVFINQA), str(preds), "--out", str(tmp_path), "--benchmark", "math")
    assert code == 2
    assert _lines(err) == [
        "workbench: error: --benchmark math was given, but the gold data is convfinqa. "
        "Fix: drop --benchmark, or give a math dataset"
    ]


def test_a_single_turn_gold_table_and_predictions_need_no_turn_anywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold, preds = tmp_path / "gold.csv", tmp_path / "preds.csv"
    gold.write_text(PLAIN_GOLD.replace("record_id,turn,", "record_id,").replace(",0,", ","), encoding="utf-8")
    preds.write_text("record_id,predicted_answer\na,42\nb,1/2\nc,2k\nd,18.0\n", encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = _run(capsys, "grade", str(gold), str(preds), "--out", str(out), "--benchmark", "math")
    assert code == 0, err
    assert _lines(err) == [f"workbench: note: no turn column in {preds}: every row is turn 0 (single-turn)"]
    turns = pl.read_parquet(out / "turns.parquet").sort("record_id")
    assert turns.select("record_id", "turn", "correct", pl.col("reason").cast(pl.String)).rows() == [
        ("a", 0, False, "percent_confusion"),
        ("b", 0, True, "exact"),
        ("c", 0, True, "symbolic"),
        ("d", 0, True, "exact"),
    ]
