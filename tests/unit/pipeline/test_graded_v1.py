"""Graded folders of version 1 (issue 35): saved from ``main`` before the policy grades were kept once
per distinct input (``tests/fixtures/graded_v1``: the ConvFinQA dev sample with one zarifaziz run, the
first 20 GSM8K problems with ToRA-70B's outputs), they still open, converted as they are read, and give
the turns and the per-turn policy grades of a fresh grading; and the version-2 layout they become."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from workbench.errors import InputError
from workbench.io.manifest import SCHEMA_VERSIONS
from workbench.pipeline.run import Run, grade_run, open_run

REPO = Path(__file__).resolve().parents[3]
V1 = REPO / "tests/fixtures/graded_v1"


@pytest.fixture(scope="module", params=["convfinqa", "gsm8k"])
def v1_and_fresh(request: pytest.FixtureRequest) -> tuple[Path, Run, Run]:
    """A version-1 folder opened (its recorded inputs are paths from the repository's root) and the
    same inputs graded afresh."""
    folder = V1 / request.param
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)
        opened = open_run(folder)
        fresh = grade_run(opened.config)
        # both built while the recorded paths resolve
        _ = opened.policy_grades, fresh.policy_grades, opened.summary
    return folder, opened, fresh


def test_a_version_1_folder_opens_with_the_turns_and_policy_grades_of_a_fresh_grading(
    v1_and_fresh: tuple[Path, Run, Run],
) -> None:
    folder, opened, fresh = v1_and_fresh
    assert json.loads((folder / "summary.json").read_text(encoding="utf-8"))["schema_version"] == 1
    assert not (folder / "policy_inputs.parquet").exists()
    assert_frame_equal(opened.turns, fresh.turns, check_dtypes=True)
    assert_frame_equal(opened.policy_grades, fresh.policy_grades, check_dtypes=True)
    # the stored table, read as it is, is the view row by row
    stored = pl.read_parquet(folder / "policy_grades.parquet")
    assert_frame_equal(
        opened.policy_grades.with_columns(pl.col(c).cast(stored.schema[c]) for c in stored.columns), stored
    )
    # converted into the one form a fresh grading gives: the same inputs, the turns pointing to the same keys
    assert_frame_equal(opened.graded.policy_inputs, fresh.graded.policy_inputs, check_dtypes=True)
    assert opened.graded.input_keys.equals(fresh.graded.input_keys)
    assert 0 < opened.graded.policy_inputs.height <= opened.turns.height < opened.policy_grades.height
    assert opened.summary == fresh.summary or json.dumps(opened.summary) == json.dumps(
        json.loads(json.dumps(fresh.summary))
    )


def test_a_version_1_folder_written_again_is_a_version_2_folder_with_the_same_view(
    v1_and_fresh: tuple[Path, Run, Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, opened, fresh = v1_and_fresh
    monkeypatch.chdir(REPO)
    fresh.write(tmp_path / "v2")
    summary = json.loads((tmp_path / "v2/summary.json").read_text(encoding="utf-8"))
    assert summary["schema_version"] == SCHEMA_VERSIONS["graded"] == 2
    assert not (tmp_path / "v2/policy_grades.parquet").exists()
    turns = pl.read_parquet(tmp_path / "v2/turns.parquet")
    inputs = pl.read_parquet(tmp_path / "v2/policy_inputs.parquet")
    assert turns.columns[-1] == "input_key" and turns.schema["input_key"] == pl.UInt32
    policies = [p["name"] for p in summary["policies"]]
    assert inputs.columns[0] == "input_key" and sorted(inputs.columns[1:]) == sorted(policies)
    # once per distinct input, not once per turn and policy
    assert inputs.height == turns["input_key"].n_unique() <= turns.height
    assert all(isinstance(inputs.schema[p], pl.Struct) for p in policies)
    reopened = open_run(tmp_path / "v2")
    assert_frame_equal(reopened.policy_grades, opened.policy_grades, check_dtypes=True)
    assert_frame_equal(reopened.turns, opened.turns, check_dtypes=True)


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "v1"
    shutil.copytree(V1 / "convfinqa", copy)
    return copy


def test_a_version_1_folder_whose_policy_grades_hold_text_opens_with_categories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder written while ``policy``, ``answer_source`` and ``extraction_rule`` were text
    columns (before issue 21) opens with today's dtypes."""
    monkeypatch.chdir(REPO)
    opened = open_run(V1 / "convfinqa")
    copy = _copy(tmp_path)
    path = copy / "policy_grades.parquet"
    as_text = pl.read_parquet(path).with_columns(pl.col("policy", "answer_source", "extraction_rule").cast(pl.String))
    as_text.write_parquet(path)
    assert pl.read_parquet(path).schema["policy"] == pl.String
    again = open_run(copy)
    assert again.policy_grades.schema["policy"] == pl.Categorical()
    assert_frame_equal(again.policy_grades, opened.policy_grades, check_dtypes=True)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (
            lambda grades: grades.with_columns(pl.lit(1).alias("answer_source")),
            "answer_source holds Int32, not Categorical",
        ),
        (lambda grades: grades.drop("answer_source"), "answer_source is missing"),
    ],
)
def test_a_version_1_policy_grades_column_of_another_type_or_missing_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Callable[[pl.DataFrame], pl.DataFrame], said: str
) -> None:
    copy = _copy(tmp_path)
    path = copy / "policy_grades.parquet"
    change(pl.read_parquet(path)).write_parquet(path)
    monkeypatch.chdir(REPO)
    with pytest.raises(InputError) as caught:
        open_run(copy)
    message = str(caught.value)
    assert "policy_grades.parquet" in message and said in message and "grade the run again" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda turns: turns.drop("input_key"), "input_key is missing"),
        (lambda turns: turns.with_columns(pl.lit(10_000, pl.UInt32).alias("input_key")), "points to no row"),
    ],
)
def test_a_version_2_folder_whose_turns_lost_their_input_is_refused_in_one_line(
    v1_and_fresh: tuple[Path, Run, Run],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    change: Callable[[pl.DataFrame], pl.DataFrame],
    said: str,
) -> None:
    _, _, fresh = v1_and_fresh
    monkeypatch.chdir(REPO)
    fresh.write(tmp_path / "v2")
    path = tmp_path / "v2/turns.parquet"
    change(pl.read_parquet(path)).write_parquet(path)
    with pytest.raises(InputError) as caught:
        open_run(tmp_path / "v2")
    message = str(caught.value)
    assert said in message and "grade the run again" in message and "\n" not in message
