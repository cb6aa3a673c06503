"""Compare any number of systems: headline metrics with intervals in the seed report's
layout, the paired difference of every pair of systems, and the paired differences of one
chosen pair overall and per slice.

Systems are compared in the order they were given (file order, then the order within a file:
:func:`given_order`), never alphabetically. Intervals are bootstrap intervals clustered by
conversation; paired differences resample the conversations both systems answered, once for
both; the McNemar test counts the turns exactly one of the two systems got right (see
:mod:`workbench.analysis.stats`), and with several pairs its p-values are adjusted for the
number of pairs by Holm's step-down method (:func:`holm`).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from workbench.analysis import formats
from workbench.analysis.metrics import COMPARED_METRICS
from workbench.analysis.slices import long_slices, slice_accuracy
from workbench.analysis.stats import paired_comparison, slice_intervals
from workbench.errors import UsageError

__all__ = [
    "given_order",
    "in_order",
    "metric_long",
    "metric_intervals",
    "systems_table",
    "holm",
    "all_pairs",
    "compare_systems",
    "pick_systems",
    "accuracy_by_slice",
]


def given_order(turns: pl.DataFrame, systems: Sequence[str] = ()) -> list[str]:
    """The graded systems in the order they were given: ``systems`` (a run's
    ``graded.systems``: file order, then the order within a file) first, then any other
    system of ``turns`` in order of appearance.

    Raises
    ------
    UsageError
        With fewer than two systems: a comparison needs two.

    Examples
    --------
    >>> t = pl.DataFrame({"system": ["a", "b", "c"]})
    >>> given_order(t, ["c", "a", "b"])
    ['c', 'a', 'b']
    >>> given_order(t.head(1))
    Traceback (most recent call last):
    ...
    workbench.errors.UsageError: comparing systems needs two or more, but only 'a' was graded. \
Fix: give two or more prediction files, or one file that holds several systems
    """
    graded = list(dict.fromkeys(turns["system"].to_list()))
    order = [s for s in dict.fromkeys(systems) if s in graded]
    order += [s for s in graded if s not in order]
    if len(order) < 2:
        only = f"only {order[0]!r} was" if order else "none was"
        raise UsageError(
            f"comparing systems needs two or more, but {only} graded. "
            "Fix: give two or more prediction files, or one file that holds several systems"
        )
    return order


def in_order(frame: pl.DataFrame, order: Sequence[str], column: str = "system") -> pl.DataFrame:
    """``frame`` with its rows sorted by the position of ``column`` in ``order`` (stable:
    rows of one system keep their order; systems not in ``order`` last).

    Examples
    --------
    >>> in_order(pl.DataFrame({"system": ["a", "b", "a"], "x": [1, 2, 3]}), ["b", "a"]).rows()
    [('b', 2), ('a', 1), ('a', 3)]
    """
    position = {name: i for i, name in enumerate(order)}
    rank = pl.col(column).replace_strict(position, default=len(position), return_dtype=pl.Int64)
    return frame.with_columns(rank.alias("_rank")).sort("_rank", maintain_order=True).drop("_rank")


def metric_long(turns: pl.DataFrame) -> pl.DataFrame:
    """The turns behind each compared metric (``COMPARED_METRICS`` of
    :mod:`workbench.analysis.metrics`), as a long frame (``slice`` = metric key, ``group`` =
    ``all``, ``correct`` = the metric's outcome). Program metrics only for systems that
    give programs; conversation-level metrics only when some record has several turns (with
    single questions, GSM8K or MATH, they would repeat the turn-level figure).

    Examples
    --------
    >>> t = pl.DataFrame({"system": ["s"] * 2, "record_id": ["r"] * 2, "turn": [0, 1], "n_turns": [2, 2],
    ...                   "correct": [True, False], "program_correct": [None, None], "predicted_program": [None, None]})
    >>> metric_long(t).group_by("slice", maintain_order=True).len().rows()
    [('conversation_execution_accuracy', 1), ('turn_execution_accuracy', 2)]
    >>> metric_long(t.head(1).with_columns(n_turns=pl.lit(1)))["slice"].to_list()
    ['turn_execution_accuracy']
    """
    single = bool(turns.height) and int(turns["n_turns"].max() or 0) <= 1  # type: ignore[arg-type]
    with_programs = turns.group_by("system").agg(pl.col("predicted_program").is_not_null().any().alias("_programs"))
    frame = turns.join(with_programs, on="system", how="left")
    last = pl.col("turn") == pl.col("n_turns") - 1
    parts = []
    for spec in COMPARED_METRICS:
        assert spec.outcome is not None, spec.key  # every compared metric has a turn outcome
        if single and spec.aggregation == "conversation":
            continue
        part = frame.filter(last) if spec.aggregation == "conversation" else frame
        if spec.requires == "programs":
            part = part.filter(pl.col("_programs"))
        parts.append(
            part.select(
                "system",
                "record_id",
                "turn",
                spec.outcome.alias("correct"),
                pl.lit(spec.key).alias("slice"),
                pl.lit("all").alias("group"),
            )
        )
    return pl.concat(parts)


def metric_intervals(
    turns: pl.DataFrame,
    *,
    order: Sequence[str] = (),
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> pl.DataFrame:
    """Each system's headline metrics with bootstrap intervals clustered by conversation:
    ``system, metric, n_turns, n_correct, n_conversations, accuracy, low, high``; systems in
    ``order`` (see :func:`in_order`), else in order of appearance."""

    table = slice_intervals(metric_long(turns), n_boot=n_boot, level=level, seed=seed)
    return in_order(table.rename({"slice": "metric"}).drop("group"), order)


def systems_table(intervals: pl.DataFrame) -> pl.DataFrame:
    """Systems by metrics, as in the seed report (conversation- and turn-level execution
    and program accuracy), each cell ``83.1% [81.2%, 84.9%]``
    (:func:`workbench.analysis.formats.interval`); ``intervals`` from :func:`metric_intervals`.
    A metric no system has (programs, or conversations of single questions) has no column.

    Examples
    --------
    >>> iv = pl.DataFrame({"system": ["s", "t"], "metric": ["turn_execution_accuracy"] * 2, "accuracy": [0.5, 0.25],
    ...                    "low": [0.25, None], "high": [0.75, None]})
    >>> systems_table(iv).rows()
    [('s', '50.0% [25.0%, 75.0%]'), ('t', '25.0%')]
    """
    rows = []
    for system in dict.fromkeys(intervals["system"].to_list()):
        part = intervals.filter(pl.col("system") == system)
        row: dict[str, str | None] = {"system": system}
        for spec in COMPARED_METRICS:
            found = part.filter(pl.col("metric") == spec.key)
            row[spec.label] = (
                formats.interval(*found.select("accuracy", "low", "high").row(0)) if found.height else None
            )
        rows.append(row)
    shown = [spec.label for spec in COMPARED_METRICS if spec.key in set(intervals["metric"].to_list())]
    return pl.DataFrame(
        rows, schema={"system": pl.String, **{spec.label: pl.String for spec in COMPARED_METRICS}}
    ).select("system", *shown)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of ``p_values`` for the number of tests (here: of pairs).

    The i-th smallest of m p-values is multiplied by m - i + 1 (i from 1), capped at 1, and
    kept at least as large as the adjusted value before it, so the adjusted p-values keep
    the order of the raw ones. A family-wise error rate below alpha holds for any dependence
    between the tests (the pairs of a comparison share systems).

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    >>> holm([0.5]), holm([])
    ([0.5], [])
    """
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * float(p_values[index])))
        adjusted[index] = running
    return adjusted


