"""The graded schema 2 (issue 35) changes no grade: the bundled sets graded today, their per-turn policy
grades read through the new view (from memory, and from a graded folder written and opened again), are
row by row those ``main`` wrote before the change (7c4bbdf, the last commit with ``policy_grades.parquet``):
every system, record, turn, policy, verdict, status, reason, answer, source, rule and detail.

The digests below are of main's ``run.policy_grades`` with every column as text (nulls as ``\\N``, CSV
in its row order) and of its ``run.turns`` as JSON lines, computed on 2026-11-28 with polars 2.1 by
grading these sets with main's code in a separate process."""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path

import polars as pl
import pytest

from workbench.config import resolve
from workbench.pipeline.run import grade_run, open_run

DATA = Path(__file__).resolve().parents[3] / "data"
RUNS = {
    "convfinqa": (DATA / "convfinqa/dev.json", sorted((DATA / "predictions/convfinqa").rglob("predictions.jsonl"))),
    "gsm8k": (DATA / "gsm8k/test.jsonl", sorted((DATA / "predictions/gsm8k").rglob("*.jsonl"))),
    "math-cot": (None, [DATA / "predictions/math/microsoft-rho-math-7b/test_cot_-1_seed0_t0.0_s0_e-1.jsonl"]),
    "math-interpreter": (
        None,
        [DATA / "predictions/math/microsoft-rho-math-7b-interpreter/test_tora_-1_seed0_t0.0_s0_e-1.jsonl"],
    ),
}

#: run -> (rows of the per-turn policy grades, their digest, the turns' digest), from main 7c4bbdf.
BEFORE = {
    "convfinqa": (
        20860,
        "5d53d7198362259e7f2435dbcfa80b3cfb2e7f5b6ece8bca4966081794579d7c",
        "d5860e66aa8a87309916ce573fd72953ee7a3979deee29363bfe363248da2db1",
    ),
    "gsm8k": (
        73864,
        "7d4024a5e81c7cfd6afe895d2ff4efa27a6b3c30b83c993ea84398992a677448",
        "e43717be1e7e697e7a3f678f30b6b4179449854bc17c478feec8e9105db8b45d",
    ),
    "math-cot": (
        3500,
        "6937fda57694bc481a1b4ca2b3bd01c3fbbe8d090f38763b47dd09f324a187f0",
        "b2c8be689fa8873de7c61b2c47e0aeddc750c1becb77673b7189c32be7a31d84",
    ),
    "math-interpreter": (
        3500,
        "b2c37befe9af9337d19988ed8020bb7d9c79fe0a2b96f2fb65b957e5588cbc39",
        "caf7d436db8a54a01b2c1a002244089af01e030159c6f1ffd45e05f42cb03f84",
    ),
}


def _digest(grades: pl.DataFrame) -> str:
    text = grades.select([pl.col(c).cast(pl.String) for c in grades.columns])
    return hashlib.sha256(text.write_csv(null_value="\\N").encode()).hexdigest()


@pytest.mark.slow
# program-of-thoughts' prompt-only lines are told again when the written folder is opened
@pytest.mark.filterwarnings("ignore:.*prompt-only lines:UserWarning")
@pytest.mark.parametrize("name", list(RUNS))
def test_the_policy_grades_view_is_main_s_table_row_by_row(name: str, tmp_path: Path) -> None:
    dataset, predictions = RUNS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # program-of-thoughts prompt-only lines
        run = grade_run(resolve(dataset=dataset, predictions=predictions))
    rows, grades_digest, turns_digest = BEFORE[name]
    view = run.policy_grades
    assert view.height == rows == run.turns.height * len(run.graded.policy_inputs.columns[1:])
    assert _digest(view) == grades_digest
    assert hashlib.sha256(run.turns.write_ndjson().encode()).hexdigest() == turns_digest
    # kept once per distinct input: fewer rows than turns where outputs repeat (ConvFinQA's two runs share many)
    assert run.graded.policy_inputs.height <= run.turns.height
    run.write(tmp_path / "graded")
    assert not (tmp_path / "graded/policy_grades.parquet").exists()
    assert _digest(open_run(tmp_path / "graded", run.config).policy_grades) == grades_digest
