"""The regression gate: ``workbench check FOLDER --points POINTS``.

It reads the run ledger of a reports folder (:mod:`workbench.pipeline.ledger`) and compares each
system of the newest run with that system's previous run in the ledger (same benchmark; the same
name, else the same name without its run-folder timestamp, as the reports' changes match them),
on the items both runs answered:

* the headline (``overall``) and every slice group with at least
  :data:`~workbench.analysis.stats.MIN_GROUP_N` paired items are tested;
* each is a paired McNemar test (:func:`workbench.analysis.stats.paired_comparison`), the
  p-values of one system adjusted together by Holm's method
  (:func:`workbench.analysis.comparison.holm`);
* a regression is a group whose accuracy dropped by more than ``POINTS`` percentage points with a
  Holm-adjusted p below :data:`ALPHA`;
* slices overlap (most ``divide`` questions have a percent answer), so one drop shows in several
  groups. The regressions are taken strongest first (smallest p, then largest drop); a group
  that is no longer a regression once the items that changed in a stronger regression are left
  out (a drop of no more than ``POINTS``, or an unadjusted McNemar p >= :data:`ALPHA`) is the
  same regression, named on its line (``also in ...``), not a line of its own.

``workbench check`` prints one line per regression (system, slice, group, before -> now, p) and
exits with :data:`REGRESSION_EXIT` (3) when there is one, 0 when there is none (2 stays a usage or
input error, as for every command).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from workbench.analysis import formats
from workbench.analysis.changes import stable_identity
from workbench.analysis.comparison import holm
from workbench.analysis.slices import OVERALL, slice_title
from workbench.analysis.stats import MIN_GROUP_N, mcnemar_exact, paired_comparison
from workbench.errors import UsageError
from workbench.pipeline.ledger import LEDGER_NAME, LedgerRow, read_ledger

__all__ = [
    "ALPHA",
    "REGRESSION_EXIT",
    "Regression",
    "GateResult",
    "compare_rows",
    "paired_items",
    "fold",
    "check_ledger",
    "previous_row",
    "group_words",
]

#: The Holm-adjusted p-value below which a drop counts.
ALPHA = 0.05
#: The exit code of ``workbench check`` when a regression is found.
REGRESSION_EXIT = 3
_BEFORE, _NOW = "before", "now"


@dataclass(frozen=True)
class Regression:
    """One group of one system whose accuracy dropped: by more than the points asked, with a
    Holm-adjusted McNemar p below :data:`ALPHA`."""

    system: str
    slice: str
    group: str
    n: int
    before: float
    now: float
    p_holm: float
    also: tuple[str, ...] = ()

    def line(self) -> str:
        """``system: slice group: before -> now (points), p = ... (n = ...)``, and the groups
        the same items moved (``also in ...``)."""
        also = f"; also in {', '.join(self.also)}" if self.also else ""
        return (
            f"{self.system}: {group_words(self.slice, self.group)}: {self.before:.1%} -> {self.now:.1%} "
            f"({formats.points(self.now - self.before)}), p = {self.p_holm:.2g} (McNemar, Holm; n = {self.n}){also}"
        )


def group_words(slice_name: str, group: str) -> str:
    """How a line names a group: ``headline``, ``operation divide``."""
    return "headline" if slice_name == OVERALL else f"{slice_title(slice_name).lower()} {group}"


@dataclass(frozen=True)
class GateResult:
    """What the gate found: the regressions, and a note for each system it could not compare."""

    regressions: tuple[Regression, ...]
    notes: tuple[str, ...]

    @property
    def exit_code(self) -> int:
        return REGRESSION_EXIT if self.regressions else 0


def _answered(row: LedgerRow, name: str) -> pl.DataFrame:
    return row.verdicts.filter(pl.col("answered")).select(
        pl.lit(name).alias("system"), "record_id", "turn", "slice", "group", "correct"
    )


def compare_rows(before: LedgerRow, now: LedgerRow) -> pl.DataFrame:
    """The paired test of every tested group of one system between two runs: ``slice, group,
    n_turns, accuracy_before, accuracy_now, mcnemar_p, p_holm`` (the headline and the groups
    with at least :data:`MIN_GROUP_N` items both runs answered; Holm over these)."""
    long = pl.concat([_answered(before, _BEFORE), _answered(now, _NOW)])
    if long.filter(pl.col("system") == _BEFORE).is_empty() or long.filter(pl.col("system") == _NOW).is_empty():
        return pl.DataFrame()
    # the interval is not used here: one replicate keeps the gate fast
    table = paired_comparison(long, _BEFORE, _NOW, n_boot=1)
    table = table.filter((pl.col("slice") == OVERALL) | (pl.col("n_turns") >= MIN_GROUP_N)).filter(
        pl.col("n_turns") > 0
    )
    return table.select(
        "slice",
        "group",
        "n_turns",
        pl.col("accuracy_a").alias("accuracy_before"),
        pl.col("accuracy_b").alias("accuracy_now"),
        "mcnemar_p",
    ).with_columns(p_holm=pl.Series(holm(table["mcnemar_p"].to_list()), dtype=pl.Float64))


def paired_items(before: LedgerRow, now: LedgerRow) -> pl.DataFrame:
    """The items both runs answered, per slice group: ``record_id, turn, slice, group, before, now``."""
    keys = ["record_id", "turn", "slice", "group"]
    return (
        before.verdicts.filter(pl.col("answered"))
        .select(*keys, pl.col("correct").alias(_BEFORE))
        .join(now.verdicts.filter(pl.col("answered")).select(*keys, pl.col("correct").alias(_NOW)), on=keys)
    )


def fold(items: pl.DataFrame, dropped: pl.DataFrame, points: float) -> list[tuple[dict[str, object], list[str]]]:
    """The changed groups of one system (``dropped``: rows of :func:`compare_rows`), strongest
    first, each with the groups it explains: a group whose change, once the items that changed
    in a stronger one are left out, is no more than ``points`` or no longer significant (McNemar
    p >= :data:`ALPHA` before any adjustment; see the module's note)."""
    kept: list[tuple[dict[str, object], list[str], pl.DataFrame]] = []
    changed_of = pl.col(_BEFORE) != pl.col(_NOW)
    drop = pl.col("accuracy_before") - pl.col("accuracy_now")
    for row in dropped.sort([pl.col("p_holm"), drop], descending=[False, True]).iter_rows(named=True):
        group = items.filter((pl.col("slice") == row["slice"]) & (pl.col("group") == row["group"]))
        owner = None
        for index, (_, _, moved) in enumerate(kept):
            rest = group.join(moved, on=["record_id", "turn"], how="anti")
            lost = rest.filter(pl.col(_BEFORE) & ~pl.col(_NOW)).height
            gained = rest.filter(~pl.col(_BEFORE) & pl.col(_NOW)).height
            change = abs(lost - gained) / rest.height if rest.height else 0.0
            if change * 100 <= points or mcnemar_exact(lost, gained) >= ALPHA:
                owner = index
                break
        if owner is None:
            kept.append((row, [], group.filter(changed_of).select("record_id", "turn").unique()))
        else:
            kept[owner][1].append(group_words(row["slice"], row["group"]))
    return [(row, also) for row, also, _ in kept]


def previous_row(rows: Sequence[LedgerRow], now: LedgerRow) -> LedgerRow | None:
    """The newest of ``rows`` (oldest first) from another run of the same template that is
    ``now``'s system on the same benchmark: the same name, else the same name without its
    run-folder timestamp."""
    earlier = [
        r for r in rows if r.run_id != now.run_id and r.benchmark == now.benchmark and r.template == now.template
    ]
    same = [r for r in earlier if r.system == now.system] or [
        r for r in earlier if stable_identity(r.system) == stable_identity(now.system)
    ]
    return same[-1] if same else None


def _ledger_file(folder: str | Path) -> Path:
    path = Path(folder)
    return path / LEDGER_NAME if path.is_dir() else path


def check_ledger(folder: str | Path, points: float, *, systems: Sequence[str] = ()) -> GateResult:
    """Run the gate on the newest run of each template in the ledger in ``folder`` (a reports
    folder or the ledger file itself) against each system's previous run of that template;
    ``systems`` limits it to those.

    Raises
    ------
    UsageError
        When ``points`` is negative.
    InputError
        When there is no ledger (:func:`workbench.pipeline.ledger.read_ledger`).
    """
    if not points >= 0:
        raise UsageError(f"--points must be a number of percentage points >= 0, got {points!r}. Fix: e.g. --points 2")
    rows = read_ledger(_ledger_file(folder), with_verdicts=True)
    if not rows:
        return GateResult((), ("the ledger holds no run yet",))
    # the newest run of each template (a batch writes several reports into one folder)
    newest = {row.template: row.run_id for row in rows}
    found: list[Regression] = []
    notes: list[str] = []
    for position, now in enumerate(rows):
        if now.run_id != newest[now.template] or (systems and now.system not in systems):
            continue
        earlier = previous_row(rows[:position], now)
        if earlier is None:
            notes.append(f"{now.system}: no previous run in the ledger to compare with")
            continue
        table = compare_rows(earlier, now)
        if table.is_empty():
            notes.append(f"{now.system}: no item answered in both runs")
            continue
        dropped = table.filter(
            ((pl.col("accuracy_before") - pl.col("accuracy_now")) * 100 > points) & (pl.col("p_holm") < ALPHA)
        )
        for row, also in fold(paired_items(earlier, now), dropped, points):
            found.append(
                Regression(
                    system=now.system,
                    slice=str(row["slice"]),
                    group=str(row["group"]),
                    n=int(row["n_turns"]),  # type: ignore[call-overload]
                    before=float(row["accuracy_before"]),  # type: ignore[arg-type]
                    now=float(row["accuracy_now"]),  # type: ignore[arg-type]
                    p_holm=float(row["p_holm"]),  # type: ignore[arg-type]
                    also=tuple(also),
                )
            )
    return GateResult(tuple(found), tuple(notes))
