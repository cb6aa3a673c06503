"""Hostile JSON in gold and prediction files: one line naming the file, line or record, field and
fix, never a ``RecursionError``/``ValueError`` traceback; non-finite gold refused, and a prediction
of ``inf``/``nan`` never graded correct (issue 15, items 7 and 8)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from workbench.cli import main
from workbench.errors import InputError
from workbench.grading.compare import answers_match
from workbench.grading.policies import POLICIES, grade_answer
from workbench.io.gold import load_gold
from workbench.io.jsonfiles import MAX_DEPTH
from workbench.io.link import gold_from_predictions
from workbench.io.predictions import load_predictions

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
DEV_SMALL = FIXTURES / "convfinqa" / "dev_small.json"
ZARIFAZIZ = FIXTURES / "predictions" / "zarifaziz_dev_small.jsonl"
GHCHEN99 = FIXTURES / "predictions" / "ghchen99_predictions_first_100.json"
GSM8K = FIXTURES / "gsm8k" / "test_first_20.jsonl"

DEPTH = 100_000
DEEP_ARRAY = "[" * DEPTH + "]" * DEPTH
DEEP_OBJECT = '{"a":' * DEPTH + "1" + "}" * DEPTH
LONG_NUMBER = "7" * 100_000
RAW = "@@raw@@"  # stands for raw JSON text put in after json.dumps

DEEP_PROBLEM = (
    f"arrays or objects nested more than {MAX_DEPTH} levels deep (no real input nests this deep; "
    "a value built by a runaway loop?)"
)
DEEP_FIX = f"Fix: give the value flat (text or a number), at most {MAX_DEPTH} levels deep, or remove it"
LONG_PROBLEM = "a whole number of 100,000 digits; Python reads whole numbers of at most 4,300 digits"
LONG_FIX = "Fix: write the number as text (in quotes), or remove it"
FINITE_FIX = (
    "Fix: give the finite value (a JSON 1e999999 overflows to infinity; NaN and Infinity are not answers), "
    "or null if the turn has no gold answer"
)


def _one_line(call, *args, **kwargs) -> str:  # type: ignore[no-untyped-def]
    """The message of the InputError ``call(*args, **kwargs)`` raises, checked to be one line."""
    with pytest.raises(InputError) as info:
        call(*args, **kwargs)
    message = str(info.value)
    assert "\n" not in message and len(message) < 400, message
    return message


def _json_with(tmp_path: Path, source: Path, name: str, edit, raw: str) -> tuple[Path, int]:  # type: ignore[no-untyped-def]
    """A copy of a JSON fixture (indented) with ``raw`` JSON text where ``edit`` puts :data:`RAW`;
    also the line ``raw`` starts on."""
    data = json.loads(source.read_text(encoding="utf-8"))
    edit(data)
    text = json.dumps(data, indent=1, ensure_ascii=False)
    line = text[: text.index(f'"{RAW}"')].count("\n") + 1
    path = tmp_path / name
    path.write_text(text.replace(f'"{RAW}"', raw), encoding="utf-8")
    return path, line


def _jsonl_with(tmp_path: Path, source: Path, name: str, line: int, key: str, raw: str) -> Path:
    """A copy of a JSON Lines fixture whose line ``line`` has ``raw`` JSON text as ``key``."""
    lines = source.read_text(encoding="utf-8").splitlines()
    obj = json.loads(lines[line - 1])
    obj[key] = RAW
    lines[line - 1] = json.dumps(obj, ensure_ascii=False).replace(f'"{RAW}"', raw)
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _set_executed(data, raw=RAW):  # type: ignore[no-untyped-def]
    data["dev"][2]["dialogue"]["executed_answers"][1] = raw


# --------------------------------------------------------------------------- 100,000-deep JSON
@pytest.mark.parametrize(("deep", "steps"), [(DEEP_ARRAY, "[0]..."), (DEEP_OBJECT, ".a...")])
def test_deep_json_in_a_gold_file(tmp_path: Path, deep: str, steps: str) -> None:
    path, line = _json_with(tmp_path, DEV_SMALL, "dev.json", _set_executed, deep)
    message = _one_line(load_gold, path)
    assert (
        message
        == f"{path}: line {line}: field 'dev[2].dialogue.executed_answers[1]{steps}': {DEEP_PROBLEM}. {DEEP_FIX}"
    )


def test_deep_json_in_a_gold_json_lines_file(tmp_path: Path) -> None:
    path = _jsonl_with(tmp_path, GSM8K, "test.jsonl", 3, "answer", DEEP_OBJECT)
    message = _one_line(load_gold, path)
    assert message == f"{path}: line 3: field 'answer.a.a.a.a.a...': {DEEP_PROBLEM}. {DEEP_FIX}"


def test_deep_json_in_a_predictions_json_file(tmp_path: Path) -> None:
    def edit(data):  # type: ignore[no-untyped-def]
        data[4]["conversation"][1]["predicted_answer"] = RAW

    path, line = _json_with(tmp_path, GHCHEN99, "ghchen99.json", edit, DEEP_ARRAY)
    message = _one_line(load_predictions, path)
    assert (
        message
        == f"{path}: line {line}: field '[4].conversation[1].predicted_answer[0][0]...': {DEEP_PROBLEM}. {DEEP_FIX}"
    )


@pytest.mark.parametrize(
    ("deep", "field"),
    [(DEEP_ARRAY, "predicted_answer[0][0][0][0][0]..."), (DEEP_OBJECT, "predicted_answer.a.a.a.a.a...")],
)
def test_deep_json_in_a_predictions_json_lines_file(tmp_path: Path, deep: str, field: str) -> None:
    path = _jsonl_with(tmp_path, ZARIFAZIZ, "predictions.jsonl", 7, "predicted_answer", deep)
    message = _one_line(load_predictions, path)
    assert message == f"{path}: line 7: field '{field}': {DEEP_PROBLEM}. {DEEP_FIX}"


def test_nesting_past_the_cap_but_within_the_reader_is_refused_the_same_way(tmp_path: Path) -> None:
    """101 levels parse without a RecursionError, yet are refused: the cap, not the stack, decides."""
    nested = "[" * (MAX_DEPTH - 2) + "1" + "]" * (MAX_DEPTH - 2)  # 2 levels for the line's object and list
    ok = _jsonl_with(tmp_path, ZARIFAZIZ, "ok.jsonl", 1, "extra", f"[{nested}]")  # 100 levels: allowed
    assert load_predictions(ok).height == 42
    bad = _jsonl_with(tmp_path, ZARIFAZIZ, "bad.jsonl", 1, "extra", f"[[{nested}]]")
    assert (
        _one_line(load_predictions, bad)
        == f"{bad}: line 1: field 'extra[0][0][0][0][0]...': {DEEP_PROBLEM}. {DEEP_FIX}"
    )


# --------------------------------------------------------------------------- 100,000-digit numbers
def test_a_100000_digit_number_in_a_gold_file(tmp_path: Path) -> None:
    path, line = _json_with(tmp_path, DEV_SMALL, "dev.json", _set_executed, LONG_NUMBER)
    message = _one_line(load_gold, path)
    assert message == f"{path}: line {line}: field 'dev[2].dialogue.executed_answers[1]': {LONG_PROBLEM}. {LONG_FIX}"


def test_a_100000_digit_number_in_a_predictions_file(tmp_path: Path) -> None:
    path = _jsonl_with(tmp_path, ZARIFAZIZ, "predictions.jsonl", 5, "predicted_answer", "-" + LONG_NUMBER)
    message = _one_line(load_predictions, path)
    assert message == f"{path}: line 5: field 'predicted_answer': {LONG_PROBLEM}. {LONG_FIX}"


def test_a_whole_number_past_the_float_range_in_predictions_is_kept_as_text(tmp_path: Path) -> None:
    """400 digits are readable, yet no float: the answer stays as written and is graded wrong."""
    path = _jsonl_with(tmp_path, ZARIFAZIZ, "predictions.jsonl", 5, "predicted_answer", "9" * 400)
    rows = load_predictions(path)
    assert rows["predicted_answer"][4] == "9" * 400
    assert not answers_match("9" * 400, "9" * 400).correct


# --------------------------------------------------------------------------- non-finite gold
@pytest.mark.parametrize(
    ("raw", "shown"), [("1e999999", "inf"), ("-1e999999", "-inf"), ("NaN", "nan"), ("Infinity", "inf")]
)
def test_non_finite_gold_is_refused(tmp_path: Path, raw: str, shown: str) -> None:
    path, _ = _json_with(tmp_path, DEV_SMALL, "dev.json", _set_executed, raw)
    record_id = json.loads(DEV_SMALL.read_text(encoding="utf-8"))["dev"][2]["id"]
    message = _one_line(load_gold, path)
    assert message == (
        f"{path}: record 2 (id '{record_id}'), turn 1: field 'dialogue.executed_answers': "
        f"the gold answer reads as {shown}, not a finite number. {FINITE_FIX}"
    )


def test_non_finite_gold_in_every_layout(tmp_path: Path) -> None:
    """ghchen99's expected answer, a GSM8K '#### inf', a plain table's 'NaN' and gold carried in
    predictions: each refused in one line at its record and field."""

    def ghchen(data):  # type: ignore[no-untyped-def]
        data[3]["conversation"][0]["expected_answer"] = RAW

    path, _ = _json_with(tmp_path, GHCHEN99, "gh.json", ghchen, "Infinity")
    record_id = json.loads(GHCHEN99.read_text(encoding="utf-8"))[3]["id"]
    assert _one_line(load_gold, path).startswith(
        f"{path}: record 3 (id '{record_id}'), turn 0: field 'conversation.expected_answer': the gold answer reads as inf,"
    )

    lines = GSM8K.read_text(encoding="utf-8").splitlines()
    obj = json.loads(lines[3])
    obj["answer"] = obj["answer"].rsplit("####", 1)[0] + "#### inf"
    lines[3] = json.dumps(obj)
    gsm = tmp_path / "test.jsonl"
    gsm.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _one_line(load_gold, gsm) == (
        f"{gsm}: line 4 (id '3'): field 'answer': the gold answer reads as 'inf', not a finite number. {FINITE_FIX}"
    )

    table = tmp_path / "gold.csv"
    table.write_text("record_id,turn,question,gold_answer\nr1,0,how many?,5\nr2,0,how many?,NaN\n", encoding="utf-8")
    assert _one_line(load_gold, table) == (
        f"{table}: line 3: field 'gold_answer': the gold answer reads as 'NaN', not a finite number. {FINITE_FIX}"
    )

    carried = tmp_path / "carried.jsonl"
    carried.write_text(
        '{"record_id": "r1", "turn": 0, "predicted_answer": "5", "gold_answer": 5}\n'
        '{"record_id": "r2", "turn": 0, "predicted_answer": "inf", "gold_answer": 1e999999}\n',
        encoding="utf-8",
    )
    preds = load_predictions(carried)
    assert _one_line(gold_from_predictions, preds, source=str(carried)) == (
        f"{carried}: line 2: field 'gold_answer': the gold answer reads as 'inf', not a finite number. {FINITE_FIX}"
    )


NON_FINITE = ["inf", "-inf", "+inf", "Infinity", "-Infinity", "nan", "NaN", "1e999999", "-1e400", "1e999%", "9" * 400]


def test_a_non_finite_prediction_is_never_graded_correct() -> None:
    """Against a non-finite gold written the same way (were one to get past the loaders) and, under
    every grading policy, against finite golds."""
    for pred in NON_FINITE:
        for gold in NON_FINITE:
            verdict = answers_match(pred, gold)
            assert not verdict.correct, (pred, gold, verdict)
        for name, policy in POLICIES.items():
            for gold in ("0", "1.7976931348623157e308", "-5", "14.1%", "yes", "\\infty"):
                verdict = grade_answer(policy, pred, gold)
                assert not verdict.correct, (name, pred, gold, verdict)
    verdict = answers_match("inf", "inf")
    assert (verdict.status.value, verdict.detail) == ("unparseable", "the prediction 'inf' is not a finite number")
    assert answers_match("\\infty", "\\infty").correct  # MATH's infinity is an answer, not a float overflow


def test_grading_json_inf_and_nan_predictions_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Predictions given as JSON Infinity, NaN, 1e999999 and a 400-digit number grade as wrong,
    without a traceback; upstream NaN verdicts are no verdict. (The program and reasoning are
    removed, so the answer field is all that is graded: with them, a NaN answer, which reads as
    no answer, gives way to the program's value.)"""
    raws = ["Infinity", "NaN", "1e999999", "9" * 400, '"inf"']
    lines = ZARIFAZIZ.read_text(encoding="utf-8").splitlines()[: len(raws)]
    out_lines = []
    for line, raw in zip(lines, raws, strict=True):
        obj = json.loads(line)
        obj["predicted_answer"], obj["correct"] = RAW, "@@nan@@"
        obj["predicted_calculation"] = obj["predicted_reasoning"] = None
        out_lines.append(json.dumps(obj).replace(f'"{RAW}"', raw).replace('"@@nan@@"', "NaN"))
    path = tmp_path / "run" / "predictions.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join(out_lines) + "\n", encoding="utf-8")
    preds = load_predictions(path)
    assert preds["upstream_correct"].null_count() == len(raws)
    out = tmp_path / "out"
    assert main(["grade", str(DEV_SMALL), str(path), "--out", str(out)]) == 0, capsys.readouterr().err
    turns = pl.read_parquet(out / "turns.parquet")
    graded = turns.filter(pl.col("predicted_answer").is_not_null())
    print(graded.select("record_id", "turn", "predicted_answer", "correct", "status"))
    assert graded.height == len(raws)
    assert not graded["correct"].any()
    assert sorted(graded["status"].cast(pl.String)) == ["no_answer", *["unparseable"] * 4]
