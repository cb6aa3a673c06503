"""The gold readers' registry: one reader per layout, tried in an order that decides between layouts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import pytest

from workbench.io.gold import Layout
from workbench.io.gold.registry import READERS, read_source

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _reader_of(path: Path) -> str | None:
    source = read_source(path)
    return next((r.layout for r in READERS if r.detect(source)), None)


def test_one_reader_per_layout_in_the_documented_order() -> None:
    assert [r.layout for r in READERS] == [
        "convfinqa-reformatted",
        "convfinqa-original",
        "ghchen99-embedded",
        "plain-table",
        "math-problems",
        "gsm8k-jsonl",
    ]
    # every layout a file can be in has its reader (gold carried in predictions is built by io.link)
    assert {r.layout for r in READERS} == set(get_args(Layout)) - {"carried-in-predictions"}
    # the layouts of one record per item name their shape and keys; the ConvFinQA ones do not
    assert [(r.shape, r.keys) for r in READERS if r.keys] == [
        ("plain table", ("record_id", "turn", "question", "gold_answer")),
        ("MATH", ("problem", "solution")),
        ("GSM8K", ("question", "answer")),
    ]


@pytest.mark.parametrize(
    ("fixture", "layout"),
    [
        ("convfinqa/dev_small.json", "convfinqa-reformatted"),
        ("convfinqa/original_train_subset_50.json", "convfinqa-original"),
        ("convfinqa/original_test_questions_only_5.json", "convfinqa-original"),
        ("predictions/ghchen99_predictions_first_100.json", "ghchen99-embedded"),
        ("gsm8k/test_first_20.jsonl", "gsm8k-jsonl"),
        ("math/hendrycks_math_test_8.jsonl", "math-problems"),
        ("math/math500_test_7.json", "math-problems"),
        ("checks/hand_checked_dev.csv", "plain-table"),
    ],
)
def test_each_fixture_is_claimed_by_its_reader(fixture: str, layout: str) -> None:
    assert _reader_of(FIXTURES / fixture) == layout


def test_the_order_decides(tmp_path: Path) -> None:
    # a record with an annotation is ConvFinQA's original layout even when it has a table's columns
    both = tmp_path / "both.json"
    both.write_text(json.dumps([{"annotation": {}, "record_id": "a", "turn": 0, "question": "q", "gold_answer": 1}]))
    assert _reader_of(both) == "convfinqa-original"
    # a plain table's columns win over MATH's and GSM8K's keys
    row = {"record_id": "a", "turn": 0, "question": "q", "gold_answer": 1, "answer": "#### 1", "problem": "p"}
    table = tmp_path / "table.jsonl"
    table.write_text(json.dumps(row) + "\n")
    assert _reader_of(table) == "plain-table"
    # MATH before GSM8K
    table.write_text(json.dumps({"question": "q", "answer": "#### 1", "problem": "p", "solution": "s"}) + "\n")
    assert _reader_of(table) == "math-problems"
    # the same records as JSON Lines: only the layouts of one record per item apply
    lines = tmp_path / "lines.jsonl"
    lines.write_text(json.dumps({"annotation": {}, "id": "a"}) + "\n")
    assert _reader_of(lines) is None
    # a table file is a plain table whatever its columns
    csv = tmp_path / "any.csv"
    csv.write_text("problem,solution\np,s\n")
    assert _reader_of(csv) == "plain-table"
