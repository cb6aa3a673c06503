"""``distinct``: rows grouped by a hash of their keys give the groups of the keys themselves."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal, assert_series_equal

from workbench.parallel import distinct


def _by_the_keys(frame: pl.DataFrame, keys: list[str]) -> tuple[pl.DataFrame, pl.Series]:
    """The distinct keys in order of first appearance and each row's index, by grouping on them."""
    grouped = (
        frame.select(keys)
        .with_row_index("_row")
        .group_by(keys, maintain_order=True)
        .agg(pl.col("_row"))
        .with_row_index("_key")
    )
    index = grouped.select("_key", "_row").explode("_row").sort("_row")["_key"]
    return grouped.select(keys), index


_TEXT = st.one_of(st.none(), st.sampled_from(["", "a", "b", "12", "x" * 40, "é\n"]), st.text(max_size=8))


@settings(max_examples=200)
@given(
    rows=st.lists(
        st.tuples(_TEXT, _TEXT, st.one_of(st.none(), st.booleans()), st.one_of(st.none(), st.floats(width=32))),
        max_size=40,
    ),
    copies=st.integers(1, 3),
)
def test_distinct_is_grouping_by_the_keys(rows: list[tuple[object, ...]], copies: int) -> None:
    """Nulls equal nulls; a float key (NaN is not equal to itself row by row) takes the exact way."""
    frame = pl.DataFrame(
        rows * copies, schema={"a": pl.String, "b": pl.String, "c": pl.Boolean, "d": pl.Float64}, orient="row"
    )
    for keys in (["a"], ["a", "b", "c"], ["a", "b", "c", "d"]):
        unique, index = distinct(frame, keys)
        expected, expected_index = _by_the_keys(frame, keys)
        assert_frame_equal(unique, expected)
        assert_series_equal(index, expected_index, check_names=False)
        if frame.height:
            assert_frame_equal(unique[index], frame.select(keys))


def test_signed_zeros_nans_and_nulls_group_as_the_keys_do() -> None:
    frame = pl.DataFrame({"d": [0.0, -0.0, float("nan"), float("nan"), None, 1.0, None], "s": ["a"] * 7})
    unique, index = distinct(frame, ["d", "s"])
    expected, expected_index = _by_the_keys(frame, ["d", "s"])
    assert index.to_list() == expected_index.to_list() == [0, 0, 1, 1, 2, 3, 2]
    assert_frame_equal(unique, expected)
