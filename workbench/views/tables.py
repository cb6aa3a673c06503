"""Tables for notebooks and reports, rendered as escaped HTML.

The markup comes from the macros of ``templates/tables.html.j2`` through the one autoescaping
renderer (:mod:`workbench.views.html`), so a model output or question containing markup shows
as text. Functions take polars frames and return :class:`HtmlBlock`, which Jupyter displays
and the report renderer embeds.

Column headers and the names in cells (reasons, error types, categories, rules) are plain words
from the one mapping, :mod:`workbench.analysis.words`; numbers are formatted as
:mod:`workbench.analysis.formats` formats them (counts with separators, rates as percents with one
decimal, differences in points) while each numeric cell of the page keeps the unformatted number
in ``data-value`` for sorting. A cell longer than :data:`SHORT_CHARS` characters shows its
beginning, with the whole text one click away (``<details>``).

A block has two forms. The page's (``markup``, also the output's :data:`~workbench.views.html.PAGE_MIME`):
a table marked ``data-wb-sortable`` (made with ``sortable=True``, or longer than
:data:`GRID_ROWS` rows) becomes a data grid in the offline report
(:func:`workbench.report.runner.render_html`) from one script at the end of the page
(``static/sortable.js``): a search box, click-to-sort headers, pages of 10/25/50/100/all rows
with one count ("Showing 1–25 of 84 rows"), the first columns that name a row kept in view when
the table scrolls sideways. The failed-turns tables also carry the detail of each turn
(:mod:`workbench.views.turn_detail`): a click on a row opens a panel with its document,
conversation, programs and traces, the grader's reason, the policies and the flags.

The notebook's (``notebook``, the output's ``text/html``, what JupyterLab shows): the first
:data:`GRID_ROWS` rows at most (:func:`first_page`), with one line saying where the others are,
each cell aligned by its own style attribute (JupyterLab right-aligns table cells and fixes a
table's width to the cell's, which cut headings to "Unmatche"), inside an element of class
:data:`NO_MATHS`: JupyterLab's MathJax typesets text between two ``$`` in HTML outputs unless an
ancestor has the class ``mathjax_ignore`` (``tex2jax_ignore`` for MathJax 2 and the classic
notebook), so "$821,000 ... $824,000" stays text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from workbench.analysis import formats, words
from workbench.analysis.comparison import systems_table as systems_layout
from workbench.analysis.metrics import COMPARED_METRICS, HEADLINE_METRICS, MetricSpec, for_items
from workbench.analysis.slices import MIN_GROUP_N, SLICES, group_order, slice_title
from workbench.config import project_root
from workbench.grading.policies import POLICIES
from workbench.io.paths import shown_path
from workbench.views.blocks import (
    GRID_ROWS,
    LABELS,
    NO_MATHS,
    SHORT_CHARS,
    HtmlBlock,
    _browse_note,
    first_page,
    html_table,
    label,
    no_maths,
)
from workbench.views.html import Markup, macro
from workbench.views.turn_detail import detail_script, in_words, turn_key

if TYPE_CHECKING:
    from workbench.pipeline.run import Run

__all__ = [
    "HtmlBlock",
    "NO_MATHS",
    "SHORT_CHARS",
    "GRID_ROWS",
    "no_maths",
    "LABELS",
    "label",
    "html_table",
    "first_page",
    "headline",
    "failed_turns",
    "slice_table",
    "flag_counts",
    "checks_table",
    "drilldown",
    "systems_table",
    "paired_table",
    "difference_text",
    "cleaning_effect",
    "policy_comparison",
    "run_overview",
    "unmatched_rows",
    "files_written",
]


def headline(summary: dict[str, dict[str, Any]], metrics: Sequence[MetricSpec] = HEADLINE_METRICS) -> HtmlBlock:
    """Systems by headline metrics (the seed report's layout): ``metrics`` (by default
    :data:`~workbench.analysis.metrics.HEADLINE_METRICS`), each as its spec displays it.

    Examples
    --------
    >>> markup = headline({"s<1>": {"turn_execution_accuracy": 0.8304, "n_turns": 1490}})
    >>> "s&lt;1&gt;" in markup.markup and "83.0%" in markup.markup
    True
    """
    rows = []
    for system, figures in summary.items():
        row: dict[str, Any] = {"system": system}
        for spec in metrics:
            row[spec.heading] = spec.display(figures.get(spec.key))
        rows.append(row)
    frame = pl.DataFrame(rows, infer_schema_length=None)
    return html_table(frame, caption="Headline metrics", css_class="wb-table wb-headline", keys=1)


#: A policy described on a benchmark other than ConvFinQA (``official`` is ConvFinQA's rule).
_ELSEWHERE = {"official": "equal after rounding both to 5 decimals"}


def _policy_cell(metrics: Mapping[str, Any], name: str) -> str | None:
    figures = metrics.get("policies", {}).get(name)
    if figures is None:
        return None
    return f"{formats.percent(figures['accuracy'])} ({formats.count(figures['n_correct'])}/{formats.count(metrics['n_turns'])})"


def policy_comparison(source: Run | dict[str, dict[str, Any]]) -> HtmlBlock:
    """Accuracy of each system (a column) under each grading policy graded (a row), and a note
    describing those policies (none called ConvFinQA's official rule on another benchmark).

    Parameters
    ----------
    source
        A :class:`~workbench.pipeline.run.Run` (its summary and benchmark), or a summary
        (``run.summary``, taken as ConvFinQA's).

    Examples
    --------
    >>> block = policy_comparison({"s": {"n_turns": 2, "policies": {"exact-string": {"n_correct": 1, "accuracy": 0.5}}}})
    >>> "exact-string" in block.markup and "50.0% (1/2)" in block.markup and "official" not in block.markup
    True
    """
    summary = source if isinstance(source, dict) else source.summary
    benchmark = "convfinqa" if isinstance(source, dict) else source.gold.benchmark
    graded = dict.fromkeys(name for metrics in summary.values() for name in metrics.get("policies", {}))
    frame = pl.DataFrame(  # a row per policy, a column per system: narrow enough for a phone
        [{"policy": name} | {str(s): _policy_cell(m, name) for s, m in summary.items()} for name in graded],
        infer_schema_length=None,
    )
    elsewhere = _ELSEWHERE if benchmark != "convfinqa" else {}
    notes = "; ".join(f"{n}: {elsewhere.get(n, POLICIES[n].description)}" for n in graded if n in POLICIES)
    table = html_table(frame, caption="Accuracy by grading policy", css_class="wb-table wb-policies", keys=1)
    return table + _note(f"The policies: {notes}.") if notes else table


def _note(text: str) -> HtmlBlock:
    """A short note under or instead of a table (escaped)."""
    return HtmlBlock(str(macro("tables.html.j2", "note", text)))


#: The columns of a failed-turns table, in reading order (those the turns have), the first three naming the turn.
FAILED_COLUMNS = (
    "system",
    "record_id",
    "turn",
    "question",
    "gold_answer",
    "predicted_answer",
    "answer",
    "reason",
    "error_type",
    "dq_category",
    "operation",
    "gold_executed",
    "predicted_program",
    "detail",
    "raw_output",
)


def _dropped(failed: pl.DataFrame) -> frozenset[str]:
    """The columns a failed-turns table leaves out: the turn when every turn is 0 (GSM8K, MATH); the
    operation and executed gold without gold programs; any other empty column (raw output, program)."""
    dropped = set()
    if "raw_output" not in failed.columns or failed["raw_output"].null_count() == failed.height:
        dropped.add("raw_output")
    if failed.height and failed["turn"].max() == 0:
        dropped.add("turn")
    if "gold_program" in failed.columns and failed["gold_program"].null_count() == failed.height:
        dropped.update(("operation", "gold_executed"))
    for column in FAILED_COLUMNS[3:]:
        if column in failed.columns and failed.height and _empty(failed[column]):
            dropped.add(column)
    return frozenset(dropped)


def _empty(values: pl.Series) -> bool:
    """Whether every value of a column is missing or blank."""
    return bool(values.cast(pl.String).str.strip_chars().fill_null("").eq("").all())


#: Columns whose values are names (``wrong_value``, ``sign_inconsistency``, ``display_vs_executed``),
#: shown in words (:func:`workbench.analysis.words.plain`, the one mapping).
WORD_COLUMNS = frozenset(
    {"reason", "error_type", "dq_category", "category", "group", "rule", "status", "answer_source", "extraction_rule"}
)


def _failed_columns(turns: pl.DataFrame, *, dropped: frozenset[str]) -> pl.DataFrame:
    """A failed turn's columns in reading order (:data:`FAILED_COLUMNS`) but ``dropped``, names in words."""
    wanted = [c for c in FAILED_COLUMNS if c in turns.columns and c not in dropped]
    shown = turns.select(pl.col(c).cast(pl.String) if c != "turn" else pl.col(c) for c in wanted)
    return in_words(shown, WORD_COLUMNS)


def _turn_keys(rows: pl.DataFrame) -> list[str]:
    system = rows["system"] if "system" in rows.columns else pl.Series([None] * rows.height)
    return [turn_key(*row) for row in zip(system, rows["record_id"], rows["turn"], strict=True)]


def _failed(run_or_turns: Run | pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(turns, failed turns)`` of a run or of a bare turns table."""
    turns = run_or_turns if isinstance(run_or_turns, pl.DataFrame) else run_or_turns.turns
    return turns, turns.filter(~pl.col("correct"))


def _item(run_or_turns: Run | pl.DataFrame) -> words.Item:
    """What a run (or a bare turns table) counts: turns, or problems when no turn follows another."""
    turns = run_or_turns if isinstance(run_or_turns, pl.DataFrame) else run_or_turns.turns
    if not isinstance(run_or_turns, pl.DataFrame):
        return run_or_turns.item
    return "turn" if turns.height and int(turns["turn"].max() or 0) > 0 else "problem"


def _failed_table(
    rows: pl.DataFrame,
    *,
    caption: str,
    limit: int | None,
    details: Markup | str,
    dropped: frozenset[str],
    item: str = "turn",
) -> HtmlBlock:
    return html_table(
        _failed_columns(rows, dropped=dropped),
        caption=caption,
        css_class="wb-table wb-failed",
        max_rows=limit,
        sortable=True,
        keys=2 if "turn" in dropped else 3,
        row_keys=_turn_keys(rows),
        details=details,
        item=item,
        browse=None if rows.height <= GRID_ROWS else _browse_note(GRID_ROWS, rows.height, f"failed {item}s"),
    )


def failed_turns(run_or_turns: Run | pl.DataFrame, *, limit: int | None = None, details: bool = True) -> HtmlBlock:
    """The failed turns with the grader's reason, as a data grid whose rows open each turn's detail.

    Parameters
    ----------
    run_or_turns
        A :class:`~workbench.pipeline.run.Run` (the detail then shows each turn's document,
        policies and flags with evidence) or a bare turns table.
    limit
        Put at most this many rows in the page (None: all; the page shows them a page at a time).
    details
        Put the turns' detail data in the page (``False``: another table of the same page already
        holds it, e.g. a second drill-down of the same run; the page's panel reads every block).

    Long cells (question, programs, the raw model output) show their beginning, the whole text a
    click away; the detail panel shows everything (:mod:`workbench.views.turn_detail`).

    Examples
    --------
    >>> names = ["system", "record_id", "operation", "question", "gold_answer", "gold_executed",
    ...          "predicted_answer", "predicted_program", "answer", "reason", "detail"]
    >>> turns = pl.DataFrame({**{c: ["a"] for c in names}, "turn": [3], "correct": [False],
    ...                       "raw_output": ["<i>" + "y" * 400]})
    >>> markup = failed_turns(turns).markup
    >>> "data-wb-sortable" in markup and '<td class="num wb-key" data-value="3">3</td>' in markup
    True
    >>> "&lt;i&gt;" + "y" * 400 + "</div>" in markup and 'class="wb-turn-data"' in markup
    True
    """
    source, failed = _failed(run_or_turns)
    shown = failed if limit is None else failed.head(limit)
    dropped = _dropped(failed)
    item = _item(run_or_turns)
    return _failed_table(
        failed,
        caption=f"Failed {words.items(item)} ({formats.count(failed.height)})",
        limit=limit,
        details=detail_script(run_or_turns, shown) if details else "",
        dropped=dropped,
        item=item,
    )


def _too_small_note(part: pl.DataFrame) -> pl.Expr:
    if "too_small" not in part.columns:
        return pl.lit(None, dtype=pl.String).alias("note")
    return (
        pl.when(pl.col("too_small")).then(pl.lit(f"too small (n < {MIN_GROUP_N})")).otherwise(pl.lit("")).alias("note")
    )


def slice_table(table: pl.DataFrame, slice_name: str | None = None) -> HtmlBlock:
    """Accuracy per slice group with n and its 95% interval (``table`` from
    :func:`workbench.analysis.slices.slice_accuracy`), one slice or all, in the order given.

    A group the table marks ``too_small`` (fewer turns than
    :data:`~workbench.analysis.slices.MIN_GROUP_N`) says so in the ``note`` column: its accuracy
    is not a finding.

    Examples
    --------
    >>> t = pl.DataFrame({"system": ["s", "s"], "slice": ["operation"] * 2, "group": ["divide", "greater"],
    ...                   "n_turns": [40, 4], "n_correct": [30, 4], "n_conversations": [20, 2],
    ...                   "accuracy": [0.75, 1.0], "low": [0.5, 1.0], "high": [1.0, 1.0], "too_small": [False, True]})
    >>> markup = slice_table(t).markup
    >>> "75.0% [50.0%, 100.0%]" in markup and markup.count("too small (n &lt; 20)") == 1
    True
    >>> '<th scope="col">conversations</th>' in slice_table(t.drop("too_small")).markup
    True

    Single questions (GSM8K, MATH: each record one problem) are counted as problems, with no
    conversations column (:func:`workbench.analysis.words.slice_item`):

    >>> one = t.with_columns(n_conversations=pl.col("n_turns"))
    >>> headers = slice_table(one).markup
    >>> '<th scope="col">problems</th>' in headers and "conversations" not in headers
    True
    """

    part = table if slice_name is None else table.filter(pl.col("slice") == slice_name)
    single = words.slice_item(table) == "problem"
    shown = part.select(
        "system",
        pl.col("slice").cast(pl.String).replace({k: slice_title(k) for k in part["slice"].cast(pl.String).unique()}),
        "group",
        pl.col("n_turns").alias("problems") if single else pl.col("n_turns"),
        "n_correct",
        *([] if single else ["n_conversations"]),
        pl.struct("accuracy", "low", "high")
        .map_elements(lambda r: formats.interval(r["accuracy"], r["low"], r["high"]), return_dtype=pl.String)
        .alias("accuracy [95% interval]"),
        _too_small_note(part),
    )
    shown = in_words(shown, WORD_COLUMNS)
    if shown["note"].fill_null("").eq("").all():
        shown = shown.drop("note")
    title = SLICES[slice_name].title if slice_name in SLICES else "slice"
    return html_table(shown, caption=f"Accuracy by {title.lower()}", css_class="wb-table wb-slices", keys=1)


def flag_counts(counts: pl.DataFrame) -> HtmlBlock:
    """Flags per data-quality category (``counts`` from :func:`workbench.quality.checks.flag_counts`)."""
    return html_table(
        in_words(counts, WORD_COLUMNS), caption="Data-quality flags per category", css_class="wb-table wb-flag-counts"
    )


def checks_table(checks: pl.DataFrame, *, limit: int | None = 500) -> HtmlBlock:
    """Every data-quality flag with its evidence, most confident first, as a data grid.

    Examples
    --------
    >>> flags = pl.DataFrame({"record_id": ["r", "q"], "turn": [0, 1], "category": ["mislabel", "sign_inconsistency"],
    ...                       "rule": ["x", "y"], "confidence": [0.5, 0.9], "evidence": ["a <b>", "c"]})
    >>> markup = checks_table(flags).markup
    >>> "data-wb-sortable" in markup and markup.index("sign inconsistency") < markup.index("mislabel")
    True
    >>> "a &lt;b&gt;" in markup and '<td class="num" data-value="0.9">0.90</td>' in markup
    True
    """
    shown = checks.sort("confidence", "record_id", "turn", descending=[True, False, False]).select(
        "record_id", "turn", pl.col("category").cast(pl.String), "rule", "confidence", "evidence"
    )
    shown = in_words(shown, WORD_COLUMNS)
    return html_table(
        shown,
        caption=f"Data-quality flags ({formats.count(checks.height)})",
        css_class="wb-table wb-checks",
        max_rows=limit,
        sortable=True,
        formats_by_column={"confidence": lambda v: f"{v:.2f}"},
        keys=2,
    )


#: Slices whose drill-down lists only some groups: (the groups listed, the sentence saying why;
#: ``{item}`` reads "turn" or "problem").
_DRILL_ONLY = {
    "graders_disagree": (
        ("policies disagree",),
        "Only the failed {item}s on which the grading policies disagree are listed here: a {item} every "
        "policy grades wrong is a failure under any policy, and is in the failed-{item}s table.",
    ),
}


def drilldown(
    run_or_turns: Run | pl.DataFrame, slice_name: str, *, limit: int | None = None, details: bool = True
) -> HtmlBlock:
    """Failed turns of each group of a slice, one collapsible section per group in the slice's
    reading order (:func:`workbench.analysis.slices.group_order`), so a reader can open the group a
    chart points at. Every failed turn of every group is there (``limit`` caps each group's rows
    in the page), a page at a time; a click on a row opens the turn's detail (as in
    :func:`failed_turns`; the detail data is in the page once for all groups, or not at all with
    ``details=False``, when another table of the page holds it).

    The grader-disagreement drill-down lists only the groups where the policies disagree, and says so.

    Examples
    --------
    >>> names = ["system", "record_id", "question", "gold_answer", "gold_executed",
    ...          "predicted_answer", "predicted_program", "answer", "reason", "detail"]
    >>> turns = pl.DataFrame({**{c: ["a", "b", "c"] for c in names}, "turn": [0, 1, 2],
    ...                       "operation": ["add", "divide", "divide"], "correct": [False, False, True]})
    >>> markup = drilldown(turns, "operation").markup
    >>> markup.count("<details") == 2 and markup.count("data-wb-sortable") == 2
    True
    >>> markup.count('class="wb-turn-data"')
    1
    """

    spec = SLICES[slice_name]
    _, failed = _failed(run_or_turns)
    item = _item(run_or_turns)
    failed = failed.with_columns(spec.expr.alias("_group"))
    only, note = _DRILL_ONLY.get(slice_name, (None, ""))
    note = note.format(item=item)
    if only is not None:
        failed = failed.filter(pl.col("_group").is_in(list(only)))
    sizes = failed.group_by("_group").len().sort("len", "_group", descending=[True, False])
    counts = dict(sizes.iter_rows())
    order = group_order(slice_name, sizes["_group"].to_list(), counts)
    page, notebook = [], []
    shown = []
    dropped = _dropped(failed)
    for group in order:
        rows = failed.filter(pl.col("_group") == group).drop("_group")
        shown.append(rows if limit is None else rows.head(limit))
        table = _failed_table(rows, caption="", limit=limit, details="", dropped=dropped, item=item)
        how_many = words.counted(counts[group], f"failed {item}")
        page.append((words.plain(str(group)), how_many, Markup(table.markup)))
        notebook.append((words.plain(str(group)), how_many, Markup(table._notebook())))
    data = detail_script(run_or_turns, pl.concat(shown)) if shown and details else ""
    items = words.items(item)
    if only is not None and not page:
        note = f"The grading policies agree on every failed {item}: none to list by {spec.title.lower()}."
    return HtmlBlock(
        str(macro("tables.html.j2", "drilldown", spec.title, page, note, data, items)),
        str(macro("tables.html.j2", "drilldown", spec.title, notebook, note, "", items)),
    )


def systems_table(intervals: pl.DataFrame) -> HtmlBlock:
    """Systems by the seed report's metrics with intervals (from
    :func:`workbench.analysis.comparison.metric_intervals`); single questions (no conversation-level
    metric: GSM8K, MATH) under their labels for problems (:func:`workbench.analysis.metrics.for_items`).

    Examples
    --------
    >>> iv = pl.DataFrame({"system": ["s"], "metric": ["turn_execution_accuracy"], "accuracy": [0.5],
    ...                    "low": [0.25], "high": [0.75]})
    >>> markup = systems_table(iv).markup
    >>> ">Accuracy</th>" in markup and "problems resampled" in markup and "conversation" not in markup
    True
    """
    by_conversation = {spec.key for spec in COMPARED_METRICS if spec.aggregation == "conversation"}
    single = not by_conversation & set(intervals["metric"].to_list())
    shown = systems_layout(intervals)
    if single:
        names = {spec.label: words_for.label for spec, words_for in _relabelled(COMPARED_METRICS)}
        shown = shown.rename({c: names[c] for c in shown.columns if c in names})
    resampled = "problems resampled" if single else "clustered by conversation"
    return html_table(
        shown, caption=f"Systems by metrics (95% bootstrap interval, {resampled})", css_class="wb-table wb-headline"
    )


def _relabelled(specs: Sequence[MetricSpec]) -> list[tuple[MetricSpec, MetricSpec]]:
    """Each metric of ``specs`` a run of problems shows, with its record for problems (its label there)."""
    by_key = {spec.key: spec for spec in specs}
    return [(by_key[spec.key], spec) for spec in for_items(specs, "problem")]


def difference_text(difference: float | None, low: float | None, high: float | None) -> str:
    """A paired difference in points with its interval: ``+0.9 points [+0.2, +1.6]``.

    Examples
    --------
    >>> difference_text(0.0087, 0.002, 0.0163)
    '+0.9 points [+0.2, +1.6]'
    >>> difference_text(-0.05, None, None), difference_text(None, None, None)
    ('-5.0 points', '—')
    """
    shown = formats.points(difference)
    if difference is None or low is None or high is None:
        return shown
    bounds = (formats.points(v).removesuffix(" points") for v in (low, high))
    return f"{shown} [{', '.join(bounds)}]"


def paired_table(comparison: pl.DataFrame) -> HtmlBlock:
    """A paired comparison (from :func:`workbench.analysis.comparison.compare_systems`), readable:
    slices by their titles, groups in words, counts of turns or of problems
    (:func:`workbench.analysis.words.slice_item`).

    Examples
    --------
    >>> t = pl.DataFrame({"slice": ["overall", "answer_format"], "group": ["all", "yes/no"], "n_turns": [40, 30],
    ...     "n_conversations": [40, 30], "accuracy_a": [0.5, 0.6], "accuracy_b": [0.4, 0.5], "difference": [0.1, 0.1],
    ...     "low": [0.0, 0.0], "high": [0.2, 0.2], "a_only": [5, 4], "b_only": [1, 1], "mcnemar_p": [0.2, 0.3],
    ...     "n_unpaired": [0, 0], "system_a": ["a", "a"], "system_b": ["b", "b"]})
    >>> markup = paired_table(t).markup
    >>> "Answer format" in markup and "answer_format" not in markup and ">paired problems</th>" in markup
    True
    """
    if not comparison.height:
        return _note("No turns that both systems answered.")
    a, b = comparison["system_a"][0], comparison["system_b"][0]
    item = words.slice_item(comparison)
    titles = {name: slice_title(name) for name in comparison["slice"].unique().to_list()}
    shown = comparison.select(
        pl.col("slice").replace_strict(titles, return_dtype=pl.String),
        pl.col("group").cast(pl.String).replace({g: words.plain(g) for g in comparison["group"].unique().to_list()}),
        pl.col("n_turns").alias(f"paired {item}s"),
        pl.col("accuracy_a").alias(f"acc. {a}"),
        pl.col("accuracy_b").alias(f"acc. {b}"),
        pl.struct("difference", "low", "high")
        .map_elements(lambda r: difference_text(r["difference"], r["low"], r["high"]), return_dtype=pl.String)
        .alias("difference [95% interval]"),
        pl.col("a_only").alias(f"only {a} right"),
        pl.col("b_only").alias(f"only {b} right"),
        pl.col("mcnemar_p").alias("McNemar p"),
        pl.col("n_unpaired").alias(f"unpaired {item}s"),
    )
    return html_table(
        shown,
        caption=f"Paired comparison: {a} minus {b}",
        css_class="wb-table wb-paired",
        formats_by_column={f"acc. {a}": formats.percent, f"acc. {b}": formats.percent, "McNemar p": formats.p_value},
        keys=2,
    )


def cleaning_effect(effect: pl.DataFrame, annotations: pl.DataFrame, item: str | None = None) -> HtmlBlock:
    """Each system's scores before and after cleaning the gold (``effect`` from
    :func:`workbench.cleaning.before_after.cleaning_effect`), with how many annotations were applied.

    ``item`` is what the run counts (``"turn"``, or ``"problem"``: then the conversation-level
    columns, which repeat the figures per problem, are left out); by default ``"problem"`` when
    every conversation figure equals the turn figure, else ``"turn"``.

    Examples
    --------
    >>> effect = pl.DataFrame({"system": ["s"], "turn_accuracy_before": [0.5], "turn_accuracy_after": [0.6],
    ...     "turn_change_points": [10.0], "conversation_accuracy_before": [0.4], "conversation_accuracy_after": [0.5],
    ...     "n_changed": [1], "n_removed": [1]})
    >>> notes = pl.DataFrame({"system": [None], "corrected_answer": ["12"], "exclude": [True]}, schema_overrides={"system": pl.String})
    >>> markup = cleaning_effect(effect, notes).markup
    >>> "1 corrected answer, 1 exclusion)" in markup and "turns excluded" in markup
    True
    """
    if not annotations.height:
        return HtmlBlock(str(macro("tables.html.j2", "no_annotations")))
    if item is None:
        same = all(
            effect[f"turn_accuracy_{when}"].equals(effect[f"conversation_accuracy_{when}"])
            for when in ("before", "after")
        )
        item = "problem" if same else "turn"
    gold_level = annotations.filter(pl.col("system").is_null())
    single = item == "problem"
    shown = effect.select(
        "system",
        pl.col("turn_accuracy_before").alias("accuracy before" if single else "turn accuracy before"),
        pl.col("turn_accuracy_after").alias("accuracy after" if single else "turn accuracy after"),
        (pl.col("turn_change_points") / 100).alias("change"),
        *(
            []
            if single
            else [
                pl.col("conversation_accuracy_before").alias("conversation accuracy before"),
                pl.col("conversation_accuracy_after").alias("conversation accuracy after"),
            ]
        ),
        pl.col("n_changed").alias("verdicts changed"),
        pl.col("n_removed").alias(f"{item}s excluded"),
    )
    rates = [c for c in shown.columns if "accuracy" in c]
    caption = (
        f"Scores before and after cleaning ({words.counted(gold_level.height, 'gold annotation')} in force: "
        f"{words.counted(int(gold_level['corrected_answer'].is_not_null().sum()), 'corrected answer')}, "
        f"{words.counted(int(gold_level['exclude'].sum()), 'exclusion')})"
    )
    return html_table(
        shown,
        caption=caption,
        css_class="wb-table wb-cleaning",
        formats_by_column={**dict.fromkeys(rates, formats.percent), "change": formats.points},
    )


def _shown(path: Any) -> str:
    """A path as a page shows it (:func:`workbench.io.paths.shown_path`): relative to the current
    folder or the project, else its folder's name and its own."""
    return shown_path(path, Path.cwd(), project_root())


