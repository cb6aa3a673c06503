"""No dataset given: the bundled ConvFinQA dev set, unless the prediction files carry their gold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.config import BUNDLED_DATASET, locate, resolve
from workbench.errors import InputError
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
    assert any("graded against the gold answers carried in tora-70b_first_20.jsonl" in note for note in run.notes)


def test_outputs_without_gold_are_graded_against_the_bundled_dev_set() -> None:
    run = grade_run(resolve(dataset="", predictions=[str(CLAUDE)], systems=["claude"]))
    assert run.config.dataset == locate(BUNDLED_DATASET) and run.gold.benchmark == "convfinqa"
    assert run.unmatched.height == 0 and not any("gold answers carried" in note for note in run.notes)


def test_outputs_off_the_dev_set_with_rows_missing_their_gold_are_refused_in_one_line(tmp_path: Path) -> None:
    """Before: a 'ConvFinQA' page listing every output as unmatched, and exit 0."""
    lines = TORA.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[3])
    del record["gt"]
    lines[3] = json.dumps(record)
    path = tmp_path / "tora-partial-gold.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        grade_run(resolve(dataset="", predictions=[str(path)]))
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path))
    assert "none of its 20 rows is on the bundled ConvFinQA dev set" in message
    assert "1 of them carries no gold answer" in message and "gold_answer" in message and "--dataset" in message
    # named, the dataset decides as before: the dev set lists them as unmatched
    run = grade_run(resolve(dataset=BUNDLED_DATASET, predictions=[str(path)]))
    assert run.unmatched.height == 20
