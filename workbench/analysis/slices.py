"""Slices of the graded ``turns`` table: each a named polars expression giving every turn
a group label (a string), so any slice is one ``group_by`` away.

The slices are the ones an analyst asks for (``../shared/DESIGN.md``, "Slices and error
taxonomy"): the gold program's operation, rare operations, turn index, number of turns,
type-2 flag, ``qa_split`` half, dependency distance, answer format, data-quality category,
MATH's level, error type, and grader disagreement. A slice only some data has (MATH's level) is
chosen by default only for turns that have it (:attr:`Slice.present`). :func:`long_slices` stacks them into one long frame
(one row per turn and slice), which is what the interval and comparison code consume.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from workbench.analysis.stats import MIN_GROUP_N, slice_intervals
from workbench.analysis.words import plain
from workbench.errors import UsageError

__all__ = [
    "Slice",
    "SLICES",
    "OVERALL",
    "MIN_GROUP_N",
    "slice_labels",
    "long_slices",
    "slice_accuracy",
    "group_order",
    "in_reading_order",
    "slice_title",
    "plain_label",
    "in_group",
    "present_slices",
]

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
    order
        The reading order of a category slice's known labels (``type 1`` before ``type 2``);
        empty when the groups are read largest first (see :func:`group_order`).
    present
        For a slice only some data has: an expression over the ``turns`` table, true when the
        turns have it (MATH's level: some turn has one). Chosen by default only then, so a page of
        turns without it has no section of one ``n/a`` group. ``None``: every run has the slice.
    """

    name: str
    title: str
    expr: pl.Expr
    description: str
    numeric: bool = False
    order: tuple[str, ...] = ()
    present: pl.Expr | None = None


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
            "Conversation type",
            _flag("has_type2_question", "type 2", "type 1"),
            "Type 1 conversations break one original FinQA question into turns; type 2 join two.",
            order=("type 1", "type 2", "n/a"),
        ),
        Slice(
            "qa_split",
            "Question half",
            _flag("qa_split", "second question", "first question"),
            "In a conversation that joins two questions, whether the turn belongs to the first or the second.",
            order=("first question", "second question", "n/a"),
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
            "level",
            "Level",
            _text("level").fill_null("n/a"),
            "The MATH problem's difficulty level, 1 (easiest) to 5; n/a where the data gives none.",
            True,
            present=pl.col("level").is_not_null().any(),
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
            order=("policies agree", "policies disagree", "n/a"),
        ),
    )
}

#: Slices whose groups are outcomes, not populations: accuracy by them says nothing.
_OUTCOME_SLICES = frozenset({"error_type"})


def _names(names: Sequence[str] | None, *, outcomes: bool = True, turns: pl.DataFrame | None = None) -> list[str]:
    """The slices asked for, or by default every slice (without the outcome ones unless
    ``outcomes``) that ``turns`` have (:attr:`Slice.present`)."""
    if names is None:
        chosen = [n for n in SLICES if outcomes or n not in _OUTCOME_SLICES]
        return [n for n in chosen if turns is None or _present(SLICES[n], turns)]
    unknown = [n for n in names if n not in SLICES]
    if unknown:
        raise UsageError(f"no slice named {', '.join(unknown)}. Fix: use one of {', '.join(SLICES)}")
    return list(names)


def _present(spec: Slice, turns: pl.DataFrame) -> bool:
    if spec.present is None:
        return True
    columns = spec.present.meta.root_names()
    return all(c in turns.columns for c in columns) and bool(turns.select(spec.present).item())


def present_slices(turns: pl.DataFrame) -> list[str]:
    """The names of the slices ``turns`` have (all but those whose :attr:`Slice.present` is false),
    in :data:`SLICES` order: what a caller that records every slice records.

    Examples
    --------
    >>> convfinqa = pl.DataFrame({"level": [None, None]}, schema={"level": pl.String})
    >>> "level" in present_slices(convfinqa), "level" in present_slices(pl.DataFrame({"level": ["3", None]}))
    (False, True)
    """
    return _names(None, turns=turns)


