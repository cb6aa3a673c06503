"""The "changes since the previous run" section (workbench.views.changes) for each kind of item: a
ConvFinQA run's turns, a GSM8K or MATH run's problems named as problems (the report run twice:
tests/system/report/test_report_changes.py). Only the metrics that moved are rows of the table; one
sentence names the metrics that did not (a row of "+0.0 points" for each told a reader nothing)."""

from __future__ import annotations

import polars as pl
import pytest
from markupsafe import escape

from workbench.analysis.changes import Changes, SystemMatch
from workbench.analysis.metrics import Item
from workbench.views.changes import changes_html

_FLIPPED = {"system": pl.String, "record_id": pl.String, "turn": pl.Int32}

#: Two systems compared: every metric a manifest keeps for both kinds of item, one flip each way
#: and one of a later turn; system b matched without its run-folder timestamp.
CHANGES = Changes(
    "2026-11-23T16:44:58Z",
    pl.DataFrame(
        {
            "system": ["a", "a", "a", "a", "b"],
            "metric": [
                "turn_execution_accuracy",
                "conversation_execution_accuracy",
                "n_turns",
                "n_turns_correct",
                "turn_execution_accuracy",
            ],
            "previous": [0.5, 0.25, 4.0, 2.0, 0.5],
            "current": [0.75, None, 4.0, 3.0, 0.5],
            "delta": [0.25, None, 0.0, 1.0, 0.0],
        }
    ),
    pl.DataFrame({"system": ["a"], "record_id": ["r1"], "turn": [0]}, schema=_FLIPPED),
    pl.DataFrame({"system": ["a", "b"], "record_id": ["r2", "r3"], "turn": [0, 2]}, schema=_FLIPPED),
    ("dataset",),
    (SystemMatch("a", "a", "same name"), SystemMatch("b", "b@x", "same name without the run-folder timestamp")),
)

#: changes_html(CHANGES): a's accuracy, conversation figure (now missing) and correct turns moved, a's
#: count of turns and b's accuracy did not (Turns is named unchanged; accuracy moved for a, so it is not).
TURNS_SECTION = (
    '<section class="wb-changes"><h2>Changes since the previous run</h2><p>Compared with the run of 2026-11-23 16:44:58 UTC; '
    "inputs changed: dataset.</p>"
    "<p>System <b>b</b> is compared with <b>b@x</b> of the previous run (same name without the run-folder timestamp).</p>"
    "<p>Unchanged: Turns.</p>"
    '<div class="wb-scroll wb-fit"><table class="wb-table wb-changes-table"><thead><tr><th>System</th><th>Metric</th><th>Before</th><th>Now</th><th>Change</th></tr>'
    '</thead><tbody><tr><td>a</td><td>Turn execution accuracy</td><td class="num">50.0%</td><td class="num">75.0%</td><td class="num">+25.0 points</td></tr>'
    '<tr><td>a</td><td>Conversation execution accuracy</td><td class="num">25.0%</td><td class="num">—</td><td class="num">—</td></tr>'
    '<tr><td>a</td><td>Turns correct</td><td class="num">2</td><td class="num">3</td><td class="num">+1</td></tr>'
    "</tbody></table></div>"
    "<h3>Newly failing turns (1)</h3><ul><li>a: <code>r1</code> turn 0</li></ul>"
    "<h3>Newly passing turns (2)</h3><ul><li>a: <code>r2</code> turn 0</li><li>b: <code>r3</code> turn 2</li></ul></section>"
)


def test_turns_show_the_metrics_that_moved_and_name_the_others() -> None:
    assert changes_html(CHANGES) == TURNS_SECTION
    assert changes_html(CHANGES, "turn") == TURNS_SECTION
    assert "+0.0 points" not in TURNS_SECTION and ">+0<" not in TURNS_SECTION


def test_nothing_moved_is_one_sentence_and_no_table() -> None:
    still = Changes(
        CHANGES.previous,
        CHANGES.metrics.with_columns(pl.col("previous").alias("current"), pl.lit(0.0).alias("delta")),
        CHANGES.newly_failing.clear(),
        CHANGES.newly_passing.clear(),
        (),
        CHANGES.matches,
    )
    section = changes_html(still)
    assert (
        "<p>Nothing changed: no metric moved (Turn execution accuracy, Conversation execution accuracy, Turns, Turns correct), "
        "and no turn newly fails or passes.</p>" in section
    )
    assert "<table" not in section and "Newly failing" not in section and "on the same inputs (same hashes)" in section
    flipped = Changes(still.previous, still.metrics, CHANGES.newly_failing, still.newly_passing, (), CHANGES.matches)
    section = changes_html(flipped)
    assert "<p>No metric changed (" in section and "<h3>Newly failing turns (1)</h3>" in section


def test_problems_are_named_as_problems_without_conversation_figures() -> None:
    section = changes_html(CHANGES, "problem")
    assert '<td>a</td><td>Accuracy</td><td class="num">50.0%</td><td class="num">75.0%</td>' in section
    assert "<p>Unchanged: Problems.</p>" in section and "<td>Problems correct</td>" in section
    assert "Conversation" not in section and "Turn execution accuracy" not in section
    assert "<h3>Newly failing problems (1)</h3><ul><li>a: <code>r1</code></li></ul>" in section
    assert (
        "<h3>Newly passing problems (2)</h3><ul><li>a: <code>r2</code></li><li>b: <code>r3</code></li></ul>" in section
    )
    assert " turn " not in section and "turns" not in section
    # everything else as for turns: the rows left are the turn section's rows but the conversation's, relabelled
    assert section.count("<tr>") == TURNS_SECTION.count("<tr>") - 1


def test_one_problem_system_names_no_system_and_keeps_ids_as_text() -> None:
    hostile = "<b onmouseover=x>r</b>"
    one = Changes(
        "then",
        CHANGES.metrics.filter(pl.col("system") == "a"),
        pl.DataFrame({"system": ["a"], "record_id": [hostile], "turn": [0]}, schema=_FLIPPED),
        CHANGES.newly_passing.clear(),
        (),
        (SystemMatch("a", "a0", "the only system of each run"),),
    )
    section = changes_html(one, "problem")
    assert f"<li><code>{escape(hostile)}</code></li>" in section and "<b onmouseover" not in section
    assert "<th>System</th>" not in section and "<h3>Newly passing problems (0)</h3><p>none</p>" in section


@pytest.mark.parametrize("item", ["turn", "problem"])
def test_without_a_previous_run_the_note_is_the_same(item: Item) -> None:
    assert "no earlier run" in changes_html(None, item)
