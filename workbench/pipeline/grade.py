"""Grade prediction tables against a gold dataset into the graded ``turns`` table.

Every gold turn gets one row per system (a turn the system did not answer is graded
``no_prediction``); predictions that match no gold turn are kept in ``unmatched`` and
counted, never dropped.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any

import polars as pl

from workbench.analysis.features import gold_features
from workbench.analysis.taxonomy import error_types
from workbench.grading.compare import AnswerKind
from workbench.grading.equivalence import ProgramMatch, final_operation
from workbench.grading.limits import start_worker
from workbench.grading.policies import DEFAULT_GRADING_POLICY, POLICIES, GradingPolicy, for_benchmark, get_policy
from workbench.grading.program import ProgramResult, TableRows
from workbench.grading.status import GradeStatus, MatchReason
from workbench.grading.turn import grade_program, grade_turn, prefetch_turns
from workbench.io.gold import GoldDataset
from workbench.parallel import distinct, first_rows, in_pool, map_chunks, same_tables
from workbench.pipeline import fastpath
from workbench.pipeline.policy_inputs import (
    canonical,
    disagreeing_inputs,
    empty_inputs,
    empty_keys,
    inputs_from_parts,
    policy_view,
)
from workbench.pipeline.reuse import GradeReuse
from workbench.pipeline.unmatched import unmatched_message, unmatched_reason, unmatched_rows
from workbench.pipeline.workload import LOOK_AHEAD, needing_worker, one_call_each
from workbench.quality.checks import run_checks, top_category
from workbench.schema import (
    CHECKS,
    GRADED_TURNS,
    KEY_COLUMNS,
    KEY_DTYPE,
    POLICY_GRADES,
    PREDICTIONS,
    as_text,
    keys_as_keys,
)

__all__ = [
    "GradedRun",
    "grade_predictions",
    "graders_disagree",
    "unmatched_reason",
    "unmatched_rows",
    "unmatched_message",
]


@dataclass(frozen=True)
class GradedRun:
    """The result of grading one or more systems on one dataset.

    Attributes
    ----------
    turns
        One row per ``(system, record_id, turn)`` of the gold set; see
        :data:`workbench.schema.GRADED_TURNS`.
    unmatched
        Prediction rows that match no gold turn, with a ``why`` column.
    systems
        System names in the order they were given.
    policy
        The main grading policy (its verdicts fill ``turns``).
    policy_inputs
        The same outputs graded under every policy, once per distinct grading input: an
        ``input_key`` and a struct column per policy (:mod:`workbench.pipeline.policy_inputs`).
    input_keys
        For each row of ``turns``, the ``input_key`` of its grading input.
    checks
        Data-quality flags on the gold turns; see :data:`workbench.schema.CHECKS`.
    fast_path_rows
        How many distinct grading inputs the fast path (:mod:`workbench.pipeline.fastpath`)
        decided; ``None`` when it did not run.
    """

    turns: pl.DataFrame
    unmatched: pl.DataFrame
    systems: tuple[str, ...]
    policy: GradingPolicy
    policy_inputs: pl.DataFrame = field(default_factory=empty_inputs)
    input_keys: pl.Series = field(default_factory=empty_keys)
    checks: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=CHECKS))
    fast_path_rows: int | None = None

    @cached_property
    def policy_grades(self) -> pl.DataFrame:
        """One row per turn and policy, in the turns' order (:data:`workbench.schema.POLICY_GRADES`),
        built from ``policy_inputs`` on first use and kept."""
        return policy_view(self.turns, self.input_keys, self.policy_inputs)


#: Prediction columns that carry gold (they served to build or link the gold set).
_CARRIED_GOLD = ("question", "gold_answer", "gold_solution", "level")
#: Gold columns shown, not graded: joined to the turns once they are graded.
_SHOWN = ("gold_solution",)


#: A policy grade's own columns (not the turn's keys), as the cascade's rows are built: enums as text.
_GRADES_AS_TEXT = {c: as_text(t) for c, t in POLICY_GRADES.items() if c not in ("system", "record_id", "turn")}


def _compact(frame: pl.DataFrame) -> pl.DataFrame:
    """Policy grades built as text (by the cascade) in the dtypes the fast path gives them
    (:data:`workbench.pipeline.fastpath.OUTPUTS`): enums, and categories for the rest, the answers
    and details too (a row per input and policy; ``policy_inputs`` holds them as text)."""
    return frame.with_columns([pl.col(c).cast(t) for c, t in fastpath.OUTPUTS.items() if c in frame.columns])


#: What one turn's grade depends on (besides the table, the answer kind and the policies).
_GRADE_INPUTS = (
    "_has_prediction",
    "predicted_answer",
    "predicted_program",
    "gold_executed",
    "gold_program",
    "gold_answer",
    "raw_output",
    "upstream_answer",
    "question",
    "predicted_unit",
)
_NO_PREDICTION = "the system gave no prediction for this turn"


def _program_columns(program: ProgramResult | None, match: ProgramMatch | None) -> dict[str, Any]:
    """A turn's ``program_*`` columns from its program's execution and comparison."""
    return {
        "program_status": program.status.value if program else None,
        "program_correct": match.equivalent if match is not None and match.status == "ok" else None,
        "program_detail": (match.detail if match else "") or None,
        "program_credit": match.partial_credit if match else None,
    }


def _grade_programs(items: list[tuple[dict[str, Any], TableRows | None]]) -> list[dict[str, Any]]:
    """The ``program_*`` columns of each item (a turn's columns and its table): they depend on
    the programs and the table alone (:func:`~workbench.grading.turn.grade_program`)."""
    return [
        _program_columns(*grade_program(row.get("predicted_program"), row.get("gold_program"), table))
        for row, table in items
    ]


def _grade_chunk(
    items: list[tuple[dict[str, Any], TableRows | None]],
    policy: GradingPolicy,
    also: Sequence[GradingPolicy],
    kind: AnswerKind,
) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Grade distinct inputs: per item, the turn's columns and one row per policy."""
    names = [policy.name, *[p.name for p in also if p.name != policy.name]]
    prefetch_turns([row for row, _ in items if row["_has_prediction"]], [policy, *also])  # batched worker calls
    out = []
    for row, table in items:
        if not row["_has_prediction"]:
            turn: dict[str, Any] = {
                "answer_source": "none",
                "answer": None,
                "extraction_rule": None,
                "correct": False,
                "status": GradeStatus.NO_PREDICTION.value,
                "reason": MatchReason.NO_PREDICTION.value,
                "detail": _NO_PREDICTION,
                "pred_value": None,
                "program_status": None,
                "program_correct": None,
                "program_detail": None,
                "program_credit": None,
            }
            fields = ("correct", "status", "reason", "answer", "answer_source", "extraction_rule", "detail")
            out.append((turn, [{"policy": name, **{f: turn[f] for f in fields}} for name in names]))
            continue
        grade = grade_turn(
            predicted_answer=row["predicted_answer"],
            predicted_program=row["predicted_program"],
            gold_executed=row["gold_executed"],
            gold_program=row["gold_program"],
            gold_answer=row.get("gold_answer"),
            table=table,
            raw_output=row.get("raw_output"),
            upstream_answer=row.get("upstream_answer"),
            question=row.get("question"),
            unit=row.get("predicted_unit"),
            kind=kind,
            policy=policy,
            also=also,
        )
        verdict = grade.verdict
        turn = {
            "answer_source": grade.answer_source,
            "answer": grade.answer,
            "extraction_rule": grade.extraction.rule.value if grade.extraction else None,
            "correct": verdict.correct,
            "status": verdict.status.value,
            "reason": verdict.reason.value,
            "detail": verdict.detail,
            "pred_value": verdict.pred_value,
            **_program_columns(grade.program, grade.program_match),
        }
        by_policy = [
            {
                "policy": each.policy,
                "correct": each.verdict.correct,
                "status": each.verdict.status.value,
                "reason": each.verdict.reason.value,
                "answer": each.answer,
                "answer_source": each.answer_source,
                "extraction_rule": each.extraction.rule.value if each.extraction else None,
                "detail": each.verdict.detail,
            }
            for each in grade.policies
        ]
        out.append((turn, by_policy))
    return out


#: A distinct input as :func:`_grade_chunk` takes it (its values by column, its table), and what it
#: gives for one (the turn's columns and a row per policy).
_Item = tuple[dict[str, Any], TableRows | None]
_Graded = tuple[dict[str, Any], list[dict[str, Any]]]


@dataclass(frozen=True)
class _Job:
    """Distinct inputs for the cascade to grade under ``policy`` and ``also`` (:func:`_grade_chunk`),
    and how many of them wait on the grader's workers (``waiting`` of :func:`map_chunks`)."""

    items: list[_Item]
    policy: GradingPolicy
    also: tuple[GradingPolicy, ...]
    waiting: int


def _grade_tagged(chunk: list[tuple[int, Any]], jobs: tuple[tuple[GradingPolicy, tuple[GradingPolicy, ...]], ...],
                  kind: AnswerKind) -> list[Any]:  # fmt: skip
    """:func:`_grade_chunk` over items of several jobs, each item ``(job, item)`` graded under its
    job's ``(policy, also)``; one result per item, in order."""
    out: list[Any] = [None] * len(chunk)
    for n, (policy, also) in enumerate(jobs):
        at = [i for i, (job, _) in enumerate(chunk) if job == n]
        graded = _grade_chunk([chunk[i][1] for i in at], policy, also, kind) if at else []
        for i, result in zip(at, graded, strict=True):
            out[i] = result
    return out


def _graded_jobs(
    jobs: Sequence[_Job], kind: AnswerKind, workers: int | None, reuse: GradeReuse | None
) -> list[list[_Graded]]:
    """:func:`_grade_chunk` over each job's items, those graded before under the same policies taken
    from ``reuse`` (a batch's: :mod:`workbench.pipeline.reuse`). Many together (:func:`in_pool`),
    the jobs' inputs go to one process pool in one :func:`map_chunks` call: no job waits for another
    to end, nor for a worker of this process; else each job goes alone (in threads by its own
    ``waiting``). Where an input is graded never changes its grade."""

    def grade(pending: list[list[_Item]]) -> list[list[_Graded]]:
        if not in_pool(sum(map(len, pending)), workers):
            return [
                map_chunks(partial(_grade_chunk, policy=job.policy, also=job.also, kind=kind), items,
                           workers=workers, waiting=job.waiting) if items else []
                for job, items in zip(jobs, pending, strict=True)
            ]  # fmt: skip
        tagged = [(n, item) for n, items in enumerate(pending) for item in items]
        specs = tuple((job.policy, job.also) for job in jobs)
        out: list[list[_Graded]] = [[] for _ in jobs]
        for (n, _), result in zip(tagged, map_chunks(partial(_grade_tagged, jobs=specs, kind=kind), tagged,
                                                     workers=workers), strict=True):  # fmt: skip
            out[n].append(result)
        return out

    if reuse is None:
        return grade([job.items for job in jobs])
    return reuse.grade_jobs([(job.items, (job.policy, job.also, kind)) for job in jobs], grade)


#: Called once per distinct grading input (a hook for tests that count them).
_on_distinct: Callable[[int], None] | None = None


#: What a turn's program columns (``program_*``) depend on.
_PROGRAM_INPUTS = ("predicted_program", "gold_program", "_table")

#: The turn columns a grade fills (see :func:`_grade_chunk`).
_TURN = {
    "answer_source": pl.String(),
    "answer": pl.String(),
    "extraction_rule": pl.String(),
    "correct": pl.Boolean(),
    "status": pl.String(),
    "reason": pl.String(),
    "detail": pl.String(),
    "pred_value": pl.Float64(),
    "program_status": pl.String(),
    "program_correct": pl.Boolean(),
    "program_detail": pl.String(),
    "program_credit": pl.Float64(),
}
#: The turn columns of a program's grade (:func:`_program_columns`).
_PROGRAM_TURN = {c: t for c, t in _TURN.items() if c.startswith("program_")}


#: Grades (distinct inputs x modelled policies) per call of :func:`workbench.pipeline.fastpath.decide`:
#: its intermediate frames grow with them, and each call has a fixed cost of some hundred polars
#: queries. On 870,000 GSM8K outputs under six policies (four calls at a time): 300,000 took 4.9 s
#: and 2.56 GB at the peak, 600,000 4.5 s and 2.55 GB, 1,200,000 4.2 s and 2.80 GB.
DECIDE_GRADES = 600_000


def _decide(frame: pl.DataFrame, policies: Sequence[GradingPolicy], kind: AnswerKind) -> tuple[pl.Series, pl.DataFrame]:
    """:func:`workbench.pipeline.fastpath.decide` on ``frame`` in slices of at most
    :data:`DECIDE_GRADES` grades (each row is decided on its own), with the same result as one call."""
    step = max(1, DECIDE_GRADES // max(1, sum(fastpath.models(p) for p in policies)))
    if frame.height <= step:
        return fastpath.decide(frame, policies, kind)
    rows, grades = [], []
    starts = range(0, frame.height, step)
    # polars lets go of the GIL while it computes: a slice per core (two per core were 4.5 -> 4.1 s
    # for 870,000 GSM8K outputs on two cores, but 1.90 GB at the peak instead of 1.57 GB)
    with ThreadPoolExecutor(max_workers=min(len(starts), os.cpu_count() or 1)) as pool:

        def one(start: int) -> tuple[pl.Series, pl.DataFrame]:
            decided, graded = fastpath.decide(frame.slice(start, step), policies, kind)
            graded = graded.with_columns((pl.col("_row").cast(pl.Int64) + start).cast(pl.UInt32))
            return (decided.cast(pl.Int64) + start).cast(pl.UInt32), graded

        for decided, graded in pool.map(one, starts):
            rows.append(decided)
            grades.append(graded)
    return pl.concat(rows), pl.concat(grades)


@dataclass(frozen=True)
class _Cascade:
    """The inputs the fast path decided, left to the cascade under the policies it does not model
    (``job``): ``done``, their keys in the job's order; ``where``, the policies' places in the order."""

    job: _Job
    done: pl.Series
    where: tuple[int, ...]


def _fast_grades(
    unique: pl.DataFrame,
    tables: dict[str, TableRows],
    policy: GradingPolicy,
    also: Sequence[GradingPolicy],
    kind: AnswerKind,
    workers: int | None,
) -> tuple[pl.Series, pl.DataFrame, pl.DataFrame, _Cascade | None]:
    """The distinct inputs the fast path decides (:func:`workbench.pipeline.fastpath.decide`):
    their indices, their turn columns (``_key`` first) and their policy rows (``_key``, ``_p``
    first), and what is left to the cascade under the policies it does not model, graded later
    beside the inputs it does not decide (:func:`_with_cascade` puts those grades in)."""
    ordered = [policy, *[p for p in also if p.name != policy.name]]
    empty = pl.Series("_key", [], dtype=pl.UInt32)
    if not fastpath.models(policy):
        return empty, pl.DataFrame(), pl.DataFrame(), None
    rows, grades = _decide(unique.filter(pl.col("_has_prediction")), ordered, kind)
    if rows.is_empty():
        return empty, pl.DataFrame(), pl.DataFrame(), None
    predicted = unique.with_row_index("_key").filter(pl.col("_has_prediction"))["_key"]
    keys = predicted[rows]
    grades = grades.with_columns(predicted[grades["_row"]].alias("_key"))
    turns = grades.filter(pl.col("_p") == 0).select(
        "_key",
        *[pl.col(c).cast(t) if c in grades.columns else pl.lit(None, t).alias(c) for c, t in _TURN.items()],
    )
    per_policy = grades.select("_key", "_p", *[c for c in POLICY_GRADES if c in grades.columns])
    # the cascade grades what the fast path does not model: policies (math-verify) and programs
    where = [i for i, p in enumerate(ordered) if not fastpath.models(p)]
    rest = [ordered[i] for i in where]
    if rest:
        # graded in order of their gold: the outputs of one problem (one per system) share a chunk,
        # hence a worker, which parses that gold once (math-verify: ``mathverify._parse_gold``)
        done = _by_gold(unique, keys)
        waiting = needing_worker(unique[done], one_call_each(rest), kind, programs=False)
        job = _Job(_items(unique[done], tables), rest[0], tuple(rest[1:]), waiting)
        return keys, turns, per_policy, _Cascade(job, done, tuple(where))
    has_program = (
        unique.get_column("predicted_program").gather(keys).str.contains(r"\S").fill_null(False)
        if "predicted_program" in unique.columns
        else pl.repeat(False, len(keys), eager=True)
    )
    if has_program.any():  # only the program columns: they depend on the programs and the table alone
        done = keys.filter(has_program)
        by = [c for c in _PROGRAM_INPUTS if c in unique.columns]
        _, back = distinct(unique.select(by)[done], by)
        items = _items(unique[done[first_rows(back)]], tables)
        # few program pairs reach SymPy (13 of the bundled ConvFinQA runs'): not shared among threads
        from_cascade = pl.DataFrame(map_chunks(_grade_programs, items, workers=workers), schema=_PROGRAM_TURN)[back]
        turns = turns.update(from_cascade.with_columns(done.alias("_key")), on="_key", include_nulls=True)
    return keys, turns, per_policy, None


def _with_cascade(
    turns: pl.DataFrame, per_policy: pl.DataFrame, cascade: _Cascade, graded: list[_Graded]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The fast path's turn columns and policy rows (:func:`_fast_grades`) with the cascade's grades
    of ``cascade``'s inputs put in: their program columns, and their rows under its policies."""
    from_cascade = pl.DataFrame([turn for turn, _ in graded], schema=_TURN).select(list(_PROGRAM_TURN))
    turns = turns.update(from_cascade.with_columns(cascade.done.alias("_key")), on="_key", include_nulls=True)
    extra = pl.DataFrame(
        [{"_key": key, "_p": cascade.where[p], **row} for key, (_, rows_) in zip(cascade.done, graded, strict=True)
         for p, row in enumerate(rows_)],
        schema={"_key": pl.UInt32(), "_p": pl.Int64(), **_GRADES_AS_TEXT},
    )  # fmt: skip
    return turns, pl.concat([per_policy, _compact(extra).select(per_policy.columns)]).sort("_key", "_p")


def _by_gold(unique: pl.DataFrame, keys: pl.Series) -> pl.Series:
    """``keys`` (of distinct inputs) ordered by their gold (``gold_executed``), in their order
    within a gold; each input's grade is its own, whatever the order it is graded in."""
    if "gold_executed" not in unique.columns:
        return keys
    gold = unique.get_column("gold_executed").gather(keys)
    return pl.DataFrame({"_key": keys, "_gold": gold}).sort("_gold", maintain_order=True).get_column("_key")


def _items(rows: pl.DataFrame, tables: dict[str, TableRows]) -> list[tuple[dict[str, Any], TableRows | None]]:
    """Each row of distinct inputs with its table, as :func:`_grade_chunk` takes them."""
    return [(row, tables[row["_table"]] if row["_table"] is not None else None) for row in rows.iter_rows(named=True)]


def _grade_rows(
    joined: pl.DataFrame,
    tables: dict[str, TableRows],
    policy: GradingPolicy,
    also: Sequence[GradingPolicy],
    kind: AnswerKind,
    workers: int | None,
    fast_path: bool = True,
    one_row_per_turn: bool = False,
    reuse: GradeReuse | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.Series, int | None]:
    """Grade every row of ``joined`` once per distinct input; the turns (``joined`` with the
    grade's columns), the policy grades of the distinct inputs (``policy_inputs``), each row's
    input key and how many distinct inputs the fast path decided (``None`` without it). With
    ``fast_path``, the inputs :mod:`workbench.pipeline.fastpath` decides are graded in polars.
    With ``one_row_per_turn`` (``joined`` has no turn of a system twice), the turns get
    ``graders_disagree`` from their inputs."""
    canonical = same_tables(tables)
    inputs = [c for c in _GRADE_INPUTS if c in joined.columns]
    keyed = joined.with_columns(
        pl.col("doc_id").replace_strict(canonical, default=None, return_dtype=pl.String).alias("_table")
        if canonical and "doc_id" in joined.columns
        else pl.lit(None, dtype=pl.String).alias("_table")
    )
    unique, index = distinct(keyed, [*inputs, "_table"])
    if _on_distinct is not None:
        _on_distinct(unique.height)
    graded_by = [policy, *also]
    answered = unique.filter(pl.col("_has_prediction")).head(LOOK_AHEAD)
    # every input goes to the cascade (with a policy the fast path does not model, it grades those
    # the fast path decides too), hence to a pool of processes when they are many: no worker here
    everything = not fast_path or not all(fastpath.models(p) for p in graded_by)
    pooled = everything and in_pool(unique.height, workers) and (reuse is None or reuse.kept == 0)
    if not pooled and (
        needing_worker(unique, graded_by, kind) or needing_worker(answered, graded_by, kind, outputs=True)
    ):
        start_worker()  # SymPy's worker imports while the fast path grades
    fast_keys, fast_turns, fast_policies, cascade = (
        _fast_grades(unique, tables, policy, also, kind, workers)
        if fast_path
        else (pl.Series("_key", [], dtype=pl.UInt32), pl.DataFrame(), pl.DataFrame(), None)
    )
    slow = unique.with_row_index("_key").filter(~pl.col("_key").is_in(fast_keys.implode()))
    slow_keys = slow["_key"].to_list()
    items = _items(slow.drop("_key"), tables)
    n_inputs = unique.height
    waiting = needing_worker(slow, one_call_each([policy, *also]), kind, outputs=True, programs=False)
    del keyed, unique, slow  # the distinct inputs' text (0.5 GB for a million outputs) is read
    # graded together: the inputs the fast path does not decide first (SymPy's, the slowest)
    jobs = [_Job(items, policy, tuple(also), waiting), *([cascade.job] if cascade is not None else [])]
    graded, *by_cascade = _graded_jobs(jobs, kind, workers, reuse)
    del items, jobs
    if cascade is not None:
        fast_turns, fast_policies = _with_cascade(fast_turns, fast_policies, cascade, by_cascade[0])
        del cascade, by_cascade
    results = pl.DataFrame([turn for turn, _ in graded], schema=_TURN).with_columns(
        pl.Series("_key", slow_keys, dtype=pl.UInt32)
    )
    per_key = pl.DataFrame(
        [
            {"_key": key, "_p": p, **row}
            for key, (_, rows) in zip(slow_keys, graded, strict=True)
            for p, row in enumerate(rows)
        ],
        schema={"_key": pl.UInt32(), "_p": pl.Int64(), **_GRADES_AS_TEXT},
    ).pipe(_compact)
    per_key_parts = [per_key]
    if not fast_keys.is_empty():
        results = pl.concat([results, fast_turns.select(results.columns)])
        per_key_parts.append(fast_policies.select(per_key.columns))
    del graded, fast_turns, fast_policies
    # the row of each key (the keys are 0 .. n_inputs - 1, each once): gathered once, with the turns'
    # index, not sorted first (a copy of every text column); taken out in place (a drop of a table of
    # two chunks, the cascade's and the fast path's, copies it into one)
    row_of_key = results.drop_in_place("_key").arg_sort()
    disagree = None
    if one_row_per_turn:  # whether the policies disagree is a property of the graded input
        disagree = disagreeing_inputs(per_key_parts, n_inputs)
    del per_key  # held by per_key_parts, which inputs_from_parts empties
    # the rows of every input and policy (seven million for a million inputs) let go of before the
    # turns are built beside them
    grades = inputs_from_parts(per_key_parts, n_inputs)
    turns = joined.drop(results.columns, strict=False).hstack(results[row_of_key.gather(index)])
    del results, row_of_key
    if disagree is not None:
        turns = turns.with_columns(disagree[index])
    return turns, grades, index.cast(pl.UInt32).rename("input_key"), fast_keys.len() if fast_path else None


def grade_predictions(
    gold: GoldDataset,
    predictions: pl.DataFrame | pl.LazyFrame | Sequence[pl.DataFrame | pl.LazyFrame],
    *,
    policy: GradingPolicy | str = DEFAULT_GRADING_POLICY,
    also: Sequence[GradingPolicy | str] | None = None,
    kind: AnswerKind = "auto",
    benchmark: str | None = None,
    checks: bool = True,
    workers: int | None = None,
    fast_path: bool | None = None,
    reuse: GradeReuse | None = None,
) -> GradedRun:
    """Grade canonical prediction tables against ``gold``.

    Parameters
    ----------
    gold
        From :func:`workbench.io.gold.load_gold`.
    predictions
        One canonical table, or several (one per file); see :data:`workbench.schema.PREDICTIONS`.
        A ``LazyFrame`` (``pl.scan_parquet``) is read here: its rows that match no gold turn in
        full, the rest without the gold they carry (``question``, ``gold_answer``, ...), which
        the gold set holds; a caller that keeps no other reference holds no copy of them.
    policy
        The main grading policy (a :class:`~workbench.grading.policies.GradingPolicy` or its name).
    also
        More policies to grade under, side by side; all of
        :data:`~workbench.grading.policies.POLICIES` by default.
    kind
        How answers compare (``auto``, ``number``, ``latex``, ``text``); see
        :func:`~workbench.grading.compare.answers_match`.
    benchmark
        Adapts the policies to the benchmark (:func:`~workbench.grading.policies.for_benchmark`);
        by default the gold set's own.
    checks
        Run the data-quality detectors (:func:`workbench.quality.checks.run_checks`); their
        flags fill ``GradedRun.checks`` and the turns' ``dq_category``.
    workers
        Processes that grade the distinct inputs when there are many
        (:func:`workbench.parallel.map_chunks`): ``None`` for all cores, ``1`` in this process.
        Each distinct input is graded once, whatever the number of turns that share it.
    fast_path
        Grade the plain-number inputs in polars (:mod:`workbench.pipeline.fastpath`), with the
        same grades; ``None`` follows :data:`workbench.pipeline.fastpath.ENABLED`.
    reuse
        The grades of inputs graded before, kept across the runs of a batch of reports
        (:class:`~workbench.pipeline.reuse.GradeReuse`, keyed by their content): each of them is
        taken from there rather than graded again, and each input graded here is kept there.
    """
    benchmark = benchmark or gold.benchmark
    policy = for_benchmark(get_policy(policy), benchmark)
    extra = [for_benchmark(get_policy(p), benchmark) for p in (POLICIES.values() if also is None else also)]
    frames = [predictions] if isinstance(predictions, pl.DataFrame | pl.LazyFrame) else list(predictions)
    # the keys as categories (a file read as it is, or a frame built by hand, may hold them as text)
    as_keys = [pl.col(k).cast(KEY_DTYPE) for k in KEY_COLUMNS]
    lazy = (
        pl.concat([f.lazy().select(list(PREDICTIONS)).with_columns(as_keys) for f in frames])
        if frames
        else pl.LazyFrame(schema=PREDICTIONS)
    )
    del frames, predictions  # a scan is read below: its rows that match no gold turn, then the columns grading reads
    unmatched = unmatched_rows(gold, lazy)
    # gold carried inside the outputs was turned into the gold set already; the gold set's copy wins
    preds = lazy.drop(*_CARRIED_GOLD).collect()
    del lazy
    systems = tuple(preds.get_column("system").unique(maintain_order=True).to_list())
    gold_turns = keys_as_keys(gold.turns)
    last_turn = (pl.col("turn") == pl.col("n_turns") - 1).alias("is_last_turn")
    keys = ["record_id", "turn"]

    parts = []
    for system in systems:
        sys_preds = preds.filter(pl.col("system") == system).drop("system")
        # one chunk: rows gathered from a text column of several chunks (a file read in row groups,
        # several files) copy their text, from one they share it (rechunking copies the views only)
        sys_preds = sys_preds.rechunk()
        joined = (
            gold_turns.drop(_SHOWN)
            .join(sys_preds.with_columns(pl.lit(True).alias("_has_prediction")), on=keys, how="left")
            .with_columns(
                pl.lit(system, dtype=KEY_DTYPE).alias("system"),
                pl.col("_has_prediction").fill_null(False),
                last_turn,
            )
        )
        parts.append(joined)
    del preds  # its rows are in parts (and unmatched)
    if not parts:
        return GradedRun(pl.DataFrame(schema=GRADED_TURNS), unmatched, systems, policy)
    joined = pl.concat(parts).rechunk()
    del parts  # rechunked: the views were copied
    needs_table = joined.filter(
        pl.col("predicted_program").str.contains("table_", literal=True)
        | pl.col("gold_program").str.contains("table_", literal=True)
    )
    tables = gold.tables(set(needs_table["doc_id"].drop_nulls().to_list()))
    fast = fastpath.ENABLED if fast_path is None else fast_path
    # a left join of unique gold turns gives each system a row per turn, more only for a prediction given twice
    once = joined.height == gold_turns.height * len(systems) and not gold_turns.select(keys).is_duplicated().any()
    turns, inputs, input_keys, fast_rows = _grade_rows(joined, tables, policy, extra, kind, workers, fast, once, reuse)
    del joined  # only the graded copy is needed from here
    programs = turns.select(pl.col("gold_program").drop_nulls().unique())["gold_program"].to_list()
    final = {program: final_operation(program) for program in programs}  # once per distinct program
    turns = turns.with_columns(pl.col("gold_program").replace_strict(final, return_dtype=pl.String).alias("operation"))
    turns = _join_left(turns, gold_features(gold_turns, tables), keys)
    if "graders_disagree" not in turns.columns:  # several rows of one turn: by turn, not by input
        view = policy_view(turns.select("system", *keys), input_keys, inputs)
        turns = _join_left(turns, graders_disagree(view), ["system", *keys])
        del view
    turns = turns.with_columns(error_types(turns, tables))
    checks_table = run_checks(gold, turns) if checks else pl.DataFrame(schema=CHECKS)
    turns = _join_left(turns, top_category(checks_table), keys)
    turns = _join_left(turns, gold_turns.select(*keys, *_SHOWN), keys)
    turns = turns.select([pl.col(c).cast(t) for c, t in GRADED_TURNS.items()])
    order = turns.select(pl.arg_sort_by("system", "record_id", "turn", maintain_order=True).alias("_order"))["_order"]
    if not order.equals(pl.int_range(turns.height, dtype=pl.UInt64, eager=True), check_dtypes=False):
        # sorted column by column, each let go once copied (a sort copies the whole table at once)
        columns = []
        for name in list(turns.columns):
            columns.append(turns.drop_in_place(name).rechunk().gather(order))
        turns = pl.DataFrame(columns)
        input_keys = input_keys.gather(order)
    held = [inputs]
    del inputs  # let go of column by column
    inputs, input_keys = canonical(held, input_keys)  # the same, whatever the engine (see engines.py)
    return GradedRun(
        turns,
        unmatched,
        systems,
        policy,
        policy_inputs=inputs,
        input_keys=input_keys,
        checks=checks_table,
        fast_path_rows=fast_rows,
    )


def _join_left(frame: pl.DataFrame, right: pl.DataFrame, on: list[str]) -> pl.DataFrame:
    """``frame.join(right, on=on, how="left", maintain_order="left")``: when ``right`` has one
    row per key and no other column of ``frame``'s, its columns are joined onto the keys alone
    and put beside ``frame``'s (which are not copied: a graded million turns is ~1 GB)."""
    clash = set(right.columns) & set(frame.columns) - set(on)
    if clash or right.select(on).is_duplicated().any():
        return frame.join(right, on=on, how="left", maintain_order="left")
    extra = frame.select(on).join(right, on=on, how="left", maintain_order="left").drop(on)
    return frame.hstack(extra)


def graders_disagree(policy_grades: pl.DataFrame) -> pl.DataFrame:
    """``system, record_id, turn, graders_disagree``: whether the named policies disagree.

    Examples
    --------
    >>> g = pl.DataFrame({"system": ["s"] * 4, "record_id": ["r"] * 4, "turn": [0, 0, 1, 1],
    ...                   "correct": [True, False, True, True]})
    >>> graders_disagree(g).sort("turn")["graders_disagree"].to_list()
    [True, False]
    """
    return policy_grades.group_by("system", "record_id", "turn").agg(
        (pl.col("correct").n_unique() > 1).alias("graders_disagree")
    )
