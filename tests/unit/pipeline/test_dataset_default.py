"""No dataset given: the bundled ConvFinQA dev set, unless the prediction files carry their gold."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.config import BUNDLED_DATASET, locate, resolve
from workbench.pipeline.run import grade_run

REPO = Path(__file__).resolve().parents[3]
TORA = REPO / "tests/fixtures/predictions/gsm8k/tora-70b_first_20.jsonl"
CLAUDE = REPO / "data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6/2026-05-04T06-35-00Z/predictions.jsonl"


@pytest.mark.parametrize(
    ("dataset", "predictions", "default"),
    [
        ("", [str(TORA)], True),  # files given, no dataset: the dev set stands in
        ("", "", False),  # the bundled run on the bundled dev set
        (None, [str(TORA)], False),  # the gold travels in the files, said so
        ("none", [str(TORA)], False),
        (BUNDLED_DATASET, [str(TORA)], False),  # a dataset named
    ],
)
def test_which_configs_let_the_files_gold_stand_in(dataset: str | None, predictions: object, default: bool) -> None:
    config = resolve(dataset=dataset, predictions=predictions)  # type: ignore[arg-type]
    assert config.dataset_default is default


def test_outputs_carrying_their_gold_are_graded_against_it() -> None:
    run = grade_run(resolve(dataset="", predictions=[str(TORA)]))
    assert run.config.dataset is None and not run.config.dataset_default
    assert run.gold.benchmark == "gsm8k" and run.unmatched.height == 0 and run.graded.turns.height == 20
    assert any("carry their gold answers" in note and "tora-70b_first_20.jsonl" in note for note in run.notes)


def test_outputs_without_gold_are_graded_against_the_bundled_dev_set() -> None:
    run = grade_run(resolve(dataset="", predictions=[str(CLAUDE)], systems=["claude"]))
    assert run.config.dataset == locate(BUNDLED_DATASET) and run.gold.benchmark == "convfinqa"
    assert run.unmatched.height == 0 and not any("carry their gold" in note for note in run.notes)
