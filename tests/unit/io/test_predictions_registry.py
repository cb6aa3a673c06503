"""The prediction readers' registry: one adapter per format and one column shape per plain layout, in order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.config import project_root
from workbench.errors import InputError
from workbench.io.predictions.registry import READERS, SHAPES, detect_map, read_rows, read_source

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "predictions"


def _reader_of(path: Path) -> str | None:
    source = read_source(path)
    return next((r.name for r in READERS if r.detect(source)), None)


def test_readers_and_shapes_in_the_documented_order() -> None:
    assert [r.name for r in READERS] == [
        "Inspect AI log",
        "OpenAI GSM8K",
        "ToRA",
        "program-of-thoughts",
        "lm-eval samples",
        "ghchen99 results",
        "ghchen99 predictions",
    ]
    assert [(s.name, s.keys) for s in SHAPES] == [
        ("zarifaziz", ("record_id", "turn_idx")),
        ("canonical", ("record_id", "turn")),
    ]


@pytest.mark.parametrize(
    ("fixture", "name"),
    [
        ("gsm8k/openai_example_model_solutions_first_20.jsonl", "OpenAI GSM8K"),
        ("gsm8k/tora-70b_first_20.jsonl", "ToRA"),
        ("gsm8k/pot_zeroshot_first_20.jsonl", "program-of-thoughts"),
        ("gsm8k/pot_fewshot_lines_1-12_1052-1056.jsonl", "program-of-thoughts"),
        ("lm_eval/tora-70b-rendered/samples_gsm8k_2026-11-21T19-50-41.jsonl", "lm-eval samples"),
        ("ghchen99_evaluation_results_20250523_221608.json", "ghchen99 results"),
        ("ghchen99_predictions_first_100.json", "ghchen99 predictions"),
        ("zarifaziz_dev_small.jsonl", None),
    ],
)
def test_each_fixture_is_claimed_by_its_reader(fixture: str, name: str | None) -> None:
    assert _reader_of(FIXTURES / fixture) == name


def test_plain_rows_are_mapped_by_the_first_shape_they_fit() -> None:
    rows = read_rows(FIXTURES / "zarifaziz_dev_small.jsonl")
    assert detect_map(Path("z.jsonl"), rows.columns).columns["turn"] == "turn_idx"
    # an adapter's rows have canonical names
    tora = read_rows(FIXTURES / "gsm8k/tora-70b_first_20.jsonl")
    assert detect_map(Path("t.jsonl"), tora.columns).columns["raw_output"] == "raw_output"
    # columns of both shapes: zarifaziz is tried first
    both = ["record_id", "turn", "turn_idx", "predicted_answer"]
    assert detect_map(Path("b.jsonl"), both).columns["turn"] == "turn_idx"
    # canonical columns without a turn: single-turn rows (no turn in the map)
    assert detect_map(Path("x.csv"), ["record_id", "predicted_answer"]).columns == {
        "record_id": "record_id",
        "predicted_answer": "predicted_answer",
    }
    with pytest.raises(InputError, match="missing column 'turn'"):
        detect_map(Path("x.csv"), ["record_id", "turn_idx", "raw_output"])


def test_a_json_file_of_no_records_is_refused_before_the_last_reader(tmp_path: Path) -> None:
    path = tmp_path / "scalar.json"
    path.write_text(json.dumps({"results": 3, "a": 1}))
    with pytest.raises(InputError, match="top level: expected a list of records"):
        read_rows(path)


def test_the_bundled_runs_are_read_by_their_readers() -> None:
    gsm8k = project_root() / "data/predictions/gsm8k"
    assert _reader_of(gsm8k / "openai-gpt3/example_model_solutions.jsonl") == "OpenAI GSM8K"
    assert _reader_of(gsm8k / "tora/tora-code-34b.jsonl") == "ToRA"
