"""What cleaning the gold does to the scores: apply the annotations in force to the gold
set, grade the same predictions again, and compare each system before and after.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from workbench.annotations.backends import open_store
from workbench.annotations.url import parse_location
from workbench.cleaning.plan import apply_annotations
from workbench.errors import UsageError
from workbench.schema import ACTIVE_ANNOTATIONS

if TYPE_CHECKING:
    from workbench.pipeline.run import Run

__all__ = ["read_active_annotations", "read_annotation_store", "cleaning_effect"]


def read_active_annotations(path: str | Path) -> pl.DataFrame:
    """The annotations in force in an annotation store; an empty table for an empty path.

    Raises
    ------
    UsageError
        When a path is given and there is no store there.

    Examples
    --------
    >>> read_active_annotations("").height
    0
    """
    return read_annotation_store(path)[0]


def read_annotation_store(path: str | Path) -> tuple[pl.DataFrame, dict[str, Any] | None]:
    """The annotations in force in an annotation store and what the store held
    (``path``, ``n_events``, ``max_event_id``, ``sha256``: for an export's manifest), read
    through one opening of the store; an empty table and ``None`` for an empty path.

    Raises
    ------
    UsageError
        When a path is given and there is no store there (a ``postgresql://`` URL is read
        from the server; the manifest's ``path`` is the URL without its password).

    Examples
    --------
    >>> active, snapshot = read_annotation_store("")
    >>> active.height, snapshot
    (0, None)
    """
    if not str(path).strip():
        return pl.DataFrame(schema=ACTIVE_ANNOTATIONS), None

    location = parse_location(path)  # a postgresql:// URL is a server, never a folder name
    if location.path is not None and not location.path.exists():
        raise UsageError(
            f"no annotation store at {location.display}. Fix: give the SQLite file (or postgresql:// URL) the "
            "triage notebook or `workbench annotations import` wrote, or leave the parameter empty"
        )
    with open_store(location, create=False) as store:
        return store.active(), {"path": location.display, **store.snapshot()}


def _scores(turns: pl.DataFrame, suffix: str) -> pl.DataFrame:
    last = pl.col("turn") == pl.col("n_turns") - 1
    return turns.group_by("system", maintain_order=True).agg(
        pl.len().alias(f"n_turns_{suffix}"),
        pl.col("correct").sum().alias(f"n_correct_{suffix}"),
        pl.col("correct").mean().alias(f"turn_accuracy_{suffix}"),
        pl.col("correct").filter(last).mean().alias(f"conversation_accuracy_{suffix}"),
    )


def cleaning_effect(run: Run, annotations: pl.DataFrame) -> pl.DataFrame:
    """Each system's scores against the gold as given and against the cleaned gold.

    Columns: ``system``, turns, correct turns, turn and conversation execution accuracy
    before and after, the change in points, ``n_changed`` (turns in both whose verdict
    changed) and ``n_removed`` (turns of excluded conversations).
    """

    before = run.turns
    after = run.regrade(apply_annotations(run.gold, annotations)).turns if annotations.height else before
    keys = ["system", "record_id", "turn"]
    changed = (
        before.select(*keys, "correct")
        .join(after.select(*keys, "correct"), on=keys, how="inner", suffix="_after")
        .group_by("system")
        .agg((pl.col("correct") != pl.col("correct_after")).sum().alias("n_changed"))
    )
    removed = before.join(after.select(keys), on=keys, how="anti").group_by("system").len("n_removed")
    return (
        _scores(before, "before")
        .join(_scores(after, "after"), on="system", how="left")
        .join(changed, on="system", how="left")
        .join(removed, on="system", how="left")
        .with_columns(
            ((pl.col("turn_accuracy_after") - pl.col("turn_accuracy_before")) * 100).alias("turn_change_points"),
            pl.col("n_changed", "n_removed").fill_null(0),
        )
    )
