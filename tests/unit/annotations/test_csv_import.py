"""Annotations from a CSV file: every row checked first, then all written in one transaction;
a bad line or header names its line and field and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.annotations import Store, import_csv
from workbench.errors import InputError


def test_import_csv_happy_path(store: Store, tmp_path: Path) -> None:
    csv_path = tmp_path / "notes.csv"
    csv_path.write_text(
        "record_id,turn,category,system,corrected_answer,corrected_program,note,exclude,annotator\n"
        'r1,0,mislabel,,14.1%,"subtract(5, 3)","ok, checked",yes,\n'
        "r1,1,model_error,claude,,,,,bo\n"
        "r2,2,other,,,,,FALSE,\n",
        encoding="utf-8",
    )
    ids = import_csv(store, csv_path, annotator="ana")
    assert ids == [1, 2, 3]
    rows = store.events().select("annotator", "record_id", "turn", "category", "system", "note", "exclude").rows()
    assert rows == [
        ("ana", "r1", 0, "mislabel", None, "ok, checked", True),
        ("bo", "r1", 1, "model_error", "claude", None, False),
        ("ana", "r2", 2, "other", None, None, False),
    ]
    assert store.events()["corrected_program"][0] == "subtract(5, 3)"


@pytest.mark.parametrize(
    ("bad_line", "field"),
    [
        ("r2,x,other,", "turn"),
        ("r2,1,Other,", "category"),
        ("r2,1,other,maybe", "exclude"),
        (",1,other,", "record_id"),
        ("r2,-1,other,", "turn"),
    ],
)
def test_import_csv_bad_line_writes_nothing(store: Store, tmp_path: Path, bad_line: str, field: str) -> None:
    csv_path = tmp_path / "notes.csv"
    csv_path.write_text(f"record_id,turn,category,exclude\nr1,0,mislabel,\n{bad_line}\nr3,0,other,\n")
    with pytest.raises(InputError) as caught:
        import_csv(store, csv_path, annotator="ana")
    assert caught.value.location == "line 3"
    assert caught.value.field == field
    assert str(caught.value).startswith(f"{csv_path}: line 3: field '{field}'")
    assert store.events().height == 0


def test_import_csv_header_problems(store: Store, tmp_path: Path) -> None:
    csv_path = tmp_path / "notes.csv"
    csv_path.write_text("record_id,turn,category,colour\nr1,0,mislabel,red\n")
    with pytest.raises(InputError, match="unknown column 'colour'.*Fix: use only the columns record_id, turn"):
        import_csv(store, csv_path, annotator="ana")
    csv_path.write_text("record_id,category\nr1,mislabel\n")
    with pytest.raises(InputError, match="field 'turn': missing column"):
        import_csv(store, csv_path, annotator="ana")
    csv_path.write_text("record_id,turn,category\nr1,0,mislabel\n")
    with pytest.raises(InputError, match="field 'annotator'.*pass annotator="):
        import_csv(store, csv_path)
    csv_path.write_text("record_id,turn,category\nr1,0,mislabel,extra\n")
    with pytest.raises(InputError, match="line 2: 1 more value"):
        import_csv(store, csv_path, annotator="ana")
    with pytest.raises(InputError, match="file not found"):
        import_csv(store, tmp_path / "missing.csv", annotator="ana")
    assert store.events().height == 0


def test_import_csv_accepts_a_quoted_note_over_several_lines(store: Store, tmp_path: Path) -> None:
    csv_path = tmp_path / "notes.csv"
    csv_path.write_text(
        'record_id,turn,category,note,exclude\nr1,0,mislabel,"see the table:\nrow 2, column 3",yes\nr2,1,other,,\n'
    )
    assert import_csv(store, csv_path, annotator="ana") == [1, 2]
    assert store.events().select("note", "exclude").rows() == [("see the table:\nrow 2, column 3", True), (None, False)]


def test_import_csv_stores_text_as_written(store: Store, tmp_path: Path) -> None:
    """Issue 33: text read is data; notes beginning with -, +, @ or = are kept byte for byte (the
    defence against formulas is at CSV output, see tests/system/cli/test_csv_formulas.py)."""
    csv_path = tmp_path / "notes.csv"
    notes = ["- missing value", "@alice please check", "-ve sign", "+ one more row", "=SUM(A1)"]
    body = "".join(f"r{i},0,other,{note}\n" for i, note in enumerate(notes))
    csv_path.write_text("record_id,turn,category,note\n" + body + "r9,0,mislabel,-12.5\n", encoding="utf-8")
    import_csv(store, csv_path, annotator="ana")
    assert store.events().get_column("note").to_list() == [*notes, "-12.5"]