def slice_labels(turns: pl.DataFrame, names: Sequence[str] | None = None) -> pl.DataFrame:
    """Keys, outcomes and one label column per slice (named after the slice). A slice only some
    data has (:attr:`Slice.present`), asked for by name of turns without its column (a table
    written before the column was), labels every turn as its missing value (``n/a``).

    Examples
    --------
    >>> t = pl.DataFrame({"system": ["s"] * 2, "record_id": ["r"] * 2, "turn": [0, 1],
    ...                   "correct": [True, False], "program_correct": [None, None],
    ...                   "operation": ["lookup", "divide"]})
    >>> slice_labels(t, ["operation"]).columns
    ['system', 'record_id', 'turn', 'correct', 'program_correct', 'operation']
    """
    chosen = _names(names, turns=turns)
    absent = {
        column
        for name in chosen
        if SLICES[name].present is not None
        for column in SLICES[name].expr.meta.root_names()
        if column not in turns.columns
    }
    return turns.with_columns(pl.lit(None, pl.String).alias(c) for c in sorted(absent)).select(
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
    chosen = _names(names, turns=turns)
    labels = slice_labels(turns, chosen)
    if overall:
        labels = labels.with_columns(pl.lit("all").alias(OVERALL))
        chosen = [OVERALL, *chosen]
    keys = ["system", "record_id", "turn", "correct", "program_correct"]
    return labels.unpivot(index=keys, on=chosen, variable_name="slice", value_name="group")


def _as_number(label: str) -> int | None:
    stripped = label[1:] if label.startswith("-") else label
    return int(label) if stripped.isdigit() else None


def group_order(slice_name: str, groups: Sequence[str], sizes: Mapping[str, int] | None = None) -> list[str]:
    """The groups of a slice in reading order: the one order of every table and plot.

    - numeric slices (turn index, number of turns, dependency distance): numbers ascending
      (``10`` after ``9``), then any label that is not a number (``n/a``) by name;
    - slices with a defined order (:attr:`Slice.order`, e.g. ``type 1``, ``type 2``): that
      order, then any other label as below;
    - every other slice (operation, answer format, data-quality flag, ...): largest group
      first by ``sizes`` (turns per group), ties by name; without ``sizes``, in the order given
      (a caller that already sorted them, e.g. by failed turns).

    Examples
    --------
    >>> group_order("turn_index", ["10", "2", "0", "9"])
    ['0', '2', '9', '10']
    >>> group_order("operation", ["divide", "add", "lookup"], {"divide": 5, "add": 2, "lookup": 5})
    ['divide', 'lookup', 'add']
    >>> group_order("type2", ["type 2", "type 1"], {"type 2": 9, "type 1": 1})
    ['type 1', 'type 2']
    """
    spec = SLICES.get(slice_name)
    unique = list(dict.fromkeys(groups))
    if spec is not None and spec.numeric:
        numbers = {g: _as_number(g) for g in unique}
        return sorted(unique, key=lambda g: (numbers[g] is None, numbers[g] or 0, g))
    known = [g for g in (spec.order if spec is not None else ()) if g in unique]
    rest = [g for g in unique if g not in known]
    if sizes is None:
        return known + rest
    return known + sorted(rest, key=lambda g: (-sizes.get(g, 0), g))


def slice_title(slice_name: str) -> str:
    """How pages name a slice (:attr:`Slice.title`; ``Overall`` for the overall figure, the name otherwise).

    Examples
    --------
    >>> slice_title("n_turns"), slice_title("overall"), slice_title("turn_execution_accuracy")
    ('Number of turns', 'Overall', 'turn_execution_accuracy')
    """
    if slice_name == OVERALL:
        return "Overall"
    spec = SLICES.get(slice_name)
    return spec.title if spec is not None else slice_name


def plain_label(label: str) -> str:
    """A group label in words, as pages show it (:func:`workbench.analysis.words.plain`, the one
    mapping): ``missing_value`` reads ``missing value``.

    Examples
    --------
    >>> plain_label("unit_inconsistency"), plain_label("type 2")
    ('unit inconsistency', 'type 2')
    """
    return plain(label)


def in_reading_order(table: pl.DataFrame) -> pl.DataFrame:
    """Rows of a per-group table (``slice``, ``group``, ``n_turns``; ``system`` optional) in
    reading order: systems as they first appear, the overall figure first, then the slices as
    they first appear (the order they were asked for), and the groups of each slice by
    :func:`group_order` with sizes summed over the systems.

    Examples
    --------
    >>> t = pl.DataFrame({"slice": ["turn_index"] * 3 + ["overall"], "group": ["5", "10", "2", "all"],
    ...                   "n_turns": [3, 1, 9, 13]})
    >>> in_reading_order(t)["group"].to_list()
    ['all', '2', '5', '10']
    """
    if table.height == 0:
        return table
    sizes = table.group_by("slice", "group", maintain_order=True).agg(pl.col("n_turns").sum())
    seen = list(dict.fromkeys(sizes["slice"].to_list()))
    slice_rank = {name: i for i, name in enumerate(sorted(seen, key=lambda n: n != OVERALL))}
    ranks: list[tuple[str, str, int, int]] = []
    for (name,), part in sizes.partition_by("slice", as_dict=True, maintain_order=True).items():
        counts = dict(part.select("group", "n_turns").iter_rows())
        for i, group in enumerate(group_order(str(name), list(counts), counts)):
            ranks.append((str(name), group, slice_rank[str(name)], i))
    order = pl.DataFrame(
        ranks,
        schema={"slice": pl.String, "group": pl.String, "_slice_rank": pl.Int64, "_group_rank": pl.Int64},
        orient="row",
    )
    by = ["_slice_rank", "_group_rank"]
    ranked = table.join(order, on=["slice", "group"], how="left", maintain_order="left")
    if "system" in table.columns:
        systems = table.get_column("system").unique(maintain_order=True)
        ranked = ranked.join(
            pl.DataFrame({"system": systems, "_system_rank": range(systems.len())}), on="system", how="left"
        )
        by = ["_system_rank", *by]
    return ranked.sort(by, maintain_order=True).drop(by)


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
    ``system, slice, group, n_turns, n_correct, n_conversations, accuracy, low, high,
    too_small`` (``low``/``high`` null without ``intervals``); ``too_small`` is true for a
    group of fewer than :data:`MIN_GROUP_N` turns, whose accuracy a report must mark and not
    read as a finding. Rows in reading order (:func:`in_reading_order`): turn 10 after turn 9.

    Examples
    --------
    >>> t = pl.DataFrame({"system": "s", "record_id": [f"r{i % 30}" for i in range(60)],
    ...                   "turn": [i // 30 + 9 * (i >= 55) for i in range(60)], "correct": [i % 3 > 0 for i in range(60)],
    ...                   "program_correct": None})
    >>> out = slice_accuracy(t, ["turn_index"], n_boot=50)
    >>> out.select("group", "n_turns", "too_small").rows()
    [('all', 60, False), ('0', 30, False), ('1', 25, False), ('10', 5, True)]
    """

    chosen = _names(names, outcomes=names is not None, turns=turns)
    if intervals:
        table = slice_intervals(long_slices(turns, chosen), value=value, n_boot=n_boot, level=level, seed=seed)
    else:
        # slice by slice, as the groups of long_slices(turns) come (the overall figure, then the
        # slices in order): never a row per turn and slice (10 million rows for a million turns)
        outcome = pl.col(value).fill_null(False)
        labels = {OVERALL: pl.lit("all"), **{name: SLICES[name].expr for name in chosen}}
        table = pl.concat(
            [
                turns.group_by("system", label.cast(pl.String).alias("group"), maintain_order=True)
                .agg(
                    pl.len().cast(pl.Int64).alias("n_turns"),
                    outcome.sum().cast(pl.Int64).alias("n_correct"),
                    pl.col("record_id").n_unique().cast(pl.Int64).alias("n_conversations"),
                    outcome.cast(pl.Float64).mean().alias("accuracy"),
                )
                .select("system", pl.lit(name).alias("slice"), pl.all().exclude("system"))
                for name, label in labels.items()
            ]
        ).with_columns(pl.lit(None, pl.Float64).alias("low"), pl.lit(None, pl.Float64).alias("high"))
    return in_reading_order(table).with_columns((pl.col("n_turns") < MIN_GROUP_N).alias("too_small"))