def _answered(turns: pl.DataFrame, systems: Sequence[str]) -> pl.DataFrame:
    """The turns of ``systems`` that have a prediction (a missing one is not an answer to compare)."""
    return turns.filter(pl.col("system").is_in(list(systems)) & (pl.col("status") != "no_prediction"))


def all_pairs(
    turns: pl.DataFrame,
    order: Sequence[str],
    *,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> pl.DataFrame:
    """The paired comparison of every pair of systems, in the given order: (1, 2), (1, 3),
    ..., (2, 3), ... for ``order`` = [1, 2, 3, ...] (see :func:`given_order`).

    Each pair is compared on the turns both systems answered (turn execution accuracy), with
    a paired bootstrap interval clustered by conversation and the exact McNemar p-value
    (:func:`workbench.analysis.stats.paired_comparison`), the same figures as the overall
    row of :func:`compare_systems` for that pair; ``p_holm`` is the McNemar p adjusted by
    :func:`holm` for the number of pairs.

    Returns
    -------
    polars.DataFrame
        One row per pair: ``system_a, system_b, n_turns, n_conversations, accuracy_a,
        accuracy_b, difference (a - b), low, high, a_only, b_only, mcnemar_p, p_holm,
        n_unpaired``.

    Raises
    ------
    UsageError
        With fewer than two systems, or a system that was not graded.
    """
    systems = given_order(turns.filter(pl.col("system").is_in(list(order))), order)
    missing = [s for s in order if s not in systems]
    if missing:
        raise UsageError(f"no graded system named {missing[0]!r}. Fix: use one of {', '.join(systems)}")
    answered = _answered(turns, systems).select(
        "system", "record_id", "turn", "correct", pl.lit("overall").alias("slice"), pl.lit("all").alias("group")
    )
    rows = []
    for i, a in enumerate(systems):
        for b in systems[i + 1 :]:
            part = answered.filter(pl.col("system").is_in([a, b]))
            present = set(part["system"].unique().to_list())
            if present == {a, b}:
                table = paired_comparison(part, a, b, n_boot=n_boot, level=level, seed=seed).drop("slice", "group")
            else:  # a system without any answered turn: nothing is paired
                table = pl.DataFrame({"n_unpaired": [part.height], "mcnemar_p": [1.0]}).with_columns(
                    *[pl.lit(0, dtype=pl.Int64).alias(c) for c in ("n_turns", "n_conversations", "a_only", "b_only")],
                    *[pl.lit(None, dtype=pl.Float64).alias(c) for c in _RATES],
                )
            rows.append(table.with_columns(pl.lit(a).alias("system_a"), pl.lit(b).alias("system_b")))
    table = pl.concat(rows, how="diagonal_relaxed")
    table = table.with_columns(p_holm=pl.Series(holm(table["mcnemar_p"].to_list()), dtype=pl.Float64))
    return table.select(_PAIR_COLUMNS)


_RATES = ("accuracy_a", "accuracy_b", "difference", "low", "high")
#: The columns of :func:`all_pairs`, in order.
_PAIR_COLUMNS = [
    "system_a",
    "system_b",
    "n_turns",
    "n_conversations",
    "accuracy_a",
    "accuracy_b",
    "difference",
    "low",
    "high",
    "a_only",
    "b_only",
    "mcnemar_p",
    "p_holm",
    "n_unpaired",
]


def pick_systems(
    turns: pl.DataFrame, system_a: str = "", system_b: str = "", order: Sequence[str] = ()
) -> tuple[str, str]:
    """The two systems to compare: the ones named, else the first two in ``order`` (the
    order given, see :func:`given_order`), else the first two graded.

    Raises
    ------
    UsageError
        With fewer than two systems, or a name that was not graded.
    """
    graded = list(dict.fromkeys(turns["system"].to_list()))
    systems = [s for s in dict.fromkeys(order) if s in graded] + [s for s in graded if s not in order]
    a = system_a or (systems[0] if systems else "")
    b = system_b or next((s for s in systems if s != a), "")
    if len(systems) < 2 and not (system_a and system_b):
        raise UsageError(
            f"a paired comparison needs two systems; only {', '.join(systems) or 'none'} were graded. "
            "Fix: give two or more prediction files"
        )
    for name in (a, b):
        if name not in systems:
            raise UsageError(f"no graded system named {name!r}. Fix: use one of {', '.join(systems)}")
    if a == b:
        raise UsageError(f"both systems of the comparison are {a!r}. Fix: name two different systems")
    return a, b


def compare_systems(
    turns: pl.DataFrame,
    system_a: str = "",
    system_b: str = "",
    names: Sequence[str] | None = None,
    *,
    order: Sequence[str] = (),
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> pl.DataFrame:
    """Paired comparison of two systems, overall and per slice group (see
    :func:`workbench.analysis.stats.paired_comparison` for the columns), with the two system names
    as ``system_a``/``system_b`` columns. Unnamed, the systems are the first two of ``order``
    (:func:`pick_systems`).

    Only the turns both systems answered are paired: a turn one of them has no prediction
    for is counted in ``n_unpaired`` and left out (its absence is a fact about the run, not
    a comparison of answers). With the default slices (``names`` not given), a slice whose
    turns all fall in one group is left out: it would repeat the overall row.
    """

    a, b = pick_systems(turns, system_a, system_b, order)
    default = ["operation", "turn_index", "n_turns", "type2", "dependency_distance", "answer_format", "dq_category"]
    answered = _answered(turns, [a, b])
    long = long_slices(answered, list(names) if names is not None else default)
    if names is None:  # a slice of one group only repeats the overall row (GSM8K has one turn, no operation)
        groups = long.group_by("slice").agg(pl.col("group").n_unique().alias("_groups"))
        kept = groups.filter((pl.col("_groups") > 1) | (pl.col("slice") == "overall"))["slice"]
        long = long.filter(pl.col("slice").is_in(kept.implode()))
    table = paired_comparison(long, a, b, n_boot=n_boot, level=level, seed=seed)
    return table.with_columns(pl.lit(a).alias("system_a"), pl.lit(b).alias("system_b"))


def accuracy_by_slice(
    turns: pl.DataFrame,
    order: Sequence[str],
    names: Sequence[str] | None = None,
    *,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> pl.DataFrame:
    """Accuracy per system and slice group with intervals
    (:func:`workbench.analysis.slices.slice_accuracy`), systems in the given ``order``, so
    that every table and figure lists them as they were given."""
    table = slice_accuracy(turns, names, n_boot=n_boot, level=level, seed=seed)
    return in_order(table, order)
