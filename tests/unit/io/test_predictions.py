"""Loading prediction files of each shape, and the errors bad prediction files give."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from workbench.errors import InputError, UsageError
from workbench.io.predictions import (
    ColumnMap,
    default_system_name,
    load_predictions,
    parse_column_map,
    read_predictions,
)
from workbench.io.predictions.columnmap import MAP_HELP, check_map
from workbench.schema import PREDICTION_TARGETS, PREDICTIONS


def _jsonl(path: Path, *objects: dict) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- shapes
def test_zarifaziz_run_is_detected(claude_run_path: Path) -> None:
    preds = load_predictions(claude_run_path)
    assert preds.schema == pl.Schema(PREDICTIONS)
    assert preds.height == 1490
    assert preds["system"].unique().to_list() == ["zarifaziz-claude-sonnet-4-6@2026-05-04T06-35-00Z"]
    raw = json.loads(claude_run_path.read_text(encoding="utf-8").splitlines()[0])
    first = preds.row(0, named=True)
    assert (first["record_id"], first["turn"]) == (raw["record_id"], raw["turn_idx"])
    assert first["predicted_answer"] == raw["predicted_answer"]
    assert first["predicted_program"] == raw["predicted_calculation"]
    assert first["raw_output"] == raw["predicted_reasoning"]
    assert first["source_location"] == "line 1"
    assert preds.select("record_id", "turn").is_duplicated().sum() == 0
    # gold and the upstream verdict travel in the file: question, gold (= executed answer), correct
    assert (first["question"], first["gold_answer"], first["upstream_correct"]) == (
        raw["question"],
        "0.10826",
        raw["correct"],
    )
    assert preds["upstream_correct"].sum() == 1244  # upstream summary: 1244/1490 turns correct
    assert preds["gold_solution"].null_count() == 1490


def test_zarifaziz_fixture_is_named_after_its_file(zarifaziz_small_path: Path) -> None:
    preds = load_predictions(zarifaziz_small_path)
    assert preds.height == 42
    assert set(preds["system"]) == {"zarifaziz_dev_small"}
    assert load_predictions(zarifaziz_small_path, system="mine")["system"].unique().to_list() == ["mine"]


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("runs/gpt4/outputs.csv", "gpt4"),  # generic stem: the folder names the system
        ("tora-70b.jsonl", "tora-70b"),
        ("m/2026-05-04T06-35-00Z/predictions.jsonl", "m@2026-05-04T06-35-00Z"),  # run folder
    ],
)
def test_default_system_name(path: str, name: str) -> None:
    assert default_system_name(Path(path)) == name


@pytest.mark.parametrize("fixture", ["ghchen99_predictions_path", "ghchen99_results_path"])
def test_ghchen99_shapes(fixture: str, request: pytest.FixtureRequest) -> None:
    path: Path = request.getfixturevalue(fixture)
    preds = load_predictions(path)
    assert preds.height == 355
    assert preds["record_id"].n_unique() == 100
    first = preds.row(0, named=True)
    assert (first["record_id"], first["turn"]) == ("Single_JKHY/2009/page_28.pdf-3", 0)
    assert (first["predicted_answer"], first["predicted_program"]) == ("174247", "174247")
    # record ids that contain hyphens keep them; the turn is what follows the last hyphen
    assert preds.filter(pl.col("record_id").cast(pl.String).str.ends_with(".pdf-3"))["turn"].max() >= 1
    assert preds.select("record_id", "turn").is_duplicated().sum() == 0


def test_ghchen99_shapes_agree(ghchen99_predictions_path: Path, ghchen99_results_path: Path) -> None:
    columns = ["record_id", "turn", "predicted_answer", "predicted_program", "question", "gold_answer"]
    a = load_predictions(ghchen99_predictions_path).select(columns).sort("record_id", "turn")
    b = load_predictions(ghchen99_results_path).select(columns).sort("record_id", "turn")
    assert a.equals(b)


def test_ghchen99_results_carry_the_judge_verdict(ghchen99_results_path: Path) -> None:
    preds = load_predictions(ghchen99_results_path)
    first = preds.row(0, named=True)
    assert (first["question"], first["gold_answer"], first["upstream_correct"]) == (
        "what is the net cash from operating activities in 2009?",
        "206588",
        False,
    )
    assert preds["upstream_correct"].null_count() == 0
    no_verdicts = load_predictions(ghchen99_results_path.with_name("ghchen99_predictions_first_100.json"))
    assert no_verdicts["upstream_correct"].null_count() == 355  # the predictions file has no verdicts


def test_canonical_file_with_carried_gold(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "run.jsonl",
        {
            "record_id": "7",
            "turn": 0,
            "raw_output": "so 18",
            "question": "q?",
            "gold_answer": 18,
            "upstream_correct": 1,
        },
        {"record_id": "8", "turn": 0, "predicted_answer": "3", "gold_solution": "1+2=3", "upstream_correct": "False"},
    )
    preds = load_predictions(path)
    assert preds.select("question", "gold_answer", "gold_solution", "upstream_correct").rows() == [
        ("q?", "18", None, True),
        (None, None, "1+2=3", False),
    ]
    cmap = parse_column_map("record_id=id,turn=t:0,predicted_answer=a,question=q,upstream_correct=ok")
    mapped = _jsonl(tmp_path / "m.jsonl", {"id": "1", "t": 0, "a": "5", "q": "what?", "ok": True})
    assert load_predictions(mapped, column_map=cmap).select("question", "upstream_correct").row(0) == ("what?", True)


def test_results_question_id_splits_on_last_hyphen(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(
        json.dumps(
            {
                "results": [
                    {"question_id": "Single_A-B/2010/page_1.pdf-12-3", "predicted_answer": 1.5},
                ]
            }
        ),
        encoding="utf-8",
    )
    row = load_predictions(path).row(0, named=True)
    assert (row["record_id"], row["turn"], row["predicted_answer"]) == ("Single_A-B/2010/page_1.pdf-12", 3, "1.5")


CANONICAL = {
    "record_id": ["r1", "r1", "r2"],
    "turn": [0, 1, 0],
    "predicted_answer": ["1.5", "yes", None],
    "predicted_program": ["divide(3, 2)", None, "add(1, 2)"],
}


@pytest.mark.parametrize(
    ("suffix", "locations"),
    [
        (".csv", ["line 2", "line 3", "line 4"]),
        (".jsonl", ["line 1", "line 2", "line 3"]),
        (".parquet", ["row 1", "row 2", "row 3"]),
        (".json", ["record 0", "record 1", "record 2"]),
    ],
)
def test_canonical_files(tmp_path: Path, suffix: str, locations: list[str]) -> None:
    frame = pl.DataFrame(CANONICAL)
    path = tmp_path / f"mymodel{suffix}"
    if suffix == ".csv":
        frame.write_csv(path)
    elif suffix == ".jsonl":
        frame.write_ndjson(path)
    elif suffix == ".parquet":
        frame.write_parquet(path)
    else:
        path.write_text(json.dumps(frame.to_dicts()), encoding="utf-8")
    preds = load_predictions(path)
    assert preds.schema == pl.Schema(PREDICTIONS)
    assert preds.select(list(CANONICAL)).to_dict(as_series=False) == CANONICAL
    assert preds["system"].unique().to_list() == ["mymodel"]
    assert preds["source_location"].to_list() == locations
    assert preds["source_file"].unique().to_list() == [str(path)]


def test_several_systems_in_one_file(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text("system,record_id,turn,predicted_answer\na,r,0,1\na,r,1,2\nb,r,0,3\n", encoding="utf-8")
    preds = load_predictions(path)
    assert preds.select("system", "record_id", "turn", "predicted_answer").rows() == [
        ("a", "r", 0, "1"),
        ("a", "r", 1, "2"),
        ("b", "r", 0, "3"),
    ]
    # a name given by the caller wins over the column, and then (r, 0) appears twice
    with pytest.raises(InputError, match="duplicate"):
        load_predictions(path, system="one")


def test_numbers_in_json_become_answer_text(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "p.jsonl",
        {"record_id": "r", "turn": 0, "predicted_answer": 0.14136},
        {"record_id": "r", "turn": "1", "predicted_answer": True},
        {"record_id": "r", "turn": 2.0, "predicted_program": ["add(", "1", "2", ")"]},
    )
    preds = load_predictions(path)
    assert preds["turn"].to_list() == [0, 1, 2]
    assert preds["predicted_answer"].to_list() == ["0.14136", "yes", None]
    assert preds["predicted_program"].to_list()[2] == "add( 1 2 )"


# --------------------------------------------------------------------------- column maps
def test_parse_column_map() -> None:
    cmap = parse_column_map("record_id=report_id_x, turn=q_order:1, predicted_answer=ans")
    assert cmap == ColumnMap(
        columns={"record_id": "report_id_x", "turn": "q_order", "predicted_answer": "ans"}, turn_base=1
    )
    assert parse_column_map("record_id=a,turn=t:0,predicted_program=p").turn_base == 0


@pytest.mark.parametrize(
    ("spec", "fragments"),
    [
        ("record_id=a,turn=q,predicted_answer=x", ["counts turns from 0 or 1", "turn=q:0 or turn=q:1"]),
        ("record_id=a,turn=q:2", ["'q:2'"]),
        ("answer=a", ["unknown name 'answer'", "record_id, turn"]),
        ("record_id", ["'record_id' is not NAME=COLUMN"]),
        ("record_id=", ["is not NAME=COLUMN"]),
    ],
)
def test_bad_column_maps(spec: str, fragments: list[str]) -> None:
    with pytest.raises(UsageError) as info:
        parse_column_map(spec)
    assert "Fix:" in str(info.value)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_map_with_one_based_turns(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "other.jsonl",
        {"rid": "r", "q": 1, "ans": "1", "why": "because"},
        {"rid": "r", "q": 2, "ans": "2", "why": "so"},
    )
    cmap = parse_column_map("record_id=rid,turn=q:1,predicted_answer=ans,raw_output=why")
    preds = load_predictions(path, column_map=cmap)
    assert preds.select("record_id", "turn", "predicted_answer", "raw_output").rows() == [
        ("r", 0, "1", "because"),
        ("r", 1, "2", "so"),
    ]
    zero_based = load_predictions(path, column_map=parse_column_map("record_id=rid,turn=q:0,predicted_answer=ans"))
    assert zero_based["turn"].to_list() == [1, 2]


def test_every_map_name_is_listed_in_the_help_and_in_an_unknown_names_error() -> None:
    with pytest.raises(UsageError) as unknown:
        parse_column_map("record_id=id,gold=gold")
    with pytest.raises(UsageError) as malformed:
        parse_column_map("record_id")
    for name in PREDICTION_TARGETS:
        assert name in MAP_HELP
        assert name in str(unknown.value)
        assert name in str(malformed.value)
    assert "unknown name 'gold'" in str(unknown.value)


def test_a_map_needs_a_record_id_and_an_answer_and_lists_the_names(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    with pytest.raises(InputError) as no_id:
        check_map(path, parse_column_map("raw_output=response"), ["id", "response"])
    with pytest.raises(InputError) as no_answer:
        check_map(path, parse_column_map("record_id=id,gold_answer=gold"), ["id", "gold"])
    assert "--map does not say which column is record_id" in str(no_id.value)
    assert "--map names none of predicted_answer, predicted_program, raw_output" in str(no_answer.value)
    for error in (no_id, no_answer):
        assert all(name in str(error.value) for name in PREDICTION_TARGETS)
    check_map(path, parse_column_map("record_id=id,raw_output=response"), ["id", "response"])  # no turn: fine


_COLUMN = st.text(st.characters(codec="utf-8", exclude_characters=",=:"), min_size=1, max_size=12).filter(
    lambda c: c.strip() == c and c != ""
)


@settings(max_examples=80, deadline=None)
@given(
    st.dictionaries(st.sampled_from([n for n in PREDICTION_TARGETS if n != "turn"]), _COLUMN, min_size=1),
    st.one_of(st.none(), st.tuples(_COLUMN, st.sampled_from([0, 1]))),
)
@example(columns={"record_id": "0"}, turn=("0\n0", 0))  # a newline in the turn column's name (CI, 2026-11-23)
def test_a_map_reads_back_what_was_written(columns: dict[str, str], turn: tuple[str, int] | None) -> None:
    parts = [f"{name}={column}" for name, column in columns.items()]
    if turn is not None:
        parts.append(f"turn={turn[0]}:{turn[1]}")
    cmap = parse_column_map(", ".join(parts))
    expected = dict(columns) if turn is None else {**columns, "turn": turn[0]}
    assert cmap.columns == expected
    assert cmap.turn_base == (0 if turn is None else turn[1])


@settings(max_examples=60, deadline=None)
@given(_COLUMN.filter(lambda name: name not in PREDICTION_TARGETS), _COLUMN)
def test_an_unknown_map_name_is_refused_with_every_name(name: str, column: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_column_map(f"record_id=id,{name}={column}")
    assert str(info.value).endswith("Fix: use one of " + ", ".join(PREDICTION_TARGETS))


# --------------------------------------------------------------------------- single-turn files (issue 20)
GSM8K_PLAIN = (
    Path(__file__).resolve().parents[2] / "fixtures" / "predictions" / "gsm8k" / "plain_id_response_pred_gold.jsonl"
)


def test_a_map_without_turn_reads_every_row_as_turn_0() -> None:
    read = read_predictions(
        GSM8K_PLAIN, column_map=parse_column_map("record_id=id,raw_output=response,gold_answer=gold")
    )
    raw = [json.loads(line) for line in GSM8K_PLAIN.read_text(encoding="utf-8").splitlines()]
    assert read.single_turn
    assert read.note == f"no turn column in {GSM8K_PLAIN}: every row is turn 0 (single-turn)"
    frame = read.frame
    assert frame.schema == pl.Schema(PREDICTIONS)
    assert frame["record_id"].to_list() == [str(r["id"]) for r in raw] == [str(i) for i in range(10)]
    assert frame["turn"].to_list() == [0] * 10
    assert frame["gold_answer"].to_list() == [r["gold"] for r in raw]
    assert frame["raw_output"].to_list() == [r["response"] for r in raw]
    assert frame["predicted_answer"].to_list() == [None] * 10  # 'pred' is not mapped: we extract our own


def test_canonical_columns_without_a_turn_are_single_turn(tmp_path: Path) -> None:
    path = _text_file(tmp_path / "gsm8k.csv", "record_id,predicted_answer,question\n7,18,How many?\n8,3,And?\n")
    read = read_predictions(path)
    assert read.single_turn and read.note is not None
    assert read.frame.select("record_id", "turn", "predicted_answer").rows() == [("7", 0, "18"), ("8", 0, "3")]
    with_turns = read_predictions(_text_file(tmp_path / "t.csv", "record_id,turn,predicted_answer\n7,0,18\n"))
    assert not with_turns.single_turn and with_turns.note is None
    # files an adapter reads give their own turns: never said to be single-turn
    tora = Path(__file__).resolve().parents[2] / "fixtures" / "predictions" / "gsm8k" / "tora-70b_first_20.jsonl"
    assert not read_predictions(tora).single_turn


@pytest.mark.parametrize(
    ("text", "cmap", "fragments"),
    [
        (
            "id,response\n1,a\n2,b\n1,c\n",
            "record_id=id,raw_output=response",
            ["line 4:", "field 'id'", "record id '1' appears again (first at line 2)", "turn=COLUMN:0"],
        ),
        (
            "record_id,predicted_answer\nr,1\nr,2\n",
            "",
            ["line 3:", "field 'record_id'", "record id 'r' appears again (first at line 2)", "without a turn"],
        ),
    ],
    ids=["map-without-turn", "canonical-without-turn"],
)
def test_a_repeated_record_id_in_a_file_without_turns_is_refused(
    tmp_path: Path, text: str, cmap: str, fragments: list[str]
) -> None:
    path = _text_file(tmp_path / "p.csv", text)
    with pytest.raises(InputError) as info:
        load_predictions(path, column_map=parse_column_map(cmap) if cmap else None)
    assert "\n" not in str(info.value)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_a_column_named_like_a_turn_is_not_ignored(tmp_path: Path) -> None:
    path = _text_file(tmp_path / "p.csv", "record_id,turn_index,raw_output\nr,0,a\nr,1,b\n")
    with pytest.raises(InputError, match="missing column 'turn'.*turn=COL:0 or turn=COL:1"):
        load_predictions(path)


# --------------------------------------------------------------------------- bad inputs
def _bad_cases(tmp: Path) -> list[tuple[Path, ColumnMap | None, list[str]]]:
    ok = {"record_id": "r", "turn": 0, "predicted_answer": "1"}
    truncated = tmp / "truncated.jsonl"
    lines = [json.dumps({**ok, "turn": i}) for i in range(4)]
    lines[2] = lines[2][:20]  # a line cut short, as when a run is killed mid-write
    truncated.write_text("\n".join(lines) + "\n", encoding="utf-8")
    blank_lines = tmp / "blank_lines.jsonl"
    blank_lines.write_text("\n" + json.dumps(ok) + "\n\n{oops}\n", encoding="utf-8")
    not_utf8 = tmp / "latin1.jsonl"
    not_utf8.write_bytes(json.dumps(ok).encode() + b'\n{"record_id": "caf\xe9"}\n')
    unknown = tmp / "preds.txt"
    unknown.write_text("r,0,1\n", encoding="utf-8")
    one_based = parse_column_map("record_id=rid,turn=q:1,predicted_answer=ans")
    return [
        (
            _jsonl(tmp / "no_id.jsonl", {"id": "r", "turn": 0, "answer": "1"}),
            None,
            ["field 'record_id'", "missing column 'record_id'", "columns found: id, turn, answer", "--map"],
        ),
        (
            _jsonl(tmp / "no_answer.jsonl", {"record_id": "r", "turn": 0, "answer": "1"}),
            None,
            ["predicted_answer, predicted_program or raw_output", "columns found: record_id, turn, answer", "--map"],
        ),
        (truncated, None, ["line 3:", "invalid JSON"]),
        (blank_lines, None, ["line 4:", "invalid JSON"]),
        (
            _jsonl(tmp / "dup.jsonl", ok, {**ok, "record_id": "q"}, {**ok, "predicted_answer": "2"}),
            None,
            ["line 3:", "first at line 1", "duplicate (record_id, turn) = ('r', 0)", "field 'record_id, turn'"],
        ),
        (
            _jsonl(tmp / "map.jsonl", {"rid": "r", "q": 1, "ans": "1"}),
            parse_column_map("record_id=rid,turn=qq:1,predicted_answer=ans"),
            ["field 'qq'", "column 'qq' named by --map for turn does not exist", "columns found: rid, q, ans"],
        ),
        (
            _jsonl(tmp / "word_turn.jsonl", {**ok, "turn": "first"}),
            None,
            ["line 1:", "field 'turn'", "turn 'first' is not a whole number"],
        ),
        (_jsonl(tmp / "half_turn.jsonl", {**ok, "turn": 1.5}), None, ["line 1:", "turn 1.5 is not a whole number"]),
        (
            _jsonl(tmp / "turn0.jsonl", {"rid": "r", "q": 1, "ans": "1"}, {"rid": "r", "q": 0, "ans": "1"}),
            one_based,
            ["line 2:", "field 'q'", "turn 0 is below 1", "turn=q:0"],
        ),
        (
            _jsonl(tmp / "blank_id.jsonl", ok, {**ok, "record_id": "  ", "turn": 1}),
            None,
            ["line 2:", "field 'record_id'", "empty record id"],
        ),
        (_jsonl(tmp / "null_id.jsonl", {**ok, "record_id": None}), None, ["line 1:", "empty record id"]),
        (unknown, None, ["unknown file type '.txt'", ".jsonl, .json, .csv or .parquet"]),
        (not_utf8, None, ["line 2:", "not UTF-8"]),
        (_array_line(tmp), None, ["line 2:", "expected a JSON object, found list"]),
        (
            _text_file(tmp / "dup.csv", "record_id,turn,predicted_answer\nr,0,1\nr,1,2\nr,0,3\n"),
            None,
            ["line 4:", "first at line 2"],
        ),
        (
            _text_file(tmp / "turn.csv", "record_id,turn,predicted_answer\nr,0,1\nr,x,2\n"),
            None,
            ["line 3:", "turn 'x' is not a whole number"],
        ),
        (_parquet_dup(tmp), None, ["row 2:", "first at row 1"]),
        (_text_file(tmp / "empty.jsonl", ""), None, ["the file is empty"]),
        (tmp / "missing.jsonl", None, ["file not found"]),
    ]


def _text_file(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _array_line(tmp: Path) -> Path:
    return _text_file(tmp / "array.jsonl", '{"record_id": "r", "turn": 0, "predicted_answer": "1"}\n[1, 2]\n')


def _parquet_dup(tmp: Path) -> Path:
    path = tmp / "dup.parquet"
    pl.DataFrame({"record_id": ["r", "r"], "turn": [0, 0], "predicted_program": ["1", "2"]}).write_parquet(path)
    return path


_BAD_IDS = [
    "missing-column",
    "no-answer-column",
    "invalid-json-line",
    "invalid-json-after-blank-lines",
    "duplicate-key",
    "map-names-missing-column",
    "non-integer-turn",
    "fractional-turn",
    "turn-0-with-1-based-map",
    "blank-record-id",
    "null-record-id",
    "unknown-suffix",
    "not-utf8",
    "non-object-line",
    "csv-duplicate",
    "csv-bad-turn",
    "parquet-duplicate",
    "empty-file",
    "missing-file",
]


@pytest.mark.parametrize("case", range(len(_BAD_IDS)), ids=_BAD_IDS)
def test_bad_prediction_files(tmp_path: Path, case: int) -> None:
    path, cmap, fragments = _bad_cases(tmp_path)[case]
    with pytest.raises(InputError) as info:
        load_predictions(path, column_map=cmap)
    message = str(info.value)
    assert message.startswith(str(path) + ":")
    assert "Fix:" in message
    for fragment in fragments:
        assert fragment in message, message


# --------------------------------------------------------------------------- MATH-500 harness runs (issue 19)
MATH_RUNS = Path(__file__).resolve().parents[3] / "data" / "predictions" / "math"
RHO_COT = MATH_RUNS / "microsoft-rho-math-7b" / "test_cot_-1_seed0_t0.0_s0_e-1.jsonl"
TORA_GSM8K = Path(__file__).resolve().parents[2] / "fixtures" / "predictions" / "gsm8k" / "tora-70b_first_20.jsonl"


def test_math500_harness_lines_load_as_published(tmp_path: Path) -> None:
    """Rho-Math CoT lines 0-4 and 97-102 (data/SOURCES.md): gold is MATH-500's ``answer`` (``gt`` of
    idx 97 is "" for \\text{east}, of idx 102 "(+5)(b+2)" for "(a+5)(b+2)"), the output ``code[0]``,
    the harness's verdict ``score[0]``; its lossy ``pred`` is not taken as the upstream answer."""
    lines = RHO_COT.read_text(encoding="utf-8").splitlines()
    chosen = [*lines[0:5], *lines[97:103]]
    path = tmp_path / "test_cot_-1_seed0_t0.0_s0_e-1.jsonl"
    path.write_text("\n".join(chosen) + "\n", encoding="utf-8")
    frame = load_predictions(path)
    records = [json.loads(line) for line in chosen]
    assert frame["record_id"].to_list() == [str(r["idx"]) for r in records]
    assert frame["gold_answer"].to_list() == [r["answer"] for r in records]
    assert frame["raw_output"].to_list() == [r["code"][0] for r in records]
    assert frame["upstream_correct"].to_list() == [r["score"][0] for r in records]
    assert frame["upstream_answer"].null_count() == frame.height
    by_id = dict(zip(frame["record_id"], frame["gold_answer"], strict=True))
    assert (by_id["97"], by_id["102"]) == ("\\text{east}", "(a+5)(b+2)")


