"""Inspect AI logs as predictions: recognised by suffix or header, one row per sample and epoch,
Inspect's score kept as the upstream verdict, and one line saying how to install the extra.

``epochs2.eval`` was written by a real ``inspect eval`` run of ``tests/fixtures/inspect/task.py``
with the mock model (three samples, two epochs; see the task's docstring).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.errors import InputError
from workbench.io.predictions import load_predictions
from workbench.io.predictions.inspect_log import INSTALL, detect, upstream_verdict
from workbench.io.predictions.registry import read_rows, read_source

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "inspect"
EPOCHS2 = FIXTURES / "epochs2.eval"

pytest.importorskip("inspect_ai")


def test_an_eval_log_gives_one_row_per_sample_and_epoch() -> None:
    table = load_predictions(EPOCHS2)
    rows = {r["record_id"]: r for r in table.iter_rows(named=True)}
    ids = ("gsm8k-0", "gsm8k-313", "written-percent")
    assert sorted(rows) == sorted(f"{i}#{e}" for i in ids for e in (1, 2))
    assert set(table["turn"]) == {0} and set(table["system"]) == {"mockllm/model"}
    written = rows["written-percent#2"]
    assert written["gold_answer"] == "33.33" and written["upstream_answer"] == "33.333"
    assert written["upstream_correct"] is False
    assert written["raw_output"].endswith("The answer is 33.333 percent.")
    assert written["question"].startswith("A class has 30 students and 10 of them are girls.")
    assert written["source_location"] == "sample written-percent, epoch 2"
    ducks = rows["gsm8k-0#1"]
    assert (ducks["upstream_correct"], ducks["upstream_answer"], ducks["gold_answer"]) == (True, "18", "18")
    assert ducks["question"].startswith("Janet\u2019s ducks lay 16 eggs per day.")


def test_an_answer_inspect_rewrote_is_not_the_upstream_answer() -> None:
    """GPT-3's '120,006' (GSM8K test line 313, gold 120000): Inspect's match() scores it wrong and
    stores the answer '1.2001e+05', a number the model did not write (within 0.1% of the gold):
    the grader must read the output instead."""
    chile = {r["record_id"]: r for r in load_predictions(EPOCHS2).iter_rows(named=True)}["gsm8k-313#1"]
    assert chile["upstream_correct"] is False and chile["upstream_answer"] is None
    assert chile["raw_output"].endswith("A: 120,006") and chile["gold_answer"] == "120000"


def test_system_given_by_the_caller_replaces_the_model_name() -> None:
    assert set(load_predictions(EPOCHS2, system="mock")["system"]) == {"mock"}


def test_a_json_log_is_recognised_before_the_plain_json_readers(tmp_path: Path) -> None:
    """The same log as JSON (what ``--log-format json`` writes): read by the Inspect reader."""
    inspect_log = pytest.importorskip("inspect_ai.log")
    log = inspect_log.read_eval_log(str(EPOCHS2))
    path = tmp_path / "run.json"
    inspect_log.write_eval_log(log, str(path), format="json")
    assert detect(read_source(path))
    rows = read_rows(path)
    assert len(rows.records) == 6 and rows.records[0]["system"] == "mockllm/model"
    ids = ("gsm8k-0", "gsm8k-313", "written-percent")
    assert {r["record_id"] for r in rows.records} == {f"{i}#{e}" for i in ids for e in (1, 2)}


@pytest.mark.parametrize(
    "document",
    [
        [{"record_id": "r", "turn": 0, "predicted_answer": "1"}],
        {"results": [{"question_id": "a-0"}]},
        {"version": 2, "eval": {"task": "t"}},  # no model: not an Inspect header
        {"eval": {"task": "t", "model": "m"}},  # no version
    ],
)
def test_other_json_is_not_an_inspect_log(tmp_path: Path, document: object) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert not detect(read_source(path))


def test_the_missing_extra_is_one_line_naming_the_file_and_the_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without inspect-ai (its import blocked), reading a log says which file, that it is an
    Inspect log, and how to install the extra: one line, no traceback."""
    path = tmp_path / "run.eval"
    shutil.copy(EPOCHS2, path)
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # `import inspect_ai.log` raises ImportError
    with pytest.raises(InputError) as caught:
        load_predictions(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: this is an Inspect AI log, and reading it needs the inspect-ai package")
    assert message.endswith("Fix: pip install 'workbench[inspect]'") and INSTALL in message


def test_a_broken_eval_file_is_one_clear_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.eval"
    path.write_bytes(b"not a zip file at all")
    with pytest.raises(InputError, match=r"broken\.eval: cannot read this Inspect AI log \(") as caught:
        load_predictions(path)
    assert "\n" not in str(caught.value) and "inspect log dump" in str(caught.value)


def test_a_missing_eval_file_is_reported_before_inspect_is_asked(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_source(tmp_path / "nowhere.eval")


def test_a_log_without_samples_says_so(tmp_path: Path) -> None:
    inspect_log = pytest.importorskip("inspect_ai.log")
    log = inspect_log.read_eval_log(str(EPOCHS2))
    log.samples = None
    path = tmp_path / "headers.json"
    inspect_log.write_eval_log(log, str(path), format="json")
    with pytest.raises(InputError, match="the Inspect AI log holds no samples .*--no-log-samples"):
        load_predictions(path)


@pytest.mark.parametrize(
    ("value", "verdict"),
    [("C", True), ("I", False), ("c", True), ("N", False), ("P", None), (1, True), (0, False), (1.0, True)]
    + [(0.0, False), (True, True), (False, False), (0.5, None), ("yes", None), ({"a": 1}, None), (None, None)],
)
def test_upstream_verdict_reads_inspects_score_values(value: object, verdict: bool | None) -> None:
    assert upstream_verdict(value) is verdict


def test_chat_inputs_target_lists_empty_completions_and_several_scorers(tmp_path: Path) -> None:
    """One epoch: plain ids (a number as text); the last user message of a chat input is the
    question; the first target of a list is the gold; an empty completion falls back to the last
    assistant message; the eval's first scorer gives the upstream verdict, whatever the order of
    the sample's scores."""
    inspect_log = pytest.importorskip("inspect_ai.log")
    model = pytest.importorskip("inspect_ai.model")
    scorer = pytest.importorskip("inspect_ai.scorer")
    log = inspect_log.read_eval_log(str(EPOCHS2))
    ducks, chile, written = sorted((s for s in log.samples if s.epoch == 1), key=lambda s: str(s.id))
    ducks.id = 7
    ducks.input = [model.ChatMessageSystem(content="Answer with a number."), model.ChatMessageUser(content="How many?")]
    ducks.target = ["18", "18.0"]
    written.output = model.ModelOutput(model="mockllm/model", choices=[])
    chile.scores = {"other": scorer.Score(value=1.0, answer="120,006"), "match": scorer.Score(value="I", answer="6")}
    log.samples = [ducks, chile, written]
    path = tmp_path / "edited.json"
    inspect_log.write_eval_log(log, str(path), format="json")
    rows = {r["record_id"]: r for r in load_predictions(path).iter_rows(named=True)}
    assert sorted(rows) == ["7", "gsm8k-313", "written-percent"]
    assert (rows["7"]["question"], rows["7"]["gold_answer"], rows["7"]["upstream_correct"]) == ("How many?", "18", True)
    assert rows["written-percent"]["raw_output"].endswith("The answer is 33.333 percent.")
    assert (rows["gsm8k-313"]["upstream_correct"], rows["gsm8k-313"]["upstream_answer"]) == (False, "6")


_SCORE_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)


@given(_SCORE_VALUES)
def test_upstream_verdict_is_a_verdict_or_none_for_any_score_value(value: object) -> None:
    """Whatever a scorer stored, the verdict is True, False or None, and only C/I/N, 1/0 and
    booleans give one."""
    verdict = upstream_verdict(value)
    assert verdict in (True, False, None)
    if isinstance(value, bool):
        assert verdict is value
    elif isinstance(value, str):
        assert verdict == {"C": True, "I": False, "N": False}.get(value.strip().upper())
    elif isinstance(value, int | float):
        assert verdict == ({0: False, 1: True}.get(value) if value in (0, 1) else None)
    else:
        assert verdict is None
