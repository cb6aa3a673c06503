"""Graded folders of version 2 written while the keys ``system`` and ``record_id`` were text in
memory (``tests/fixtures/graded_v2``, saved from ``main`` at 658c712 with ``workbench grade``: the
ConvFinQA dev sample with one zarifaziz run, the first 20 GSM8K problems with ToRA-70B's outputs).
Issue 35 makes the keys categories in every table (:data:`workbench.schema.KEY_DTYPE`); the files
keep them as text, so such a folder is today's layout: it opens with the keys as categories, gives
the tables of a fresh grading, joins, and shows the same text."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from workbench.annotations.store import AnnotationStore
from workbench.io.gold import load_gold
from workbench.io.manifest import SCHEMA_VERSIONS
from workbench.pipeline.graded import GRADED_TABLES, read_graded
from workbench.pipeline.run import Run, grade_run, open_run
from workbench.schema import GRADED_TURNS, KEY_COLUMNS, KEY_DTYPE

REPO = Path(__file__).resolve().parents[3]
V2 = REPO / "tests/fixtures/graded_v2"


@pytest.fixture(scope="module", params=["convfinqa", "gsm8k"])
def saved_and_fresh(request: pytest.FixtureRequest) -> tuple[Path, Run, Run]:
    """A folder saved from ``main`` opened (its recorded inputs are paths from the repository's
    root) and the same inputs graded afresh."""
    folder = V2 / request.param
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)
        opened = open_run(folder)
        fresh = grade_run(opened.config)
        _ = opened.policy_grades, fresh.policy_grades, opened.summary
    return folder, opened, fresh


def test_the_saved_folder_is_version_2_with_text_keys_on_disk() -> None:
    for name in ("convfinqa", "gsm8k"):
        folder = V2 / name
        assert json.loads((folder / "summary.json").read_text(encoding="utf-8"))["schema_version"] == 2
        assert SCHEMA_VERSIONS["graded"] == 2  # the layout did not change: no new version
        for table in ("turns", "conversations", "checks", "unmatched"):
            stored = pl.read_parquet_schema(folder / f"{table}.parquet")
            keys = [k for k in KEY_COLUMNS if k in stored]
            assert keys and all(stored[k] == pl.String for k in keys), (name, table, stored)


def test_a_saved_version_2_folder_opens_with_categorical_keys_in_every_table() -> None:
    _, tables, _ = read_graded(V2 / "convfinqa")
    assert list(tables) == list(GRADED_TABLES)
    for name, frame in tables.items():
        for key in KEY_COLUMNS:
            if key in frame.columns:
                assert frame.schema[key] == KEY_DTYPE, (name, key)
    assert "record_id" not in tables["policy_inputs"].columns


def test_a_saved_version_2_folder_gives_the_tables_of_a_fresh_grading(saved_and_fresh: tuple[Path, Run, Run]) -> None:
    folder, opened, fresh = saved_and_fresh
    assert opened.turns.schema == pl.Schema(GRADED_TURNS)
    assert_frame_equal(opened.turns, fresh.turns, check_dtypes=True)
    assert_frame_equal(opened.policy_grades, fresh.policy_grades, check_dtypes=True)
    assert_frame_equal(opened.checks, fresh.checks, check_dtypes=True)
    assert_frame_equal(opened.unmatched, fresh.unmatched, check_dtypes=True)
    assert opened.policy_grades.schema["system"] == opened.policy_grades.schema["record_id"] == KEY_DTYPE
    # the same text, row by row and in the same order, as the file written from text keys holds
    stored = pl.read_parquet(folder / "turns.parquet").drop("input_key")
    shown = opened.turns.with_columns(pl.col(*KEY_COLUMNS).cast(pl.String))
    assert_frame_equal(shown, stored, check_dtypes=True)
    assert shown["record_id"].to_list() == stored["record_id"].to_list()


def test_a_saved_version_2_folder_written_again_has_the_same_layout_and_rows(
    saved_and_fresh: tuple[Path, Run, Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, _, fresh = saved_and_fresh
    monkeypatch.chdir(REPO)
    fresh.write(tmp_path / "again")
    for table in GRADED_TABLES:
        saved, written = folder / f"{table}.parquet", tmp_path / "again" / f"{table}.parquet"
        assert pl.read_parquet_schema(written) == pl.read_parquet_schema(saved), table
        assert_frame_equal(pl.read_parquet(written), pl.read_parquet(saved), check_dtypes=True)


def test_the_tables_of_a_saved_folder_join_with_each_other_and_with_a_gold_read_afresh(
    saved_and_fresh: tuple[Path, Run, Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, opened, _ = saved_and_fresh
    monkeypatch.chdir(REPO)
    turns = opened.turns
    keys = ["system", "record_id", "turn"]
    with_grades = turns.select(keys).join(opened.policy_grades, on=keys, how="inner")
    assert with_grades.height == opened.policy_grades.height
    gold = load_gold(opened.config.dataset)
    assert gold.turns.schema["record_id"] == KEY_DTYPE
    on_gold = turns.join(gold.turns.select("record_id", "turn"), on=["record_id", "turn"], how="semi")
    assert on_gold.height == turns.height
    flagged = turns.join(opened.checks.select("record_id", "turn").unique(), on=["record_id", "turn"], how="semi")
    assert flagged.height == turns.filter(pl.col("dq_category").is_not_null()).height


def test_annotations_read_from_the_store_join_the_turns_of_a_saved_folder(tmp_path: Path) -> None:
    """The annotation store's rows (SQLite text, read into :data:`~workbench.schema.ANNOTATION_EVENTS`)
    hold the same keys as the graded tables: an annotation about one system's turn joins it."""
    _, tables, _ = read_graded(V2 / "convfinqa")
    turns = tables["turns"]
    first, other = turns.row(0, named=True), turns.row(5, named=True)
    store = AnnotationStore(tmp_path / "notes.sqlite")
    store.annotate(
        annotator="ana", record_id=first["record_id"], turn=first["turn"], category="mislabel", system=first["system"]
    )
    store.annotate(annotator="ana", record_id=other["record_id"], turn=other["turn"], category="other")
    active = store.active()
    assert active.schema["record_id"] == active.schema["system"] == KEY_DTYPE
    keys = ["system", "record_id", "turn"]
    about_a_system = turns.join(active.drop_nulls("system").select(*keys, "category"), on=keys, how="inner")
    assert about_a_system.select(*keys).rows() == [(first["system"], first["record_id"], first["turn"])]
    about_gold = turns.join(
        active.filter(pl.col("system").is_null()).select("record_id", "turn"), on=["record_id", "turn"]
    )
    assert set(about_gold["record_id"].to_list()) == {other["record_id"]}
