"""Loading gold datasets in each layout, and the errors bad gold files give."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import polars as pl
import pytest

from workbench.errors import InputError
from workbench.io.gold import GoldDataset, load_gold
from workbench.schema import DOCUMENTS, GOLD_TURNS


def _check_tables(gold: GoldDataset) -> None:
    assert gold.turns.schema == pl.Schema(GOLD_TURNS)
    assert gold.documents.schema == pl.Schema(DOCUMENTS)
    assert gold.turns.select("record_id", "turn").is_duplicated().sum() == 0
    assert gold.documents["doc_id"].is_duplicated().sum() == 0
    # every turn points at a document, and turns count 0..n_turns-1 in each conversation
    assert set(gold.turns["doc_id"]) <= set(gold.documents["doc_id"])
    counts = gold.turns.group_by("record_id").agg(
        pl.len().alias("n"), pl.col("n_turns").first(), pl.col("turn").max().alias("last")
    )
    assert (counts["n"] == counts["n_turns"]).all()
    assert (counts["last"] == counts["n_turns"] - 1).all()


def test_reformatted_dev(dev_gold: GoldDataset, dev_path: Path) -> None:
    assert (dev_gold.layout, dev_gold.benchmark) == ("convfinqa-reformatted", "convfinqa")
    assert dev_gold.path == dev_path
    assert dev_gold.turns.height == 1490
    assert dev_gold.turns["record_id"].n_unique() == 421
    assert dev_gold.documents.height == 421
    _check_tables(dev_gold)
    # the reformatted layout has a display answer, an executed answer and a program per turn
    assert dev_gold.turns.select(pl.col("gold_answer", "gold_executed", "gold_program", "question").null_count()).row(
        0
    ) == (0, 0, 0, 0)
    # numbers have a value; only yes/no answers do not
    no_value = dev_gold.turns.filter(pl.col("gold_value").is_null())
    assert set(no_value["gold_executed"]) <= {"yes", "no"}
    # every Double_ conversation is a two-question (type 2) conversation
    doubles = dev_gold.turns.filter(pl.col("record_id").cast(pl.String).str.starts_with("Double_"))
    assert doubles.height > 0 and doubles["has_type2_question"].all()


def test_reformatted_document_table_json(dev_gold: GoldDataset) -> None:
    first = dev_gold.documents.row(0, named=True)
    grid = json.loads(first["table_json"])
    assert set(grid) == {"columns", "rows"}
    assert all(len(row) == len(grid["columns"]) + 1 for row in grid["rows"])
    assert first["pre_text"] and first["post_text"]


def test_dev_small_fixture(dev_small_path: Path) -> None:
    gold = load_gold(dev_small_path)
    assert gold.layout == "convfinqa-reformatted"
    assert (gold.turns.height, gold.documents.height) == (42, 12)
    _check_tables(gold)


def test_original_layout(original_gold: GoldDataset, original_train_path: Path) -> None:
    assert original_gold.layout == "convfinqa-original"
    assert original_gold.turns.height == 183
    assert original_gold.turns["record_id"].n_unique() == 50
    _check_tables(original_gold)
    raw = {r["id"]: r for r in json.loads(original_train_path.read_text(encoding="utf-8"))}
    for record_id, turns in original_gold.turns.group_by("record_id", maintain_order=True):
        rec = raw[record_id[0]]
        splits = rec["annotation"]["qa_split"]
        # display answers only on the last question of each half, and they are the qa answers
        ends = {
            max(i for i, s in enumerate(splits) if s == half): key
            for half, key in ((0, "qa_0"), (1, "qa_1"))
            if key in rec
        }
        if "qa" in rec:
            ends = {len(splits) - 1: "qa"}
        expected = [rec[ends[i]]["answer"] if i in ends else None for i in range(len(splits))]
        assert turns.sort("turn")["gold_answer"].to_list() == expected, record_id
        assert turns["has_type2_question"].all() == record_id[0].startswith("Double_")
    # 35 single-question records and 15 two-question records: 35 + 2 * 15 answers
    assert original_gold.turns["gold_answer"].is_not_null().sum() == 65
    assert original_gold.turns["gold_executed"].null_count() == 0


def test_questions_only_test_file(questions_only_path: Path) -> None:
    gold = load_gold(questions_only_path)
    assert gold.layout == "convfinqa-original"
    assert gold.turns["record_id"].n_unique() == 5
    assert gold.turns.height > 5
    _check_tables(gold)
    assert gold.turns["question"].null_count() == 0
    for column in ("gold_answer", "gold_executed", "gold_value", "gold_program", "qa_split"):
        assert gold.turns[column].null_count() == gold.turns.height, column


def test_ghchen99_embedded_gold(ghchen99_predictions_path: Path) -> None:
    gold = load_gold(ghchen99_predictions_path)
    assert (gold.layout, gold.benchmark) == ("ghchen99-embedded", "convfinqa")
    assert gold.turns["gold_solution"].null_count() == gold.turns.height  # ConvFinQA has no reference solutions
    assert gold.turns["record_id"].n_unique() == 100
    assert gold.turns.height == 355
    _check_tables(gold)
    assert gold.turns["gold_program"].null_count() == 0
    first = gold.turns.row(0, named=True)
    assert (first["record_id"], first["gold_executed"], first["gold_program"]) == (
        "Single_JKHY/2009/page_28.pdf-3",
        "206588",
        "206588",
    )


# --------------------------------------------------------------------------- bad inputs
RECORD = {
    "id": "Single_X/2010/page_1.pdf-1",
    "doc": {"pre_text": "a", "post_text": "b", "table": {"2019": {"sales": 5.0}}},
    "dialogue": {
        "conv_questions": ["what were sales?", "and doubled?"],
        "conv_answers": ["5", "10"],
        "turn_program": ["5", "multiply(5, 2)"],
        "executed_answers": [5.0, 10.0],
        "qa_split": [False, False],
    },
    "features": {},
}


def _write(tmp_path: Path, content: object, name: str = "gold.json") -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(json.dumps(content), encoding="utf-8")
    return path


def test_tiny_valid_file_loads(tmp_path: Path) -> None:
    gold = load_gold(_write(tmp_path, {"dev": [RECORD]}))
    assert gold.turns["gold_executed"].to_list() == ["5", "10"]
    assert gold.turns["gold_value"].to_list() == [5.0, 10.0]


def _without(field: str) -> dict:
    rec = copy.deepcopy(RECORD)
    del rec["dialogue"][field]
    return rec


def _with(field: str, value: object) -> dict:
    rec = copy.deepcopy(RECORD)
    rec["dialogue"][field] = value
    return rec


@pytest.mark.parametrize(
    ("content", "fragments"),
    [
        pytest.param('{"dev": [\n{"id": "x",\n "doc": }\n]}', ["line 3", "invalid JSON"], id="invalid-json"),
        pytest.param(
            {"dev": [_without("turn_program")]},
            ["record 0", "Single_X/2010/page_1.pdf-1", "'dialogue.turn_program'", "missing field"],
            id="missing-field",
        ),
        pytest.param(
            {"dev": [_with("executed_answers", [5.0])]},
            ["record 0", "'dialogue.executed_answers'", "has 1 entries", "2 turns"],
            id="length-mismatch",
        ),
        pytest.param(
            {"dev": [_with("turn_program", "5")]},
            ["record 0", "'dialogue.turn_program'", "expected list, found str"],
            id="wrong-type",
        ),
        pytest.param(
            {"dev": [RECORD, RECORD]}, ["record 1", "field 'id'", "appears twice", "records 0 and 1"], id="duplicate-id"
        ),
        pytest.param({"questions": 1}, ["top level", "not a recognised gold layout"], id="unrecognised"),
        pytest.param([{"a": 1}], ["top level", "not a recognised gold layout"], id="unrecognised-list"),
        pytest.param({"dev": ["not a record"]}, ["record 0", "expected a JSON object"], id="not-an-object"),
        pytest.param({"dev": []}, ["no turns found"], id="no-records"),
        pytest.param("", ["the file is empty"], id="empty"),
        pytest.param(" \n\n", ["the file is empty"], id="blank"),
        pytest.param(b'{"dev": [\n{"id": "caf\xe9"}]}', ["line 2", "not UTF-8"], id="not-utf8"),
    ],
)
def test_bad_gold_files(tmp_path: Path, content: object, fragments: list[str]) -> None:
    path = _write(tmp_path, content)
    with pytest.raises(InputError) as info:
        load_gold(path)
    message = str(info.value)
    assert message.startswith(str(path))
    assert "Fix:" in message
    for fragment in fragments:
        assert fragment in message


def test_missing_gold_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found. Fix:"):
        load_gold(tmp_path / "nope.json")


def test_original_layout_missing_field(tmp_path: Path) -> None:
    rec = {"id": "Single_Y/2011/page_2.pdf-1", "annotation": {"turn_program": ["1"]}, "table": []}
    with pytest.raises(InputError) as info:
        load_gold(_write(tmp_path, [rec]))
    assert info.value.field == "annotation.dialogue_break"
    assert "record 0 (id 'Single_Y/2011/page_2.pdf-1')" in str(info.value)