@pytest.mark.parametrize("damage", ["missing", "not text"])
def test_a_math500_line_without_its_answer_is_refused_in_one_line(tmp_path: Path, damage: str) -> None:
    """In a MATH-500 harness file, a line without MATH-500's ``answer`` is named (file, line, idx,
    field, fix), never graded against the lossy ``gt`` in its place."""
    records = [json.loads(line) for line in RHO_COT.read_text(encoding="utf-8").splitlines()[:3]]
    if damage == "missing":
        del records[1]["answer"]
    else:
        records[1]["answer"] = 7
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_predictions(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    assert f"line 2 (idx {records[1]['idx']!r})" in message and "field 'answer'" in message and "Fix:" in message


def test_tora_gsm8k_lines_keep_the_harness_answer() -> None:
    """ToRA's GSM8K files have no ``answer`` (nor ``score``): the gold is ``gt`` and ``pred`` the
    upstream answer, as before."""
    frame = load_predictions(TORA_GSM8K)
    first = json.loads(TORA_GSM8K.read_text(encoding="utf-8").splitlines()[0])
    row = frame.row(0, named=True)
    assert (row["gold_answer"], row["upstream_answer"]) == (str(first["gt"]), str(first["pred"][0]))
    assert frame["upstream_correct"].null_count() == frame.height  # no score in these files
