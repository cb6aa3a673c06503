"""The annotation store: schema, validation on write, retraction, threads. Validation itself is
in test_events.py, CSV import in test_csv_import.py; durability across processes (a SIGKILLed
writer, two writing processes) in tests/system/reliability/test_store_durability.py.

The store is the ``store`` / ``store_location`` of conftest.py: these tests run on SQLite here and on
PostgreSQL in tests/system/postgres/test_store_suite_postgres.py; ``test_sqlite_...`` tests are about
the SQLite file only."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import polars as pl
import pytest

from workbench.annotations import (
    DEFAULT_STORE_NAME,
    AnnotationStore,
    Store,
    active_annotations,
    default_store_path,
    open_store,
)
from workbench.errors import InputError, UsageError
from workbench.schema import ANNOTATION_EVENTS, ANNOTATION_SCHEMA_VERSION

REPO = Path(__file__).resolve().parents[3]


def _note(store: Store, **fields) -> int:
    base = {"annotator": "ana", "record_id": "r1", "turn": 0, "category": "mislabel"}
    return store.annotate(**{**base, **fields})


# --------------------------------------------------------------------------- file and schema
def test_sqlite_default_store_path(tmp_path: Path) -> None:
    assert default_store_path(tmp_path) == tmp_path / "annotations.sqlite"


def test_create_and_reopen_keeps_events(store_location: str) -> None:
    with open_store(store_location) as store:
        first = _note(store, note="first")
    with open_store(store_location, create=False) as again:
        assert again.events().select("event_id", "note").rows() == [(first, "first")]


def test_sqlite_a_new_file_in_a_new_folder_is_wal_with_the_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "a.sqlite"
    with AnnotationStore(path) as store:
        first = _note(store, note="first")
    assert path.exists()
    with AnnotationStore(path, create=False) as again:
        assert again.events().select("event_id", "note").rows() == [(first, "first")]
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == ANNOTATION_SCHEMA_VERSION
        conn.close()


def test_sqlite_connection_is_set_up_for_durability(tmp_path: Path) -> None:
    store = AnnotationStore(tmp_path / DEFAULT_STORE_NAME)
    conn = store._connection()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL: the WAL is synced at every commit
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 10_000
    store.close()


def test_a_missing_store_without_create_is_refused_and_not_made(store_location: str) -> None:
    for _ in range(2):  # the refusal created nothing: refused again
        with pytest.raises(UsageError, match="no annotation store (at|in) .*create=True"):
            open_store(store_location, create=False)


def test_sqlite_missing_file_without_create_is_not_created(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no annotation store at .*create=True"):
        AnnotationStore(tmp_path / "none.sqlite", create=False)
    assert not (tmp_path / "none.sqlite").exists()


def test_events_schema_is_exactly_annotation_events(store: Store) -> None:
    assert store.events().schema == pl.Schema(ANNOTATION_EVENTS)  # empty store
    first = _note(store, system="claude", corrected_answer="1.5", corrected_program="divide(3, 2)", exclude=True)
    store.retract(first, annotator="bo")
    events = store.events()
    assert events.schema == pl.Schema(ANNOTATION_EVENTS)
    assert events.height == 2
    created = events.get_column("created_at")
    assert created.dtype == pl.Datetime("us", "UTC")
    assert created.is_sorted()
    assert abs(created[0].timestamp() - time.time()) < 60
    row = events.row(0, named=True)
    assert (row["kind"], row["system"], row["corrected_program"], row["exclude"]) == (
        "annotation",
        "claude",
        "divide(3, 2)",
        True,
    )


def test_sqlite_created_at_is_iso_utc_text_with_microseconds(tmp_path: Path) -> None:
    with AnnotationStore(tmp_path / DEFAULT_STORE_NAME) as store:
        _note(store)
    conn = sqlite3.connect(store.path)
    (text,) = conn.execute("SELECT created_at FROM events").fetchone()
    conn.close()
    assert text.endswith("+00:00") and len(text.split(".")[1]) == len("123456+00:00")


def test_sqlite_file_with_another_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    AnnotationStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 7")
    conn.close()
    with pytest.raises(UsageError) as caught:
        AnnotationStore(path)
    message = str(caught.value)
    assert "schema version 7" in message and f"reads version {ANNOTATION_SCHEMA_VERSION}" in message
    assert "Fix:" in message


def test_sqlite_other_files_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE things (x)")
    conn.commit()
    conn.close()
    with pytest.raises(UsageError, match="not an annotation store.*things"):
        AnnotationStore(other)
    text = tmp_path / "notes.txt"
    text.write_text("hello, this is not a database at all" * 100)
    with pytest.raises(InputError, match="not an SQLite database"):
        AnnotationStore(text)


def test_sqlite_check_constraints_guard_the_file_itself(tmp_path: Path) -> None:
    AnnotationStore(tmp_path / DEFAULT_STORE_NAME).close()
    conn = sqlite3.connect(tmp_path / DEFAULT_STORE_NAME)
    insert = (
        "INSERT INTO events (kind, created_at, annotator, record_id, turn, category, exclude, retracts) "
        "VALUES (?, '2026-01-01T00:00:00.000000+00:00', 'ana', 'r', 0, ?, ?, ?)"
    )
    for kind, category, exclude, retracts in [
        ("annotation", "typo", 0, None),  # unknown category
        ("edit", "other", 0, None),  # unknown kind
        ("annotation", "other", 2, None),  # exclude not 0/1
        ("annotation", None, 0, None),  # annotation without a category
        ("retraction", "other", 0, 1),  # retraction with a category
    ]:
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute(insert, (kind, category, exclude, retracts))
    conn.close()


def test_closed_store_is_a_usage_error(store_location: str) -> None:
    store = open_store(store_location)
    store.close()
    store.close()  # twice is fine
    with pytest.raises(UsageError, match="closed"):
        store.events()


# --------------------------------------------------------------------------- validation on write
def test_annotate_validates_and_writes_nothing_when_invalid(store: Store) -> None:
    with pytest.raises(InputError, match="field 'category'"):
        _note(store, category="Mislabel")
    assert store.events().height == 0


def test_blank_optional_text_is_stored_as_null(store: Store) -> None:
    _note(store, corrected_answer="", corrected_program="  ", note="", system="")
    row = store.events().row(0, named=True)
    assert (row["corrected_answer"], row["corrected_program"], row["note"], row["system"]) == (None,) * 4


def test_valid_program_forms_are_accepted(store: Store) -> None:
    for program in ("subtract(60.94, 25.14), divide(#0, 25.14)", "(26.7 - 30.5) / 30.5", "table_sum(sales, none)"):
        _note(store, corrected_program=program)
    assert store.events().height == 3


# --------------------------------------------------------------------------- retraction and active
def test_retraction_row_and_errors(store: Store) -> None:
    first = _note(store, record_id="r9", turn=3, system="claude")
    undo = store.retract(first, annotator="bo")
    row = store.events().filter(pl.col("event_id") == undo).row(0, named=True)
    assert row["kind"] == "retraction" and row["category"] is None and row["retracts"] == first
    assert (row["record_id"], row["turn"], row["system"], row["annotator"]) == ("r9", 3, "claude", "bo")
    with pytest.raises(UsageError, match="no event 99"):
        store.retract(99, annotator="bo")
    with pytest.raises(UsageError, match=f"event {undo} is a retraction"):
        store.retract(undo, annotator="bo")
    with pytest.raises(UsageError, match=f"already retracted \\(by event {undo}\\)"):
        store.retract(first, annotator="bo")
    with pytest.raises(UsageError, match="annotator"):
        store.retract(first, annotator="")
    assert store.events().height == 2  # the refused retractions wrote nothing


def test_any_whole_number_type_is_an_event_id(store: Store) -> None:
    """An id read back through numpy or pandas (``numpy.int64``) is an event id on every backend."""
    import numpy as np

    first = _note(store)
    undo = store.retract(np.int64(first), annotator="bo")
    assert store.events().filter(pl.col("event_id") == undo)["retracts"].to_list() == [first]
    with pytest.raises(UsageError, match="an event id"):
        store.retract(True, annotator="bo")  # a bool is not an id
    with pytest.raises(UsageError, match="an event id"):
        store.retract(1.0, annotator="bo")  # type: ignore[arg-type]


def test_active_latest_wins_and_retracted_disappears(store: Store) -> None:
    a = _note(store, category="mislabel")
    b = _note(store, category="unit_inconsistency", corrected_answer="18.77")
    gold_other_turn = _note(store, turn=1, category="other")
    system_key = _note(store, system="claude", category="model_error")
    active = store.active()
    assert active.columns == [c for c in ANNOTATION_EVENTS if c not in ("kind", "retracts")]
    assert active.select("event_id", "turn", "system", "category").rows() == [
        (b, 0, None, "unit_inconsistency"),  # system null first, and the latest of the key
        (system_key, 0, "claude", "model_error"),  # a system is a different key from the gold turn
        (gold_other_turn, 1, None, "other"),
    ]
    store.retract(b, annotator="ana")  # the earlier annotation of the key is in force again
    assert store.active().filter(pl.col("turn") == 0, pl.col("system").is_null())["event_id"].to_list() == [a]
    store.retract(a, annotator="ana")
    store.retract(system_key, annotator="ana")
    assert store.active()["event_id"].to_list() == [gold_other_turn]
    assert active_annotations(store.events().head(0)).height == 0


def test_snapshot_changes_when_an_event_is_added(store: Store, store_location: str) -> None:
    empty = store.snapshot()
    assert empty["n_events"] == 0 and empty["max_event_id"] == 0 and len(empty["sha256"]) == 64
    first = _note(store)
    one = store.snapshot()
    assert one["n_events"] == 1 and one["max_event_id"] == first and one["sha256"] != empty["sha256"]
    assert store.snapshot() == one  # reading does not change it
    store.retract(first, annotator="ana")
    assert store.snapshot()["sha256"] != one["sha256"]
    with open_store(store_location, create=False) as again:
        assert again.snapshot() == store.snapshot()


def test_annotate_many_is_one_transaction(store: Store) -> None:
    rows = [{"annotator": "ana", "record_id": "r", "turn": t, "category": "other"} for t in range(3)]
    assert store.annotate_many(rows) == [1, 2, 3]
    bad = [*rows, {"annotator": "ana", "record_id": "r", "turn": 9, "category": "nope"}]
    with pytest.raises(InputError, match="batch: row 4: field 'category'"):
        store.annotate_many(bad, where="batch")
    with pytest.raises(InputError, match="unknown field 'colour'"):
        store.annotate_many([{**rows[0], "colour": "red"}])
    assert store.events().height == 3
    assert store.annotate_many([]) == []


def test_threads_share_one_store(store: Store) -> None:
    ids: list[int] = []

    def work(name: str) -> None:
        for turn in range(50):
            ids.append(_note(store, annotator=name, turn=turn))

    threads = [threading.Thread(target=work, args=(f"t{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(ids) == list(range(1, 201))
    assert store.events().height == 200


# --------------------------------------------------------------------------- issue 15: creation, empty files
def test_sqlite_a_new_store_is_created_whole_and_leaves_nothing_else(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "annotations.sqlite"
    with AnnotationStore(path) as store:
        assert store.snapshot()["n_events"] == 0
        assert path.read_bytes()[:16] == b"SQLite format 3\x00"  # never an empty file, even for a moment
    assert sorted(p.name for p in path.parent.iterdir()) == ["annotations.sqlite"]


def test_sqlite_zero_byte_file_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / DEFAULT_STORE_NAME
    path.touch()
    for create in (True, False):
        with pytest.raises(InputError) as caught:
            AnnotationStore(path, create=create)
        assert str(caught.value) == (
            f"{path}: the file is empty (0 bytes): not an annotation store, but perhaps one that was cut short (a full "
            "disk, an interrupted copy); the file was left as it is. Fix: restore a backup over it, or delete the "
            "empty file to start a new store"
        )
    assert path.stat().st_size == 0 and sorted(p.name for p in tmp_path.iterdir()) == [DEFAULT_STORE_NAME]
