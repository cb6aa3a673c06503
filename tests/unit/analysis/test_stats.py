"""Tests for workbench.analysis.stats: McNemar, percentile intervals, clustered slice intervals, paired comparison.

Expected values are derived in the tests themselves: binomial tails from ``math.comb`` with
exact fractions, accuracies from plain polars means, interval widths from the binomial
standard error of a mean over independent units.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.analysis.stats import (
    MIN_GROUP_N,
    mcnemar_exact,
    paired_comparison,
    percentile_interval,
    slice_intervals,
)
from workbench.errors import UsageError

# --------------------------------------------------------------------------- builders


def turns_frame(system: str, conversations: list[list[bool | None]], *, prefix: str = "r") -> pl.DataFrame:
    """One row per turn: conversation i is record '<prefix><i>' with the given outcomes."""
    rows = [
        {"system": system, "record_id": f"{prefix}{i}", "turn": t, "correct": y}
        for i, outcomes in enumerate(conversations)
        for t, y in enumerate(outcomes)
    ]
    return pl.DataFrame(
        rows, schema={"system": pl.String, "record_id": pl.String, "turn": pl.Int32, "correct": pl.Boolean}
    )


def to_long(turns: pl.DataFrame, slices: dict[str, pl.Expr] | None = None) -> pl.DataFrame:
    """The overall slice plus one slice per entry of ``slices`` (name -> expression giving the group)."""
    parts = [turns.with_columns(slice=pl.lit("overall"), group=pl.lit("all"))]
    for name, expr in (slices or {}).items():
        parts.append(turns.with_columns(slice=pl.lit(name), group=expr.cast(pl.String)))
    return pl.concat(parts).select("system", "record_id", "turn", "slice", "group", "correct")


def exact_mcnemar(a: int, b: int) -> float:
    n, k = a + b, min(a, b)
    if n == 0:
        return 1.0
    tail = Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2**n)
    return float(min(Fraction(1), 2 * tail))


conversation_lists = st.lists(st.lists(st.booleans(), min_size=1, max_size=5), min_size=1, max_size=12)


# --------------------------------------------------------------------------- mcnemar_exact


@given(st.integers(0, 300), st.integers(0, 300))
def test_mcnemar_matches_exact_binomial_sum(a: int, b: int) -> None:
    assert mcnemar_exact(a, b) == pytest.approx(exact_mcnemar(a, b), rel=1e-11, abs=0)


@given(st.integers(0, 10**6), st.integers(0, 10**6))
@settings(max_examples=50)
def test_mcnemar_symmetric_and_in_unit_interval(a: int, b: int) -> None:
    p = mcnemar_exact(a, b)
    assert p == mcnemar_exact(b, a)
    assert math.isfinite(p) and 0.0 <= p <= 1.0


@given(st.integers(0, 2000), st.integers(1, 2000))
def test_mcnemar_monotone(k: int, extra: int) -> None:
    # A bigger imbalance at the same number of discordant turns gives a smaller p ...
    n = 2 * k + extra
    assert mcnemar_exact(k, n - k) >= mcnemar_exact(max(k - 1, 0), n - max(k - 1, 0)) * (1 - 1e-12)
    # ... and so does one more discordant turn on the winning side.
    assert mcnemar_exact(k, k + extra + 1) <= mcnemar_exact(k, k + extra) * (1 + 1e-12)


def test_mcnemar_small_cases() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(10, 0) == pytest.approx(2 / 1024, rel=1e-14)
    assert mcnemar_exact(5, 5) == 1.0
    assert mcnemar_exact(1, 0) == 1.0  # 2 * P[X <= 0] = 2 * 1/2
    assert mcnemar_exact(np.int64(3), np.int64(1)) == pytest.approx(10 / 16, rel=1e-14)


def test_mcnemar_large_n_is_finite_and_close_to_the_normal_limit() -> None:
    # n = 10**6 discordant turns, 2000 apart: z = (2000 - 1) / sqrt(10**6) with continuity correction.
    p = mcnemar_exact(501_000, 499_000)
    normal = math.erfc((2000 - 1) / 1000 / math.sqrt(2))
    assert math.isfinite(p) and 0.0 < p < 1.0
    assert p == pytest.approx(normal, abs=1e-5)
    assert mcnemar_exact(500_000, 500_000) == 1.0
    assert mcnemar_exact(10**6, 0) == 0.0  # 2**(1 - 10**6) underflows


#: p-values of the hand-written exact test that scipy.stats.binomtest replaced (Loader's saddle-point
#: pmf and a log-space tail sum, commit 6bf648b), on the cases above and a spread of n up to 10**6.
HAND_WRITTEN_P = [
    (0, 0, 1.0),
    (10, 0, 0.001953125),
    (5, 5, 1.0),
    (1, 0, 1.0),
    (3, 1, 0.6249999999999996),
    (0, 300, 9.818186930595542e-91),
    (7, 300, 3.7378652043873295e-79),
    (150, 170, 0.288160032194732),
    (299, 300, 1.0),
    (120, 180, 0.0006342200069283572),
    (1000, 1200, 2.1817026407914766e-05),
    (2000, 2100, 0.12206497999113808),
    (501000, 499000, 0.04560829986538205),
    (500000, 500000, 1.0),
    (1000000, 0, 0.0),
    (123456, 124999, 0.001977553277628349),
    (40, 2000, 0.0),
    (1, 2000, 0.0),
    (0, 1, 1.0),
    (2, 9, 0.06542968750000029),
]


@pytest.mark.parametrize(("a", "b", "old"), HAND_WRITTEN_P)
def test_mcnemar_equals_the_hand_written_test(a: int, b: int, old: float) -> None:
    assert mcnemar_exact(a, b) == pytest.approx(old, rel=1e-12, abs=0)


@pytest.mark.parametrize("counts", [(-1, 3), (2, -5), (1.5, 2), (True, 2)])
def test_mcnemar_rejects_bad_counts(counts: tuple) -> None:
    with pytest.raises(UsageError, match="whole number"):
        mcnemar_exact(*counts)


# --------------------------------------------------------------------------- percentile_interval


def test_percentile_interval_matches_numpy_and_skips_nan() -> None:
    rng = np.random.default_rng(3)
    samples = rng.normal(size=(500, 3))
    low, high = percentile_interval(samples, 0.9)
    np.testing.assert_allclose(low, np.quantile(samples, 0.05, axis=0))
    np.testing.assert_allclose(high, np.quantile(samples, 0.95, axis=0))
    with_nan = samples.copy()
    with_nan[:100, 0] = np.nan
    with_nan[:, 2] = np.nan
    low, high = percentile_interval(with_nan, 0.9)
    assert low[0] == pytest.approx(np.quantile(samples[100:, 0], 0.05))
    assert low[1] == pytest.approx(np.quantile(samples[:, 1], 0.05))
    assert np.isnan(low[2]) and np.isnan(high[2])


@pytest.mark.parametrize("level", [0, 1, 1.5, -0.1])
def test_percentile_interval_rejects_bad_level(level: float) -> None:
    with pytest.raises(UsageError, match="level"):
        percentile_interval(np.zeros(3), level)


# --------------------------------------------------------------------------- slice_intervals


@given(conversation_lists)
@settings(max_examples=40, deadline=None)
def test_slice_intervals_counts_and_bounds(conversations: list[list[bool]]) -> None:
    turns = turns_frame("s", conversations)
    long = to_long(turns, {"parity": pl.col("turn") % 2, "first": pl.col("turn") == 0})
    out = slice_intervals(long, n_boot=200)
    expected = long.group_by("slice", "group").agg(
        pl.len().alias("n"),
        pl.col("correct").sum().alias("k"),
        pl.col("record_id").n_unique().alias("c"),
        pl.col("correct").mean().alias("mean"),
    )
    # Every replicate accuracy is a turn-weighted average of the conversations' accuracies in the group.
    hull = (
        long.group_by("slice", "group", "record_id")
        .agg(pl.col("correct").mean().alias("acc"))
        .group_by("slice", "group")
        .agg(pl.col("acc").min().alias("lo"), pl.col("acc").max().alias("hi"))
    )
    joined = out.join(expected, on=["slice", "group"]).join(hull, on=["slice", "group"])
    assert joined.height == out.height == expected.height
    for row in joined.iter_rows(named=True):
        assert (row["n_turns"], row["n_correct"], row["n_conversations"]) == (row["n"], row["k"], row["c"])
        assert row["accuracy"] == pytest.approx(row["mean"], rel=1e-12)
        if row["n_conversations"] < 2:
            assert row["low"] is None and row["high"] is None
        elif row["k"] in (0, row["n"]):  # all alike: the Wilson bound, which contains the estimate
            assert row["low"] <= row["accuracy"] <= row["high"] and row["low"] < row["high"]
        else:
            assert row["lo"] - 1e-12 <= row["low"] <= row["high"] <= row["hi"] + 1e-12


def test_slice_intervals_contains_estimate_and_columns() -> None:
    rng = np.random.default_rng(7)
    conversations = [list(rng.random(rng.integers(1, 6)) < 0.7) for _ in range(150)]
    long = to_long(turns_frame("s", conversations), {"parity": pl.col("turn") % 2})
    out = slice_intervals(long, n_boot=500)
    assert out.columns == [
        "system",
        "slice",
        "group",
        "n_turns",
        "n_correct",
        "n_conversations",
        "accuracy",
        "low",
        "high",
    ]
    assert out.schema["accuracy"] == out.schema["low"] == out.schema["high"] == pl.Float64
    for row in out.iter_rows(named=True):
        assert row["low"] < row["accuracy"] < row["high"]


def test_slice_intervals_all_alike_get_the_wilson_bound_over_conversations() -> None:
    """Resampling a group whose turns are all right gives [100%, 100%] whatever its size: the
    interval is then the Wilson score interval with the conversations as the sample size."""
    long = to_long(turns_frame("s", [[True] * 3, [True], [True, True], [True]]), {"parity": pl.col("turn") % 2})
    out = slice_intervals(long, n_boot=100)
    assert out["accuracy"].to_list() == [1.0] * out.height
    assert out["high"].to_list() == [1.0] * out.height
    z2 = 1.959963984540054**2
    for row in out.iter_rows(named=True):
        n = row["n_conversations"]
        assert row["low"] == pytest.approx(n / (n + z2))  # 4 conversations: 0.5105
    wrong = slice_intervals(to_long(turns_frame("s", [[False]] * 4)), n_boot=100).row(0, named=True)
    assert (wrong["low"], wrong["high"]) == (0.0, pytest.approx(z2 / (4 + z2)))


def test_slice_intervals_clustering_widens_the_interval() -> None:
    # 200 conversations of 10 turns, each all right or all wrong: the information is in 200
    # conversations, not 2000 turns, so the interval should be about sqrt(10) times wider.
    rng = np.random.default_rng(11)
    right = rng.permutation([True] * 100 + [False] * 100)
    turns = turns_frame("s", [[bool(r)] * 10 for r in right])
    clustered = slice_intervals(to_long(turns), n_boot=2000).row(0, named=True)
    per_turn = turns.with_columns(record_id=pl.col("record_id") + "/" + pl.col("turn").cast(pl.String))
    unclustered = slice_intervals(to_long(per_turn), n_boot=2000).row(0, named=True)
    assert clustered["accuracy"] == unclustered["accuracy"] == 0.5
    width_clustered = clustered["high"] - clustered["low"]
    width_unclustered = unclustered["high"] - unclustered["low"]
    # Normal-theory widths: 2 * 1.96 * sqrt(0.25 / units) for 200 and 2000 independent units.
    assert width_clustered == pytest.approx(2 * 1.96 * math.sqrt(0.25 / 200), rel=0.15)
    assert width_unclustered == pytest.approx(2 * 1.96 * math.sqrt(0.25 / 2000), rel=0.15)
    assert width_clustered > 2.5 * width_unclustered


def test_slice_intervals_deterministic_and_order_free() -> None:
    rng = np.random.default_rng(5)
    a = turns_frame("a", [list(rng.random(rng.integers(1, 5)) < 0.6) for _ in range(60)])
    b = turns_frame("b", [list(rng.random(rng.integers(1, 5)) < 0.4) for _ in range(40)])
    long = to_long(pl.concat([a, b]), {"parity": pl.col("turn") % 2})
    first = slice_intervals(long, n_boot=300, seed=1)
    assert first.equals(slice_intervals(long, n_boot=300, seed=1))
    assert not first.equals(slice_intervals(long, n_boot=300, seed=2))
    # Row order changes only the order of the output rows: conversations are coded in sorted order.
    shuffled = slice_intervals(long.sample(fraction=1.0, shuffle=True, seed=3), n_boot=300, seed=1)
    keys = ["system", "slice", "group"]
    assert first.sort(keys).equals(shuffled.sort(keys))
    # A system's draws depend on the seed and its name only, not on the other systems.
    alone = slice_intervals(long.filter(pl.col("system") == "b"), n_boot=300, seed=1)
    assert alone.equals(first.filter(pl.col("system") == "b"))


def test_slice_intervals_order_value_column_and_nulls() -> None:
    turns = pl.concat(
        [
            turns_frame("zeta", [[True, None, False], [False, True]]),
            turns_frame("alpha", [[True], [None]]),
        ]
    ).rename({"correct": "ok"})
    long = pl.concat(
        [
            turns.with_columns(slice=pl.lit("by_turn"), group=pl.col("turn").cast(pl.String)),
            turns.with_columns(slice=pl.lit("overall"), group=pl.lit("all")),
        ]
    ).select("system", "record_id", "turn", "slice", "group", "ok")
    out = slice_intervals(long, value="ok", n_boot=50)
    assert out.select("system", "slice", "group").rows() == [
        ("zeta", "by_turn", "0"),
        ("zeta", "by_turn", "1"),
        ("zeta", "by_turn", "2"),
        ("zeta", "overall", "all"),
        ("alpha", "by_turn", "0"),
        ("alpha", "overall", "all"),
    ]
    zeta_overall = out.row(3, named=True)
    assert (zeta_overall["n_turns"], zeta_overall["n_correct"]) == (5, 2)  # the null counts as wrong
    by_turn_2 = out.row(2, named=True)
    assert by_turn_2["n_conversations"] == 1 and by_turn_2["low"] is None and by_turn_2["high"] is None

    # within a slice, groups with more turns come first, ties by group name
    def first_turn_groups(conversations: list[list[bool]]) -> list[tuple[str, int]]:
        long = to_long(turns_frame("s", conversations), {"first": pl.col("turn") == 0})
        out = slice_intervals(long, n_boot=20).filter(pl.col("slice") == "first")
        return out.select("group", "n_turns").rows()

    assert first_turn_groups([[True, True], [False]]) == [("true", 2), ("false", 1)]
    assert first_turn_groups([[True, True, True], [False]]) == [("false", 2), ("true", 2)]


def test_slice_intervals_coverage_by_simulation() -> None:
    # Conversations with their own accuracy p_c ~ Beta(2, 2) (mean 1/2) and 1..6 turns:
    # the turn-level accuracy is 1/2, and the 95% interval should cover it about 95% of the time.
    rng = np.random.default_rng(2024)
    covered = 0
    reps = 150
    for rep in range(reps):
        p = rng.beta(2, 2, size=60)
        conversations = [list(rng.random(rng.integers(1, 7)) < p_c) for p_c in p]
        row = slice_intervals(to_long(turns_frame("s", conversations)), n_boot=300, seed=rep).row(0, named=True)
        covered += row["low"] <= 0.5 <= row["high"]
    assert 0.87 <= covered / reps <= 0.99


def test_slice_intervals_validation() -> None:
    long = to_long(turns_frame("s", [[True, False], [True]]))
    with pytest.raises(UsageError, match="no column 'correct'.*columns: system, record_id"):
        slice_intervals(long.rename({"correct": "ok"}))
    with pytest.raises(UsageError, match="no column 'slice'"):
        slice_intervals(long.drop("slice"))
    with pytest.raises(UsageError, match="must be Boolean"):
        slice_intervals(long.with_columns(pl.col("correct").cast(pl.Int8)))
    with pytest.raises(UsageError, match="null"):
        slice_intervals(long.with_columns(record_id=pl.lit(None, pl.String)))
    for bad in (0, 1, 1.2):
        with pytest.raises(UsageError, match="level"):
            slice_intervals(long, level=bad)
    for bad in (0, -3, 2.5):
        with pytest.raises(UsageError, match="n_boot"):
            slice_intervals(long, n_boot=bad)
    with pytest.raises(UsageError, match="seed"):
        slice_intervals(long, seed=-1)


def test_slice_intervals_empty_table() -> None:
    empty = to_long(turns_frame("s", []))
    out = slice_intervals(empty)
    assert out.height == 0 and out.columns[:3] == ["system", "slice", "group"]


# --------------------------------------------------------------------------- paired_comparison


def test_paired_identical_systems() -> None:
    rng = np.random.default_rng(1)
    conversations = [list(rng.random(rng.integers(1, 5)) < 0.5) for _ in range(50)]
    turns = pl.concat([turns_frame("a", conversations), turns_frame("b", conversations)])
    out = paired_comparison(to_long(turns, {"parity": pl.col("turn") % 2}), "a", "b", n_boot=200)
    assert out.height == 3
    for row in out.iter_rows(named=True):
        assert row["accuracy_a"] == row["accuracy_b"]
        assert row["difference"] == 0.0
        # no disagreement: plus or minus the Wilson bound over the conversations (issue 34), not [0, 0]
        assert row["low"] == -row["high"] and 0.0 < row["high"] < 0.1
        assert (row["a_only"], row["b_only"], row["mcnemar_p"], row["n_unpaired"]) == (0, 0, 1.0, 0)


def test_paired_superset_system() -> None:
    # b is right on ~30% of turns; a is right on those and on ~40% more.
    rng = np.random.default_rng(2)
    conversations_b = [list(rng.random(rng.integers(1, 6)) < 0.3) for _ in range(120)]
    conversations_a = [[y or bool(rng.random() < 0.6) for y in c] for c in conversations_b]
    turns = pl.concat([turns_frame("a", conversations_a), turns_frame("b", conversations_b)])
    out = paired_comparison(to_long(turns), "a", "b", n_boot=500).row(0, named=True)
    flat_a = [y for c in conversations_a for y in c]
    flat_b = [y for c in conversations_b for y in c]
    a_only = sum(ya and not yb for ya, yb in zip(flat_a, flat_b, strict=True))
    assert out["n_turns"] == len(flat_a)
    assert out["n_conversations"] == 120
    assert (out["a_only"], out["b_only"]) == (a_only, 0)
    assert out["accuracy_a"] == pytest.approx(np.mean(flat_a))
    assert out["accuracy_b"] == pytest.approx(np.mean(flat_b))
    assert out["difference"] == pytest.approx(a_only / len(flat_a))
    assert 0 < out["low"] < out["difference"] < out["high"]
    assert out["mcnemar_p"] == mcnemar_exact(a_only, 0) < 1e-10


def test_paired_interval_is_narrower_than_independent_intervals() -> None:
    # b differs from a on 5% of turns: pairing removes the shared variation.
    rng = np.random.default_rng(4)
    conversations_a = [list(rng.random(rng.integers(1, 6)) < 0.6) for _ in range(200)]
    conversations_b = [[y != bool(rng.random() < 0.05) for y in c] for c in conversations_a]
    turns = pl.concat([turns_frame("a", conversations_a), turns_frame("b", conversations_b)])
    long = to_long(turns)
    paired = paired_comparison(long, "a", "b", n_boot=500).row(0, named=True)
    single = slice_intervals(long, n_boot=500)
    widths = (single["high"] - single["low"]).to_list()
    assert paired["high"] - paired["low"] < 0.5 * math.sqrt(widths[0] ** 2 + widths[1] ** 2)


@given(conversation_lists, st.lists(st.booleans(), min_size=60, max_size=60))
@settings(max_examples=40, deadline=None)
def test_paired_counts_identity(conversations: list[list[bool]], flips: list[bool]) -> None:
    flat = iter(flips * 2)
    other = [[y != next(flat) for y in c] for c in conversations]
    turns = pl.concat([turns_frame("a", conversations), turns_frame("b", other)])
    out = paired_comparison(to_long(turns, {"parity": pl.col("turn") % 2}), "a", "b", n_boot=100)
    for row in out.iter_rows(named=True):
        assert row["difference"] == pytest.approx((row["a_only"] - row["b_only"]) / row["n_turns"], abs=1e-12)
        assert row["difference"] == pytest.approx(row["accuracy_a"] - row["accuracy_b"], abs=1e-12)
        assert row["mcnemar_p"] == mcnemar_exact(row["a_only"], row["b_only"])
        if row["low"] is not None:
            assert -1.0 <= row["low"] <= row["high"] <= 1.0


def test_paired_unpaired_turns_are_counted() -> None:
    a = turns_frame("a", [[True, False, True], [True], [False, False]])
    # b lacks conversation r0's last turn and r1 entirely, and has a conversation a lacks.
    b = pl.concat([turns_frame("b", [[False, False], [], [True, False]]), turns_frame("b", [[True, True]], prefix="x")])
    long = to_long(pl.concat([a, b]), {"parity": pl.col("turn") % 2})
    out = paired_comparison(long, "a", "b", n_boot=100)
    overall = out.filter(pl.col("slice") == "overall").row(0, named=True)
    # paired: r0 turns 0,1 and r2 turns 0,1; unpaired: a's r0/2 and r1/0, b's x0/0 and x0/1
    assert (overall["n_turns"], overall["n_conversations"], overall["n_unpaired"]) == (4, 2, 4)
    assert (overall["a_only"], overall["b_only"]) == (1, 1)
    assert overall["accuracy_a"] == pytest.approx(1 / 4) and overall["accuracy_b"] == pytest.approx(1 / 4)
    parity = {row["group"]: row for row in out.filter(pl.col("slice") == "parity").iter_rows(named=True)}
    assert parity["0"]["n_turns"] == 2 and parity["0"]["n_unpaired"] == 3  # r0/2, r1/0, x0/0
    assert parity["1"]["n_turns"] == 2 and parity["1"]["n_unpaired"] == 1  # x0/1


def test_paired_group_only_one_system_has() -> None:
    a = turns_frame("a", [[True], [False]])
    b = turns_frame("b", [[True], [True]])
    long = pl.concat(
        [
            to_long(a, {"kind": pl.lit("x")}),
            to_long(b, {"kind": pl.lit("y")}),
        ]
    )
    out = paired_comparison(long, "a", "b", n_boot=50)
    kinds = {row["group"]: row for row in out.filter(pl.col("slice") == "kind").iter_rows(named=True)}
    assert set(kinds) == {"x", "y"}
    for row in kinds.values():
        assert row["n_turns"] == 0 and row["n_unpaired"] == 2
        assert row["accuracy_a"] is None and row["difference"] is None and row["low"] is None
        assert row["mcnemar_p"] == 1.0


def test_paired_errors() -> None:
    long = to_long(pl.concat([turns_frame("a", [[True]]), turns_frame("b", [[False]])]))
    with pytest.raises(UsageError, match=r"no system named 'c'.*'a', 'b'"):
        paired_comparison(long, "a", "c")
    with pytest.raises(UsageError, match="more than once"):
        paired_comparison(pl.concat([long, long.filter(pl.col("system") == "a")]), "a", "b")
    with pytest.raises(UsageError, match="no column 'correct'"):
        paired_comparison(long.drop("correct"), "a", "b")
    with pytest.raises(UsageError, match="level"):
        paired_comparison(long, "a", "b", level=95)


def test_paired_groups_under_the_minimum_are_marked_too_small() -> None:
    rng = np.random.default_rng(11)
    a = turns_frame("a", [list(rng.random(3) < 0.8) for _ in range(40)])
    b = turns_frame("b", [list(rng.random(3) < 0.7) for _ in range(40)])
    # turn 2 of the first 6 conversations only: 6 paired turns, under MIN_GROUP_N
    group = pl.when((pl.col("turn") == 2) & (pl.col("record_id").str.slice(1).cast(pl.Int64) < 6))
    long = to_long(pl.concat([a, b]), {"few": group.then(pl.lit("few")).otherwise(pl.lit("many"))})
    out = paired_comparison(long, "a", "b", n_boot=100)
    assert out.columns[-1] == "too_small"
    marks = {row["group"]: (row["n_turns"], row["too_small"]) for row in out.iter_rows(named=True)}
    assert marks == {"all": (120, False), "many": (114, False), "few": (6, True)}
    assert MIN_GROUP_N == 20
