"""Which distinct grading inputs wait on the grader's worker processes (SymPy, Math-Verify), known
before they are graded: whether to start a worker ahead (:func:`workbench.grading.limits.start_worker`)
and how many rows :func:`workbench.parallel.map_chunks` may share among threads (its ``waiting``)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from workbench.grading.compare import AnswerKind
from workbench.grading.policies import GradingPolicy
from workbench.grading.turn import needs_worker

__all__ = ["LOOK_AHEAD", "needing_worker", "one_call_each"]


def one_call_each(policies: Sequence[GradingPolicy]) -> list[GradingPolicy]:
    """The policies whose worker calls are made one input at a time (SymPy's comparisons of
    answers): those that make rows wait on a worker each, worth a thread each. Math-Verify's are
    batched (:func:`~workbench.grading.turn.prefetch_turns`: a few calls a chunk), and few program
    pairs reach SymPy, so one worker serves those (``programs=False`` in :func:`needing_worker`)."""
    return [p for p in policies if p.matcher != "math_verify"]


#: Answered inputs whose outputs are looked at for maths markup before a run's grading starts (a
#: run that writes LaTeX shows it at once); the others' first SymPy call starts the worker.
LOOK_AHEAD = 1_000


def needing_worker(
    rows: pl.DataFrame,
    policies: Sequence[GradingPolicy],
    kind: AnswerKind,
    *,
    outputs: bool = False,
    programs: bool = True,
) -> int:
    """How many of ``rows`` (distinct inputs) are known, before they are graded under ``policies``,
    to call SymPy's worker (:func:`~workbench.grading.turn.needs_worker`): by their gold and, with
    ``programs``, their pair of programs (once per distinct one), and with ``outputs`` by their
    output too (row by row)."""
    if rows.is_empty():
        return 0
    # a column that is null throughout reads as absent (GSM8K has no programs): fewer keys to group by
    columns = ("gold_executed", "_has_prediction", *(("predicted_program", "gold_program") if programs else ()))
    by = [c for c in columns if c in rows.columns and rows.get_column(c).null_count() < rows.height]
    if outputs:
        texts = [c for c in ("predicted_answer", "raw_output") if c in rows.columns]
        found = rows.select(
            *by, pl.coalesce(texts).alias("_output") if texts else pl.lit(None, pl.String).alias("_output")
        )
        found = found.with_columns(pl.lit(1, pl.UInt32).alias("_n"))
    elif by:
        found = rows.group_by(by).agg(pl.len().alias("_n"))
    else:
        found = pl.DataFrame({"_n": [rows.height]})
    return sum(
        row["_n"]
        for row in found.iter_rows(named=True)
        if needs_worker(
            policies,
            kind=kind,
            gold=None if row.get("gold_executed") is None else str(row["gold_executed"]),
            has_prediction=bool(row.get("_has_prediction", True)),
            predicted_program=row.get("predicted_program"),
            gold_program=row.get("gold_program"),
            output=row.get("_output"),
        )
    )
