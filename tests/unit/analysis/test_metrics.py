"""One record per metric: the registry, and the summary, tables, comparison and manifest reading it."""

from __future__ import annotations

import polars as pl
import pytest

from workbench.analysis import changes, comparison, metrics
from workbench.analysis.metrics import (
    COMPARED_METRICS,
    HEADLINE_METRICS,
    MANIFEST_METRICS,
    METRICS,
    MetricSpec,
    counted_item,
    for_items,
    metric,
    summarize,
)
from workbench.views import tables


def _turns(*, programs: bool, upstream: bool) -> pl.DataFrame:
    """Two conversations of one system (three turns), one turn without a prediction."""
    frame = pl.DataFrame(
        {
            "system": ["s"] * 3,
            "record_id": ["a", "a", "b"],
            "turn": [0, 1, 0],
            "n_turns": [2, 2, 1],
            "status": ["ok", "ok", "no_prediction"],
            "correct": [True, True, False],
            "reason": ["exact", "exact", "no prediction"],
            "predicted_program": ["add(1, 2)", "add(1, 2)", None] if programs else [None, None, None],
            "program_correct": [True, False, None],
            "program_credit": [1.0, 0.5, None],
        },
        schema_overrides={"predicted_program": pl.String},
    )
    if upstream:
        frame = frame.with_columns(upstream_correct=pl.Series([True, False, None], dtype=pl.Boolean))
    return frame


UNMATCHED = pl.DataFrame({"system": ["s", "other"]})


def test_every_metric_is_one_complete_record() -> None:
    assert list(METRICS) == [spec.key for spec in METRICS.values()]
    labels = [spec.label for spec in METRICS.values()]
    assert len(set(labels)) == len(labels)
    for spec in METRICS.values():
        assert isinstance(spec, MetricSpec)
        assert spec.definition.endswith(".") and spec.definition.count(". ") == 0, spec.key
        assert spec.aggregation in ("turn", "conversation", "count")
        assert (spec.format == "integer") == (spec.aggregation == "count"), spec.key
        assert spec.key.startswith("n_") == (spec.aggregation == "count"), spec.key
    for selection in (HEADLINE_METRICS, COMPARED_METRICS, MANIFEST_METRICS):
        assert all(METRICS[spec.key] is spec for spec in selection)
        assert len({spec.key for spec in selection}) == len(selection)
    assert all(spec.outcome is not None and spec.format == "percent" for spec in COMPARED_METRICS)


def test_records_are_frozen_and_looked_up_by_key() -> None:
    spec = metric("turn_execution_accuracy")
    with pytest.raises(AttributeError):
        spec.label = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        METRICS["x"] = spec  # type: ignore[index]
    with pytest.raises(KeyError, match="did you mean n_turns"):
        metric("n_turn")


def test_summary_lists_the_registry_in_order() -> None:
    row = summarize(_turns(programs=True, upstream=True), UNMATCHED, "cascade", text_metrics=False)["s"]
    assert list(row) == ["policy", *METRICS, "reasons"]
    assert (row["n_turns"], row["n_conversations"], row["n_missing"], row["n_unmatched"]) == (3, 2, 1, 1)
    assert row["turn_execution_accuracy"] == pytest.approx(2 / 3)
    assert row["conversation_execution_accuracy"] == row["all_turns_correct_rate"] == 0.5
    assert (row["n_programs_equivalent"], row["program_step_credit"]) == (1, 0.5)
    assert (row["n_upstream_correct"], row["n_upstream_disagreements"]) == (1, 1)


@pytest.mark.parametrize(
    ("programs", "upstream", "left_out"),
    [
        (False, True, "programs"),
        (True, False, "upstream"),
        (False, False, None),
    ],
)
def test_summary_leaves_out_what_the_turns_do_not_carry(programs: bool, upstream: bool, left_out: str | None) -> None:
    row = summarize(_turns(programs=programs, upstream=upstream), UNMATCHED, "cascade", text_metrics=False)["s"]
    carried = {None, *(["programs"] if programs else []), *(["upstream"] if upstream else [])}
    assert list(row) == ["policy", *(s.key for s in METRICS.values() if s.requires in carried), "reasons"]
    if left_out:
        assert not any(s.key in row for s in METRICS.values() if s.requires == left_out)


