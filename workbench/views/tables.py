"""Tables for notebooks and reports, rendered as escaped HTML.

The markup comes from the macros of ``templates/tables.html.j2`` through the one autoescaping
renderer (:mod:`workbench.views.html`), so a model output or question containing markup shows
as text. Functions take polars frames and return :class:`HtmlBlock`, which Jupyter displays
and the report renderer embeds.

The markup carries no script. A table made with ``sortable=True`` is marked
``data-wb-sortable`` and its numeric cells hold the unformatted number in ``data-value``;
the offline report (:func:`workbench.report.runner.render_html`) adds a search box and
click-to-sort headers to such tables from one script at the end of the page. In Jupyter
the same markup shows as a plain table.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import polars as pl

from workbench.analysis.comparison import _with_interval
from workbench.analysis.comparison import systems_table as systems_layout
from workbench.analysis.metrics import HEADLINE_METRICS
from workbench.analysis.slices import SLICES, group_order
from workbench.grading.policies import POLICIES
from workbench.views.html import macro

if TYPE_CHECKING:
    from workbench.pipeline.run import Run

__all__ = [
    "HtmlBlock",
    "html_table",
    "headline",
    "failed_turns",
    "slice_table",
    "flag_counts",
    "checks_table",
    "drilldown",
    "systems_table",
    "paired_table",
    "cleaning_effect",
    "policy_comparison",
    "run_overview",
    "unmatched_rows",
    "files_written",
]


class HtmlBlock:
    """A block of HTML that Jupyter and the report renderer display as is."""

    def __init__(self, markup: str) -> None:
        self.markup = markup

    def _repr_html_(self) -> str:
        return self.markup

    def __html__(self) -> str:
        """The markup, for a template to insert as it is."""
        return self.markup

    def __repr__(self) -> str:
        return f"HtmlBlock({len(self.markup)} characters)"


#: Characters of a turn's raw output shown in the failed-turns tables (longer ones end in "…").
RAW_OUTPUT_CHARS = 300


def _data_value(value: float) -> str:
    """The ``data-value`` of a numeric cell: the number unformatted, for sorting (empty for NaN)."""
    if math.isnan(value):
        return ""
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def _cell(value: Any) -> tuple[str, str, str]:
    """A cell as the table macro takes it: ``(kind, text, data-value)``."""
    if value is None:
        return ("null", "", "")
    if isinstance(value, bool):
        return ("text", "yes" if value else "no", "")
    if isinstance(value, float):
        return ("num", f"{value:.4g}", _data_value(value))
    if isinstance(value, int):
        return ("num", str(value), _data_value(value))
    return ("text", str(value), "")


def html_table(
    frame: pl.DataFrame,
    *,
    caption: str = "",
    css_class: str = "wb-table",
    max_rows: int | None = None,
    sortable: bool = False,
) -> HtmlBlock:
    """Render a frame as an escaped HTML table.

    Parameters
    ----------
    frame
        The rows to show, in order.
    caption
        The table's caption (escaped).
    css_class
        The ``class`` attribute of the table (escaped).
    max_rows
        Show at most this many rows, with a note saying how many there are.
    sortable
        Mark the table ``data-wb-sortable``: the offline report gives it a search box and
        sortable headers. Numeric cells always carry their number in ``data-value``.

    Examples
    --------
    >>> html_table(pl.DataFrame({"a": ["<b>x</b>"]})).markup.count("&lt;b&gt;")
    1
    >>> markup = html_table(pl.DataFrame({"n": [0.123456]}), sortable=True).markup
    >>> "data-wb-sortable" in markup and '<td class="num" data-value="0.123456">0.1235</td>' in markup
    True
    """
    shown = frame if max_rows is None else frame.head(max_rows)
    rows = [[_cell(v) for v in row] for row in shown.iter_rows()]
    markup = macro("tables.html.j2", "table", shown.columns, rows, caption, css_class, sortable, max_rows, frame.height)
    return HtmlBlock(str(markup))


def headline(summary: dict[str, dict[str, Any]]) -> HtmlBlock:
    """Systems by headline metrics (the seed report's layout)."""
    rows = []
    for system, metrics in summary.items():
        row: dict[str, Any] = {"system": system}
        for spec in HEADLINE_METRICS:
            row[spec.heading] = spec.display(metrics.get(spec.key))
        rows.append(row)
    frame = pl.DataFrame(rows, infer_schema_length=None)
    return html_table(frame, caption="Headline metrics", css_class="wb-table wb-headline")


def policy_comparison(summary: dict[str, dict[str, Any]]) -> HtmlBlock:
    """Accuracy of each system under every grading policy, side by side.

    Examples
    --------
    >>> block = policy_comparison({"s": {"n_turns": 2, "policies": {"exact-string": {"n_correct": 1, "accuracy": 0.5}}}})
    >>> "exact-string" in block.markup and "50.0% (1/2)" in block.markup
    True
    """

    rows = []
    for system, metrics in summary.items():
        row: dict[str, Any] = {"system": system}
        for name, figures in metrics.get("policies", {}).items():
            row[name] = f"{figures['accuracy']:.1%} ({figures['n_correct']}/{metrics['n_turns']})"
        rows.append(row)
    notes = "; ".join(f"{p.name}: {p.description}" for p in POLICIES.values())
    frame = pl.DataFrame(rows, infer_schema_length=None)
    return html_table(frame, caption=f"Turn accuracy by grading policy ({notes})", css_class="wb-table wb-policies")


def _has_raw_output(turns: pl.DataFrame) -> bool:
    """Whether the turns carry any raw model output to show."""
    return "raw_output" in turns.columns and turns["raw_output"].null_count() < turns.height


def _failed_columns(turns: pl.DataFrame, *, raw_output: bool = False) -> pl.DataFrame:
    """The columns a reader needs to judge a failed turn, in reading order; with
    ``raw_output`` the model's raw output too, cut to :data:`RAW_OUTPUT_CHARS` characters."""
    extra = [c for c in ("error_type", "dq_category") if c in turns.columns]
    raw = pl.col("raw_output")
    shortened = (
        pl.when(raw.str.len_chars() > RAW_OUTPUT_CHARS)
        .then(raw.str.slice(0, RAW_OUTPUT_CHARS) + "…")
        .otherwise(raw)
        .alias("raw output")
    )
    return turns.select(
        "system",
        "record_id",
        "turn",
        "operation",
        "question",
        pl.col("gold_answer").alias("gold (display)"),
        pl.col("gold_executed").alias("gold (executed)"),
        "predicted_answer",
        "predicted_program",
        pl.col("answer").alias("answer graded"),
        pl.col("reason").cast(pl.String),
        *[pl.col(c).cast(pl.String) for c in extra],
        "detail",
        *([shortened] if raw_output else []),
    )


def failed_turns(turns: pl.DataFrame, *, limit: int = 2000) -> HtmlBlock:
    """The failed turns with the grader's reason, as a sortable table.

    When the turns carry raw model output, a ``raw output`` column shows its first
    :data:`RAW_OUTPUT_CHARS` characters.

    Examples
    --------
    >>> names = ["system", "record_id", "operation", "question", "gold_answer", "gold_executed",
    ...          "predicted_answer", "predicted_program", "answer", "reason", "detail"]
    >>> turns = pl.DataFrame({**{c: ["a"] for c in names}, "turn": [3], "correct": [False],
    ...                       "raw_output": ["<i>" + "y" * 400]})
    >>> markup = failed_turns(turns).markup
    >>> "data-wb-sortable" in markup and '<td class="num" data-value="3">3</td>' in markup
    True
    >>> "&lt;i&gt;" + "y" * 297 + "…" in markup and "y" * 298 not in markup
    True
    """
    wrong = turns.filter(~pl.col("correct"))
    failed = _failed_columns(wrong, raw_output=_has_raw_output(wrong))
    return html_table(
        failed,
        caption=f"Failed turns ({failed.height})",
        css_class="wb-table wb-failed",
        max_rows=limit,
        sortable=True,
    )


def slice_table(table: pl.DataFrame, slice_name: str | None = None) -> HtmlBlock:
    """Accuracy per slice group with its interval (``table`` from
    :func:`workbench.analysis.slices.slice_accuracy`), one slice or all.

    Examples
    --------
    >>> t = pl.DataFrame({"system": ["s"], "slice": ["operation"], "group": ["divide"], "n_turns": [4],
    ...                   "n_correct": [3], "n_conversations": [2], "accuracy": [0.75], "low": [0.5], "high": [1.0]})
    >>> "75.0% [50.0%, 100.0%]" in slice_table(t).markup
    True
    """

    part = table if slice_name is None else table.filter(pl.col("slice") == slice_name)
    shown = part.select(
        "system",
        pl.col("slice").replace_strict({k: v.title for k, v in SLICES.items()}, default=pl.col("slice")),
        "group",
        "n_turns",
        "n_correct",
        "n_conversations",
        pl.struct("accuracy", "low", "high")
        .map_elements(lambda r: _with_interval(r["accuracy"], r["low"], r["high"]), return_dtype=pl.String)
        .alias("accuracy [95% interval]"),
    )
    title = SLICES[slice_name].title if slice_name in SLICES else "slice"
    return html_table(shown, caption=f"Accuracy by {title.lower()}", css_class="wb-table wb-slices")


def flag_counts(counts: pl.DataFrame) -> HtmlBlock:
    """Flags per data-quality category (``counts`` from :func:`workbench.quality.checks.flag_counts`)."""
    return html_table(counts, caption="Data-quality flags per category", css_class="wb-table wb-flag-counts")


def checks_table(checks: pl.DataFrame, *, limit: int = 500) -> HtmlBlock:
    """Every data-quality flag with its evidence, most confident first, as a sortable table.

    Examples
    --------
    >>> flags = pl.DataFrame({"record_id": ["r", "q"], "turn": [0, 1], "category": ["mislabel", "sign_inconsistency"],
    ...                       "rule": ["x", "y"], "confidence": [0.5, 0.9], "evidence": ["a <b>", "c"]})
    >>> markup = checks_table(flags).markup
    >>> "data-wb-sortable" in markup and markup.index("sign_inconsistency") < markup.index("mislabel")
    True
    >>> "a &lt;b&gt;" in markup and '<td class="num" data-value="0.9">0.9</td>' in markup
    True
    """
    shown = checks.sort("confidence", "record_id", "turn", descending=[True, False, False]).select(
        "record_id", "turn", pl.col("category").cast(pl.String), "rule", "confidence", "evidence"
    )
    return html_table(
        shown,
        caption=f"Data-quality flags ({checks.height})",
        css_class="wb-table wb-checks",
        max_rows=limit,
        sortable=True,
    )


def drilldown(turns: pl.DataFrame, slice_name: str, *, limit: int = 25) -> HtmlBlock:
    """Failed turns of each group of a slice, one collapsible section per group (largest
    failure count first), so a reader can open the group a chart points at.

    Each group's table is sortable and, when the turns carry raw model output, has the
    same ``raw output`` column as :func:`failed_turns`.

    Examples
    --------
    >>> names = ["system", "record_id", "question", "gold_answer", "gold_executed",
    ...          "predicted_answer", "predicted_program", "answer", "reason", "detail"]
    >>> turns = pl.DataFrame({**{c: ["a", "b", "c"] for c in names}, "turn": [0, 1, 2],
    ...                       "operation": ["add", "divide", "divide"], "correct": [False, False, True]})
    >>> markup = drilldown(turns, "operation").markup
    >>> markup.count("<details") == 2 and markup.count("data-wb-sortable") == 2
    True
    """

    spec = SLICES[slice_name]
    failed = turns.filter(~pl.col("correct")).with_columns(spec.expr.alias("_group"))
    sizes = failed.group_by("_group").len().sort("len", "_group", descending=[True, False])
    order = sizes["_group"].to_list() if not spec.numeric else group_order(slice_name, sizes["_group"].to_list())
    counts = dict(sizes.iter_rows())
    raw_output = _has_raw_output(failed)
    sections = []
    for group in order:
        rows = _failed_columns(failed.filter(pl.col("_group") == group), raw_output=raw_output)
        table = html_table(rows, css_class="wb-table wb-failed", max_rows=limit, sortable=True)
        sections.append((str(group), counts[group], table))
    return HtmlBlock(str(macro("tables.html.j2", "drilldown", spec.title, sections)))


def systems_table(intervals: pl.DataFrame) -> HtmlBlock:
    """Systems by the seed report's metrics with intervals (from
    :func:`workbench.analysis.comparison.metric_intervals`)."""

    return html_table(
        systems_layout(intervals),
        caption="Systems by metrics (95% bootstrap interval, clustered by conversation)",
        css_class="wb-table wb-headline",
    )


def paired_table(comparison: pl.DataFrame) -> HtmlBlock:
    """A paired comparison (from :func:`workbench.analysis.comparison.compare_systems`), readable."""
    if not comparison.height:
        return HtmlBlock(str(macro("tables.html.j2", "note", "No turns that both systems answered.")))
    a, b = comparison["system_a"][0], comparison["system_b"][0]
    shown = comparison.select(
        "slice",
        "group",
        pl.col("n_turns").alias("paired turns"),
        pl.col("accuracy_a").alias(f"acc. {a}"),
        pl.col("accuracy_b").alias(f"acc. {b}"),
        pl.format(
            "{} [{}, {}]",
            (pl.col("difference") * 100).round(1),
            (pl.col("low") * 100).round(1),
            (pl.col("high") * 100).round(1),
        ).alias("difference, points [95% interval]"),
        pl.col("a_only").alias(f"only {a} right"),
        pl.col("b_only").alias(f"only {b} right"),
        pl.col("mcnemar_p").alias("McNemar p"),
        pl.col("n_unpaired").alias("unpaired turns"),
    )
    return html_table(shown, caption=f"Paired comparison: {a} minus {b}", css_class="wb-table wb-paired")


def cleaning_effect(effect: pl.DataFrame, annotations: pl.DataFrame) -> HtmlBlock:
    """Each system's scores before and after cleaning the gold (``effect`` from
    :func:`workbench.cleaning.before_after.cleaning_effect`), with how many annotations were applied."""
    if not annotations.height:
        return HtmlBlock(str(macro("tables.html.j2", "no_annotations")))
    gold_level = annotations.filter(pl.col("system").is_null())
    shown = effect.select(
        "system",
        pl.col("turn_accuracy_before").alias("turn acc. before"),
        pl.col("turn_accuracy_after").alias("turn acc. after"),
        pl.col("turn_change_points").round(2).alias("change (points)"),
        pl.col("conversation_accuracy_before").alias("conv. acc. before"),
        pl.col("conversation_accuracy_after").alias("conv. acc. after"),
        pl.col("n_changed").alias("verdicts changed"),
        pl.col("n_removed").alias("turns excluded"),
    )
    caption = (
        f"Scores before and after cleaning ({gold_level.height} gold annotations in force: "
        f"{gold_level['corrected_answer'].is_not_null().sum()} corrected answers, "
        f"{gold_level['exclude'].sum()} exclusions)"
    )
    return html_table(shown, caption=caption, css_class="wb-table wb-cleaning")


def files_written(paths: dict[str, Any]) -> HtmlBlock:
    """Say which graded tables were written, or that none were."""
    written = [(str(k), str(v)) for k, v in paths.items()]
    return HtmlBlock(str(macro("tables.html.j2", "files_written", written)))


def unmatched_rows(unmatched: pl.DataFrame) -> pl.DataFrame:
    """The prediction rows that match no gold turn, with where they came from and why."""
    return unmatched.select("system", "source_file", "source_location", "record_id", "turn", "why")


def run_overview(run: Run) -> HtmlBlock:
    """What was graded: dataset, systems, counts, and any unmatched rows."""
    unmatched = html_table(unmatched_rows(run.unmatched), max_rows=50) if run.unmatched.height else ""
    markup = macro(
        "tables.html.j2",
        "run_overview",
        str(run.gold.path),
        run.gold.layout,
        run.gold.documents.height,
        run.gold.turns.height,
        [(str(path), system) for path, system in run.prediction_files],
        run.graded.policy.name,
        run.unmatched.height,
        unmatched,
    )
    return HtmlBlock(str(markup))
