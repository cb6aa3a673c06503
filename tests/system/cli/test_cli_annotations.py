"""`workbench annotations import|list` and `workbench export`, end to end on real dev data."""

from __future__ import annotations

import io
import json
from pathlib import Path

import polars as pl
import pytest

from workbench.cleaning.before_after import cleaning_effect, read_active_annotations
from workbench.cli import main
from workbench.config import resolve
from workbench.io.csvsafe import inert_text
from workbench.io.gold import load_gold
from workbench.pipeline.run import grade_run

REPO = Path(__file__).resolve().parents[3]
DEV = REPO / "data" / "convfinqa" / "dev.json"
SMALL = REPO / "tests" / "fixtures" / "convfinqa" / "dev_small.json"
SMALL_PREDS = REPO / "tests" / "fixtures" / "predictions" / "zarifaziz_dev_small.jsonl"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _small_turns() -> pl.DataFrame:
    return load_gold(SMALL).turns


def test_import_list_and_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    turns = _small_turns()
    first, second = turns.row(0, named=True), turns.row(5, named=True)
    csv = tmp_path / "notes.csv"
    csv.write_text(
        "record_id,turn,category,corrected_answer,note,exclude\n"
        f"{first['record_id']},{first['turn']},mislabel,12345,checked in the table,\n"
        f"{second['record_id']},{second['turn']},ambiguous_question,,two readings,true\n",
        encoding="utf-8",
    )
    store = tmp_path / "annotations.sqlite"
    code, out, err = _run(capsys, "annotations", "import", str(csv), "--store", str(store), "--annotator", "ann")
    assert code == 0, err
    assert "imported 2 annotations" in out
    code, out, err = _run(capsys, "annotations", "list", "--store", str(store))
    assert code == 0, err
    listed = pl.read_csv(out.encode(), infer_schema_length=0)
    assert listed.height == 2 and set(listed["category"]) == {"mislabel", "ambiguous_question"}

    out_dir = tmp_path / "clean"
    code, out, err = _run(capsys, "export", "--dataset", str(SMALL), "--annotations", str(store), "--out", str(out_dir))
    assert code == 0, err
    manifest = json.loads((out_dir / "manifest.json").read_text())
    notes = manifest["annotations"]
    assert notes["snapshot"]["n_events"] == 2 and notes["snapshot"]["path"] == str(store)
    assert (notes["n_active"], notes["n_corrected"], notes["n_excluded_records"]) == (2, 1, 1)
    cleaned = out_dir / SMALL.name
    gold = load_gold(cleaned)
    assert second["record_id"] not in gold.turns["record_id"].to_list()  # excluded conversation dropped
    row = gold.turns.filter((pl.col("record_id") == first["record_id"]) & (pl.col("turn") == first["turn"]))
    assert row["gold_answer"][0] == "12345"


def test_bad_csv_line_is_one_clear_error_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "bad.csv"
    csv.write_text("record_id,turn,category\nA,0,mislabel\nB,zero,mislabel\n", encoding="utf-8")
    store = tmp_path / "a.sqlite"
    code, _, err = _run(capsys, "annotations", "import", str(csv), "--store", str(store), "--annotator", "x")
    assert code == 2
    assert "bad.csv" in err and "line 3" in err and "turn" in err and "Traceback" not in err
    assert not store.exists() and not list(tmp_path.glob("*.sqlite*")), "a failed import creates no store"
    code, out, err = _run(capsys, "annotations", "list", "--store", str(store), "--all")
    assert code == 2 and out == "" and "no annotation store" in err


def test_scores_before_and_after_cleaning(tmp_path: Path) -> None:
    run = grade_run(resolve(dataset=SMALL, predictions=[str(SMALL_PREDS)], systems="claude"))
    empty = read_active_annotations("")
    unchanged = cleaning_effect(run, empty).row(0, named=True)
    assert unchanged["n_changed"] == 0 and unchanged["turn_accuracy_before"] == unchanged["turn_accuracy_after"]
    wrong = run.turns.filter(~pl.col("correct") & pl.col("pred_value").is_not_null()).row(0, named=True)
    from workbench.annotations.store import AnnotationStore

    with AnnotationStore(tmp_path / "a.sqlite") as store:
        # the analyst decides the model was right: the gold becomes the model's answer
        store.annotate(
            annotator="t",
            record_id=wrong["record_id"],
            turn=wrong["turn"],
            category="mislabel",
            corrected_answer=wrong["answer"],
        )
        active = store.active()
    effect = cleaning_effect(run, active).row(0, named=True)
    assert effect["n_changed"] == 1
    assert effect["n_correct_after"] == effect["n_correct_before"] + 1


