"""Cleaned-dataset export: corrections, exclusions, layouts, the stratified split and the manifest.

The ConvFinQA cases use the bundled dev set (421 records, 1,490 turns) and the bundled
claude-sonnet-4-6 run; GSM8K uses the 20-line fixture; the plain tables are cut from real
dev rows in ``tmp_path``.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from workbench.cleaning.export import export_cleaned
from workbench.cleaning.layouts import SUPPORTED_LAYOUTS
from workbench.cleaning.plan import apply_annotations
from workbench.errors import InputError, UsageError
from workbench.io.gold import GoldDataset, gsm8k_final_answer, load_gold
from workbench.io.predictions import load_predictions
from workbench.pipeline.grade import grade_predictions
from workbench.pipeline.graded import file_sha256
from workbench.schema import ANNOTATION_EVENTS

# The two turns whose verdict a correction flips for the bundled claude run, found from its
# graded turns (gold display answer and executed answer disagree on both):
# * Double_ETR/2011/page_341.pdf turn 3 asks for 18.6 as a percentage of 2009 net revenue
#   (536.7): gold "3.5%" but the program stops at add(#0, 536.7) = 555.3; the model said 3.47
#   and was graded wrong. Corrected to "3.47%" with the program ending in divide(#0, 536.7),
#   it is right.
# * Single_PM/2015/page_85.pdf-1 turn 0: display answer "1", executed -1; the model said -1 and
#   was graded right. An annotator who takes the display answer ("1") makes it wrong.
WRONG_TO_RIGHT = ("Double_ETR/2011/page_341.pdf", 3)
RIGHT_TO_WRONG = ("Single_PM/2015/page_85.pdf-1", 0)


def notes(*rows: dict[str, Any]) -> pl.DataFrame:
    """Active annotations (ANNOTATION_EVENTS without kind/retracts) with defaults filled in."""
    full = [
        {
            "event_id": i + 1,
            "created_at": datetime(2026, 5, 5, 12, 0, i, tzinfo=UTC),
            "annotator": "tester",
            "category": "mislabel",
            "exclude": False,
            **row,
        }
        for i, row in enumerate(rows)
    ]
    return pl.DataFrame(full, schema=ANNOTATION_EVENTS).drop("kind", "retracts")


NO_NOTES = notes()


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def temp_files(folder: Path) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.name.endswith(".tmp")]


# --------------------------------------------------------------------------- ConvFinQA reformatted
def test_round_trip_without_annotations(dev_path: Path, dev_gold: GoldDataset, tmp_path: Path) -> None:
    result = export_cleaned(dev_path, NO_NOTES, tmp_path / "out")
    exported = result.files["dataset"]
    assert exported.name == "dev.json"
    assert read_json(exported) == read_json(dev_path)  # every record, field and value, in order
    again = load_gold(exported)
    assert again.layout == "convfinqa-reformatted"
    assert again.turns.equals(dev_gold.turns)
    assert again.documents.equals(dev_gold.documents)
    m = result.manifest
    assert (m["input"]["n_records"], m["input"]["n_turns"]) == (421, 1490)
    assert (m["output"]["n_records"], m["output"]["n_turns"]) == (421, 1490)
    assert m["annotations"]["n_active"] == 0
    assert sorted(result.files) == ["annotations_csv", "annotations_parquet", "dataset", "manifest"]
    assert pl.read_parquet(result.files["annotations_parquet"]).height == 0


def test_two_corrections_flip_exactly_those_verdicts(
    dev_path: Path, dev_gold: GoldDataset, claude_run_path: Path, tmp_path: Path
) -> None:
    predictions = load_predictions(claude_run_path)
    before = grade_predictions(dev_gold, predictions, checks=False).turns
    verdict = {(r, t): c for r, t, c in before.select("record_id", "turn", "correct").iter_rows()}
    assert verdict[WRONG_TO_RIGHT] is False and verdict[RIGHT_TO_WRONG] is True

    annotations = notes(
        {
            "record_id": WRONG_TO_RIGHT[0],
            "turn": WRONG_TO_RIGHT[1],
            "corrected_answer": "3.47%",
            "corrected_program": "add(18.9, -0.3), divide(#0, 536.7)",
            "note": "the program stopped before dividing by 2009 net revenue",
        },
        {
            "record_id": RIGHT_TO_WRONG[0],
            "turn": RIGHT_TO_WRONG[1],
            "category": "sign_inconsistency",
            "corrected_answer": "1",
        },
    )
    result = export_cleaned(dev_path, annotations, tmp_path / "out")
    cleaned = load_gold(result.files["dataset"])
    after = grade_predictions(cleaned, predictions, checks=False).turns

    joined = before.join(after, on=["system", "record_id", "turn"], suffix="_after")
    flipped = joined.filter(pl.col("correct") != pl.col("correct_after"))
    assert sorted(flipped.select("record_id", "turn", "correct", "correct_after").rows()) == [
        (WRONG_TO_RIGHT[0], WRONG_TO_RIGHT[1], False, True),
        (RIGHT_TO_WRONG[0], RIGHT_TO_WRONG[1], True, False),
    ]
    assert joined.height == before.height == after.height == 1490
    # the file changed exactly the annotated fields
    original = {r["id"]: r for r in read_json(dev_path)["dev"]}
    exported = {r["id"]: r for r in read_json(result.files["dataset"])["dev"]}
    etr = exported[WRONG_TO_RIGHT[0]]["dialogue"]
    assert etr["conv_answers"][3] == "3.47%" and etr["executed_answers"][3] == 0.0347
    assert etr["turn_program"][3] == "add(18.9, -0.3), divide(#0, 536.7)"
    assert exported[RIGHT_TO_WRONG[0]]["dialogue"]["executed_answers"][0] == 1.0
    changed = [k for k in original if original[k] != exported[k]]
    assert sorted(changed) == sorted([WRONG_TO_RIGHT[0], RIGHT_TO_WRONG[0]])
    assert result.manifest["annotations"]["n_corrected"] == 2


def test_apply_annotations_matches_the_reloaded_export(dev_path: Path, dev_gold: GoldDataset, tmp_path: Path) -> None:
    annotations = notes(
        # the CDNS example: display "1877", executed 18770; the correction aligns the display
        {"record_id": "Single_CDNS/2018/page_31.pdf-1", "turn": 2, "corrected_answer": "18770"},
        # Single_UNP/2008/page_77.pdf-2 turn 4: display "10%" but the program gives -0.09709
        {"record_id": "Single_UNP/2008/page_77.pdf-2", "turn": 4, "corrected_answer": "-9.7%"},
        {"record_id": "Double_HII/2017/page_104.pdf", "turn": 0, "corrected_program": "subtract(15, 19)"},
        {"record_id": "Double_RSG/2016/page_144.pdf", "turn": 1, "category": "ambiguous_question", "exclude": True},
        # system-level: changes nothing in the gold, even with exclude
        {"record_id": "Single_MRO/2007/page_134.pdf-1", "turn": 0, "system": "claude", "category": "model_error"},
        {"record_id": "Double_MRO/2015/page_18.pdf", "turn": 1, "system": "claude", "exclude": True},
    )
    applied = apply_annotations(dev_gold, annotations)
    result = export_cleaned(dev_path, annotations, tmp_path / "out")
    reloaded = load_gold(result.files["dataset"])
    assert applied.turns.equals(reloaded.turns)
    assert applied.documents.equals(reloaded.documents)
    assert applied.turns.height == 1490 - 4  # Double_RSG/2016/page_144.pdf has 4 turns
    assert "Double_RSG/2016/page_144.pdf" not in set(applied.documents["doc_id"])
    assert "Double_MRO/2015/page_18.pdf" in set(applied.turns["record_id"])
    cdns = applied.turns.filter(record_id="Single_CDNS/2018/page_31.pdf-1", turn=2).row(0, named=True)
    assert (cdns["gold_answer"], cdns["gold_executed"], cdns["gold_value"]) == ("18770", "18770", 18770.0)
    unp = applied.turns.filter(record_id="Single_UNP/2008/page_77.pdf-2", turn=4).row(0, named=True)
    assert (unp["gold_answer"], unp["gold_executed"], unp["gold_value"]) == ("-9.7%", "-0.097", -0.097)
    # the input dataset is not changed
    assert dev_gold.turns.filter(record_id="Single_CDNS/2018/page_31.pdf-1", turn=2)["gold_answer"][0] == "1877"
    m = result.manifest["annotations"]
    assert (m["n_active"], m["n_gold_level"], m["n_system_level"], m["n_corrected"]) == (6, 4, 2, 3)
    assert m["n_excluded_records"] == 1


def test_exclude_drops_the_record_and_keep_excluded_marks_it(dev_small_path: Path, tmp_path: Path) -> None:
    annotations = notes(
        {"record_id": "Double_HII/2017/page_104.pdf", "turn": 3, "exclude": True},
        {"record_id": "Double_HII/2017/page_104.pdf", "turn": 1, "category": "other", "exclude": True},
        {"record_id": "Single_IPG/2009/page_85.pdf-3", "turn": 1, "corrected_answer": "10.826"},
    )
    dropped = export_cleaned(dev_small_path, annotations, tmp_path / "dropped")
    ids = [r["id"] for r in read_json(dropped.files["dataset"])["dev"]]
    original_ids = [r["id"] for r in read_json(dev_small_path)["dev"]]
    assert ids == [i for i in original_ids if i != "Double_HII/2017/page_104.pdf"]  # order kept
    assert (dropped.manifest["output"]["n_records"], dropped.manifest["output"]["n_turns"]) == (11, 38)
    assert dropped.manifest["output"]["excluded_records"] == ["Double_HII/2017/page_104.pdf"]

    kept = export_cleaned(dev_small_path, annotations, tmp_path / "kept", keep_excluded=True)
    records = read_json(kept.files["dataset"])["dev"]
    assert [r["id"] for r in records] == original_ids
    marked = {r["id"]: r.get("workbench") for r in records if "workbench" in r}
    assert marked == {"Double_HII/2017/page_104.pdf": {"excluded": True, "excluded_turns": [1, 3]}}
    assert (kept.manifest["output"]["n_records"], kept.manifest["output"]["n_turns"]) == (12, 42)
    assert load_gold(kept.files["dataset"]).turns.height == 42  # the marker does not disturb loading
    ipg = next(r for r in records if r["id"] == "Single_IPG/2009/page_85.pdf-3")["dialogue"]
    assert (ipg["conv_answers"], ipg["executed_answers"]) == (["0.1083", "10.826"], [0.10826, 10.826])


@pytest.mark.parametrize(
    ("record_id", "turn", "field"),
    [
        ("Single_NOPE/2020/page_1.pdf-1", 0, "record_id"),
        ("Single_CDNS/2018/page_31.pdf-1", 3, "turn"),  # the record has turns 0..2
    ],
)
def test_annotation_of_a_missing_turn_is_an_input_error(
    dev_small_path: Path, tmp_path: Path, record_id: str, turn: int, field: str
) -> None:
    annotations = notes(
        {"record_id": "Single_CDNS/2018/page_31.pdf-1", "turn": 2, "corrected_answer": "18770"},
        {"record_id": record_id, "turn": turn, "corrected_answer": "5", "system": None},
    )
    with pytest.raises(InputError) as info:
        export_cleaned(dev_small_path, annotations, tmp_path / "out")
    message = str(info.value)
    assert "annotation event 2" in message and f"'{record_id}'" in message and f"turn {turn}" in message
    assert info.value.field == field and "retract" in info.value.fix
    assert not (tmp_path / "out").exists()  # nothing written
    with pytest.raises(InputError, match="annotation event 2"):
        apply_annotations(load_gold(dev_small_path), annotations)


def test_system_level_annotation_of_a_missing_turn_is_also_refused(dev_small_path: Path, tmp_path: Path) -> None:
    annotations = notes({"record_id": "Single_CDNS/2018/page_31.pdf-1", "turn": 9, "system": "claude"})
    with pytest.raises(InputError, match="has turns 0..2, not turn 9"):
        export_cleaned(dev_small_path, annotations, tmp_path / "out")


@pytest.mark.parametrize(
    ("frame", "match"),
    [
        (pl.DataFrame({"record_id": ["x"], "turn": [0]}), "lacks column"),
        (
            pl.concat(
                [
                    notes({"record_id": "Single_CDNS/2018/page_31.pdf-1", "turn": 2, "corrected_answer": "1"}),
                    notes({"record_id": "Single_CDNS/2018/page_31.pdf-1", "turn": 2, "corrected_answer": "2"}),
                ]
            ),
            "one active annotation per",
        ),
        (
            pl.DataFrame(
                [{"event_id": 2, "kind": "retraction", "record_id": "x", "turn": 0, "retracts": 1}],
                schema=ANNOTATION_EVENTS,
            ),
            "retractions",
        ),
    ],
)
def test_not_active_annotations_is_a_usage_error(
    dev_small_path: Path, tmp_path: Path, frame: pl.DataFrame, match: str
) -> None:
    with pytest.raises(UsageError, match=match):
        export_cleaned(dev_small_path, frame, tmp_path / "out")


def test_blank_corrected_answer_is_refused(dev_small_path: Path, tmp_path: Path) -> None:
    annotations = notes({"record_id": "Single_CDNS/2018/page_31.pdf-1", "turn": 2, "corrected_answer": "  "})
    with pytest.raises(InputError, match="blank"):
        export_cleaned(dev_small_path, annotations, tmp_path / "out")


def test_unsupported_layout_names_the_supported_ones(original_train_path: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        export_cleaned(original_train_path, NO_NOTES, tmp_path / "out")
    assert "convfinqa-original" in str(info.value)
    assert all(layout in str(info.value) for layout in SUPPORTED_LAYOUTS)


def test_every_record_excluded_is_refused(dev_small_path: Path, tmp_path: Path) -> None:
    ids = [r["id"] for r in read_json(dev_small_path)["dev"]]
    annotations = notes(*({"record_id": i, "turn": 0, "exclude": True} for i in ids))
    with pytest.raises(UsageError, match="every record"):
        export_cleaned(dev_small_path, annotations, tmp_path / "out")
    kept = export_cleaned(dev_small_path, annotations, tmp_path / "kept", keep_excluded=True)
    assert all(r["workbench"]["excluded"] for r in read_json(kept.files["dataset"])["dev"])


def test_refuses_to_overwrite_its_input(dev_small_path: Path, tmp_path: Path) -> None:
    copy = tmp_path / "dev_small.json"
    copy.write_bytes(dev_small_path.read_bytes())
    with pytest.raises(UsageError, match="overwrite"):
        export_cleaned(copy, NO_NOTES, tmp_path)
    assert copy.read_bytes() == dev_small_path.read_bytes()


def test_parameters_are_recorded_and_may_not_shadow_the_exports_own(dev_small_path: Path, tmp_path: Path) -> None:
    result = export_cleaned(
        dev_small_path,
        NO_NOTES,
        tmp_path / "out",
        snapshot={"n_events": 3, "max_event_id": 3, "sha256": "ab" * 32},
        parameters={"annotator": "tester", "store": "reports/annotations.sqlite"},
    )
    m = result.manifest
    assert m["parameters"] == {
        "keep_excluded": False,
        "split": None,
        "seed": 0,
        "annotator": "tester",
        "store": "reports/annotations.sqlite",
    }
    assert m["annotations"]["snapshot"] == {"n_events": 3, "max_event_id": 3, "sha256": "ab" * 32}
    with pytest.raises(UsageError, match="seed"):
        export_cleaned(dev_small_path, NO_NOTES, tmp_path / "other", parameters={"seed": 3})


# --------------------------------------------------------------------------- GSM8K JSON Lines
def test_gsm8k_correction_rewrites_only_that_final_answer(gsm8k_small_path: Path, tmp_path: Path) -> None:
    original_lines = gsm8k_small_path.read_text(encoding="utf-8").splitlines()
    result = export_cleaned(
        gsm8k_small_path, notes({"record_id": "3", "turn": 0, "corrected_answer": "541"}), tmp_path / "out"
    )
    assert result.files["dataset"].name == "test_first_20.jsonl"
    lines = result.files["dataset"].read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(original_lines) == 20
    differing = [i for i, (a, b) in enumerate(zip(original_lines, lines, strict=True)) if a != b]
    assert differing == [3]  # every other line byte for byte
    before, after = json.loads(original_lines[3]), json.loads(lines[3])
    assert after["question"] == before["question"]
    old_body, old_answer = before["answer"].rsplit("####", 1)
    new_body, new_answer = after["answer"].rsplit("####", 1)
    assert new_body == old_body and new_answer == " 541" and old_answer != new_answer
    gold = load_gold(result.files["dataset"])
    assert gold.turns.filter(record_id="3")["gold_answer"][0] == "541"
    assert gsm8k_final_answer(gold.turns.filter(record_id="3")["gold_solution"][0]) == "541"
    assert apply_annotations(
        load_gold(gsm8k_small_path), notes({"record_id": "3", "turn": 0, "corrected_answer": "541"})
    ).turns.equals(gold.turns)


def test_gsm8k_exclusion_and_program_corrections(gsm8k_small_path: Path, tmp_path: Path) -> None:
    excluded = notes({"record_id": "0", "turn": 0, "exclude": True})
    result = export_cleaned(gsm8k_small_path, excluded, tmp_path / "dropped")
    assert len(result.files["dataset"].read_text(encoding="utf-8").splitlines()) == 19
    assert result.manifest["output"]["renumbered"] is True  # GSM8K ids are positions
    kept = export_cleaned(gsm8k_small_path, excluded, tmp_path / "kept", keep_excluded=True)
    first = json.loads(kept.files["dataset"].read_text(encoding="utf-8").splitlines()[0])
    assert first["workbench"] == {"excluded": True, "excluded_turns": [0]}
    with pytest.raises(InputError, match="no program"):
        export_cleaned(
            gsm8k_small_path, notes({"record_id": "1", "turn": 0, "corrected_program": "add(1, 2)"}), tmp_path / "p"
        )


# --------------------------------------------------------------------------- plain tables
@pytest.fixture
def dev_table(dev_gold: GoldDataset) -> pl.DataFrame:
    """The turns of the first five dev conversations as a plain gold table."""
    first = dev_gold.turns["record_id"].unique(maintain_order=True).head(5)
    return dev_gold.turns.filter(pl.col("record_id").is_in(first.implode())).select(
        "record_id", "turn", "question", "gold_answer", "gold_program"
    )


def test_csv_table_round_trip_and_correction(dev_table: pl.DataFrame, tmp_path: Path) -> None:
    source = tmp_path / "gold.csv"
    dev_table.write_csv(source)
    result = export_cleaned(source, NO_NOTES, tmp_path / "same")
    assert result.files["dataset"].name == "gold.csv"
    read = {"infer_schema": False}
    assert pl.read_csv(result.files["dataset"], **read).equals(pl.read_csv(source, **read))
    assert load_gold(result.files["dataset"]).turns.equals(load_gold(source).turns)

    record = dev_table["record_id"][0]
    annotations = notes(
        {"record_id": record, "turn": 1, "corrected_answer": "25.2", "corrected_program": "25.2"},
        {"record_id": dev_table["record_id"][-1], "turn": 0, "exclude": True},
    )
    fixed = export_cleaned(source, annotations, tmp_path / "fixed")
    out = pl.read_csv(fixed.files["dataset"], infer_schema=False)
    last = dev_table["record_id"][-1]
    assert out.height == dev_table.height - dev_table.filter(record_id=last).height
    row = out.filter(record_id=record, turn="1").row(0, named=True)
    assert (row["gold_answer"], row["gold_program"]) == ("25.2", "25.2")
    untouched = out.filter(~((pl.col("record_id") == record) & (pl.col("turn") == "1")))
    assert untouched.equals(
        pl.read_csv(source, **read)
        .filter(pl.col("record_id") != last)
        .filter(~((pl.col("record_id") == record) & (pl.col("turn") == "1")))
    )
    assert apply_annotations(load_gold(source), annotations).turns.equals(load_gold(fixed.files["dataset"]).turns)

    marked = export_cleaned(source, annotations, tmp_path / "marked", keep_excluded=True)
    flags = pl.read_csv(marked.files["dataset"]).group_by("record_id").agg(pl.col("excluded").all())
    assert dict(flags.iter_rows()) == {r: r == last for r in dev_table["record_id"].unique()}


def test_parquet_table_round_trip(dev_table: pl.DataFrame, tmp_path: Path) -> None:
    source = tmp_path / "gold.parquet"
    dev_table.write_parquet(source)
    result = export_cleaned(source, NO_NOTES, tmp_path / "out")
    assert pl.read_parquet(result.files["dataset"]).equals(dev_table)
    fixed = export_cleaned(
        source, notes({"record_id": dev_table["record_id"][0], "turn": 0, "corrected_answer": "yes"}), tmp_path / "f"
    )
    assert pl.read_parquet(fixed.files["dataset"])["gold_answer"][0] == "yes"
    assert load_gold(fixed.files["dataset"]).turns["gold_answer"][0] == "yes"


# --------------------------------------------------------------------------- split
@pytest.mark.parametrize("fraction", [0.0, 1.0, 1.5, -0.2])
def test_split_fraction_must_lie_between_0_and_1(dev_small_path: Path, tmp_path: Path, fraction: float) -> None:
    with pytest.raises(UsageError, match="between 0 and 1"):
        export_cleaned(dev_small_path, NO_NOTES, tmp_path / "out", split=fraction)


def test_export_with_split_writes_train_and_test(dev_path: Path, tmp_path: Path) -> None:
    result = export_cleaned(dev_path, NO_NOTES, tmp_path / "a", split=0.8, seed=7)
    train, test = load_gold(result.files["train"]), load_gold(result.files["test"])
    assert (train.layout, test.layout) == ("convfinqa-reformatted", "convfinqa-reformatted")
    assert list(read_json(result.files["train"])) == ["train"] and list(read_json(result.files["test"])) == ["test"]
    train_ids, test_ids = set(train.turns["record_id"]), set(test.turns["record_id"])
    assert not train_ids & test_ids and len(train_ids | test_ids) == 421
    assert train.turns.height + test.turns.height == 1490
    assert len(train_ids) == round(0.8 * 421)
    # the records with a greater() turn (4 in dev) land on both sides
    greater = set(load_gold(dev_path).turns.filter(pl.col("gold_program").str.contains("greater"))["record_id"])
    assert len(greater) == 4 and greater & train_ids and greater & test_ids
    table = pl.read_csv(result.files["split"])
    assert table.columns == ["record_id", "split", "stratum"]
    assert set(table.filter(pl.col("record_id").is_in(list(greater)))["stratum"]) == {"rare:greater"}
    assert result.manifest["split"]["train"]["n_records"] == len(train_ids)
    # records keep their shape and order inside each side
    originals = [r for r in read_json(dev_path)["dev"] if r["id"] in train_ids]
    assert read_json(result.files["train"])["train"] == originals
    again = export_cleaned(dev_path, NO_NOTES, tmp_path / "b", split=0.8, seed=7)
    assert again.files["split"].read_bytes() == result.files["split"].read_bytes()


def test_split_leaves_kept_excluded_records_out(dev_small_path: Path, tmp_path: Path) -> None:
    annotations = notes({"record_id": "Double_HII/2017/page_104.pdf", "turn": 0, "exclude": True})
    result = export_cleaned(dev_small_path, annotations, tmp_path / "out", split=0.5, keep_excluded=True)
    table = pl.read_csv(result.files["split"])
    assert table.filter(split="excluded")["record_id"].to_list() == ["Double_HII/2017/page_104.pdf"]
    sides = {r["id"] for f in ("train", "test") for r in read_json(result.files[f])[f]}
    assert len(sides) == 11 and "Double_HII/2017/page_104.pdf" not in sides


def test_gsm8k_and_table_splits_keep_their_layout(
    gsm8k_small_path: Path, dev_table: pl.DataFrame, tmp_path: Path
) -> None:
    result = export_cleaned(gsm8k_small_path, NO_NOTES, tmp_path / "g", split=0.75)
    assert result.files["train"].name == "train.jsonl"
    assert load_gold(result.files["train"]).turns.height == 15 and load_gold(result.files["test"]).turns.height == 5
    source = tmp_path / "gold.csv"
    dev_table.write_csv(source)
    table = export_cleaned(source, NO_NOTES, tmp_path / "t", split=0.6)
    train, test = load_gold(table.files["train"]), load_gold(table.files["test"])
    assert train.layout == test.layout == "plain-table"
    assert train.turns.height + test.turns.height == dev_table.height
    assert train.turns["record_id"].n_unique() == 3


# --------------------------------------------------------------------------- manifest and atomic writing
def test_manifest_hashes_match_and_no_temp_files(dev_small_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = export_cleaned(dev_small_path, NO_NOTES, out, split=0.5)
    manifest = read_json(result.files["manifest"])
    assert manifest == result.manifest
    assert manifest["input"]["sha256"] == file_sha256(dev_small_path)
    assert manifest["workbench_version"] == __import__("workbench").__version__
    listed = {entry["path"] for entry in manifest["files"].values()}
    assert listed | {"manifest.json"} == {p.name for p in out.iterdir()}
    for role, entry in manifest["files"].items():
        assert file_sha256(out / entry["path"]) == entry["sha256"], role
    assert temp_files(out) == []
    # written last
    assert all(os.stat(result.files["manifest"]).st_mtime_ns >= os.stat(out / n).st_mtime_ns for n in listed)


def test_a_failed_write_leaves_no_temp_file_and_no_manifest(
    dev_small_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write_bytes = Path.write_bytes

    def broken(self: Path, data: bytes) -> int:  # the Parquet file is half written, then the disk is full
        if self.name.startswith(".annotations.parquet"):
            real_write_bytes(self, data[: len(data) // 2])
            raise OSError("disk full")
        return real_write_bytes(self, data)

    monkeypatch.setattr(Path, "write_bytes", broken)
    out = tmp_path / "out"
    with pytest.raises(OSError, match="disk full"):
        export_cleaned(dev_small_path, NO_NOTES, out)
    assert temp_files(out) == []
    assert not (out / "manifest.json").exists() and not (out / "annotations.parquet").exists()


def test_a_new_export_removes_files_the_previous_one_wrote(dev_small_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    export_cleaned(dev_small_path, NO_NOTES, out, split=0.5)
    assert (out / "train.json").exists()
    export_cleaned(dev_small_path, NO_NOTES, out)
    assert sorted(p.name for p in out.iterdir()) == [
        "annotations.csv",
        "annotations.parquet",
        "dev_small.json",
        "manifest.json",
    ]


def test_json_lines_table_keeps_untouched_lines(dev_table: pl.DataFrame, tmp_path: Path) -> None:
    source = tmp_path / "gold.jsonl"
    dev_table.write_ndjson(source)  # compact JSON, one turn a line
    record = dev_table["record_id"][0]
    annotations = notes({"record_id": record, "turn": 0, "corrected_answer": "61"})
    result = export_cleaned(source, annotations, tmp_path / "out")
    before = source.read_text(encoding="utf-8").splitlines()
    after = result.files["dataset"].read_text(encoding="utf-8").splitlines()
    assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [0]
    assert after[0] == before[0].replace('"gold_answer":"60.94"', '"gold_answer":"61"')
    assert apply_annotations(load_gold(source), annotations).turns.equals(load_gold(result.files["dataset"]).turns)
