"""Confidence intervals for slice accuracy and paired comparison of two systems.

The input is a *long* table of graded turns, one row per (``system``, ``record_id``,
``turn``, ``slice``, ``group``) with a boolean outcome column (``correct`` unless told
otherwise; a null outcome counts as wrong). A slice is a way of cutting the turns
(``"operation"``), a group one of its values (``"divide"``); the overall figure is the
slice ``"overall"`` with the single group ``"all"``. Each turn appears once per slice.

Turns of one conversation are not independent, so every interval here is a percentile
bootstrap *clustered by conversation*: a replicate resamples the conversations
(``record_id``) with replacement and takes all their turns along, and the accuracy of a
group is the ratio sum(correct) / sum(turns) over the resampled turns. The same draws
serve every slice and group of a replicate, so the whole bootstrap is one dense matrix
product per block of replicates: replicate counts (replicates x conversations) times
per-conversation sums of correct turns and of turns (conversations x 2*groups), run
on a single BLAS thread (:func:`threadpoolctl.threadpool_limits`).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from fractions import Fraction
from statistics import NormalDist

import numpy as np
import polars as pl
from threadpoolctl import threadpool_limits

from workbench.errors import UsageError

__all__ = ["MIN_GROUP_N", "slice_intervals", "paired_comparison", "mcnemar_exact", "percentile_interval"]

#: The fewest turns a group needs before its accuracy (or a paired difference) is read as a
#: finding. A smaller group still gets its n and interval, but tables and plots mark it as too
#: small (``too_small``), draw it hollow and grey, and leave it out of an axis's range: one
#: turn at 0% or four at 100% say little. The one definition, re-exported by
#: :mod:`workbench.analysis.slices`.
MIN_GROUP_N = 20

_KEYS = ("system", "record_id", "turn", "slice", "group")
_TURN_KEYS = ["record_id", "turn", "slice", "group"]
# Bootstrap counts are drawn in blocks of about this many cells (replicates x conversations),
# which bounds the memory of the draws to a few tens of MB whatever the table size.
_BLOCK_CELLS = 1 << 21
# float32 represents every integer below 2**24 exactly.
_FLOAT32_EXACT = float(1 << 24)
_SLICE_SCHEMA = {
    "system": pl.String,
    "slice": pl.String,
    "group": pl.String,
    "n_turns": pl.Int64,
    "n_correct": pl.Int64,
    "n_conversations": pl.Int64,
    "accuracy": pl.Float64,
    "low": pl.Float64,
    "high": pl.Float64,
}
_PAIRED_POINT_SCHEMA = {
    "slice": pl.String,
    "group": pl.String,
    "n_turns": pl.Int64,
    "n_conversations": pl.Int64,
    "_correct_a": pl.Int64,
    "_correct_b": pl.Int64,
    "a_only": pl.Int64,
    "b_only": pl.Int64,
    "low": pl.Float64,
    "high": pl.Float64,
}


# --------------------------------------------------------------------------- validation


def _check_settings(n_boot: int, level: float, seed: int) -> None:
    if isinstance(n_boot, bool) or not isinstance(n_boot, int | np.integer) or n_boot < 1:
        raise UsageError(f"n_boot must be a whole number >= 1, got {n_boot!r}. Fix: pass e.g. n_boot=1000")
    _check_level(level)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise UsageError(f"seed must be a whole number >= 0, got {seed!r}. Fix: pass e.g. seed=0")


def _check_level(level: float) -> None:
    if not isinstance(level, int | float | np.floating) or not 0.0 < float(level) < 1.0:
        raise UsageError(f"level must lie strictly between 0 and 1, got {level!r}. Fix: pass e.g. level=0.95")


def _outcomes(long: pl.DataFrame, value: str) -> pl.DataFrame:
    """The key columns and the outcome as ``_y`` (Boolean, nulls as False), after checking them."""
    if not isinstance(long, pl.DataFrame):
        raise UsageError(f"expected a polars DataFrame of graded turns, got {type(long).__name__}")
    for column in (*_KEYS, value):
        if column not in long.columns:
            raise UsageError(
                f"the table has no column '{column}' (columns: {', '.join(long.columns)}). "
                f"Fix: add it, or pass value=<outcome column> if the outcome is named otherwise"
            )
    dtype = long.schema[value]
    if dtype not in (pl.Boolean, pl.Null):
        raise UsageError(
            f"the outcome column '{value}' must be Boolean, got {dtype}. "
            f"Fix: cast it, e.g. long.with_columns(pl.col('{value}').cast(pl.Boolean))"
        )
    nulls = long.select(pl.col(*_KEYS).null_count()).row(0, named=True)
    for column, count in nulls.items():
        if count:
            raise UsageError(
                f"the key column '{column}' has {count} null value(s). "
                f"Fix: fill or drop them, e.g. long.drop_nulls('{column}')"
            )
    return long.select(*_KEYS, pl.col(value).cast(pl.Boolean).fill_null(False).alias("_y"))


def _first_seen(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    """``column`` and ``_order_<column>``: the position of each value's first appearance."""
    values = frame.get_column(column).unique(maintain_order=True)
    return pl.DataFrame({column: values, f"_order_{column}": np.arange(values.len(), dtype=np.int64)})


