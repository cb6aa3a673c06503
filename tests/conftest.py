"""Shared fixtures: paths inside the repository, and the gold sets several tests load.

Everything is relative to the repository root; no test reads outside it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.io.gold import GoldDataset, load_gold

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
CLAUDE_RUN = REPO / "data" / "predictions" / "convfinqa" / "zarifaziz-claude-sonnet-4-6" / "2026-05-04T06-35-00Z"


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
