"""The gold readers' registry: one reader per layout, tried in an order that decides between layouts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import pytest

from workbench.errors import InputError
from workbench.io.gold import Layout
from workbench.io.gold.registry import READERS, load_gold, read_source

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
        ("plain table", ("record_id", "question", "gold_answer")),
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


def test_a_plain_table_without_a_turn_column_is_single_turn(tmp_path: Path) -> None:
    csv = tmp_path / "gold.csv"
    csv.write_text("record_id,question,gold_answer\n7,How many apples?,18\n8,What is half of one?,\\frac{1}{2}\n")
    gold = load_gold(csv)
    assert (gold.layout, gold.benchmark) == ("plain-table", "table")
    assert gold.turns.select("record_id", "turn", "n_turns", "gold_answer").rows() == [
        ("7", 0, 1, "18"),
        ("8", 0, 1, "\\frac{1}{2}"),
    ]
    # records without a turn are a plain table too, before MATH's and GSM8K's keys
    lines = tmp_path / "gold.jsonl"
    lines.write_text(json.dumps({"record_id": "a", "question": "q", "gold_answer": 1, "answer": "#### 1"}) + "\n")
    assert _reader_of(lines) == "plain-table"
    assert load_gold(lines).turns.select("record_id", "turn", "gold_answer").rows() == [("a", 0, "1")]


def test_a_repeated_record_in_a_plain_table_without_turns_is_refused(tmp_path: Path) -> None:
    csv = tmp_path / "gold.csv"
    csv.write_text("record_id,question,gold_answer\n7,How many?,18\n8,And?,3\n7,How many now?,20\n")
    with pytest.raises(InputError) as info:
        load_gold(csv)
    assert str(info.value) == (
        f"{csv}: line 4: field 'record_id': record id '7' appears again (first at line 2) in a table without a "
        "turn column. Fix: keep one row per record, or add a turn column (0, 1, 2, ... within each record)"
    )
