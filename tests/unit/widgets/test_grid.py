"""The live grid, headless: the bundled ConvFinQA run's 252 failed turns paged, searched, sorted and
filtered in the kernel; a selection opens the panel; a linked plot's click filters; what the
output carries for a notebook without a kernel and for the exported page."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import polars as pl
import pytest

import workbench
from workbench.pipeline.run import Run
from workbench.views import plots
from workbench.views.html import PAGE_MIME
from workbench.views.turn_detail import turn_key
from workbench.widgets import grid
from workbench.widgets.figures import PLOTLY_MIME, LinkedFigure


@pytest.fixture(scope="module")
def run() -> Run:
    """The bundled ConvFinQA dev set and claude-sonnet-4-6's run: 1,490 turns, 252 failed."""
    return workbench.open_or_grade(workbench.config.resolve(), "")


@pytest.fixture
def failed(run: Run, tmp_path) -> grid.FailedTurns:
    return grid.failed_turns(run, store=tmp_path / "a.sqlite", annotator="ana", limit=2000)


def _keys(g: grid.Grid) -> list[list]:
    return [json.loads(key) for key, _ in g.rows]


def _column(g: grid.Grid, name: str) -> list:
    at = [c["name"] for c in g.columns].index(name)
    return [cells[at][1] or cells[at][0] for _, cells in g.rows]