def test_imported_corrections_flip_exactly_those_turns_after_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The acceptance round trip through the command line: import two corrections, export,
    re-load the export and re-grade the bundled run; only those two verdicts change (the
    turns are explained in tests/unit/cleaning/test_export.py)."""
    csv = tmp_path / "corrections.csv"
    csv.write_text(
        "record_id,turn,category,corrected_answer,corrected_program,note\n"
        'Double_ETR/2011/page_341.pdf,3,mislabel,3.47%,"add(18.9, -0.3), divide(#0, 536.7)",program stops early\n'
        "Single_PM/2015/page_85.pdf-1,0,sign_inconsistency,1,,display answer taken\n",
        encoding="utf-8",
    )
    store = tmp_path / "a.sqlite"
    assert _run(capsys, "annotations", "import", str(csv), "--store", str(store), "--annotator", "t")[0] == 0
    out = tmp_path / "clean"
    code, _, err = _run(capsys, "export", "--dataset", str(DEV), "--annotations", str(store), "--out", str(out))
    assert code == 0, err
    claude = REPO / "data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6/2026-05-04T06-35-00Z/predictions.jsonl"
    before = grade_run(resolve(dataset=DEV, predictions=[str(claude)], systems="c")).turns
    after = grade_run(resolve(dataset=out / DEV.name, predictions=[str(claude)], systems="c")).turns
    keys = ["record_id", "turn"]
    joined = before.select(*keys, "correct").join(after.select(*keys, "correct"), on=keys, suffix="_after")
    flipped = joined.filter(pl.col("correct") != pl.col("correct_after")).sort(keys)
    assert flipped.rows() == [
        ("Double_ETR/2011/page_341.pdf", 3, False, True),
        ("Single_PM/2015/page_85.pdf-1", 0, True, False),
    ]
    assert joined.height == 1490


def test_report_shows_scores_before_and_after_cleaning(tmp_path: Path) -> None:
    from workbench.annotations.store import AnnotationStore
    from workbench.report.runner import run_template

    run = grade_run(resolve(dataset=SMALL, predictions=[str(SMALL_PREDS)], systems="claude"))
    wrong = run.turns.filter(~pl.col("correct") & pl.col("answer").is_not_null()).row(0, named=True)
    store = tmp_path / "a.sqlite"
    with AnnotationStore(store) as notes:
        notes.annotate(
            annotator="t",
            record_id=wrong["record_id"],
            turn=wrong["turn"],
            category="mislabel",
            corrected_answer=wrong["answer"],
        )
    params = {"dataset": str(SMALL), "predictions": str(SMALL_PREDS), "systems": "claude", "annotations": str(store)}
    result = run_template("02-error-slices", parameters={**params, "n_boot": 100}, out_dir=tmp_path / "r")
    page = result.html.read_text(encoding="utf-8")
    assert "Scores before and after cleaning (1 gold annotation in force: 1 corrected answer, 0 exclusions)" in page


# --------------------------------------------------------------------------- issue 15: import holes, one line each
def _one_line(err: str) -> str:
    """The single line the CLI printed on stderr."""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_quoted_multi_line_note_is_imported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A spreadsheet writes a note of several lines as one quoted value; Excel ends lines with CRLF."""
    csv = tmp_path / "notes.csv"
    csv.write_bytes(
        b"record_id,turn,category,annotator,note,exclude\r\n"
        b"r1,0,other,ana,plain,no\r\n"
        b'r2,1,mislabel,ana,"first line\nsecond line, with a comma\n""quoted"" third",yes\r\n'
    )
    store = tmp_path / "a.sqlite"
    code, out, err = _run(capsys, "annotations", "import", str(csv), "--store", str(store))
    assert (code, err) == (0, ""), err
    assert out == f"imported 2 annotations from {csv} into {store} (events #1 to #2)\n"
    notes = read_active_annotations(store).select("record_id", "note", "exclude").rows()
    assert notes == [("r1", "plain", False), ("r2", 'first line\nsecond line, with a comma\n"quoted" third', True)]


