"""Shared fixtures: paths inside the repository, and the gold sets several tests load.

Everything is relative to the repository root; no test reads outside it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

from workbench.config import resolve
from workbench.io.gold import GoldDataset, load_gold
from workbench.pipeline.run import Run, grade_run

#: No hypothesis deadline for any property (a deadline is a wall-clock budget; CI machines are busy).
#: ``--hypothesis-profile`` still picks another profile; tests/system/fuzz sets its own per property.
settings.register_profile("workbench", deadline=None)
settings.load_profile("workbench")

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
CLAUDE_RUNS = REPO / "data" / "predictions" / "convfinqa" / "zarifaziz-claude-sonnet-4-6"
CLAUDE_RUN = CLAUDE_RUNS / "2026-05-04T06-35-00Z"
CLAUDE_RUN_2 = CLAUDE_RUNS / "2026-05-04T12-48-44Z"
#: How the two bundled claude-sonnet-4-6 dev runs are named when graded together.
TWO_RUN_SYSTEMS = ("claude 06-35", "claude 12-48")
GSM8K_RUNS = REPO / "data" / "predictions" / "gsm8k"
GSM8K_FIXTURES = FIXTURES / "predictions" / "gsm8k"


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def dev_path() -> Path:
    """ConvFinQA dev in the reformatted layout: 421 conversations, 1490 turns."""
    return REPO / "data" / "convfinqa" / "dev.json"


@pytest.fixture(scope="session")
def dev_small_path() -> Path:
    return FIXTURES / "convfinqa" / "dev_small.json"


@pytest.fixture(scope="session")
def original_train_path() -> Path:
    """50 records of the original (czyssrs) train file: 183 turns."""
    return FIXTURES / "convfinqa" / "original_train_subset_50.json"


@pytest.fixture(scope="session")
def questions_only_path() -> Path:
    """5 records of the original public test file, which has questions only."""
    return FIXTURES / "convfinqa" / "original_test_questions_only_5.json"


@pytest.fixture(scope="session")
def ghchen99_predictions_path() -> Path:
    return FIXTURES / "predictions" / "ghchen99_predictions_first_100.json"


@pytest.fixture(scope="session")
def ghchen99_results_path() -> Path:
    return FIXTURES / "predictions" / "ghchen99_evaluation_results_20250523_221608.json"


@pytest.fixture(scope="session")
def zarifaziz_small_path() -> Path:
    return FIXTURES / "predictions" / "zarifaziz_dev_small.jsonl"


@pytest.fixture(scope="session")
def claude_run_path() -> Path:
    """The bundled claude-sonnet-4-6 run on dev (zarifaziz/convfinqa format)."""
    return CLAUDE_RUN / "predictions.jsonl"


@pytest.fixture(scope="session")
def claude_summary_path() -> Path:
    return CLAUDE_RUN / "summary.json"


@pytest.fixture(scope="session")
def dev_gold(dev_path: Path) -> GoldDataset:
    return load_gold(dev_path)


@pytest.fixture(scope="session")
def original_gold(original_train_path: Path) -> GoldDataset:
    return load_gold(original_train_path)


@pytest.fixture(scope="session")
def two_dev_runs(dev_path: Path) -> Run:
    """Both bundled claude-sonnet-4-6 dev runs (06-35-00Z: 1490 turns, 12-48-44Z: 1486),
    graded together (with the data-quality checks)."""
    config = resolve(
        dataset=dev_path,
        predictions=[CLAUDE_RUN / "predictions.jsonl", CLAUDE_RUN_2 / "predictions.jsonl"],
        systems=list(TWO_RUN_SYSTEMS),
    )
    return grade_run(config)


# --------------------------------------------------------------------------- GSM8K and MATH
@pytest.fixture(scope="session")
def gsm8k_path() -> Path:
    """GSM8K test, the full 1,319 lines (openai/grade-school-math)."""
    return REPO / "data" / "gsm8k" / "test.jsonl"


@pytest.fixture(scope="session")
def gsm8k_small_path() -> Path:
    """The first 20 lines of GSM8K test."""
    return FIXTURES / "gsm8k" / "test_first_20.jsonl"


@pytest.fixture(scope="session")
def gsm8k_gold(gsm8k_path: Path) -> GoldDataset:
    return load_gold(gsm8k_path)


@pytest.fixture(scope="session")
def gsm8k_runs() -> dict[str, Path]:
    """The bundled GSM8K prediction files (full size), by a short name."""
    return {
        "openai": GSM8K_RUNS / "openai-gpt3" / "example_model_solutions.jsonl",
        "tora-70b": GSM8K_RUNS / "tora" / "tora-70b.jsonl",
        "tora-code-34b": GSM8K_RUNS / "tora" / "tora-code-34b.jsonl",
        "pot-fewshot": GSM8K_RUNS / "program-of-thoughts" / "gsm8K_s0_e-1_11_17_10_20.jsonl",
        "pot-zeroshot": GSM8K_RUNS / "program-of-thoughts" / "gsm8K_zs_s0_e-1_11_19_09_55.jsonl",
    }


@pytest.fixture(scope="session")
def gsm8k_small_runs() -> dict[str, Path]:
    """Subsets of the GSM8K prediction files (whole lines), for fast tests."""
    return {
        "openai": GSM8K_FIXTURES / "openai_example_model_solutions_first_20.jsonl",
        "tora-70b": GSM8K_FIXTURES / "tora-70b_first_20.jsonl",
        "pot-fewshot": GSM8K_FIXTURES / "pot_fewshot_lines_1-12_1052-1056.jsonl",
        "pot-zeroshot": GSM8K_FIXTURES / "pot_zeroshot_first_20.jsonl",
    }


@pytest.fixture(scope="session")
def lm_eval_samples_path() -> Path:
    """20 ToRA-70B outputs rendered as an lm-evaluation-harness samples log (derived; see SOURCES.md)."""
    return FIXTURES / "predictions" / "lm_eval" / "tora-70b-rendered" / "samples_gsm8k_2026-11-21T19-50-41.jsonl"


@pytest.fixture(scope="session")
def math_jsonl_path() -> Path:
    """8 MATH test problems in the original hendrycks layout (JSON Lines, no ids)."""
    return FIXTURES / "math" / "hendrycks_math_test_8.jsonl"


@pytest.fixture(scope="session")
def math500_json_path() -> Path:
    """7 MATH-500 problems as a JSON list, with their ``answer`` field."""
    return FIXTURES / "math" / "math500_test_7.json"
