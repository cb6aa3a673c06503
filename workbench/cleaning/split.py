"""The stratified train/test split of a cleaned export.

:func:`stratified_split` splits records, stratified, with rare records spread over both sides;
:func:`split_records` gives the records of a gold set with what it stratifies on, and
:func:`split_summary` what each side of a split holds.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any

import polars as pl

from workbench.analysis.features import RARE_OPERATIONS, gold_features
from workbench.errors import UsageError
from workbench.io.gold import GoldDataset
from workbench.schema import KEY_DTYPE

__all__ = ["split_records", "split_summary", "stratified_split"]

#: A turn count held by fewer records than this share (or than ``_RARE_MIN_RECORDS``) is rare.
_RARE_SHARE = 0.02
_RARE_MIN_RECORDS = 5


def _allocate(
    sizes: Mapping[str, int], fraction: float, target: int, tie_break: Mapping[str, float], *, both_sides: bool
) -> dict[str, int]:
    """How many records of each group go to train: floor or ceil of ``size * fraction`` each,
    summing to ``target`` as nearly as the bounds allow (largest remainders get the ceilings).

    With ``both_sides`` a group of two or more keeps at least one record on each side.
    """
    low: dict[str, int] = {}
    high: dict[str, int] = {}
    for group, size in sizes.items():
        lo, hi = math.floor(size * fraction), math.ceil(size * fraction)
        if both_sides and size >= 2:
            lo, hi = min(max(lo, 1), size - 1), min(max(hi, 1), size - 1)
        low[group], high[group] = lo, hi
    extra = min(max(target, sum(low.values())), sum(high.values())) - sum(low.values())
    order = sorted(
        (g for g in sizes if high[g] > low[g]),
        key=lambda g: (-(sizes[g] * fraction - low[g]), tie_break[g], g),
    )
    counts = dict(low)
    for group in order[:extra]:
        counts[group] += 1
    return counts


def stratified_split(records: pl.DataFrame, train_fraction: float, seed: int = 0) -> pl.DataFrame:
    """Split records into train and test, stratified, with rare records spread over both sides.

    Rare records (``rare`` true) are placed first: the rare ones as a whole get
    ``round(n * train_fraction)`` train records, kept to at least one on each side when there
    are two or more, and each rare group (the optional ``rare_group`` column, say ``"greater"``
    or ``"turns=7"``; ``"rare"`` without it) is split the same way within itself. The other
    records are stratified by ``(n_turns, has_type2_question)``: each stratum gets the floor or
    the ceiling of ``size * train_fraction`` train records (so it is off by less than one
    record), the ceilings going to the largest remainders so that the whole split comes as
    close to the fraction as it can. Which records of a stratum go to train is a shuffle seeded
    by ``seed`` and the stratum, so the split is the same for the same records and seed, in
    any row order.

    Parameters
    ----------
    records
        One row per record: ``record_id``, ``n_turns``, ``has_type2_question`` (null reads as
        false), ``rare``; optionally ``rare_group``.
    train_fraction
        The share of records in train, strictly between 0 and 1.
    seed
        Seeds the shuffles and the tie-breaks.

    Returns
    -------
    polars.DataFrame
        ``record_id``, ``split`` (``"train"`` or ``"test"``), ``stratum`` (``"turns=4,type2=true"``
        or ``"rare:<group>"``), in the order of ``records``.

    Raises
    ------
    UsageError
        A fraction outside (0, 1), a missing column, a duplicate record id, or fewer than two records.

    Examples
    --------
    >>> records = pl.DataFrame({"record_id": [f"r{i}" for i in range(10)], "n_turns": [2] * 8 + [7, 7],
    ...     "has_type2_question": [False] * 10, "rare": [False] * 8 + [True, True]})
    >>> out = stratified_split(records, 0.75, seed=0)
    >>> out.group_by("stratum", "split").len().sort("stratum", "split").rows()
    [('rare', 'test', 1), ('rare', 'train', 1), ('turns=2,type2=false', 'test', 2), ('turns=2,type2=false', 'train', 6)]
    """
    if not isinstance(train_fraction, int | float) or not 0 < train_fraction < 1:
        raise UsageError(
            f"split must be a fraction strictly between 0 and 1 (the share of records in train), "
            f"got {train_fraction!r}; give e.g. 0.8"
        )
    required = ("record_id", "n_turns", "has_type2_question", "rare")
    missing = [c for c in required if c not in records.columns]
    if missing:
        raise UsageError(
            f"stratified_split needs columns {', '.join(required)} (optional rare_group); "
            f"missing {', '.join(missing)}; add them"
        )
    if records.height < 2:
        raise UsageError(f"a split needs at least two records, got {records.height}; export without split")
    if records["record_id"].is_duplicated().any():
        duplicate = records.filter(pl.col("record_id").is_duplicated())["record_id"][0]
        raise UsageError(f"record id '{duplicate}' appears twice in the records to split; give each record once")
    group = pl.col("rare_group") if "rare_group" in records.columns else pl.lit(None, pl.String)
    frame = records.select(
        pl.col("record_id").cast(pl.String),
        pl.col("rare").fill_null(False).cast(pl.Boolean),
        pl.when(pl.col("rare").fill_null(False))
        .then(pl.concat_str(pl.lit("rare:"), group.cast(pl.String)).fill_null(pl.lit("rare")))
        .otherwise(
            pl.format(
                "turns={},type2={}",
                pl.col("n_turns"),
                pl.col("has_type2_question").fill_null(False).cast(pl.String).str.to_lowercase(),
            )
        )
        .alias("stratum"),
    )
    members: dict[str, list[str]] = {}
    rare_strata: set[str] = set()
    for record_id, rare, stratum in frame.iter_rows():
        members.setdefault(stratum, []).append(record_id)
        if rare:
            rare_strata.add(stratum)
    rng = random.Random(seed)
    tie_break = {stratum: rng.random() for stratum in sorted(members)}
    sizes = {s: len(ids) for s, ids in members.items()}
    rare_sizes = {s: n for s, n in sizes.items() if s in rare_strata}
    rest_sizes = {s: n for s, n in sizes.items() if s not in rare_strata}
    n_rare = sum(rare_sizes.values())
    rare_target = math.floor(n_rare * train_fraction + 0.5)
    if n_rare >= 2:
        rare_target = min(max(rare_target, 1), n_rare - 1)
    counts = _allocate(rare_sizes, train_fraction, rare_target, tie_break, both_sides=True)
    total_target = math.floor(records.height * train_fraction + 0.5)
    counts |= _allocate(rest_sizes, train_fraction, total_target - sum(counts.values()), tie_break, both_sides=False)
    split_of: dict[str, str] = {}
    for stratum, ids in members.items():
        shuffled = sorted(ids)
        random.Random(f"{seed}:{stratum}").shuffle(shuffled)
        for position, record_id in enumerate(shuffled):
            split_of[record_id] = "train" if position < counts[stratum] else "test"
    return frame.select(
        pl.col("record_id").cast(KEY_DTYPE),  # a key, as the gold's
        pl.col("record_id").replace_strict(split_of, return_dtype=pl.String).alias("split"),
        "stratum",
    )


def split_records(gold: GoldDataset) -> pl.DataFrame:
    """The records of ``gold`` with what :func:`stratified_split` stratifies on.

    A record is rare when one of its gold programs uses a rare operation
    (:data:`workbench.analysis.features.RARE_OPERATIONS`; its group is the rarest such operation), or
    when its number of turns is held by fewer than 2% of the records or fewer than 5
    (group ``turns=<n>``).
    """
    rare_ops: dict[str, set[str]] = {}
    for record_id, ops in gold_features(gold.turns).select("record_id", "gold_operations").iter_rows():
        rare_ops.setdefault(record_id, set()).update(op for op in ops if op in RARE_OPERATIONS)
    per_record = gold.turns.group_by("record_id", maintain_order=True).agg(
        pl.col("n_turns").first(), pl.col("has_type2_question").first().fill_null(False)
    )
    op_count: dict[str, int] = {}
    for ops in rare_ops.values():
        for op in ops:
            op_count[op] = op_count.get(op, 0) + 1
    turn_count = dict(per_record.group_by("n_turns").len().iter_rows())
    threshold = max(_RARE_SHARE * per_record.height, _RARE_MIN_RECORDS)
    groups: list[str | None] = []
    for record_id, n_turns in per_record.select("record_id", "n_turns").iter_rows():
        ops = rare_ops.get(record_id)
        if ops:
            groups.append(min(ops, key=lambda op: (op_count[op], op)))
        elif turn_count[n_turns] < threshold:
            groups.append(f"turns={n_turns}")
        else:
            groups.append(None)
    return per_record.select(
        "record_id",
        "n_turns",
        "has_type2_question",
        pl.Series("rare", [g is not None for g in groups], dtype=pl.Boolean),
        pl.Series("rare_group", groups, dtype=pl.String),
    )


def split_summary(split_table: pl.DataFrame, gold: GoldDataset) -> dict[str, Any]:
    """Records, turns and strata on each side of ``split_table`` (``record_id``, ``split``,
    ``stratum``), the turns counted in ``gold``: the manifest's ``split``."""
    turns = gold.turns.group_by("record_id").agg(pl.len().alias("n_turns"))
    sides = (
        split_table.join(turns, on="record_id", how="left")
        .group_by("split")
        .agg(pl.len().alias("n_records"), pl.col("n_turns").sum(), pl.col("stratum").n_unique().alias("n_strata"))
        .sort("split")
    )
    return {
        side: {"n_records": n_records, "n_turns": n_turns, "n_strata": n_strata}
        for side, n_records, n_turns, n_strata in sides.iter_rows()
    }