def test_a_quote_left_open_is_still_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "open.csv"
    csv.write_text('record_id,turn,category,annotator,note\nr1,0,other,ana,"never closed\nr2,1,other,ana,x\n')
    store = tmp_path / "a.sqlite"
    code, _, err = _run(capsys, "annotations", "import", str(csv), "--store", str(store))
    assert code == 2
    assert _one_line(err) == (
        f"workbench: error: {csv}: line 2: a quote opened here is never closed, so the rest of the file would be "
        "read as one value. Fix: close the quote (write a quote inside a quoted value as two quotes)"
    )
    assert not store.exists()


def test_failed_import_creates_no_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "bad.csv"
    csv.write_text("record_id,turn,category,annotator\nr1,0,no_such_category,ana\n")
    store = tmp_path / "new" / "annotations.sqlite"
    code, _, err = _run(capsys, "annotations", "import", str(csv), "--store", str(store))
    assert code == 2
    assert _one_line(err) == (
        f"workbench: error: {csv}: line 2: field 'category': expected one of missing_value, unit_inconsistency, "
        "sign_inconsistency, mislabel, ambiguous_question, model_error, other, got 'no_such_category'. "
        "Fix: use one of the listed categories"
    )
    assert not store.parent.exists(), "neither the store nor its folder may be created by a failed import"


def test_zero_byte_store_is_refused_not_taken_for_a_new_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "ok.csv"
    csv.write_text("record_id,turn,category,annotator\nr1,0,other,ana\n")
    store = tmp_path / "annotations.sqlite"
    store.write_bytes(b"")
    expected = (
        f"workbench: error: {store}: the file is empty (0 bytes): not an annotation store, but perhaps one that was "
        "cut short (a full disk, an interrupted copy); the file was left as it is. Fix: restore a backup over it, "
        "or delete the empty file to start a new store"
    )
    for args in (["import", str(csv)], ["list"], ["backup"]):
        code, out, err = _run(capsys, "annotations", *args, "--store", str(store))
        assert (code, out) == (2, ""), (args, out)
        assert _one_line(err) == expected, args
    assert store.read_bytes() == b"" and sorted(p.name for p in tmp_path.iterdir()) == ["annotations.sqlite", "ok.csv"]
    store.unlink()  # what the message says to do: a new store then
    code, out, _ = _run(capsys, "annotations", "import", str(csv), "--store", str(store))
    assert code == 0 and "imported 1 annotations" in out


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("corrected_answer", '=HYPERLINK("http://x","y")'),
        ("corrected_answer", "@SUM(A1)"),
        ("corrected_answer", "+x"),
        ("note", "-2+3+cmd|' /C calc'!A0"),
        ("note", "\tx"),
        ("note", "- missing value"),
        ("note", "@alice please check"),
        ("note", "-ve sign"),
    ],
)
def test_text_read_is_stored_as_written_and_made_inert_on_csv_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: str
) -> None:
    """Issue 33: an imported note or answer that begins like a formula is data, stored as written;
    the defence is at CSV output (``annotations list`` writes it inert, as every export does)."""
    csv = tmp_path / "formulas.csv"
    quoted = '"' + value.replace('"', '""') + '"'
    csv.write_text(f"record_id,turn,category,annotator,{field}\nr1,0,other,ana,12\nr2,1,other,ana,{quoted}\n")
    store = tmp_path / "a.sqlite"
    code, out, err = _run(capsys, "annotations", "import", str(csv), "--store", str(store))
    assert code == 0, err
    stored = read_active_annotations(store).filter(pl.col("record_id") == "r2")[field].to_list()
    assert stored == [value]
    code, out, err = _run(capsys, "annotations", "list", "--store", str(store))
    assert code == 0, err
    assert inert_text(value) != value and inert_text(value).replace('"', '""') in out


