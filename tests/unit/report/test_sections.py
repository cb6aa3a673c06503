"""What a page says for each benchmark (workbench.report.sections), on real fixture runs; the
pages themselves in tests/system/report/test_benchmark_pages.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.config import resolve
from workbench.pipeline.run import Run, grade_run
from workbench.report import sections

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests/fixtures"


@pytest.fixture(scope="module")
def convfinqa() -> Run:
    return grade_run(
        resolve(
            dataset=FIXTURES / "convfinqa/dev_small.json",
            predictions=[str(FIXTURES / "predictions/zarifaziz_dev_small.jsonl")],
        )
    )


@pytest.fixture(scope="module")
def gsm8k() -> Run:
    return grade_run(resolve(dataset="none", predictions=[str(FIXTURES / "predictions/gsm8k/tora-70b_first_20.jsonl")]))


def test_each_benchmark_gets_its_title_and_the_sections_it_can_fill(convfinqa: Run, gsm8k: Run) -> None:
    assert sections.title(gsm8k, "01-overview").data.startswith("# GSM8K error report: overview\n")
    assert sections.title(convfinqa, "01-overview").data.startswith("# ConvFinQA error report: overview\n")
    assert {k for k, need in sections.NEEDS.items() if need(convfinqa)} == {
        "conversations",
        "programs",
        "type2",
        "flags",
        "upstream",
        "groups",
    }
    assert {k for k, need in sections.NEEDS.items() if need(gsm8k)} == {"text"}
    # the GSM8K fixture: no programs, no flags, and the policies agree on every failed problem
    drill = sections.heading(gsm8k, "drilldown")
    assert drill is not None and "Open a group" not in drill.data and "No group of failed problems" in drill.data
    by_turn = sections.heading(gsm8k, "by_turn")
    assert by_turn is not None and by_turn.data.endswith(
        "GSM8K problems are single questions, so there is no turn index to follow."
    )
    assert sections.heading(convfinqa, "by_turn").data.endswith("errors carried from earlier turns into later ones.")  # type: ignore[union-attr]
    assert sections.heading(convfinqa, "text") is None and sections.heading(gsm8k, "upstream") is None
    assert (
        sections.shown(gsm8k, "programs", "chart") is None and sections.shown(convfinqa, "programs", "chart") == "chart"
    )


def test_single_questions_leave_conversation_figures_out_of_the_headline(convfinqa: Run, gsm8k: Run) -> None:
    keys = [spec.key for spec in sections.headline_metrics(gsm8k)]
    assert keys == ["turn_execution_accuracy", "n_turns", "n_missing", "n_unmatched"]
    assert "conversation_execution_accuracy" in [spec.key for spec in sections.headline_metrics(convfinqa)]
    # a problem is not a turn: single questions name their columns for problems
    labels = [spec.heading for spec in sections.headline_metrics(gsm8k)]
    assert labels == ["Accuracy", "Problems", "Problems without prediction", "Unmatched predictions"]
    assert [spec.heading for spec in sections.headline_metrics(convfinqa)][:1] == ["Turn execution accuracy"]
    scores = sections.text_scores(gsm8k)
    assert scores is not None and sections.text_scores(convfinqa) is None
    bleu = next(iter(gsm8k.summary.values()))["text"]["bleu"]
    assert f">{bleu:.1f}</td>" in scores.markup


def test_the_upstream_table_lists_every_disagreement_with_our_reason(convfinqa: Run) -> None:
    from workbench.analysis.metrics import upstream_disagreements

    differ = upstream_disagreements(convfinqa.turns)
    block = sections.upstream_table(convfinqa)
    assert block is not None and f"{differ.height} verdicts differ from the upstream grader" in block.markup
    assert block.markup.count("<tr") == differ.height + 1

    for reason in differ["reason"].cast(str).unique():
        assert f">{reason}<" in block.markup