def test_pages_hold_every_failed_turn_in_order(failed: grid.FailedTurns, run: Run) -> None:
    g = failed.grid
    wrong = run.turns.filter(~pl.col("correct"))
    expected = [turn_key(*row) for row in wrong.select("system", "record_id", "turn").iter_rows()]
    assert (g.total, g.all_rows, len(g.rows)) == (252, 252, grid.PAGE_SIZE)
    seen = []
    for page in range(-(-252 // g.page_size)):
        g.page = page
        seen += [key for key, _ in g.rows]
    assert seen == expected
    g.page = 99  # past the end: the last page
    assert g.page == 10 and len(g.rows) == 252 - 10 * 25


def test_columns_are_the_pages_with_plain_labels_and_ids_pinned(failed: grid.FailedTurns) -> None:
    columns = failed.grid.columns
    assert [c["label"] for c in columns[:5]] == ["system", "record id", "turn", "question", "gold answer"]
    assert [c["key"] for c in columns[:4]] == [True, True, True, False]
    assert all("_" not in c["label"] for c in columns)
    reasons = set(_column(failed.grid, "reason"))
    assert reasons and not any("_" in r for r in reasons if r)


def test_long_text_is_shortened_with_the_whole_text_kept(failed: grid.FailedTurns) -> None:
    at = [c["name"] for c in failed.grid.columns].index("raw_output")
    short, whole = failed.grid.rows[0][1][at]
    assert short.endswith("…") and len(short) <= 61
    assert "$821,000, $824,000 and $1,262,000" in whole


def test_sort_by_any_column_both_ways(failed: grid.FailedTurns) -> None:
    g = failed.grid
    g.sort = "turn"
    turns = [int(t) for t in _column(g, "turn")]
    assert turns == sorted(turns) and turns[0] == 0
    g.descending = True
    turns = [int(t) for t in _column(g, "turn")]
    assert turns == sorted(turns, reverse=True) and turns[0] == 7
    g.sort, g.descending = "record_id", False
    ids = _column(g, "record_id")
    assert ids == sorted(ids)


def test_search_is_every_column_case_insensitive_and_word_by_word(failed: grid.FailedTurns) -> None:
    g = failed.grid
    g.query = "double_abmd/2006/PAGE_75.pdf"
    assert g.total == 1 and _keys(g)[0][1:] == ["Double_ABMD/2006/page_75.pdf", 4]
    g.query = "lease expense"  # words of the question, in any column
    assert g.total >= 1 and all("lease" in q.lower() and "expense" in q.lower() for q in _column(g, "question"))
    g.query = "no such words anywhere"
    assert (g.total, g.rows) == (0, [])
    g.query = ""
    assert g.total == 252


def test_a_group_filter_is_named_and_cleared(failed: grid.FailedTurns, run: Run) -> None:
    divide = run.turns.filter(~pl.col("correct") & (pl.col("operation") == "divide")).height
    failed.show_group("operation", "divide")
    assert failed.grid.total == divide and 0 < divide < 252
    assert failed.grid.filter_text == f"Showing the {divide} failed turns where operation is divide."
    assert all(json.loads(k) for k in failed.grid.keys_in_order())
    failed._on_message(None, {"type": "clear_filter"}, None)  # the grid's "Clear the filter" button
    assert (failed.grid.total, failed.grid.filter_text) == (252, "")


def test_selecting_a_row_opens_its_panel_and_previous_next_walk_the_grid(failed: grid.FailedTurns) -> None:
    g = failed.grid
    g.sort, g.descending = "turn", True
    keys = g.keys_in_order()
    g.selected = keys[24]  # the last row of the first page
    panel = failed.panel()
    assert failed.panel_box.children == (panel.widget,)
    system, record_id, turn = json.loads(keys[24])
    assert record_id in panel.title_pane.value and "row 25 of 252" in panel.title_pane.value
    panel.navigate(+1)  # Next: the first row of the second page
    assert g.selected == keys[25] and g.page == 1
    assert json.loads(keys[25])[1] in panel.title_pane.value
    panel.navigate(-1)
    assert g.selected == keys[24] and g.page == 0


def test_a_click_on_a_linked_plot_filters_the_grid(failed: grid.FailedTurns, run: Run) -> None:
    figure = failed.linked(plots.accuracy_by_operation(run.turns), "operation")
    assert isinstance(figure, LinkedFigure)
    trace = figure.data[0]
    at = list(trace.x).index("divide")
    points = SimpleNamespace(point_inds=[at], xs=[trace.x[at]])
    for callback in trace._click_callbacks:
        callback(trace, points, None)
    assert "where operation is divide" in failed.grid.filter_text
    bundle = figure._repr_mimebundle_()
    assert bundle[PLOTLY_MIME]["data"][0]["x"][at] == "divide"
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_output_without_a_kernel_and_for_the_page(failed: grid.FailedTurns) -> None:
    bundle = failed._repr_mimebundle_()
    html = bundle["text/html"]
    assert html.count("<tr") == grid.FIRST_PAGE + 1  # the header and the first page
    assert "mathjax_ignore" in html and "The first 15 of 252 failed turns" in html
    assert "live kernel" in html and "data-wb-sortable" not in html
    page = bundle[PAGE_MIME]
    assert page.count("data-wb-key=") == 252 and 'class="wb-turn-data"' in page


def test_drilldown_menu_lists_groups_with_counts(run: Run, tmp_path) -> None:
    drill = grid.drilldown(run, "operation", store=tmp_path / "a.sqlite")
    labels = [label for label, _ in drill.groups.options]
    assert labels[0] == "Every group (252 failed turns)"
    assert all(re.fullmatch(r".+ \(\d+\)", label) for label in labels[1:])
    drill.groups.value = "divide"
    assert "where operation is divide" in drill.grid.filter_text
    drill.show_group("operation", "")
    assert drill.groups.value == "" and drill.grid.total == 252
    assert drill._repr_mimebundle_()[PAGE_MIME].count("<details") >= 2


def test_graders_disagree_lists_only_where_the_policies_disagree(run: Run, tmp_path) -> None:
    drill = grid.drilldown(run, "graders_disagree", store=tmp_path / "a.sqlite")
    groups = [value for _, value in drill.groups.options][1:]
    assert groups in ([], ["policies disagree"])
    if groups:
        assert drill.grid.caption.startswith("Only the failed turns on which the grading policies disagree")
    else:
        assert (
            drill.grid.caption
            == "The grading policies agree on every failed turn: none to list by grader disagreement."
        )


def test_a_long_table_of_the_package_is_a_live_grid_with_its_formats(run: Run) -> None:
    from workbench.analysis import slices
    from workbench.views import tables

    block = tables.slice_table(slices.slice_accuracy(run.turns, n_boot=20))
    table = grid.live(block)
    assert isinstance(table, grid.LiveTable) and table.grid.total == block.frame.height > 15
    assert [c["label"] for c in table.grid.columns] == [tables.label(c) for c in block.frame.columns]
    overall = table.grid.rows[0][1]
    assert any(re.fullmatch(r"\d+\.\d% \[\d+\.\d%, \d+\.\d%\]", text or "") for text, _ in overall)
    assert not table.grid.selectable
    bundle = table._repr_mimebundle_()
    assert bundle["text/html"] == block._repr_mimebundle_()["text/html"] and bundle[PAGE_MIME] == block.markup
    short = tables.html_table(pl.DataFrame({"a": range(3)}))
    assert grid.live(short) is short and grid.live(None) is None


def test_a_bad_store_is_one_line_under_the_grid_not_a_traceback(run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    failed = grid.failed_turns(run, store="mysql://nobody@localhost/x", annotator="ana")
    failed.grid.selected = failed.grid.keys_in_order()[0]  # the Output widget prints here outside a kernel
    lines = [line for line in capsys.readouterr().out.replace("\x1b[2K", "").splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("The panel cannot open: ") and "Fix: " in lines[0]