def _ordered(table: pl.DataFrame, frame: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """Sort ``table`` by first appearance of ``by`` in ``frame``, then by descending n_turns, then group."""
    for column in by:
        table = table.join(_first_seen(frame, column), on=column, how="left")
    order = [f"_order_{column}" for column in by]
    return table.sort([*order, "n_turns", "group"], descending=[False] * len(order) + [True, False]).drop(order)


# --------------------------------------------------------------------------- bootstrap core


def percentile_interval(samples: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed percentile interval of bootstrap replicates, column by column.

    Parameters
    ----------
    samples
        Replicates along axis 0 (shape ``(B,)`` or ``(B, K)``); NaN marks a replicate that
        has no estimate (e.g. a group that drew no turns) and is left out of its column.
    level
        Coverage in (0, 1), e.g. 0.95 for the 2.5% and 97.5% percentiles.

    Returns
    -------
    tuple of numpy.ndarray
        ``(low, high)``, each of shape ``samples.shape[1:]``; NaN where a column has no
        finite replicate.

    Examples
    --------
    >>> low, high = percentile_interval(np.arange(101.0), 0.5)
    >>> float(low), float(high)
    (25.0, 75.0)
    >>> [v.tolist() for v in percentile_interval(np.array([[0.0, np.nan], [1.0, np.nan]]), 0.5)]
    [[0.25, nan], [0.75, nan]]
    """
    _check_level(level)
    samples = np.asarray(samples, dtype=np.float64)
    tail = (1.0 - float(level)) / 2.0
    if samples.shape[0] == 0:
        nan = np.full(samples.shape[1:], np.nan)
        return nan, nan.copy()
    finite = ~np.isnan(samples)
    if finite.all():
        low, high = np.quantile(samples, [tail, 1.0 - tail], axis=0)
        return low, high
    # nanquantile warns on all-NaN columns; compute those as NaN without the warning.
    low = np.full(samples.shape[1:], np.nan)
    high = np.full(samples.shape[1:], np.nan)
    some = finite.any(axis=0)
    if np.any(some):
        low[some], high[some] = np.nanquantile(samples[:, some], [tail, 1.0 - tail], axis=0)
    return low, high


def _dense_codes(frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, pl.DataFrame]:
    """0-based codes of the conversations (sorted record_id) and groups (sorted slice, group).

    Sorted codes make the bootstrap independent of row order. Returns the cluster codes,
    the group codes, and the groups (``slice``, ``group``) in code order.
    """
    groups = frame.select("slice", "group").unique().sort("slice", "group")
    codes = frame.select("slice", "group", (pl.col("record_id").rank("dense") - 1).cast(pl.Int64).alias("_c")).join(
        groups.with_row_index("_g"), on=["slice", "group"], how="left", maintain_order="left"
    )
    return codes.get_column("_c").to_numpy(), codes.get_column("_g").cast(pl.Int64).to_numpy(), groups


def _cluster_sums(cluster: np.ndarray, group: np.ndarray, n_groups: int, weights: Sequence[np.ndarray]) -> np.ndarray:
    """Per-conversation sums as a dense (conversations x len(weights) * n_groups) matrix.

    Block ``j`` of ``n_groups`` columns holds, for each conversation and group, the sum of
    ``weights[j]`` (0/1 values) over its rows. The matrix is float32 when no bootstrap total
    can reach 2**24 (even drawing the largest conversation every time), so the float32
    matrix products stay exact integer arithmetic; float64 otherwise.
    """
    n_clusters = int(cluster.max()) + 1 if cluster.size else 0
    n_blocks = len(weights)
    cells = np.concatenate([(cluster * n_blocks + j) * n_groups + group for j in range(n_blocks)])
    sums = np.bincount(cells, weights=np.concatenate(weights), minlength=n_clusters * n_blocks * n_groups)
    exact_in_float32 = n_clusters * (float(sums.max()) if sums.size else 0.0) < _FLOAT32_EXACT
    return (sums.astype(np.float32) if exact_in_float32 else sums).reshape(n_clusters, n_blocks * n_groups)


def _tally(group: np.ndarray, n_groups: int, weights: np.ndarray | None = None) -> pl.Series:
    """Per-group count (or sum of 0/1 ``weights``) as Int64."""
    return pl.Series(np.bincount(group, weights=weights, minlength=n_groups).round().astype(np.int64))


def _bootstrap_totals(sums: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Replicate totals (n_boot x columns) of a cluster bootstrap over the rows of ``sums``.

    Each replicate draws as many clusters as there are, uniformly with replacement; its
    total is the multiplicity-weighted sum of the drawn clusters' rows. Replicates are
    drawn in blocks: counts via one ``bincount`` per block, totals via one matrix product.
    """
    n_clusters, n_columns = sums.shape
    totals = np.empty((n_boot, n_columns), dtype=np.float64)
    block = max(1, min(n_boot, _BLOCK_CELLS // max(n_clusters, 1)))
    # one BLAS thread: the products gain little from a second one, but OpenBLAS's spinning worker
    # threads slow them down tenfold when other processes hold the cores
    with threadpool_limits(limits=1, user_api="blas"):
        for start in range(0, n_boot, block):
            size = min(block, n_boot - start)
            draws = rng.integers(0, n_clusters, size=(size, n_clusters))
            draws += np.arange(0, size * n_clusters, n_clusters)[:, None]
            counts = np.bincount(draws.ravel(), minlength=size * n_clusters).reshape(size, n_clusters)
            totals[start : start + size] = counts.astype(sums.dtype) @ sums
    return totals


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, NaN where the denominator is 0 (a group that drew no turns)."""
    out = np.full(numerator.shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def _grouped_bootstrap(
    rows: pl.DataFrame,
    outcomes: Sequence[str],
    counted: Mapping[str, str],
    *,
    n_boot: int,
    level: float,
    rng: np.random.Generator,
) -> pl.DataFrame:
    """Per (slice, group) of ``rows``: counts and the clustered bootstrap interval.

    The statistic is the accuracy of ``outcomes[0]`` or, with two outcomes, the
    difference of accuracies ``outcomes[0] - outcomes[1]``, each a ratio over the turns of
    the group. Returns ``slice, group, n_turns, n_conversations``, one Int64 column per
    entry of ``counted`` (output name -> 0/1 column summed over the group), ``low, high``.
    """
    cluster, group, groups = _dense_codes(rows)
    n_groups = groups.height
    ys = [rows.get_column(column).cast(pl.Float64).to_numpy() for column in outcomes]
    sums = _cluster_sums(cluster, group, n_groups, [*ys, np.ones(rows.height)])
    blocks = np.split(_bootstrap_totals(sums, n_boot, rng), len(ys) + 1, axis=1)
    numerator = blocks[0] if len(ys) == 1 else blocks[0] - blocks[1]
    low, high = percentile_interval(_ratio(numerator, blocks[-1]), level)
    return groups.with_columns(
        n_turns=_tally(group, n_groups),
        n_conversations=pl.Series(np.count_nonzero(sums[:, len(ys) * n_groups :], axis=0).astype(np.int64)),
        **{
            name: _tally(group, n_groups, rows.get_column(column).cast(pl.Float64).to_numpy())
            for name, column in counted.items()
        },
        low=pl.Series(low, dtype=pl.Float64).fill_nan(None),
        high=pl.Series(high, dtype=pl.Float64).fill_nan(None),
    )


def _wilson_when_all_alike(level: float) -> list[pl.Expr]:
    """Bounds for a group whose turns all have the same outcome: resampling gives such a group
    no spread (four of four right would read [100.0%, 100.0%]), so its interval is the Wilson
    score interval with the conversations as the sample size instead, e.g. [51.0%, 100.0%] for
    four conversations all right: what so few observations can and cannot rule out."""
    z2 = NormalDist().inv_cdf(1.0 - (1.0 - float(level)) / 2.0) ** 2
    n = pl.col("n_conversations").cast(pl.Float64)
    all_right = pl.col("n_correct") == pl.col("n_turns")
    all_wrong = pl.col("n_correct") == 0
    return [
        pl.when(all_right).then(n / (n + z2)).when(all_wrong).then(0.0).otherwise(pl.col("low")).alias("low"),
        pl.when(all_right).then(1.0).when(all_wrong).then(z2 / (n + z2)).otherwise(pl.col("high")).alias("high"),
    ]


def _wilson_when_no_disagreement(level: float) -> list[pl.Expr]:
    """Bounds for a paired group where the two systems never disagree: resampling gives such a
    group no spread (0 [0, 0]), so the difference gets the bound the data allow instead. The
    difference a - b is at most the share of conversations where they disagree, in either
    direction, and none of n disagreeing bounds that share by the Wilson score interval's upper
    end, z^2 / (n + z^2): about [-49.0, +49.0] points for four conversations, [-1.9, +1.9] for
    200 (as :func:`_wilson_when_all_alike` does for one system's accuracy)."""
    z2 = NormalDist().inv_cdf(1.0 - (1.0 - float(level)) / 2.0) ** 2
    n = pl.col("n_conversations").cast(pl.Float64)
    alike = (pl.col("a_only") + pl.col("b_only") == 0) & (pl.col("n_turns") > 0)
    bound = z2 / (n + z2)
    return [
        pl.when(alike).then(-bound).otherwise(pl.col("low")).alias("low"),
        pl.when(alike).then(bound).otherwise(pl.col("high")).alias("high"),
    ]


def _null_bounds_below_two_conversations() -> list[pl.Expr]:
    return [pl.when(pl.col("n_conversations") >= 2).then(pl.col(bound)).alias(bound) for bound in ("low", "high")]


# --------------------------------------------------------------------------- public API


def slice_intervals(
    long: pl.DataFrame, *, value: str = "correct", n_boot: int = 1000, level: float = 0.95, seed: int = 0
) -> pl.DataFrame:
    """Accuracy per system, slice and group, with a conversation-clustered bootstrap interval.

    Parameters
    ----------
    long
        Graded turns in long form: ``system``, ``record_id``, ``turn``, ``slice``,
        ``group`` and the Boolean outcome ``value`` (null counts as wrong).
    value
        Name of the outcome column.
    n_boot
        Bootstrap replicates (>= 1).
    level
        Interval coverage in (0, 1).
    seed
        Seed (>= 0). A system's draws depend only on the seed and the system's name, so
        adding or removing other systems leaves its interval unchanged.

    Returns
    -------
    polars.DataFrame
        ``system, slice, group, n_turns, n_correct, n_conversations, accuracy, low, high``,
        sorted by system and slice (order of first appearance), then by descending
        ``n_turns`` and ``group``. ``low``/``high`` are the percentile interval of the
        replicate accuracies (replicates where the group drew no turns left out); null
        when the group has fewer than 2 conversations. A group whose turns are all right
        (or all wrong) has no spread to resample: its bounds are the Wilson score interval
        over its conversations instead (4 conversations all right: about [51%, 100%]).

    Raises
    ------
    UsageError
        A column is missing, the outcome is not Boolean, a key column has nulls, or
        ``n_boot``, ``level`` or ``seed`` is invalid.

    Examples
    --------
    >>> long = pl.DataFrame({"system": "s", "record_id": ["a", "a", "b", "c"], "turn": [0, 1, 0, 0],
    ...                      "slice": "overall", "group": "all", "correct": [True, True, False, None]})
    >>> row = slice_intervals(long, n_boot=200).row(0, named=True)
    >>> row["n_turns"], row["n_correct"], row["n_conversations"], row["accuracy"]
    (4, 2, 3, 0.5)
    >>> 0.0 <= row["low"] <= row["accuracy"] <= row["high"] <= 1.0
    True
    """
    _check_settings(n_boot, level, seed)
    frame = _outcomes(long, value)
    parts = [
        _grouped_bootstrap(
            rows,
            ["_y"],
            {"n_correct": "_y"},
            n_boot=n_boot,
            level=level,
            rng=np.random.default_rng([int(seed), zlib.crc32(str(system).encode())]),
        ).with_columns(system=pl.lit(system, frame.schema["system"]))  # text or a key, as given
        for (system,), rows in frame.partition_by("system", as_dict=True, maintain_order=True).items()
    ]
    columns = ["system", "slice", "group", "n_turns", "n_correct", "n_conversations", "accuracy", "low", "high"]
    if not parts:
        return pl.DataFrame(schema={**_SLICE_SCHEMA, "system": frame.schema["system"]})
    table = (
        pl.concat(parts)
        .with_columns((pl.col("n_correct") / pl.col("n_turns")).alias("accuracy"), *_wilson_when_all_alike(level))
        .with_columns(*_null_bounds_below_two_conversations())
    )
    return _ordered(table, frame, ["system", "slice"]).select(columns)


def paired_comparison(
    long: pl.DataFrame,
    system_a: str,
    system_b: str,
    *,
    value: str = "correct",
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> pl.DataFrame:
    """Compare two systems on the turns both have: accuracy difference, interval, McNemar test.

    Turns are paired on (``record_id``, ``turn``, ``slice``, ``group``); a turn only one
    system has is left out of every statistic and counted in ``n_unpaired``. The interval
    is a paired bootstrap clustered by conversation: each replicate resamples the
    conversations that have paired turns, and gives both accuracies, hence the difference.

    Parameters
    ----------
    long
        Graded turns in long form (see :func:`slice_intervals`).
    system_a, system_b
        The systems to compare; ``difference`` is a - b.
    value, n_boot, level, seed
        As in :func:`slice_intervals`.

    Returns
    -------
    polars.DataFrame
        One row per (slice, group) either system has: ``slice, group, n_turns,
        n_conversations, accuracy_a, accuracy_b, difference, low, high, a_only, b_only,
        mcnemar_p, n_unpaired``. ``a_only`` counts paired turns a got right and b wrong;
        ``mcnemar_p`` is :func:`mcnemar_exact` of ``a_only`` and ``b_only``. Accuracies and
        difference are null for a group without paired turns; ``low``/``high`` are null
        with fewer than 2 paired conversations; where the two never disagree, the bootstrap
        has no spread and the interval is plus or minus the Wilson upper bound of a share of
        disagreeing conversations of none in ``n_conversations`` (never 0 [0, 0]); ``too_small`` is true with fewer than
        :data:`MIN_GROUP_N` paired turns. Sorted by slice (first appearance), then by
        descending ``n_turns`` and ``group`` (reading order:
        :func:`workbench.analysis.slices.in_reading_order`).

    Raises
    ------
    UsageError
        An unknown system, a turn listed twice for a system, or any problem
        :func:`slice_intervals` reports.

    Examples
    --------
    >>> long = pl.DataFrame({"system": ["a"] * 4 + ["b"] * 3, "record_id": ["r", "r", "q", "p", "r", "r", "q"],
    ...                      "turn": [0, 1, 0, 0, 0, 1, 0], "slice": "overall", "group": "all",
    ...                      "correct": [True, True, True, False, True, False, False]})
    >>> row = paired_comparison(long, "a", "b", n_boot=200).row(0, named=True)
    >>> row["n_turns"], row["accuracy_a"], row["accuracy_b"], row["a_only"], row["b_only"], row["n_unpaired"]
    (3, 1.0, 0.3333333333333333, 2, 0, 1)
    >>> row["mcnemar_p"]
    0.5
    """
    _check_settings(n_boot, level, seed)
    frame = _outcomes(long, value)
    systems = frame.get_column("system").unique(maintain_order=True).to_list()
    for name in (system_a, system_b):
        if name not in systems:
            raise UsageError(
                f"no system named {name!r} in the table. Fix: use one of {', '.join(map(repr, systems)) or '(none)'}"
            )
    sides = {}
    for side, name in (("a", system_a), ("b", system_b)):
        rows = frame.filter(pl.col("system") == name).select(*_TURN_KEYS, pl.col("_y").alias(f"_y_{side}"))
        if rows.select(pl.struct(_TURN_KEYS).is_duplicated().any()).item():
            raise UsageError(
                f"system {name!r} lists some (record_id, turn, slice, group) more than once. "
                "Fix: keep one row per turn and slice, e.g. long.unique(['system', 'record_id', 'turn', 'slice', 'group'])"
            )
        sides[side] = rows
    paired = sides["a"].join(sides["b"], on=_TURN_KEYS, how="inner")
    either = (
        pl.concat([sides["a"].select("slice", "group"), sides["b"].select("slice", "group")])
        .group_by("slice", "group")
        .agg(pl.len().cast(pl.Int64).alias("_either"))
    )
    if paired.height:
        y_a, y_b = pl.col("_y_a"), pl.col("_y_b")
        point = _grouped_bootstrap(
            paired.with_columns(_a_only=y_a & ~y_b, _b_only=y_b & ~y_a),
            ["_y_a", "_y_b"],
            {"_correct_a": "_y_a", "_correct_b": "_y_b", "a_only": "_a_only", "b_only": "_b_only"},
            n_boot=n_boot,
            level=level,
            rng=np.random.default_rng(int(seed)),
        )
    else:
        point = pl.DataFrame(schema=_PAIRED_POINT_SCHEMA)
    table = (
        either.join(point, on=["slice", "group"], how="left")
        .with_columns(pl.col("n_turns", "n_conversations", "_correct_a", "_correct_b", "a_only", "b_only").fill_null(0))
        .with_columns(
            (pl.col("_correct_a") / pl.col("n_turns")).alias("accuracy_a"),
            (pl.col("_correct_b") / pl.col("n_turns")).alias("accuracy_b"),
            ((pl.col("_correct_a") - pl.col("_correct_b")) / pl.col("n_turns")).alias("difference"),
            (pl.col("_either") - 2 * pl.col("n_turns")).alias("n_unpaired"),
            *_wilson_when_no_disagreement(level),
        )
        .with_columns(*_null_bounds_below_two_conversations())
        .with_columns(pl.col("accuracy_a", "accuracy_b", "difference").fill_nan(None))
    )
    table = table.with_columns(
        mcnemar_p=pl.Series(
            [mcnemar_exact(a, b) for a, b in table.select("a_only", "b_only").iter_rows()], dtype=pl.Float64
        )
    )
    columns = [
        "slice",
        "group",
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
        "n_unpaired",
        "too_small",
    ]
    table = table.with_columns((pl.col("n_turns") < MIN_GROUP_N).alias("too_small"))
    return _ordered(table, frame, ["slice"]).select(columns)


# --------------------------------------------------------------------------- McNemar

#: Up to this many discordant turns the McNemar p-value is summed exactly (:func:`mcnemar_exact`):
#: 20,000 takes about 50 ms.
EXACT_MCNEMAR_N = 20_000


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Exact two-sided McNemar p-value from the discordant counts.

    Under the null each discordant turn is a's with probability 1/2, so with
    ``n = a_only + b_only`` and ``k = min(a_only, b_only)`` the p-value is
    ``min(1, 2 * P[Binom(n, 1/2) <= k])``, and 1.0 when ``n == 0``.

    Up to :data:`EXACT_MCNEMAR_N` discordant turns the tail is summed exactly (whole numbers, one
    rounding at the end); above, it is :func:`scipy.stats.binomtest`'s (no normal approximation
    anywhere), accurate to about 1e-12 relative error for n up to millions. scipy.stats takes 2 s
    of CPU to import, in every kernel of a report that compares systems; a comparison's discordant
    turns are rarely more than a few thousand.

    Parameters
    ----------
    a_only, b_only
        Turns only system a (resp. b) got right; whole numbers >= 0.

    Returns
    -------
    float
        The p-value in [0, 1].

    Raises
    ------
    UsageError
        A count is negative or not a whole number.

    Examples
    --------
    >>> mcnemar_exact(0, 0)
    1.0
    >>> mcnemar_exact(10, 0) == 2 / 1024
    True
    >>> round(mcnemar_exact(3, 1), 12), round(mcnemar_exact(1, 3), 12), 2 * (1 + 4) / 16
    (0.625, 0.625, 0.625)
    """
    for name, count in (("a_only", a_only), ("b_only", b_only)):
        if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 0:
            raise UsageError(f"{name} must be a whole number >= 0, got {count!r}. Fix: pass a count of turns")
    n = int(a_only) + int(b_only)
    k = min(int(a_only), int(b_only))
    if n == 0 or 2 * k >= n - 1:
        # k >= (n - 1) / 2 means P[X <= k] >= 1/2, so the doubled tail is at least 1.
        return 1.0
    if n <= EXACT_MCNEMAR_N:
        term = tail = 1  # C(n, 0)
        for i in range(k):
            term = term * (n - i) // (i + 1)  # C(n, i + 1), exact
            tail += term
        return min(1.0, float(Fraction(2 * tail, 2**n)))
    from scipy.stats import binomtest  # scipy.stats takes 2 s to import: only for a large n

    # Binom(n, 1/2) is symmetric: the two-sided p-value is 2 * P[X <= k], at most 1.
    return min(1.0, float(binomtest(k, n, 0.5, alternative="two-sided").pvalue))
