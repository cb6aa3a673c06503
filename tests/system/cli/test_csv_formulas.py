"""Every CSV (and TSV) the workbench writes keeps spreadsheet formulas inert (issue 15, item 6).

The files: ``workbench annotations list`` (active and ``--all``), and in an export
``annotations.csv``, ``split.csv`` and a plain-table dataset in CSV or TSV with its
``train``/``test`` parts. Into each goes every hostile value OWASP names (a formula, an
``@`` function, ``+x``, ``-x``, a tab-led and a CR-led value) in every field the file carries
(record ids, questions, corrected answers, annotators, systems, notes); each file is read back
with Python's ``csv`` module: every such cell starts with ``'``, numbers (``-12.5``, ``+3``,
``-1e5``) are as they were, and no cell of the file begins with ``= + - @``, tab or CR unless it
is a number. JSON and Parquet outputs keep the values verbatim.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from workbench.annotations.store import AnnotationStore
from workbench.cleaning.export import export_cleaned
from workbench.cli import main
from workbench.config import project_root
from workbench.io.csvsafe import count_formula_cells, inert_cells, inert_text, is_formula_cell, write_csv
from workbench.io.gold import load_gold
from workbench.schema import ANNOTATION_EVENTS

DEV_SMALL = project_root() / "tests/fixtures/convfinqa/dev_small.json"

#: OWASP's cases: each must come out with a leading quote.
HOSTILE = ['=HYPERLINK("http://x","y")', "@SUM(A1)", "+x", "-x", "\tx", "\rx"]
#: Numbers that begin with a sign: each must come out as it went in.
NUMBERS = ["-12.5", "+3", "-1e5"]


def read_back(text: str, separator: str = ",") -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=separator))


def read_file(path: Path) -> list[list[str]]:
    text = path.read_bytes().decode("utf-8")  # not read_text: it would turn a CR inside a value into LF
    return read_back(text, "\t" if path.suffix == ".tsv" else ",")


def spreadsheet_would_run(cell: str) -> bool:
    """Independent of the code under test: a cell that begins with a trigger and is not a
    number Python can read (a trailing ``%`` allowed)."""
    if not cell[:1] or cell[0] not in "=+-@\t\r":
        return False
    try:
        float(cell.removesuffix("%").replace(",", ""))
    except ValueError:
        return True
    return cell != cell.strip()


def assert_inert(rows: list[list[str]], where: str, *, hostile: list[str], numbers: list[str]) -> None:
    """No cell would run; each hostile value is there quoted; each number is there as it was."""
    cells = [cell for row in rows for cell in row]
    running = [cell for cell in cells if spreadsheet_would_run(cell)]
    assert running == [], f"{where}: {running}"
    for value in hostile:
        assert "'" + value in cells, f"{where}: {value!r} not found quoted"
        assert value not in cells, f"{where}: {value!r} written verbatim"
    for number in numbers:
        assert number in cells, f"{where}: number {number} changed"


# --------------------------------------------------------------------------- the rule
@pytest.mark.parametrize("text", [*HOSTILE, "=1+1", "-", "+-3", "-3+4", "-1e5+cmd|' /C calc'!A0", "\t12", "-12 "])
def test_formula_cells_get_a_leading_quote(text: str) -> None:
    assert is_formula_cell(text) and inert_text(text) == "'" + text


@pytest.mark.parametrize("text", [*NUMBERS, "-9.7%", "-1,234.5", "+.5", "-3E-05", "x", "", " =1", "'=1", "12"])
def test_numbers_and_plain_text_stay(text: str) -> None:
    assert not is_formula_cell(text) and inert_text(text) == text


def test_inert_cells_touches_text_only() -> None:
    frame = pl.DataFrame(
        {
            "=name": HOSTILE,
            "answer": [*NUMBERS, "ok", None, "-y"],
            "n": [-1, 2, 3, 4, 5, 6],
            "kind": pl.Series(["=a", "b", "c", "d", "e", "f"], dtype=pl.Categorical),
        }
    )
    safe = inert_cells(frame)
    assert safe.columns == ["'=name", "answer", "n", "kind"]
    assert safe["'=name"].to_list() == ["'" + v for v in HOSTILE]
    assert safe["answer"].to_list() == [*NUMBERS, "ok", None, "'-y"]
    assert safe["n"].to_list() == [-1, 2, 3, 4, 5, 6]
    assert safe["kind"].to_list()[0] == "'=a"
    assert count_formula_cells(frame) == 6 + 1 + 1 + 1  # the column, '-y', '=a', the column name
    assert frame["=name"].to_list() == HOSTILE  # the input frame is not changed
    assert inert_cells(pl.DataFrame({"a": ["x"]})).rows() == [("x",)]


# --------------------------------------------------------------------------- workbench annotations list
@pytest.fixture
def hostile_store(tmp_path: Path) -> Path:
    """A store whose annotators, record ids, systems and notes are the hostile values; the
    corrected answers are the signed numbers."""
    path = tmp_path / "store.sqlite"
    with AnnotationStore(path) as store:
        for i, value in enumerate(HOSTILE):
            store.annotate(
                annotator=value,
                record_id=value,
                turn=0,
                category="other",
                system=value,
                note=value,
                corrected_answer=NUMBERS[i % len(NUMBERS)],
            )
        first = store.annotate(annotator="ana", record_id="r", turn=1, category="other", note="=2+2")
        store.retract(first, annotator="ana")
    return path


@pytest.mark.parametrize("every_event", [False, True], ids=["active", "all"])
def test_annotations_list_keeps_formulas_inert(
    hostile_store: Path, every_event: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["annotations", "list", "--store", str(hostile_store), *(["--all"] if every_event else [])]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    rows = read_back(out)
    header, body = rows[0], rows[1:]
    assert len(body) == (8 if every_event else 6)
    assert_inert(rows, "annotations list", hostile=HOSTILE, numbers=NUMBERS)
    for column in ("annotator", "record_id", "system", "note"):
        values = [row[header.index(column)] for row in body]
        sent = HOSTILE if column != "annotator" else [v for v in HOSTILE if v == v.strip()]  # the store strips names
        assert {"'" + v for v in sent} <= set(values), column
    if every_event:
        assert "'=2+2" in [row[header.index("note")] for row in body]


# --------------------------------------------------------------------------- the export's CSV files
def notes(*rows: dict[str, Any]) -> pl.DataFrame:
    """Active annotations with defaults filled in (not through a store: any text goes)."""
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


@pytest.fixture
def hostile_table() -> pl.DataFrame:
    """Real dev questions and programs, two turns a record; record ids and the first turn's
    question are the hostile values, the second question ends each record plainly; gold
    answers include the signed numbers. (The CR-led id is not in the last row: the reader takes
    a line break in the last row for an unclosed quote.)"""
    turns = load_gold(DEV_SMALL).turns.filter(pl.col("turn") < 2).head(2 * len(HOSTILE))
    order = [0, 1, 5, 2, 3, 4]
    ids = [HOSTILE[order[i // 2]] for i in range(turns.height)]
    return pl.DataFrame(
        {
            "record_id": ids,
            "turn": [str(t) for t in turns["turn"]],
            "question": [HOSTILE[order[i // 2]] if i % 2 == 0 else q for i, q in enumerate(turns["question"])],
            "gold_answer": [NUMBERS[i % 3] for i in range(turns.height)],
            "gold_program": turns["gold_program"].to_list(),
        }
    )


def hostile_notes() -> pl.DataFrame:
    """Corrections, annotators and notes that are the hostile values; system-level annotations
    whose systems are. (No CR in the table's last row, as in :func:`hostile_table`.)"""
    rows = [
        {
            "record_id": HOSTILE[0],
            "turn": 1,
            "corrected_answer": HOSTILE[1],
            "annotator": HOSTILE[2],
            "note": HOSTILE[3],
        },
        {
            "record_id": HOSTILE[1],
            "turn": 0,
            "corrected_answer": HOSTILE[0],
            "annotator": HOSTILE[4],
            "note": HOSTILE[5],
        },
        {"record_id": HOSTILE[2], "turn": 1, "corrected_answer": "-12.5", "annotator": HOSTILE[0], "note": HOSTILE[1]},
        {
            "record_id": HOSTILE[3],
            "turn": 0,
            "corrected_answer": HOSTILE[2],
            "annotator": HOSTILE[3],
            "note": HOSTILE[2],
        },
        {
            "record_id": HOSTILE[4],
            "turn": 1,
            "corrected_answer": HOSTILE[4],
            "annotator": HOSTILE[1],
            "note": HOSTILE[0],
        },
        {
            "record_id": HOSTILE[5],
            "turn": 0,
            "corrected_answer": HOSTILE[5],
            "annotator": HOSTILE[5],
            "note": HOSTILE[4],
        },
        {"record_id": HOSTILE[0], "turn": 0, "system": HOSTILE[3], "category": "model_error", "note": "+3"},
    ]
    for i, system in enumerate(HOSTILE):
        rows.append({"record_id": HOSTILE[i], "turn": 1 if i != 4 else 0, "system": system, "category": "model_error"})
    return notes(*rows)


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_every_csv_of_an_export_keeps_formulas_inert(suffix: str, hostile_table: pl.DataFrame, tmp_path: Path) -> None:
    source = tmp_path / f"gold{suffix}"
    hostile_table.write_csv(source, separator="\t" if suffix == ".tsv" else ",")  # verbatim: the hostile input
    result = export_cleaned(source, hostile_notes(), tmp_path / "out", split=0.5, seed=3)
    files = result.files
    assert {files[role].suffix for role in ("dataset", "train", "test")} == {suffix}

    assert_inert(read_file(files["annotations_csv"]), "annotations.csv", hostile=HOSTILE, numbers=["-12.5", "+3"])
    assert_inert(read_file(files["dataset"]), f"dataset {suffix}", hostile=HOSTILE, numbers=NUMBERS)
    parts = read_file(files["train"]) + read_file(files["test"])[1:]
    assert_inert(parts, f"train + test {suffix}", hostile=HOSTILE, numbers=NUMBERS)
    split_rows = read_file(files["split"])
    assert_inert(split_rows, "split.csv", hostile=HOSTILE, numbers=[])
    assert sorted(r[0] for r in split_rows[1:]) == sorted("'" + v for v in HOSTILE)

    dataset = {(r[0], r[1]): r for r in read_file(files["dataset"])[1:]}
    assert dataset[("'" + HOSTILE[0], "1")][3] == "'" + HOSTILE[1]  # the corrected answer, quoted
    assert dataset[("'" + HOSTILE[2], "1")][3] == "-12.5"  # a corrected number, as it was
    quoted = result.manifest["output"]["quoted_cells"]
    assert set(quoted) == {"dataset", "train", "test", "split", "annotations_csv"} and all(quoted.values())
    # what the docs say: a quoted id is the id of the exported CSV when the tool reads it back
    assert set(load_gold(files["dataset"]).turns["record_id"]) == {"'" + v for v in HOSTILE}


def test_json_and_parquet_outputs_keep_values_verbatim(hostile_table: pl.DataFrame, tmp_path: Path) -> None:
    source = tmp_path / "gold.parquet"
    hostile_table.write_parquet(source)
    result = export_cleaned(source, hostile_notes(), tmp_path / "out", split=0.5, seed=3)
    table = pl.read_parquet(result.files["dataset"])
    assert sorted(set(table["record_id"])) == sorted(HOSTILE)
    assert table.filter(record_id=HOSTILE[0], turn="1")["gold_answer"].item() == HOSTILE[1]
    assert set(pl.read_parquet(result.files["annotations_parquet"])["note"].drop_nulls()) >= set(HOSTILE)
    assert set(result.manifest["output"]["quoted_cells"]) == {"split", "annotations_csv"}
    assert load_gold(result.files["dataset"]).turns["record_id"].unique().sort().to_list() == sorted(HOSTILE)

    record = load_gold(DEV_SMALL).turns["record_id"][0]
    fixed = export_cleaned(
        DEV_SMALL, notes({"record_id": record, "turn": 0, "corrected_answer": HOSTILE[0]}), tmp_path / "j"
    )
    data = json.loads(fixed.files["dataset"].read_text(encoding="utf-8"))
    answers = next(r["dialogue"]["conv_answers"] for r in data["dev"] if r["id"] == record)
    assert answers[0] == HOSTILE[0]
    assert_inert(read_file(fixed.files["annotations_csv"]), "annotations.csv", hostile=HOSTILE[:1], numbers=[])


def test_write_csv_returns_the_text_like_polars() -> None:
    frame = pl.DataFrame({"a": ["=1", "-2"]})
    assert write_csv(frame) == "a\n'=1\n-2\n"
    assert write_csv(frame, separator="\t") == "a\n'=1\n-2\n"