def test_signed_numbers_are_not_formulas(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "numbers.csv"
    csv.write_text(
        "record_id,turn,category,annotator,corrected_answer,note\n"
        "r1,0,other,ana,-12.5,+3\nr2,1,other,ana,+3,-1e5\nr3,2,other,ana,-9.7%,x = y - 1\n"
    )
    store = tmp_path / "a.sqlite"
    code, out, err = _run(capsys, "annotations", "import", str(csv), "--store", str(store))
    assert code == 0, err
    rows = read_active_annotations(store).select("corrected_answer", "note").rows()
    assert rows == [("-12.5", "+3"), ("+3", "-1e5"), ("-9.7%", "x = y - 1")]


def test_agreement_prints_kappa_per_category_with_n_and_an_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = tmp_path / "two.csv"
    rows = ["record_id,turn,category,annotator"]
    for i, (ana, bo) in enumerate([("mislabel", "mislabel")] * 6 + [("other", "other")] * 3 + [("mislabel", "other")]):
        rows += [f"r{i},0,{ana},ana", f"r{i},0,{bo},bo"]
    csv.write_text("\n".join(rows) + "\n")
    store = tmp_path / "a.sqlite"
    assert _run(capsys, "annotations", "import", str(csv), "--store", str(store))[0] == 0
    code, out, err = _run(capsys, "annotations", "agreement", "--store", str(store))
    assert code == 0, err
    table = pl.read_csv(io.StringIO(out))
    assert table.columns == ["category", "statistic", "analysts", "n", "value", "low", "high"]
    overall = table.row(0, named=True)
    # 9 of 10 agree; ana says mislabel 7 times, bo 6: pe = 0.7*0.6 + 0.3*0.4 = 0.54, kappa = 0.36/0.46
    assert (overall["category"], overall["statistic"], overall["analysts"], overall["n"]) == (
        "all",
        "Cohen's kappa",
        "ana, bo",
        10,
    )
    assert overall["value"] == pytest.approx(0.36 / 0.46, abs=5e-4)
    assert overall["low"] <= overall["value"] <= overall["high"]
    assert table["category"].to_list() == ["all", "mislabel", "other"]
    code, _out, err = _run(capsys, "annotations", "agreement", "--store", str(store), "--analysts", "ana")
    assert code == 2 and err.count("\n") == 1 and "agreement needs two analysts" in err


def test_export_applies_the_adjudicated_decision_and_says_which_rule_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    turns = _small_turns()
    first, second = turns.row(0, named=True), turns.row(5, named=True)
    csv = tmp_path / "two.csv"
    key = f"{first['record_id']},{first['turn']}"
    csv.write_text(
        "record_id,turn,category,corrected_answer,annotator\n"
        f"{key},mislabel,111,ana\n"  # ana and bo differ on the first turn
        f"{key},unit_inconsistency,222,bo\n"
        f"{key},mislabel,111,cy\n"  # cy adjudicates: ana's answer
        f"{second['record_id']},{second['turn']},other,,ana\n",
        encoding="utf-8",
    )
    store = tmp_path / "a.sqlite"
    assert _run(capsys, "annotations", "import", str(csv), "--store", str(store))[0] == 0
    out_dir = tmp_path / "clean"
    code, _out, err = _run(
        capsys, "export", "--dataset", str(SMALL), "--annotations", str(store), "--out", str(out_dir)
    )
    assert code == 0, err
    decided = json.loads((out_dir / "manifest.json").read_text())["annotations"]["decided_by"]
    assert decided["turns"] == {
        "one analyst": 1,
        "analysts agreed": 0,
        "adjudicated": 1,
        "disagreed, not adjudicated": 0,
    }
    assert "adjudicator" in decided["rule"]
    gold = load_gold(out_dir / SMALL.name)
    row = gold.turns.filter((pl.col("record_id") == first["record_id"]) & (pl.col("turn") == first["turn"]))
    assert row["gold_answer"][0] == "111"
    applied = pl.read_csv(out_dir / "annotations.csv", infer_schema_length=0)
    assert sorted(applied["annotator"].to_list()) == ["ana", "cy"]
