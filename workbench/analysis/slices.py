"""Slices of the graded ``turns`` table: each a named polars expression giving every turn
a group label (a string), so any slice is one ``group_by`` away.

The slices are the ones an analyst asks for (``../shared/DESIGN.md``, "Slices and error
taxonomy"): the gold program's operation, rare operations, turn index, number of turns,
type-2 flag, ``qa_split`` half, dependency distance, answer format, data-quality category,
error type, and grader disagreement. :func:`long_slices` stacks them into one long frame
(one row per turn and slice), which is what the interval and comparison code consume.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from workbench.analysis.stats import slice_intervals
from workbench.errors import UsageError

__all__ = ["Slice", "SLICES", "OVERALL", "slice_labels", "long_slices", "slice_accuracy", "group_order", "in_group"]

OVERALL = "overall"


@dataclass(frozen=True)
class Slice:
    """A way to group turns.

    Attributes
    ----------
    name
        Key in :data:`SLICES` and value of the ``slice`` column of :func:`long_slices`.
    title
        How reports name it.
    expr
        A ``pl.Expr`` over the ``turns`` table giving each turn's group label.
    description
        One sentence for reports.
    numeric
        Whether the labels are numbers (ordered as numbers in tables and plots).
    """

    name: str
    title: str
    expr: pl.Expr
    description: str
    numeric: bool = False


def _text(column: str) -> pl.Expr:
    return pl.col(column).cast(pl.String)


def _flag(column: str, yes: str, no: str, missing: str = "n/a") -> pl.Expr:
    return pl.when(pl.col(column)).then(pl.lit(yes)).when(~pl.col(column)).then(pl.lit(no)).otherwise(pl.lit(missing))


SLICES: dict[str, Slice] = {
    s.name: s
    for s in (
        Slice(
            "operation",
            "Operation",
            _text("operation").fill_null("none"),
            "The final operation of the gold program; lookup when the answer is read from the document.",
        ),
        Slice(
            "rare_operation",
            "Rare operation",
            _text("rare_operation").fill_null("none"),
            "A rare operation the gold program uses anywhere (exp, greater, table_*), or none.",
        ),
        Slice(
            "turn_index", "Turn index", _text("turn"), "Position of the question in its conversation (0 = first).", True
        ),
        Slice("n_turns", "Number of turns", _text("n_turns").fill_null("n/a"), "Length of the conversation.", True),
        Slice(
            "type2",
            "Type-2 conversation",
            _flag("has_type2_question", "type 2", "type 1"),
            "Type 2 conversations join two original FinQA questions; type 1 conversations decompose one.",
        ),
        Slice(
            "qa_split",
            "Question half",
            _flag("qa_split", "second question", "first question"),
            "In a type-2 conversation, whether the turn belongs to the first or the second original question.",
        ),
        Slice(
            "dependency_distance",
            "Dependency distance",
            _text("dependency_distance").fill_null("0"),
            "How many turns back the gold program reaches for an earlier turn's answer (0: none).",
            True,
        ),
        Slice(
            "answer_format",
            "Answer format",
            _text("answer_format").fill_null("plain"),
            "What kind of answer the turn asks for: percent, ratio, yes/no or plain.",
        ),
        Slice(
            "dq_category",
            "Data-quality flag",
            _text("dq_category").fill_null("none"),
            "The most specific data-quality flag the detectors raised on the gold turn, or none.",
        ),
        Slice(
            "error_type",
            "Error type",
            _text("error_type").fill_null("correct"),
            "Why a wrong turn is wrong; correct turns form their own group.",
        ),
        Slice(
            "graders_disagree",
            "Grader disagreement",
            _flag("graders_disagree", "policies disagree", "policies agree"),
            "Whether the named grading policies give this turn different verdicts.",
        ),
    )
}

#: Slices whose groups are outcomes, not populations: accuracy by them says nothing.
_OUTCOME_SLICES = frozenset({"error_type"})


def _names(names: Sequence[str] | None, *, outcomes: bool = True) -> list[str]:
    if names is None:
        return [n for n in SLICES if outcomes or n not in _OUTCOME_SLICES]
    unknown = [n for n in names if n not in SLICES]
    if unknown:
        raise UsageError(f"no slice named {', '.join(unknown)}. Fix: use one of {', '.join(SLICES)}")
    return list(names)


def slice_labels(turns: pl.DataFrame, names: Sequence[str] | None = None) -> pl.DataFrame:
    """Keys, outcomes and one label column per slice (named after the slice).

    Examples
    --------
    >>> t = pl.DataFrame({"system": ["s"] * 2, "record_id": ["r"] * 2, "turn": [0, 1],
    ...                   "correct": [True, False], "program_correct": [None, None],
    ...                   "operation": ["lookup", "divide"]})
    >>> slice_labels(t, ["operation"]).columns
    ['system', 'record_id', 'turn', 'correct', 'program_correct', 'operation']
    """
    chosen = _names(names)
    return turns.select(
        "system",
        "record_id",
        "turn",
        "correct",
        "program_correct",
        *[SLICES[n].expr.alias(n) for n in chosen],
    )


def long_slices(turns: pl.DataFrame, names: Sequence[str] | None = None, *, overall: bool = True) -> pl.DataFrame:
    """One row per turn and slice: ``system, record_id, turn, correct, program_correct,
    slice, group``; with ``overall``, an ``overall``/``all`` slice first.

    Examples
    --------
    >>> t = pl.DataFrame({"system": ["s"] * 2, "record_id": ["r"] * 2, "turn": [0, 1],
    ...                   "correct": [True, False], "program_correct": [None, None],
    ...                   "operation": ["lookup", "divide"]})
    >>> long_slices(t, ["operation"]).select("slice", "group").rows()
    [('overall', 'all'), ('overall', 'all'), ('operation', 'lookup'), ('operation', 'divide')]
    """
    chosen = _names(names)
    labels = slice_labels(turns, chosen)
    if overall:
        labels = labels.with_columns(pl.lit("all").alias(OVERALL))
        chosen = [OVERALL, *chosen]
    keys = ["system", "record_id", "turn", "correct", "program_correct"]
    return labels.unpivot(index=keys, on=chosen, variable_name="slice", value_name="group")


def group_order(slice_name: str, groups: Sequence[str]) -> list[str]:
    """Groups in reading order: numbers ascending for numeric slices, as given otherwise.

    Examples
    --------
    >>> group_order("turn_index", ["10", "2", "0"])
    ['0', '2', '10']
    """
    spec = SLICES.get(slice_name)
    if spec is not None and spec.numeric:
        return sorted(groups, key=lambda g: (not g.lstrip("-").isdigit(), int(g) if g.lstrip("-").isdigit() else 0, g))
    return list(groups)


def in_group(slice_name: str, group: str) -> pl.Expr:
    """A filter for the turns of one group of a slice (for drill-down).

    Examples
    --------
    >>> t = pl.DataFrame({"operation": ["lookup", "divide"]})
    >>> t.filter(in_group("operation", "divide")).height
    1
    """
    _names([slice_name])
    return SLICES[slice_name].expr == group


def slice_accuracy(
    turns: pl.DataFrame,
    names: Sequence[str] | None = None,
    *,
    value: str = "correct",
    intervals: bool = True,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> pl.DataFrame:
    """Accuracy per system and slice group, with bootstrap intervals clustered by
    conversation (see :func:`workbench.analysis.stats.slice_intervals`).

    By default every slice except the error type (whose groups are outcomes). Columns:
    ``system, slice, group, n_turns, n_correct, n_conversations, accuracy, low, high``
    (``low``/``high`` null without ``intervals``).
    """

    chosen = _names(names, outcomes=names is not None)
    long = long_slices(turns, chosen)
    if intervals:
        return slice_intervals(long, value=value, n_boot=n_boot, level=level, seed=seed)
    outcome = pl.col(value).fill_null(False)
    return (
        long.group_by("system", "slice", "group", maintain_order=True)
        .agg(
            pl.len().alias("n_turns"),
            outcome.sum().alias("n_correct"),
            pl.col("record_id").n_unique().alias("n_conversations"),
            outcome.cast(pl.Float64).mean().alias("accuracy"),
        )
        .with_columns(pl.lit(None, pl.Float64).alias("low"), pl.lit(None, pl.Float64).alias("high"))
    )
