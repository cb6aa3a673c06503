"""Opening a graded folder as a run again, without grading (``workbench.pipeline.run.open_run``)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from workbench.config import resolve
from workbench.errors import InputError
from workbench.pipeline import run as run_module
from workbench.pipeline.run import Run, grade_run, open_or_grade, open_run

REPO = Path(__file__).resolve().parents[3]
GOLD = REPO / "tests/fixtures/convfinqa/dev_small.json"
PREDS = REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl"
PREDS_B = REPO / "tests/fixtures/predictions/zarifaziz_dev_small_12-48-44Z.jsonl"


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Path]:
    """The fixture's two systems graded once and written; the folder holds copies of the inputs."""
    folder = tmp_path_factory.mktemp("open")
    for source in (GOLD, PREDS, PREDS_B):
        shutil.copy(source, folder / source.name)
    config = resolve(
        dataset=folder / GOLD.name, predictions=[str(folder / PREDS.name), str(folder / PREDS_B.name)], systems="a;b"
    )
    run = grade_run(config)
    run.write(folder / "graded")
    return run, folder


def _same(a: Any, b: Any) -> bool:
    """Equal, NaN equal to NaN (JSON keeps NaN as NaN, but two NaNs never compare equal)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


def test_opened_run_has_the_graded_tables_dtypes_and_summary(graded: tuple[Run, Path]) -> None:
    fresh, folder = graded
    opened = open_run(folder / "graded", fresh.config)
    for name in ("turns", "unmatched", "policy_grades", "checks", "conversations"):
        assert_frame_equal(getattr(opened, name), getattr(fresh, name), check_dtypes=True)
    assert any(isinstance(t, pl.Enum) for t in opened.turns.schema.values()), "Enum columns survive Parquet"
    summary = json.loads((folder / "graded/summary.json").read_text(encoding="utf-8"))
    assert opened.summary == summary["systems"] or _same(opened.summary, summary["systems"])
    assert _same(json.loads(json.dumps(fresh.summary)), opened.summary)
    assert opened.graded.systems == fresh.graded.systems == ("a", "b")
    assert opened.graded.policy == fresh.graded.policy and opened.kind == fresh.kind
    assert opened.prediction_files == fresh.prediction_files and opened.gold.path == fresh.gold.path
    assert_frame_equal(opened.gold.turns, fresh.gold.turns)
    assert len(opened.predictions) == 2
    assert_frame_equal(opened.predictions[1], fresh.predictions[1])


def test_opening_without_a_config_reads_the_recorded_one(graded: tuple[Run, Path]) -> None:
    fresh, folder = graded
    opened = open_run(folder / "graded")
    assert opened.config.predictions == fresh.config.predictions and opened.config.systems == ("a", "b")
    assert opened.config.dataset == fresh.config.dataset and opened.config.policy == fresh.config.policy
    assert_frame_equal(opened.turns, fresh.turns)


def test_the_opened_run_regrades_as_the_fresh_one(graded: tuple[Run, Path]) -> None:
    fresh, folder = graded
    opened = open_run(folder / "graded", fresh.config)
    assert_frame_equal(opened.regrade(fresh.gold).turns, fresh.graded.turns)


def test_writing_into_the_folder_it_came_from_writes_nothing(graded: tuple[Run, Path]) -> None:
    fresh, folder = graded
    opened = open_run(folder / "graded", fresh.config)
    before = {p.name: p.stat().st_mtime_ns for p in (folder / "graded").iterdir()}
    paths = opened.write(folder / "graded")
    assert [p.name for p in paths.values()] == [p.name for p in fresh.write(folder / "again").values()]
    assert {p.name: p.stat().st_mtime_ns for p in (folder / "graded").iterdir()} == before
    copy = opened.write(folder / "copy")
    assert all(p.read_bytes() == (folder / "again" / p.name).read_bytes() for p in copy.values())


def test_a_changed_or_missing_input_is_refused_in_one_line(graded: tuple[Run, Path], tmp_path: Path) -> None:
    _, folder = graded
    copy = tmp_path / "case"
    shutil.copytree(folder, copy)
    summary = copy / "graded/summary.json"
    summary.write_text(summary.read_text(encoding="utf-8").replace(str(folder), str(copy)), encoding="utf-8")
    open_run(copy / "graded")  # a copy of the inputs and the folder opens
    changed = copy / PREDS_B.name
    changed.write_text(changed.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"the file changed since .* \(its sha256 differs\)") as info:
        open_run(copy / "graded")
    assert "\n" not in str(info.value) and PREDS_B.name in str(info.value)
    (copy / GOLD.name).unlink()
    with pytest.raises(InputError, match=rf"{GOLD.name}: file not found \(the graded folder"):
        open_run(copy / "graded")
    (copy / "graded/checks.parquet").unlink()
    with pytest.raises(InputError, match="not a complete graded folder: checks.parquet is missing"):
        open_run(copy / "graded")


def test_a_folder_of_other_inputs_is_refused(graded: tuple[Run, Path]) -> None:
    fresh, folder = graded
    other = resolve(dataset=folder / GOLD.name, predictions=[str(folder / PREDS.name)], systems="a")
    with pytest.raises(InputError, match="graded from other input files than these"):
        open_run(folder / "graded", other)
    renamed = resolve(
        dataset=folder / GOLD.name, predictions=[str(folder / PREDS.name), str(folder / PREDS_B.name)], systems="a;c"
    )
    with pytest.raises(InputError, match="graded as systems a, b, not a, c"):
        open_run(folder / "graded", renamed)


def test_open_or_grade_opens_a_graded_folder_and_grades_otherwise(
    graded: tuple[Run, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh, folder = graded
    calls: list[object] = []
    real = run_module.grade_run
    monkeypatch.setattr(run_module, "grade_run", lambda config, **kw: calls.append(config) or real(config, **kw))
    assert open_or_grade(fresh.config, folder / "graded").graded_dir == folder / "graded" and not calls
    assert open_or_grade(fresh.config, "").graded_dir is None and len(calls) == 1
    assert open_or_grade(fresh.config, tmp_path / "not-yet").graded_dir is None and len(calls) == 2
