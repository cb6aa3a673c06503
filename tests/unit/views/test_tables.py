"""Table markup without a browser: data-grid tables, numeric ``data-value`` attributes, counts with
separators, plain column labels, escaping of everything from the data (cells, headers, captions,
attributes, row keys, the detail data), long cells shortened with the whole text a click away, and
the failed-turns tables' detail data."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import polars as pl
from markupsafe import escape

import workbench
from workbench.analysis import slices
from workbench.config import project_root
from workbench.views import tables

HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
ESCAPED = str(escape(HOSTILE))  # as the renderer escapes (quotes as &#34; and &#39;)
#: The attributes the table markup writes; anything else (``onerror``, ``src``) came from the data.
OWN_ATTRIBUTES = {"class", "data-wb-sortable", "scope", "data-value", "data-wb-key", "data-wb-item", "type"}


def _attribute_names(markup: str) -> set[str]:
    """The names of the attributes of every start tag (text is escaped, so holds no ``<``)."""
    tags = re.findall(r"<[a-z]+((?:\s[^>]*)?)>", markup)
    return {name for attrs in tags for name in re.findall(r'([a-z-]+)(?:="[^"]*")?', attrs)}


def _turns(raw_output: list[str | None] | None = None, n: int = 2) -> pl.DataFrame:
    names = [
        "system",
        "record_id",
        "operation",
        "question",
        "gold_answer",
        "gold_executed",
        "predicted_answer",
        "predicted_program",
        "answer",
        "detail",
    ]
    frame = pl.DataFrame(
        {
            **{c: [f"{c} {i}" for i in range(n)] for c in names},
            "turn": list(range(n)),
            "reason": ["wrong_value"] * n,
            "correct": [False] * n,
            "error_type": ["wrong_value"] * n,
        }
    )
    if raw_output is not None:
        frame = frame.with_columns(pl.Series("raw_output", raw_output, dtype=pl.String))
    return frame


def test_numeric_cells_carry_their_unformatted_value() -> None:
    frame = pl.DataFrame(
        {
            "i": [12345678, -3, None, 0],
            "f": [0.000123456789, float("inf"), float("nan"), -2.5],
            "s": ["7", "x", "", "y"],
        }
    )
    markup = tables.html_table(frame).markup
    assert '<td class="num" data-value="12345678">12,345,678</td>' in markup  # a count, with separators
    assert '<td class="num" data-value="-3">-3</td>' in markup
    assert '<td class="num" data-value="0.000123456789">0.0001235</td>' in markup  # shown rounded, sorted exact
    assert '<td class="num" data-value="Infinity">inf</td>' in markup
    assert '<td class="num">nan</td>' in markup  # no number to sort by
    assert '<td class="num" data-value="-2.5">-2.5</td>' in markup
    assert '<td class="null">&mdash;</td>' in markup
    assert "<td>7</td>" in markup  # a string that looks like a number stays text
    assert markup.count("data-value=") == 6


def test_booleans_are_text_not_numbers() -> None:
    markup = tables.html_table(pl.DataFrame({"b": [True, False]})).markup
    assert "<td>yes</td><" in markup and "<td>no</td>" in markup and "data-value" not in markup


def test_sortable_is_a_marker_on_the_table_only_when_asked() -> None:
    frame = pl.DataFrame({"a": [1]})
    assert "data-wb-sortable" not in tables.html_table(frame).markup
    markup = tables.html_table(frame, sortable=True, css_class="wb-table wb-x").markup
    assert '<table class="wb-table wb-x" data-wb-sortable>' in markup
    assert '<th scope="col">a</th>' in markup


def test_headers_captions_and_attributes_from_the_data_are_escaped() -> None:
    name = '"><script>window.__pwned=3</script>'
    frame = pl.DataFrame({name: [HOSTILE], "n": [1]})
    markup = tables.html_table(
        frame, caption=HOSTILE, css_class='wb-table" onclick="window.__pwned=4', sortable=True
    ).markup
    assert "<script" not in markup and "<img" not in markup
    assert 'class="wb-table&#34; onclick=&#34;window.__pwned=4"' in markup
    assert f'<th scope="col">{escape(name)}</th>' in markup
    assert f"<caption>{ESCAPED}</caption>" in markup and f'<div class="wb-full">{ESCAPED}</div>' in markup
    assert _attribute_names(markup) == {
        "class",
        "data-wb-sortable",
        "scope",
        "data-value",
    }  # class stayed one attribute


def test_failed_turns_are_a_grid_with_raw_output_shortened_and_whole_a_click_away() -> None:
    long = HOSTILE + "x" * 400
    turns = _turns([long, None])
    markup = tables.failed_turns(turns).markup
    assert 'class="wb-table wb-failed" data-wb-sortable' in markup
    assert '<th scope="col">raw output</th>' in markup and '<th scope="col" class="wb-key">record id</th>' in markup
    short = escape(long[: tables.SHORT_CHARS].rstrip() + "…")
    assert f'<td class="wb-long"><details><summary>{short}</summary><div class="wb-full">{escape(long)}</div>' in markup
    assert '<td class="num wb-key" data-value="1">1</td>' in markup  # the turn column sorts numerically
    assert "<script" not in markup.split('<script type="application/json" class="wb-turn-data">')[0]
    assert _attribute_names(markup) <= OWN_ATTRIBUTES
    plain = tables.failed_turns(_turns(["short <b>", None])).markup
    assert "<td>short &lt;b&gt;</td>" in plain and "<details>" not in plain


def test_failed_turns_have_no_raw_output_column_when_there_is_none() -> None:
    assert "raw output" not in tables.failed_turns(_turns()).markup
    assert "raw output" not in tables.failed_turns(_turns([None, None])).markup


def test_single_question_records_have_no_turn_or_operation_column() -> None:
    turns = _turns(n=3).with_columns(turn=pl.lit(0), gold_program=pl.lit(None, dtype=pl.String))
    headers = re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', tables.failed_turns(turns).markup)
    assert headers[:3] == ["system", "record id", "question"] and not {"turn", "operation", "gold (executed)"} & set(
        headers
    )
    assert tables.failed_turns(turns).markup.count('<th scope="col" class="wb-key">') == 2  # system and record id


def test_failed_turns_show_every_row_by_default_and_say_when_a_limit_cut_them() -> None:
    turns = _turns(n=40)
    markup = tables.failed_turns(turns).markup
    assert markup.count("<tr data-wb-key=") == 40 and "This page holds" not in markup
    cut = tables.failed_turns(turns, limit=10).markup
    assert cut.count("<tr data-wb-key=") == 10 and "This page holds the first 10 of 40 rows." in cut
    assert "Failed turns (40)" in cut


def _detail(markup: str) -> dict:
    found = re.findall(r'<script type="application/json" class="wb-turn-data">(.*?)</script>', markup, re.S)
    assert len(found) == 1
    return json.loads(found[0])


def test_each_row_names_its_turn_and_the_detail_data_is_script_safe() -> None:
    turns = _turns([HOSTILE + "</script><script>x()</script>", None]).with_columns(
        pl.Series("record_id", ['id "quoted" </script>', "r<1>"])
    )
    markup = tables.failed_turns(turns).markup
    assert markup.count("</script>") == 1  # only the data block's own end
    keys = re.findall(r'<tr data-wb-key="([^"]*)">', markup)
    assert [json.loads(html.unescape(k)) for k in keys] == [
        ["system 0", 'id "quoted" </script>', 0],
        ["system 1", "r<1>", 1],
    ]
    data = _detail(markup)
    first = data["turns"][html.unescape(keys[0])]
    assert first["raw"] == HOSTILE + "</script><script>x()</script>" and "record_id" not in first  # the key names it
    assert first["reason"] == "wrong value" and first["policies"] == [] and data["docs"] == {}


def test_drilldown_tables_are_grids_with_the_same_columns_in_every_group() -> None:
    turns = _turns([None, "only the second group has output"]).with_columns(pl.Series("operation", ["add", "divide"]))
    markup = tables.drilldown(turns, "operation").markup
    assert markup.count('<details class="wb-drill"') == 2 and markup.count("data-wb-sortable") == 2
    assert markup.count('<th scope="col">raw output</th>') == 2
    assert len(_detail(markup)["turns"]) == 2  # once for both groups


def test_drilldown_is_not_capped_and_counts_agree() -> None:
    turns = _turns(n=60).with_columns(operation=pl.lit("divide"))
    markup = tables.drilldown(turns, "operation").markup
    assert "(60 failed turns)" in markup and markup.count("<tr data-wb-key=") == 60
    assert "Showing" not in markup  # the one count is the page script's


def test_grader_disagreement_drilldown_lists_only_the_turns_the_policies_disagree_on() -> None:
    turns = _turns(n=3).with_columns(pl.Series("graders_disagree", [False, True, False]))
    markup = tables.drilldown(turns, "graders_disagree").markup
    assert "policies agree" not in markup and "<b>policies disagree</b> (1 failed turn)" in markup
    assert "Only the failed turns on which the grading policies disagree are listed" in markup
    none = tables.drilldown(turns.with_columns(graders_disagree=pl.lit(False)), "graders_disagree").markup
    assert "<details" not in none and "The grading policies agree on every failed turn" in none


def test_slice_table_marks_small_groups_and_works_without_the_mark() -> None:
    table = pl.DataFrame(
        {
            "system": ["s", "s"],
            "slice": ["turn_index", "turn_index"],
            "group": ["1", "7"],
            "n_turns": [1200, 1],
            "n_correct": [1000, 0],
            "n_conversations": [420, 1],
            "accuracy": [1000 / 1200, 0.0],
            "low": [0.81, 0.0],
            "high": [0.85, 0.0],
        }
    )
    plain = tables.slice_table(table).markup
    assert "too small" not in plain and '<td class="num" data-value="1200">1,200</td>' in plain
    assert '<th scope="col">turns</th><th scope="col">correct</th><th scope="col">conversations</th>' in plain
    assert "83.3% [81.0%, 85.0%]" in plain
    marked = tables.slice_table(table.with_columns(too_small=pl.Series([False, True]))).markup
    assert marked.count("too small (n &lt; 20)") == 1
    assert marked.index("too small (n &lt; 20)") > marked.index(">7<")


def test_labels_are_plain_words() -> None:
    frame = pl.DataFrame(
        {c: [1] for c in ("predicted_answer", "dq_category", "n_turns", "n_correct", "n_conversations")}
    )
    headers = re.findall(r'<th scope="col">([^<]*)</th>', tables.html_table(frame).markup)
    assert headers == ["predicted answer", "data-quality flag", "turns", "correct", "conversations"]


def test_files_written_shows_no_absolute_path(tmp_path: Path) -> None:
    markup = tables.files_written({"turns": tmp_path / "run.graded" / "turns.parquet", "here": Path("a/b.csv")}).markup
    assert str(tmp_path) not in markup and "run.graded/turns.parquet" in markup and "a/b.csv" in markup


def test_run_overview_shows_the_inputs_relative_to_the_project() -> None:
    fixtures = project_root() / "tests" / "fixtures"
    run = workbench.grade_run(
        workbench.config.resolve(
            dataset=fixtures / "convfinqa" / "dev_small.json",
            predictions=[fixtures / "predictions" / "zarifaziz_dev_small.jsonl"],
        )
    )
    markup = tables.run_overview(run).markup
    assert str(project_root()) not in markup
    assert "<code>tests/fixtures/convfinqa/dev_small.json</code>" in markup
    assert "<code>tests/fixtures/predictions/zarifaziz_dev_small.jsonl</code>" in markup


def test_checks_table_is_sortable_with_numeric_confidence() -> None:
    checks = pl.DataFrame(
        {
            "record_id": ["a", "b"],
            "turn": [0, 12],
            "category": ["mislabel", "mislabel"],
            "rule": ["r", "r"],
            "evidence": [HOSTILE, "e"],
            "confidence": [0.75, 0.5],
        }
    )
    markup = tables.checks_table(checks).markup
    assert "data-wb-sortable" in markup and '<td class="num" data-value="0.75">0.75</td>' in markup
    assert '<td class="num wb-key" data-value="12">12</td>' in markup
    assert f'<div class="wb-full">{ESCAPED}</div>' in markup and "<script" not in markup


def test_paired_and_cleaning_tables_use_one_format_per_kind() -> None:
    comparison = pl.DataFrame(
        {
            "system_a": ["a"],
            "system_b": ["b<i>"],
            "slice": ["overall"],
            "group": ["all"],
            "n_turns": [1490],
            "accuracy_a": [0.8304],
            "accuracy_b": [0.8195],
            "difference": [0.0109],
            "low": [-0.002],
            "high": [0.0241],
            "a_only": [40],
            "b_only": [24],
            "mcnemar_p": [9.094e-26],
            "n_unpaired": [0],
        }
    )
    markup = tables.paired_table(comparison).markup
    assert ">83.0%<" in markup and ">82.0%<" in markup and "+1.1 points [-0.2, +2.4]" in markup
    assert ">&lt; 0.001<" in markup and ">1,490<" in markup and "b&lt;i&gt;" in markup
    effect = pl.DataFrame(
        {
            "system": ["a"],
            "turn_accuracy_before": [0.8304],
            "turn_accuracy_after": [0.8391],
            "turn_change_points": [0.87],
            "conversation_accuracy_before": [0.8171],
            "conversation_accuracy_after": [0.8266],
            "n_changed": [13],
            "n_removed": [2],
        }
    )
    annotations = pl.DataFrame({"system": [None], "corrected_answer": ["1"], "exclude": [False]})
    cleaned = tables.cleaning_effect(effect, annotations).markup
    assert ">83.0%<" in cleaned and ">83.9%<" in cleaned and ">+0.9 points<" in cleaned and ">82.7%<" in cleaned


def _tora() -> workbench.pipeline.run.Run:
    predictions = project_root() / "tests/fixtures/predictions/gsm8k/tora-70b_first_20.jsonl"
    return workbench.grade_run(workbench.config.resolve(dataset="none", predictions=[predictions]))


def test_single_question_pages_speak_of_problems_in_plain_words() -> None:
    """ToRA-70B's GSM8K outputs (gold carried in the file): no conversations, turn, operation,
    executed-gold or program column; the layout and the policies in plain words."""
    run = _tora()
    overview = tables.run_overview(run).markup
    assert "Dataset: gold answers carried in the predictions file (20 problems)" in overview
    assert "carried-in-predictions" not in overview and overview.count("tora-70b_first_20.jsonl") == 1
    by_slice = slices.slice_accuracy(run.turns, n_boot=20, seed=0)
    headers = re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', tables.slice_table(by_slice).markup)
    assert "problems" in headers and "conversations" not in headers and "turns" not in headers
    table = tables.failed_turns(run).markup
    assert f"<caption>Failed problems ({run.turns.filter(~pl.col('correct')).height})</caption>" in table
    assert "failed turns" not in tables.drilldown(run, "error_type").markup
    assert re.search(r"<b>wrong value</b> \(\d+ failed problems\)", tables.drilldown(run, "error_type").markup)
    failed = re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', table)
    assert failed[:2] == ["system", "record id"]
    assert not {"turn", "operation", "gold (executed)", "predicted program"} & set(failed)
    note = tables.policy_comparison(run).markup
    assert re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', note) == ["policy", *run.summary], "a column per system"
    policies = list(next(iter(run.summary.values()))["policies"])
    assert re.findall(r'<tr[^>]*>\s*<td class="wb-key">([^<]*)</td>', note) == policies, "a row per policy"
    assert "ConvFinQA" not in note and "official: equal after rounding both to 5 decimals" in note
    graded = list(next(iter(run.summary.values()))["policies"])
    assert note.count("; ") == len(graded) - 1, "only the policies graded are described"


def test_conversations_keep_their_columns_and_the_official_rule_is_convfinqas() -> None:
    fixtures = project_root() / "tests" / "fixtures"
    run = workbench.grade_run(
        workbench.config.resolve(
            dataset=fixtures / "convfinqa" / "dev_small.json",
            predictions=[fixtures / "predictions" / "zarifaziz_dev_small.jsonl"],
        )
    )
    headers = tables.slice_table(slices.slice_accuracy(run.turns, n_boot=20, seed=0)).markup
    assert '<th scope="col">conversations</th>' in headers and '<th scope="col">turns</th>' in headers
    assert "official ConvFinQA rule" in tables.policy_comparison(run).markup
    assert "ConvFinQA, reformatted release" in tables.run_overview(run).markup


def test_names_in_tables_headings_and_the_panel_read_as_words() -> None:
    """Reasons, error types and flag categories (``wrong_value``, ``sign_inconsistency``) as words
    in the cells, the drill-down headings and the panel's data, through slices.plain_label."""
    turns = _turns(n=3).with_columns(
        reason=pl.Series(["wrong_value", "no_answer", "wrong_value"]),
        error_type=pl.Series(["carried_error", "wrong_value", "carried_error"]),
    )
    failed = tables.failed_turns(turns).markup
    assert "<td>wrong value</td>" in failed and "<td>carried error</td>" in failed and "wrong_value" not in failed
    drill = tables.drilldown(turns, "error_type").markup
    assert "<b>carried error</b> (2 failed turns)" in drill and "carried_error" not in drill
    assert {t["reason"] for t in _detail(failed)["turns"].values()} == {"wrong value", "no answer"}
    flags = pl.DataFrame(
        {
            "record_id": ["r"],
            "turn": [0],
            "category": ["sign_inconsistency"],
            "rule": ["x"],
            "confidence": [0.5],
            "evidence": ["e"],
        }
    )
    assert "<td>sign inconsistency</td>" in tables.checks_table(flags).markup
