"""What a page says for each benchmark (workbench.report.sections), on real fixture runs; the
pages themselves in tests/system/report/test_benchmark_pages.py."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
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


@pytest.fixture(scope="module")
def gsm8k_table(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The first 20 problems of the bundled GSM8K test set as a plain gold table (record_id, question,
    gold_answer: the number after ``####``), graded without ``--benchmark`` against ToRA-70B's outputs."""
    rows = []
    with (REPO / "data/gsm8k/test.jsonl").open(encoding="utf-8") as lines:
        for index, line in zip(range(20), lines, strict=False):
            problem = json.loads(line)
            answer = problem["answer"].split("####")[-1].strip()
            rows.append({"record_id": str(index), "question": problem["question"], "gold_answer": answer})
    table = tmp_path_factory.mktemp("plain") / "gsm8k_first_20.csv"
    pl.DataFrame(rows).write_csv(table)
    return grade_run(resolve(dataset=table, predictions=[str(FIXTURES / "predictions/gsm8k/tora-70b_first_20.jsonl")]))


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


#: Every section a page can show, by page: (the sections' table, how a page shows one).
_PAGES = (
    (sections.SECTIONS, sections.heading),
    (sections.COMPARE_SECTIONS, sections.compare_heading),
)


def test_a_plain_gold_table_names_no_benchmark_in_any_sentence(gsm8k_table: Run, gsm8k: Run) -> None:
    assert gsm8k_table.gold.benchmark == "table" and gsm8k_table.item == "problem"
    said = {}
    for table, show in _PAGES:
        for key in table:
            shown = show(gsm8k_table, key)
            if shown is not None:
                said[key] = shown.data
    text = (
        " ".join(said.values())
        + sections.compare_title(gsm8k_table).data
        + sections.title(gsm8k_table, "02-error-slices").data
    )
    assert "ConvFinQA" not in text and "GSM8K" not in text, [t for t in said.values() if "ConvFinQA" in t]
    assert "{" not in text and "  " not in text, "a sentence with a word left out"
    # each sentence that named the benchmark has its own wording for a plain table
    assert said["by_turn"].endswith(
        "The gold table's problems are single questions, so there is no turn index to follow."
    )
    assert said["by_operation"].endswith(
        "The gold table has no programs, so there is no operation to group problems by."
    )
    assert (
        "(resampled by record)" in said["slices"] and "A slice the gold table cannot give is left out" in said["slices"]
    )
    assert said["error_types"].endswith("(see the glossary); the tables list the wrong problems of each type.")
    assert said["flags"].endswith("this table and these outputs gave them nothing to flag.")
    assert "the gold table has no programs to group them by operation" in said["drilldown"]
    assert "systems graded on the same problems, listed" in text
    # the same sections name the benchmark on its own page
    assert sections.heading(gsm8k, "slices").data.count("which GSM8K does not have") == 1  # type: ignore[union-attr]
    assert "GSM8K has no gold programs to cross them with" in sections.heading(gsm8k, "error_types").data  # type: ignore[union-attr]


def test_a_plain_gold_tables_glossary_names_no_benchmark(gsm8k_table: Run) -> None:
    from workbench.analysis.glossary import glossary

    terms = glossary(gsm8k_table.gold.benchmark, gsm8k_table.item)
    assert [t.term for t in terms][:1] == ["Problem"] and "Turn" not in [t.term for t in terms]
    assert not [t for t in terms if "ConvFinQA" in t.definition or "GSM8K" in t.definition]
    assert sections.benchmark_name(gsm8k_table.gold.benchmark) == ""