def files_written(paths: dict[str, Any]) -> HtmlBlock:
    """Say which graded tables were written (paths relative to the current folder or the project,
    else the folder's name and the file's), or that none were."""
    written = [(words.plain(str(k)), _shown(v)) for k, v in paths.items()]
    return HtmlBlock(str(macro("tables.html.j2", "files_written", written)))


def unmatched_rows(unmatched: pl.DataFrame) -> pl.DataFrame:
    """The prediction rows that match no gold turn, with where they came from and why."""
    return unmatched.select(
        "system",
        pl.col("source_file").map_elements(_shown, return_dtype=pl.String),
        "source_location",
        "record_id",
        "turn",
        "why",
    )


#: The gold layouts (:data:`workbench.io.gold.base.Layout`) in plain words, for the run overview.
LAYOUT_WORDS: dict[str, str] = {
    "convfinqa-reformatted": "ConvFinQA, reformatted release",
    "convfinqa-original": "ConvFinQA, original release",
    "ghchen99-embedded": "gold carried in the ConvFinQA outputs",
    "gsm8k-jsonl": "GSM8K problems",
    "math-problems": "MATH problems",
    "plain-table": "a table of questions and gold answers",
    "carried-in-predictions": "gold answers carried in the predictions file",
}


def run_overview(run: Run) -> HtmlBlock:
    """What was graded: dataset (its layout in plain words, :data:`LAYOUT_WORDS`), systems,
    counts, and any unmatched rows."""
    unmatched = html_table(unmatched_rows(run.unmatched), max_rows=50, keys=1) if run.unmatched.height else ""
    markup = macro(
        "tables.html.j2",
        "run_overview",
        None if run.gold.layout == "carried-in-predictions" else _shown(run.gold.path),  # the system's file
        LAYOUT_WORDS.get(run.gold.layout, run.gold.layout),
        None
        if run.gold.turns["record_id"].n_unique() == run.gold.turns.height
        else formats.count(run.gold.documents.height),
        formats.count(run.gold.turns.height),
        [(_shown(path), system) for path, system in run.prediction_files],
        run.graded.policy.name,
        run.unmatched.height,
        unmatched,
    )
    return HtmlBlock(str(markup))
