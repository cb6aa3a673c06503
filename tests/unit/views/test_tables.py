"""Table markup without a browser: sortable tables, numeric ``data-value`` attributes, escaping of
everything from the data (cells, headers, captions, attributes), and the raw-output column."""

from __future__ import annotations

import re

import polars as pl
from markupsafe import escape

from workbench.views import tables

HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
ESCAPED = str(escape(HOSTILE))  # as the renderer escapes (quotes as &#34; and &#39;)
#: The attributes the table markup writes; anything else (``onerror``, ``src``) came from the data.
OWN_ATTRIBUTES = {"class", "data-wb-sortable", "scope", "data-value"}


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
    assert '<td class="num" data-value="12345678">12345678</td>' in markup
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
    assert f"<caption>{ESCAPED}</caption>" in markup and f"<td>{ESCAPED}</td>" in markup
    assert _attribute_names(markup) == OWN_ATTRIBUTES  # the class value stayed one attribute


def test_failed_turns_are_sortable_and_show_raw_output_cut_and_escaped() -> None:
    long = HOSTILE + "x" * 400
    turns = _turns([long, None])
    markup = tables.failed_turns(turns).markup
    assert 'class="wb-table wb-failed" data-wb-sortable' in markup
    assert '<th scope="col">raw output</th>' in markup
    cut = long[: tables.RAW_OUTPUT_CHARS] + "…"
    assert f"<td>{escape(cut)}</td>" in markup
    assert "x" * (tables.RAW_OUTPUT_CHARS - len(HOSTILE) + 1) not in markup
    assert '<td class="num" data-value="1">1</td>' in markup  # the turn column sorts numerically
    assert "<script" not in markup and _attribute_names(markup) <= OWN_ATTRIBUTES
    short = tables.failed_turns(_turns(["short <b>", None])).markup
    assert "<td>short &lt;b&gt;</td>" in short and "…" not in short


def test_failed_turns_have_no_raw_output_column_when_there_is_none() -> None:
    assert "raw output" not in tables.failed_turns(_turns()).markup
    assert "raw output" not in tables.failed_turns(_turns([None, None])).markup


def test_drilldown_tables_are_sortable_with_the_same_columns_in_every_group() -> None:
    turns = _turns([None, "only the second group has output"]).with_columns(pl.Series("operation", ["add", "divide"]))
    markup = tables.drilldown(turns, "operation").markup
    assert markup.count("<details") == 2 and markup.count("data-wb-sortable") == 2
    assert markup.count('<th scope="col">raw output</th>') == 2


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
    assert f"<td>{ESCAPED}</td>" in markup and "<script" not in markup