def test_headline_columns_are_the_records_headings() -> None:
    summary = summarize(_turns(programs=True, upstream=False), UNMATCHED, "cascade", text_metrics=False)
    markup = tables.headline(summary).markup
    for spec in HEADLINE_METRICS:
        assert f">{spec.heading}</th>" in markup
    assert ">Conversation execution accuracy (final turn)</th>" in markup and ">66.7%</td>" in markup


def test_comparison_and_manifest_read_the_records() -> None:
    turns = _turns(programs=True, upstream=False)
    assert comparison.systems_table(comparison.metric_intervals(turns, n_boot=20)).columns == [
        "system",
        *(spec.label for spec in COMPARED_METRICS),
    ]
    assert list(comparison.metric_long(turns)["slice"].unique(maintain_order=True)) == [
        spec.key for spec in COMPARED_METRICS
    ]
    assert changes.MANIFEST_METRICS == {spec.key: spec.label for spec in MANIFEST_METRICS}
    summary = {"systems": summarize(turns, UNMATCHED, "cascade", text_metrics=False)}
    manifest = changes.build_manifest(template="t", parameters={}, summary=summary, html_file="t.html")
    assert list(manifest.metrics["s"]) == [spec.key for spec in MANIFEST_METRICS]


def test_display_follows_the_format() -> None:
    assert metrics.TURN_EXECUTION_ACCURACY.display(0.8312) == "83.1%"
    assert metrics.TURN_EXECUTION_ACCURACY.display(None) is None
    assert metrics.N_TURNS.display(1490) == 1490
    assert metrics.PROGRAM_STEP_CREDIT.display(0.25) == 0.25


def _former_headline_rule(specs: tuple[MetricSpec, ...], single: bool) -> list[tuple[str, str]]:
    """``headline_metrics`` before the rule moved to ``for_items`` (its key and label filter, as it was)."""
    return [
        (spec.key, spec.single_label if single and spec.single_label else spec.label)
        for spec in specs
        if not (single and (spec.aggregation == "conversation" or spec.key == "n_conversations"))
    ]


@pytest.mark.parametrize("specs", [HEADLINE_METRICS, MANIFEST_METRICS, COMPARED_METRICS, tuple(METRICS.values())])
@pytest.mark.parametrize("item", ["turn", "problem"])
def test_for_items_keeps_the_rule_headline_metrics_had(specs: tuple[MetricSpec, ...], item: metrics.Item) -> None:
    shown = for_items(specs, item)
    assert [(spec.key, spec.label) for spec in shown] == _former_headline_rule(specs, item == "problem")
    assert all(isinstance(spec, MetricSpec) for spec in shown)
    if item == "turn":
        assert shown == specs  # every record as it is


def test_for_items_names_problems_and_drops_conversation_figures() -> None:
    assert [spec.label for spec in for_items(HEADLINE_METRICS, "problem")] == [
        "Accuracy",
        "Turn program accuracy",
        "Problems",
        "Problems without prediction",
        "Unmatched predictions",
    ]
    assert [spec.label for spec in for_items(MANIFEST_METRICS, "problem")] == [
        "Accuracy",
        "Turn program accuracy",
        "Problems",
        "Problems correct",
    ]
    assert metrics.TURN_EXECUTION_ACCURACY.label == "Turn execution accuracy"  # the records are not changed


@pytest.mark.parametrize(
    ("benchmark", "turns", "item"),
    [
        ("gsm8k", [0, 0, 0], "problem"),
        ("math", [0], "problem"),
        ("", [0, 0], "problem"),  # no benchmark recorded: single questions all the same
        ("gsm8k", [], "problem"),
        ("gsm8k", [0, 1], "turn"),  # a conversation, whatever the benchmark says
        ("convfinqa", [0, 0], "turn"),  # ConvFinQA counts turns, even of one-turn conversations
        ("convfinqa", [], "turn"),
    ],
)
def test_counted_item_from_benchmark_and_turn_index(benchmark: str, turns: list[int], item: str) -> None:
    assert counted_item(benchmark, pl.Series("turn", turns, dtype=pl.Int32)) == item
