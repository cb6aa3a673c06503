"""The prediction rows that match no gold turn: found, explained (``why``) and told in one line per file.

Grading keeps them (``GradedRun.unmatched``, ``unmatched.parquet``) and counts them; it never drops them.
"""

from __future__ import annotations

import polars as pl

from workbench.io.gold import GoldDataset

__all__ = ["unmatched_rows", "unmatched_reason", "unmatched_message"]


def unmatched_rows(gold: GoldDataset, preds: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """The prediction rows that match no gold turn, in their given order, with a ``why``."""
    keys = ["record_id", "turn"]
    record_turns = gold.turns.lazy().group_by("record_id").agg(pl.col("n_turns").first())
    gold_keys = gold.turns.lazy().select(keys)
    if preds.lazy().select(keys).join(gold_keys, on=keys, how="anti").select(pl.len()).collect().item() == 0:
        # the usual case, decided on the keys alone (a scan reads two columns, not the outputs)
        preds = preds.lazy().clear()
    return (
        preds.lazy()
        .join(gold_keys, on=keys, how="anti", maintain_order="left")
        .join(record_turns, on="record_id", how="left", maintain_order="left")
        .with_columns(unmatched_reason(gold).alias("why"))
        .collect()
    )


def unmatched_reason(gold: GoldDataset) -> pl.Expr:
    """Explain why a prediction row matches no gold turn (a ``pl.Expr`` over predictions
    joined with the record's ``n_turns``)."""
    return (
        pl.when(pl.col("n_turns").is_null())
        .then(pl.lit(f"record_id not in {gold.path.name}"))
        .otherwise(pl.format("turn {} is out of range for a {}-turn conversation", pl.col("turn"), pl.col("n_turns")))
    )


def unmatched_message(unmatched: pl.DataFrame, listed_in: object = None) -> list[str]:
    """One line per prediction file whose rows match no gold turn: how many, the first
    one (location, record, turn, why), and what to do.

    Examples
    --------
    >>> rows = pl.DataFrame({"source_file": ["p.jsonl"], "source_location": ["line 3"],
    ...     "record_id": ["X"], "turn": [0], "why": ["record_id not in dev.json"]})
    >>> unmatched_message(rows)[0][:58]
    'p.jsonl: 1 prediction row matches no gold turn; first at l'

    """
    lines = []
    for (source,), part in unmatched.group_by("source_file", maintain_order=True):
        first = part.row(0, named=True)
        n = part.height
        where = f" and are listed in {listed_in}" if listed_in else ""
        lines.append(
            f"{source}: {n} prediction row{'s' if n != 1 else ''} match{'es' if n == 1 else ''} no gold turn; "
            f"first at {first['source_location']}, record '{first['record_id']}' turn {first['turn']}: "
            f"{first['why']}. They are counted as n_unmatched{where}. Fix: check that the "
            "predictions belong to this dataset and that turns count from 0 (or say turn=COL:1 in --map)"
        )
    return lines
