"""GSM8K and MATH inputs: gold layouts, the GSM8K prediction adapters, linking by question text.

Full-size numbers come from the bundled copies under ``data/`` (see ``data/SOURCES.md``);
fast cases use the subsets under ``tests/fixtures/``.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.errors import InputError
from workbench.io.gold import GoldDataset, executed_text, gsm8k_final_answer, load_gold, plain_number
from workbench.io.link import (
    NOT_IN_GOLD,
    REPEATED_QUESTION,
    attach_record_ids,
    detect_benchmark,
    gold_from_predictions,
    normalize_question,
    question_key,
    unlinked_rows,
)
from workbench.io.predictions import load_predictions
from workbench.schema import DOCUMENTS, GOLD_TURNS, PREDICTIONS

OPENAI_SYSTEMS = ["6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_lines(path: Path, objects: list[object]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path


def _load_quietly(path: Path, **kwargs: object) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return load_predictions(path, **kwargs)


# --------------------------------------------------------------------------- gold
def test_gsm8k_gold(gsm8k_gold: GoldDataset, gsm8k_path: Path) -> None:
    gold = gsm8k_gold
    assert (gold.layout, gold.benchmark, gold.path) == ("gsm8k-jsonl", "gsm8k", gsm8k_path)
    assert gold.turns.schema == pl.Schema(GOLD_TURNS)
    assert gold.documents.schema == pl.Schema(DOCUMENTS) and gold.documents.height == 0
    assert gold.turns.height == 1319
    assert gold.turns["record_id"].to_list() == [str(i) for i in range(1319)]
    assert set(gold.turns["turn"]) == {0} and set(gold.turns["n_turns"]) == {1}
    for column in ("gold_program", "doc_id", "qa_split"):
        assert gold.turns[column].null_count() == 1319, column
    raw = _lines(gsm8k_path)
    assert gold.turns["question"].to_list() == [r["question"] for r in raw]
    assert gold.turns["gold_solution"].to_list() == [r["answer"] for r in raw]
    assert gold.turns["gold_answer"].to_list() == [r["answer"].split("####")[-1].strip() for r in raw]
    # every GSM8K test answer is a whole number: executed text has no separators, value is its float
    assert gold.turns.select(pl.col("gold_value").null_count()).item() == 0
    assert (gold.turns["gold_executed"].cast(pl.Float64) == gold.turns["gold_value"]).all()
    first = gold.turns.row(0, named=True)
    assert (first["gold_answer"], first["gold_executed"], first["gold_value"]) == ("18", "18", 18.0)


def test_gsm8k_small_fixture(gsm8k_small_path: Path, gsm8k_gold: GoldDataset) -> None:
    small = load_gold(gsm8k_small_path)
    assert small.turns.equals(gsm8k_gold.turns.head(20))


def test_gsm8k_in_a_json_suffix(tmp_path: Path, gsm8k_small_path: Path) -> None:
    # JSON Lines saved as .json is a common slip: read line by line, same result
    path = tmp_path / "test.json"
    path.write_text(gsm8k_small_path.read_text(encoding="utf-8"), encoding="utf-8")
    assert load_gold(path).turns.equals(load_gold(gsm8k_small_path).turns)


HENDRYCKS_ANSWERS = [
    # (boxed answer, value): from the eight MATH test problems in the fixture, in file order
    ("1000000", 1000000.0),
    (r"\frac{1}{10}", None),
    ("6", 6.0),
    ("380", 380.0),
    ("12", 12.0),
    (r"10,\!080", None),  # a thousands separator written in LaTeX is not a plain number
    (r"\frac1{10}", None),
    ("1", 1.0),
]


def test_math_jsonl(math_jsonl_path: Path) -> None:
    gold = load_gold(math_jsonl_path)
    assert (gold.layout, gold.benchmark) == ("math-problems", "math")
    assert gold.turns.schema == pl.Schema(GOLD_TURNS)
    assert gold.turns["record_id"].to_list() == [str(i) for i in range(8)]  # no ids: the position
    assert list(zip(gold.turns["gold_answer"], gold.turns["gold_value"], strict=True)) == HENDRYCKS_ANSWERS
    assert gold.turns["gold_executed"].to_list() == gold.turns["gold_answer"].to_list()
    raw = _lines(math_jsonl_path)
    assert gold.turns["question"].to_list() == [r["problem"] for r in raw]
    assert gold.turns["gold_solution"].to_list() == [r["solution"] for r in raw]


def test_math500_json_list(math500_json_path: Path) -> None:
    gold = load_gold(math500_json_path)
    assert (gold.layout, gold.benchmark, gold.turns.height) == ("math-problems", "math", 7)
    raw = json.loads(math500_json_path.read_text(encoding="utf-8"))
    # the last \boxed{} of each solution is the dataset's own answer field, nested braces included
    assert gold.turns["gold_answer"].to_list() == [r["answer"] for r in raw]
    assert gold.turns["gold_answer"][0] == r"\left( 3, \frac{\pi}{2} \right)"
    assert gold.turns["gold_value"].to_list() == [None, None, 9.0, None, 27.0, None, -50.0]


def test_math_ids(tmp_path: Path, math500_json_path: Path) -> None:
    raw = json.loads(math500_json_path.read_text(encoding="utf-8"))
    raw[0]["unique_id"] = "test/precalculus/807.json"  # that problem's id in MATH-500
    raw[1]["id"] = 17
    path = tmp_path / "math.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    assert load_gold(path).turns["record_id"].to_list()[:3] == ["test/precalculus/807.json", "17", "2"]


def test_fbox_answer(tmp_path: Path, math_jsonl_path: Path) -> None:
    record = _lines(math_jsonl_path)[4]
    record["solution"] = record["solution"].replace(r"\boxed{12}", r"\fbox{12}")
    assert load_gold(_write_lines(tmp_path / "m.jsonl", [record])).turns["gold_answer"].to_list() == ["12"]


TABLE = {
    "record_id": ["a", "a", "b"],
    "turn": [0, 1, 0],
    "question": ["q0", "q1", "q2"],
    "gold_answer": ["1,000", "14.1%", "yes"],
    "gold_program": ["1000", None, None],
}


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".json", ".parquet"])
def test_plain_table(tmp_path: Path, suffix: str) -> None:
    frame = pl.DataFrame(TABLE)
    path = tmp_path / f"gold{suffix}"
    if suffix == ".csv":
        frame.write_csv(path)
    elif suffix == ".tsv":
        frame.write_csv(path, separator="\t")
    elif suffix == ".jsonl":
        frame.write_ndjson(path)
    elif suffix == ".json":
        path.write_text(json.dumps(frame.to_dicts()), encoding="utf-8")
    else:
        frame.write_parquet(path)
    gold = load_gold(path)
    assert (gold.layout, gold.benchmark) == ("plain-table", "table")
    assert gold.turns.select("record_id", "turn", "question", "gold_answer", "gold_program", "n_turns").rows() == [
        ("a", 0, "q0", "1,000", "1000", 2),
        ("a", 1, "q1", "14.1%", None, 2),
        ("b", 0, "q2", "yes", None, 1),
    ]
    assert gold.turns["gold_executed"].to_list() == ["1000", "14.1%", "yes"]
    assert gold.turns["gold_value"].to_list() == [1000.0, 0.141, None]


def test_existing_layouts_are_convfinqa(dev_gold: GoldDataset, original_gold: GoldDataset) -> None:
    assert dev_gold.benchmark == original_gold.benchmark == "convfinqa"
    assert dev_gold.turns["gold_solution"].null_count() == dev_gold.turns.height


# --------------------------------------------------------------------------- bad gold
def _gsm8k_lines(gsm8k_small_path: Path) -> list[dict]:
    return _lines(gsm8k_small_path)[:4]


def test_gsm8k_line_without_hash_answer(tmp_path: Path, gsm8k_small_path: Path) -> None:
    rows = _gsm8k_lines(gsm8k_small_path)
    rows[2]["answer"] = rows[2]["answer"].replace("#### ", "The answer is ")
    with pytest.raises(InputError) as info:
        load_gold(_write_lines(tmp_path / "g.jsonl", rows))
    err = info.value
    assert (err.location, err.field) == ("line 3 (id '2')", "answer")
    assert "'#### <answer>'" in err.problem and "####" in err.fix


def test_gsm8k_missing_question(tmp_path: Path, gsm8k_small_path: Path) -> None:
    rows = _gsm8k_lines(gsm8k_small_path)
    del rows[1]["question"]
    with pytest.raises(InputError) as info:
        load_gold(_write_lines(tmp_path / "g.jsonl", rows))
    assert (info.value.location, info.value.field, info.value.problem) == (
        "line 2 (id '1')",
        "question",
        "missing field",
    )


def test_gsm8k_invalid_json_line(tmp_path: Path, gsm8k_small_path: Path) -> None:
    lines = gsm8k_small_path.read_text(encoding="utf-8").splitlines()[:5]
    lines[3] = lines[3][:40]  # cut short, as a file copied while being written
    path = tmp_path / "g.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_gold(path)
    assert info.value.location == "line 4" and info.value.problem.startswith("invalid JSON")
    assert str(info.value).startswith(f"{path}: line 4: invalid JSON")


def test_math_without_boxed(tmp_path: Path, math_jsonl_path: Path) -> None:
    rows = _lines(math_jsonl_path)[:3]
    rows[1]["solution"] = rows[1]["solution"].replace(r"\boxed{\frac{1}{10}}", r"\frac{1}{10}")
    with pytest.raises(InputError) as info:
        load_gold(_write_lines(tmp_path / "m.jsonl", rows))
    err = info.value
    assert (err.location, err.field) == ("line 2 (id '1')", "solution")
    assert "\\boxed" in err.problem and "Fix:" in str(err)


def test_math_duplicate_unique_id(tmp_path: Path, math500_json_path: Path) -> None:
    raw = json.loads(math500_json_path.read_text(encoding="utf-8"))[:2]
    raw[0]["unique_id"] = raw[1]["unique_id"] = "test/algebra/1.json"
    path = tmp_path / "m.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(InputError, match="appears twice") as info:
        load_gold(path)
    assert (info.value.location, info.value.field) == ("record 1 (id 'test/algebra/1.json')", "unique_id")


@pytest.mark.parametrize(
    ("csv", "fragments"),
    [
        (
            "record_id,turn,question\na,0,q\n",
            ["missing column 'gold_answer'", "columns found: record_id, turn, question"],
        ),
        ("record_id,turn,question,gold_answer\na,0,q,1\na,0,q,2\n", ["line 3", "duplicate", "first at line 2"]),
        ("record_id,turn,question,gold_answer\na,x,q,1\n", ["line 2", "field 'turn'", "'x' is not a whole number"]),
        ("record_id,turn,question,gold_answer\na,1,q,1\na,2,q,2\n", ["record 'a' has turns [1, 2]", "from 0"]),
        ("record_id,turn,question,gold_answer\n,0,q,1\n", ["line 2", "empty record id"]),
    ],
    ids=["missing-column", "duplicate", "bad-turn", "turn-gap", "empty-id"],
)
def test_bad_tables(tmp_path: Path, csv: str, fragments: list[str]) -> None:
    path = tmp_path / "gold.csv"
    path.write_text(csv, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_gold(path)
    message = str(info.value)
    assert message.startswith(str(path)) and "Fix:" in message
    for fragment in fragments:
        assert fragment in message, message


def test_unrecognised_json_lines(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load_gold(_write_lines(tmp_path / "g.jsonl", [{"prompt": "x"}]))
    assert info.value.location == "line 1" and "keys found: prompt" in info.value.problem


# --------------------------------------------------------------------------- prediction adapters, full size
def test_openai_solutions(gsm8k_runs: dict[str, Path]) -> None:
    path = gsm8k_runs["openai"]
    preds = load_predictions(path)
    assert preds.schema == pl.Schema(PREDICTIONS)
    assert preds.height == 4 * 1319
    # upstream verdicts per system: the GSM8K paper's 6B/175B fine-tuning and verification runs
    assert preds.group_by("system", maintain_order=True).agg(pl.len(), pl.col("upstream_correct").sum()).rows() == [
        ("6b_finetuning", 1319, 286),
        ("6b_verification", 1319, 515),
        ("175b_finetuning", 1319, 458),
        ("175b_verification", 1319, 742),
    ]
    assert preds["record_id"].null_count() == preds.height  # linked later, by question
    assert preds["predicted_answer"].null_count() == preds.height  # the grader extracts
    assert set(preds["turn"]) == {0}
    raw = _lines(path)
    first = preds.row(1, named=True)
    assert first["system"] == "6b_verification" and first["source_location"] == "line 1, 6b_verification"
    assert first["raw_output"] == raw[0]["6b_verification"]["solution"]
    assert (first["question"], first["gold_solution"], first["gold_answer"]) == (
        raw[0]["question"],
        raw[0]["ground_truth"],
        "18",
    )


def test_openai_system_prefix(gsm8k_small_runs: dict[str, Path]) -> None:
    preds = load_predictions(gsm8k_small_runs["openai"], system="gpt3")
    assert preds["system"].unique(maintain_order=True).to_list() == [f"gpt3/{s}" for s in OPENAI_SYSTEMS]


@pytest.mark.parametrize(("name", "exact"), [("tora-70b", 1102), ("tora-code-34b", 1051)])
def test_tora(gsm8k_runs: dict[str, Path], gsm8k_gold: GoldDataset, name: str, exact: int) -> None:
    preds = load_predictions(gsm8k_runs[name])
    assert preds.height == 1319 and set(preds["system"]) == {name}
    assert preds["record_id"].to_list() == gsm8k_gold.turns["record_id"].to_list()  # idx is the GSM8K line
    assert preds["question"].to_list() == gsm8k_gold.turns["question"].to_list()
    assert preds["gold_answer"].to_list() == gsm8k_gold.turns["gold_answer"].to_list()
    # ToRA's own extracted answer equals gold as a string on 1,102 of 1,319 (70B), as data/README says
    assert (preds["upstream_answer"] == preds["gold_answer"]).sum() == exact
    raw = _lines(gsm8k_runs[name])[0]
    assert preds.row(0, named=True)["raw_output"] == raw["code"][0]
    assert preds.row(0, named=True)["gold_solution"] == raw["gt_cot"]


def test_pot_fewshot(gsm8k_runs: dict[str, Path]) -> None:
    path = gsm8k_runs["pot-fewshot"]
    with pytest.warns(UserWarning) as caught:
        preds = load_predictions(path)
    messages = [str(w.message) for w in caught]
    assert messages == [
        f"{path}: skipped 2 prompt-only lines (lines 1, 1054): they hold a few-shot prompt, not a prediction"
    ]
    assert preds.height == 1318
    assert preds["record_id"].null_count() == 1318
    assert preds["predicted_answer"].null_count() == 23  # executed was null
    first = preds.row(0, named=True)
    assert (first["source_location"], first["predicted_answer"], first["gold_answer"]) == ("line 2", "18", "18")
    assert first["raw_output"].startswith("total_eggs = 16\n")  # the generated list, joined


def test_pot_zeroshot(gsm8k_runs: dict[str, Path]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no prompt-only lines here, so no warning
        preds = load_predictions(gsm8k_runs["pot-zeroshot"])
    assert preds.height == 1317
    assert preds["predicted_answer"].null_count() == 183
    # executed values that are not numbers stay as their text
    not_numbers = preds.filter(pl.col("predicted_answer").map_elements(plain_number, return_dtype=pl.Float64).is_null())
    assert not_numbers["predicted_answer"].drop_nulls().len() == 17
    assert preds.row(16, named=True)["predicted_answer"] == "(160, 300)"


# --------------------------------------------------------------------------- linking, full size
#: Gold records each file has no prediction for (no row fails to link; these are the misses).
GOLD_WITHOUT_PREDICTION = {
    "openai": [],
    "tora-70b": [],
    "tora-code-34b": [],
    "pot-fewshot": ["1318"],
    "pot-zeroshot": ["1040", "1318"],
}
ROWS = {"openai": 5276, "tora-70b": 1319, "tora-code-34b": 1319, "pot-fewshot": 1318, "pot-zeroshot": 1317}


@pytest.mark.parametrize("name", list(ROWS))
def test_link_full_files(gsm8k_runs: dict[str, Path], gsm8k_gold: GoldDataset, name: str) -> None:
    preds = _load_quietly(gsm8k_runs[name])
    linked = attach_record_ids(preds, gsm8k_gold)
    assert linked.schema == preds.schema and linked.height == ROWS[name]
    # every row links onto a gold record; the unlinked table is empty
    assert linked["record_id"].is_in(gsm8k_gold.turns["record_id"].implode()).sum() == ROWS[name]
    assert unlinked_rows(linked).rows() == []
    # linked to the right record: same question after normalisation, same final answer as a number
    joined = linked.join(gsm8k_gold.turns, on=["record_id", "turn"], suffix="_gold")
    assert joined.height == ROWS[name]
    assert all(
        normalize_question(a) == normalize_question(b) for a, b in joined.select("question", "question_gold").rows()
    )
    assert all(plain_number(a) == plain_number(b) for a, b in joined.select("gold_answer", "gold_answer_gold").rows())
    # one row per system and record
    assert linked.select("system", "record_id", "turn").is_duplicated().sum() == 0
    missing = sorted(set(gsm8k_gold.turns["record_id"]) - set(linked["record_id"]), key=int)
    assert missing == GOLD_WITHOUT_PREDICTION[name]


def test_link_keeps_given_ids(gsm8k_small_runs: dict[str, Path], gsm8k_gold: GoldDataset) -> None:
    preds = load_predictions(gsm8k_small_runs["tora-70b"])
    assert attach_record_ids(preds, gsm8k_gold).equals(preds)


# --------------------------------------------------------------------------- linking, fixtures
def test_link_subset_reports_questions_not_in_gold(gsm8k_small_runs: dict[str, Path], gsm8k_small_path: Path) -> None:
    path = gsm8k_small_runs["pot-fewshot"]
    with pytest.warns(UserWarning, match=r"skipped 2 prompt-only lines \(lines 1, 15\)"):
        preds = load_predictions(path)
    linked = attach_record_ids(preds, load_gold(gsm8k_small_path))
    assert linked.height == 15
    assert linked.head(11)["record_id"].to_list() == [str(i) for i in range(11)]
    # lines 13-17 are GSM8K test lines 1052-1056, outside the 20-line gold subset (line 15 is a prompt)
    expected = pl.DataFrame(
        {
            "system": ["pot_fewshot_lines_1-12_1052-1056"] * 4,
            "source_file": [str(path)] * 4,
            "source_location": ["line 13", "line 14", "line 16", "line 17"],
            "question": preds.tail(4)["question"].to_list(),
            "reason": ["question not in gold"] * 4,
        }
    )
    assert unlinked_rows(linked).equals(expected)
    keys = [question_key(q) for q in expected["question"]]
    assert linked.tail(4)["record_id"].to_list() == [NOT_IN_GOLD + k for k in keys]


def test_link_order_of_appearance(tmp_path: Path, gsm8k_small_path: Path, gsm8k_small_runs: dict[str, Path]) -> None:
    # two gold records share line 0's question; the system answers it three times
    gold_rows = _lines(gsm8k_small_path)[:3]
    gold = load_gold(_write_lines(tmp_path / "gold.jsonl", [*gold_rows, gold_rows[0]]))
    pot = _lines(gsm8k_small_runs["pot-zeroshot"])
    preds = load_predictions(_write_lines(tmp_path / "pot.jsonl", [pot[0], pot[1], pot[0], pot[0]]))
    linked = attach_record_ids(preds, gold)
    key = question_key(pot[0]["question"])
    assert linked["record_id"].to_list() == ["0", "1", "3", f"{REPEATED_QUESTION}{key}#3"]
    assert unlinked_rows(linked).select("source_location", "reason").rows() == [
        ("line 4", "question asked more often than gold has it")
    ]


def test_link_question_matching_ignores_quotes_and_spaces(
    tmp_path: Path, gsm8k_small_path: Path, gsm8k_small_runs: dict[str, Path]
) -> None:
    pot = _lines(gsm8k_small_runs["pot-zeroshot"])[0]
    assert "\u2019" in pot["question"]
    pot["question"] = "  " + pot["question"].replace("\u2019", "'").replace(" ", "  ") + "\n"
    linked = attach_record_ids(load_predictions(_write_lines(tmp_path / "p.jsonl", [pot])), load_gold(gsm8k_small_path))
    assert linked["record_id"].to_list() == ["0"]


def test_link_needs_a_question(tmp_path: Path, gsm8k_small_path: Path) -> None:
    frame = pl.DataFrame(
        {"record_id": [None], "turn": [0], "system": ["s"], "question": [None], "source_file": ["p.jsonl"]},
        schema_overrides={"record_id": pl.String, "turn": pl.Int32, "question": pl.String},
    ).with_columns(pl.lit("line 7").alias("source_location"))
    with pytest.raises(InputError) as info:
        attach_record_ids(frame, load_gold(gsm8k_small_path))
    assert (info.value.file, info.value.location, info.value.field) == ("p.jsonl", "line 7", "record_id")


def test_pot_line_without_question(tmp_path: Path, gsm8k_small_runs: dict[str, Path]) -> None:
    rows = _lines(gsm8k_small_runs["pot-zeroshot"])[:3]
    del rows[1]["question"]
    with pytest.raises(InputError) as info:
        load_predictions(_write_lines(tmp_path / "pot.jsonl", rows))
    assert info.value.location == "line 2" and "no question to link it by" in info.value.problem


# --------------------------------------------------------------------------- gold carried by the outputs
@pytest.mark.parametrize("name", ["openai", "pot-fewshot", "pot-zeroshot", "tora-70b"])
def test_gold_from_predictions(gsm8k_small_runs: dict[str, Path], name: str) -> None:
    path = gsm8k_small_runs[name]
    preds = _load_quietly(path)
    gold = gold_from_predictions(preds, source=str(path))
    assert (gold.layout, gold.benchmark, gold.path) == ("carried-in-predictions", "gsm8k", path)
    assert gold.turns.schema == pl.Schema(GOLD_TURNS)
    n_questions = preds["question"].n_unique()
    assert gold.turns.height == n_questions
    if name == "tora-70b":
        assert gold.turns["record_id"].to_list() == [str(i) for i in range(20)]
    else:
        assert gold.turns["record_id"].cast(pl.String).str.starts_with("q-").all()
    linked = attach_record_ids(preds, gold)
    assert unlinked_rows(linked).height == 0
    assert linked["record_id"].is_in(gold.turns["record_id"].implode()).all()
    assert detect_benchmark(None, preds) == "gsm8k"


def test_gold_from_predictions_without_gold(tmp_path: Path, gsm8k_small_runs: dict[str, Path]) -> None:
    rows = _lines(gsm8k_small_runs["pot-zeroshot"])[:3]
    del rows[2]["answer"]
    path = _write_lines(tmp_path / "pot.jsonl", rows)
    with pytest.raises(InputError) as info:
        gold_from_predictions(load_predictions(path), source=str(path))
    err = info.value
    assert (err.file, err.location, err.field) == (str(path), "line 3", "gold_answer")
    assert "pass the dataset file" in err.fix


def test_gold_from_predictions_disagreeing_gold(tmp_path: Path, gsm8k_small_runs: dict[str, Path]) -> None:
    first, second = _lines(gsm8k_small_runs["tora-70b"])[:2]
    second["idx"] = first["idx"]  # two files claim record 0, with different gold answers
    a = load_predictions(_write_lines(tmp_path / "a.jsonl", [first]))
    b_path = _write_lines(tmp_path / "b.jsonl", [second])
    b = load_predictions(b_path)
    with pytest.raises(InputError, match="differs from '18'") as info:
        gold_from_predictions(pl.concat([a, b]), source="two files")
    assert (info.value.file, info.value.location, info.value.field) == (str(b_path), "line 1", "gold_answer")


def test_detect_benchmark(gsm8k_gold: GoldDataset, dev_gold: GoldDataset, claude_run_path: Path) -> None:
    claude = load_predictions(claude_run_path)
    assert detect_benchmark(dev_gold, claude) == "convfinqa"
    assert detect_benchmark(None, claude) == "convfinqa"
    assert detect_benchmark(gsm8k_gold, claude) == "gsm8k"  # the dataset decides when there is one
    assert detect_benchmark(None, pl.DataFrame({"gold_answer": [r"\frac{14}{3}", "9"]})) == "math"
    assert detect_benchmark(None, pl.DataFrame({"gold_answer": ["yes"]})) == "table"


# --------------------------------------------------------------------------- lm-evaluation-harness samples
def test_lm_eval_samples(lm_eval_samples_path: Path, gsm8k_small_path: Path) -> None:
    preds = load_predictions(lm_eval_samples_path)
    raw = _lines(lm_eval_samples_path)
    assert len(raw) == 40 and preds.height == 20  # two filters a doc_id, one row a doc_id
    assert set(preds["system"]) == {"tora-70b-rendered"}  # the folder: lm-eval names it after the model
    assert preds["record_id"].to_list() == [str(i) for i in range(20)]
    assert preds["predicted_answer"].null_count() == 20
    flexible = {r["doc_id"]: r["exact_match"] == 1.0 for r in raw if r["filter"] == "flexible-extract"}
    assert preds["upstream_correct"].to_list() == [flexible[i] for i in range(20)]
    assert preds["upstream_correct"].sum() == 13
    assert preds["raw_output"].to_list() == [r["resps"][0][0] for r in raw[:20]]
    gold = load_gold(gsm8k_small_path)
    assert preds["question"].to_list() == gold.turns["question"].to_list()
    assert preds["gold_answer"].to_list() == gold.turns["gold_answer"].to_list()
    assert preds["gold_solution"].to_list() == gold.turns["gold_solution"].to_list()
    assert preds.row(0, named=True)["source_location"] == "lines 1, 21 (doc_id 0)"


def test_lm_eval_first_line_when_no_flexible_filter(tmp_path: Path, lm_eval_samples_path: Path) -> None:
    strict_only = [r for r in _lines(lm_eval_samples_path) if r["filter"] == "strict-match"][:3]
    preds = load_predictions(_write_lines(tmp_path / "samples_gsm8k_x.jsonl", strict_only))
    assert preds["upstream_correct"].to_list() == [False, False, False]


# --------------------------------------------------------------------------- properties
_TEXT = st.text(alphabet=st.characters(blacklist_characters="#", blacklist_categories=("Cs",)), max_size=40)
_NUMBER = st.one_of(
    st.integers(-(10**9), 10**9).map(str),
    st.integers(0, 10**9).map(lambda n: f"{n:,}"),
    st.decimals(-1000, 1000, places=3, allow_nan=False).map(str),
)


@settings(max_examples=60, deadline=None)
@given(body=_TEXT, answer=_NUMBER)
def test_hash_answer_reads_back(body: str, answer: str) -> None:
    solution = f"{body}\n#### {answer}"
    assert gsm8k_final_answer(solution) == answer
    assert plain_number(answer) == float(answer.replace(",", ""))
    assert executed_text(answer) == answer.replace(",", "")


@settings(max_examples=60, deadline=None)
@given(body=_TEXT)
def test_no_hash_no_answer(body: str) -> None:
    assert gsm8k_final_answer(body) is None


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=60))
def test_normalize_question_is_idempotent(text: str) -> None:
    once = normalize_question(text)
    assert normalize_question(once) == once
    assert question_key(text) == question_key(once)
