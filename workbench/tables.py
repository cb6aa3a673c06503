"""Tables for notebooks and reports, rendered as escaped HTML.

Every cell is escaped with :func:`html.escape`, so a model output or question containing
markup shows as text. Functions take polars frames and return :class:`HtmlBlock`, which
Jupyter displays and the report renderer embeds.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from workbench.run import Run

__all__ = [
    "HtmlBlock",
    "html_table",
    "headline",
    "failed_turns",
    "policy_comparison",
    "run_overview",
    "unmatched_rows",
    "files_written",
]

_METRICS = (
    ("turn_execution_accuracy", "Turn execution acc."),
    ("conversation_execution_accuracy", "Conversation execution acc. (final turn)"),
    ("all_turns_correct_rate", "All turns correct"),
    ("turn_program_accuracy", "Turn program acc."),
    ("conversation_program_accuracy", "Conversation program acc."),
    ("n_turns", "Turns"),
    ("n_conversations", "Conversations"),
    ("n_missing", "Turns without prediction"),
    ("n_unmatched", "Unmatched predictions"),
)


class HtmlBlock:
    """A block of HTML that Jupyter and the report renderer display as is."""

    def __init__(self, markup: str) -> None:
        self.markup = markup

    def _repr_html_(self) -> str:
        return self.markup

    def __repr__(self) -> str:
        return f"HtmlBlock({len(self.markup)} characters)"


def _cell(value: Any) -> str:
    if value is None:
        return '<td class="null">&mdash;</td>'
    if isinstance(value, bool):
        return f"<td>{'yes' if value else 'no'}</td>"
    if isinstance(value, float):
        return f'<td class="num">{value:.4g}</td>'
    if isinstance(value, int):
        return f'<td class="num">{value}</td>'
    return f"<td>{html.escape(str(value))}</td>"


def html_table(
    frame: pl.DataFrame, *, caption: str = "", css_class: str = "wb-table", max_rows: int | None = None
) -> HtmlBlock:
    """Render a frame as an escaped HTML table.

    Examples
    --------
    >>> html_table(pl.DataFrame({"a": ["<b>x</b>"]})).markup.count("&lt;b&gt;")
    1
    """
    shown = frame if max_rows is None else frame.head(max_rows)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in shown.columns)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in shown.iter_rows())
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    more = ""
    if max_rows is not None and frame.height > max_rows:
        more = f'<p class="wb-note">Showing {max_rows} of {frame.height} rows.</p>'
    return HtmlBlock(
        f'<div class="wb-scroll"><table class="{html.escape(css_class)}">{cap}'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>{more}"
    )


def headline(summary: dict[str, dict[str, Any]]) -> HtmlBlock:
    """Systems by headline metrics (the seed report's layout)."""
    rows = []
    for system, metrics in summary.items():
        row: dict[str, Any] = {"system": system}
        for key, label in _METRICS:
            value = metrics.get(key)
            row[label] = f"{value:.1%}" if isinstance(value, float) else value
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
    from workbench.grading.policies import POLICIES

    rows = []
    for system, metrics in summary.items():
        row: dict[str, Any] = {"system": system}
        for name, figures in metrics.get("policies", {}).items():
            row[name] = f"{figures['accuracy']:.1%} ({figures['n_correct']}/{metrics['n_turns']})"
        rows.append(row)
    notes = "; ".join(f"{p.name}: {p.description}" for p in POLICIES.values())
    frame = pl.DataFrame(rows, infer_schema_length=None)
    return html_table(frame, caption=f"Turn accuracy by grading policy ({notes})", css_class="wb-table wb-policies")


def failed_turns(turns: pl.DataFrame, *, limit: int = 2000) -> HtmlBlock:
    """The failed turns with the grader's reason, worst systems' failures first."""
    failed = turns.filter(~pl.col("correct")).select(
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
        "detail",
    )
    return html_table(failed, caption=f"Failed turns ({failed.height})", css_class="wb-table wb-failed", max_rows=limit)


def files_written(paths: dict[str, Any]) -> HtmlBlock:
    """Say which graded tables were written, or that none were."""
    if not paths:
        return HtmlBlock('<p class="wb-note">Graded tables not written (set <code>graded_dir</code> to keep them).</p>')
    items = "".join(f"<li>{html.escape(k)}: <code>{html.escape(str(v))}</code></li>" for k, v in paths.items())
    return HtmlBlock(f'<p class="wb-note">Graded tables written:</p><ul class="wb-note">{items}</ul>')


def unmatched_rows(unmatched: pl.DataFrame) -> pl.DataFrame:
    """The prediction rows that match no gold turn, with where they came from and why."""
    return unmatched.select("system", "source_file", "source_location", "record_id", "turn", "why")


def run_overview(run: Run) -> HtmlBlock:
    """What was graded: dataset, systems, counts, and any unmatched rows."""
    items = [
        f"<li>Dataset: <code>{html.escape(str(run.gold.path))}</code> ({html.escape(run.gold.layout)}, "
        f"{run.gold.documents.height} conversations, {run.gold.turns.height} turns)</li>"
    ]
    for path, system in run.prediction_files:
        items.append(f"<li>System <b>{html.escape(system)}</b> from <code>{html.escape(str(path))}</code></li>")
    items.append(f"<li>Policy: <code>{html.escape(run.graded.policy.name)}</code></li>")
    parts = [f'<ul class="wb-overview">{"".join(items)}</ul>']
    if run.unmatched.height:
        parts.append(
            f'<p class="wb-warning">{run.unmatched.height} prediction rows match no gold turn; '
            "they are not graded and are listed here.</p>"
        )
        parts.append(html_table(unmatched_rows(run.unmatched), max_rows=50).markup)
    return HtmlBlock("".join(parts))
