"""A ledger of nightly runs built from the bundled runs (ConvFinQA dev, the two claude-sonnet-4-6
runs), with seeded changes: each night re-draws a few verdicts (noise), and a drop can be planted
on one slice group of one system in one night."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from workbench.cli import main
from workbench.pipeline.ledger import LedgerRow, append, rows_from_graded
from workbench.schema import KEY_DTYPE

REPO = Path(__file__).resolve().parents[3]
BUNDLED = sorted((REPO / "data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6").glob("*/predictions.jsonl"))
#: The share of items whose verdict a night draws again (from the system's accuracy).
NOISE = 0.03
_ITEM = ["record_id", "turn"]


@pytest.fixture(scope="session")
def bundled_rows(tmp_path_factory: pytest.TempPathFactory) -> list[LedgerRow]:
    out = tmp_path_factory.mktemp("bundled")
    assert main(["grade", str(REPO / "data/convfinqa/dev.json"), *map(str, BUNDLED), "--out", str(out)]) == 0
    return rows_from_graded(out, source="grade")


def noisy(verdicts: pl.DataFrame, seed: int, rate: float = NOISE) -> pl.DataFrame:
    """``verdicts`` with a share ``rate`` of its items re-drawn right or wrong at the items'
    accuracy (the same change in every slice of an item): two nights differ only by chance."""
    rng = np.random.default_rng(seed)
    items = verdicts.filter(pl.col("slice") == "overall").select(*_ITEM, "correct").sort(_ITEM)
    accuracy = items["correct"].mean()
    redraw = rng.random(items.height) < rate
    drawn = rng.random(items.height) < accuracy
    items = items.with_columns(
        pl.Series("_new", np.where(redraw, drawn, items["correct"].to_numpy()), dtype=pl.Boolean)
    ).select(*_ITEM, "_new")
    return verdicts.join(items, on=_ITEM, how="left").with_columns(pl.col("_new").alias("correct")).drop("_new")


def plant_drop(verdicts: pl.DataFrame, slice_name: str, group: str, points: float) -> pl.DataFrame:
    """``verdicts`` with ``points`` percentage points of the group's items turned wrong, chosen
    among its right items so that every other group loses as little as possible (each pick
    keeps the largest share any other group has lost smallest)."""
    inside = verdicts.filter((pl.col("slice") == slice_name) & (pl.col("group") == group))
    wanted = round(points / 100 * inside.height)
    candidates = inside.filter(pl.col("correct")).select(_ITEM).sort(_ITEM).rows()
    sizes = dict(verdicts.group_by("slice", "group").len().select(pl.concat_str("slice", "group"), "len").rows())
    memberships = {
        (r, t): [f"{s}{g}" for s, g in zip(ss, gs, strict=True) if s not in (slice_name, "overall")]
        for r, t, ss, gs in verdicts.group_by(_ITEM).agg("slice", "group").rows()
    }
    lost: dict[str, int] = {}
    chosen: list[tuple[str, int]] = []
    for _ in range(wanted):
        best = min(
            (c for c in candidates if c not in chosen),
            key=lambda c: max((lost.get(k, 0) + 1) / sizes[k] for k in memberships[c]),
        )
        chosen.append(best)
        for k in memberships[best]:
            lost[k] = lost.get(k, 0) + 1
    turned = pl.DataFrame(chosen, schema={"record_id": KEY_DTYPE, "turn": pl.Int64}, orient="row")
    turned = turned.with_columns(pl.lit(True).alias("_turned"))
    return (
        verdicts.join(turned, on=_ITEM, how="left")
        .with_columns(pl.when(pl.col("_turned")).then(False).otherwise(pl.col("correct")).alias("correct"))
        .drop("_turned")
    )


def night(row: LedgerRow, verdicts: pl.DataFrame, index: int) -> LedgerRow:
    """``row`` as night ``index`` (its own run id and time)."""
    slices = verdicts.group_by("slice", "group", maintain_order=True).agg(
        pl.len().alias("n"), pl.col("correct").mean().alias("accuracy")
    )
    return dataclasses.replace(
        row,
        run_id=f"night-{index:02d}",
        created_at=f"2026-11-{index:02d}T02:00:00+00:00",
        verdicts=verdicts,
        slices=slices.to_dicts(),
        headline={
            **row.headline,
            "turn_execution_accuracy": float(verdicts.filter(pl.col("slice") == "overall")["correct"].mean()),
        },
    )


def nightly(rows: list[LedgerRow], nights: int, drop_night: int = 0, seed: int = 0) -> Iterator[list[LedgerRow]]:
    """The rows of each night in turn; from ``drop_night`` on (a checkpoint that broke it) the
    first system loses 6 points on ``divide``: the same items, chosen once on the bundled run,
    turned wrong after each night's noise."""
    broken = plant_drop(rows[0].verdicts, "operation", "divide", 6.0) if drop_night else None
    for index in range(1, nights + 1):
        tonight = []
        for position, row in enumerate(rows):
            verdicts = noisy(row.verdicts, seed=seed * 1000 + index * 10 + position)
            if broken is not None and index >= drop_night and position == 0:
                turned = row.verdicts.filter(pl.col("correct") & ~broken["correct"]).select(_ITEM).unique()
                verdicts = verdicts.join(turned.with_columns(pl.lit(True).alias("_t")), on=_ITEM, how="left")
                verdicts = verdicts.with_columns(
                    pl.when(pl.col("_t")).then(False).otherwise(pl.col("correct")).alias("correct")
                ).drop("_t")
            tonight.append(night(row, verdicts, index))
        yield tonight


def build_ledger(path: Path, rows: list[LedgerRow], nights: int, drop_night: int = 0) -> Path:
    for tonight in nightly(rows, nights, drop_night):
        append(path, tonight)
    return path
