"""What the triage shows about one queued turn: its key, its programs' traces, the item itself.

:mod:`workbench.annotations.session` builds these from a graded run; the triage view renders them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from workbench.grading.compare import answer_text
from workbench.grading.program import ProgramSyntaxError, execute_program, literal_numbers, parse_program, trace_lines

__all__ = ["QueueItem", "QueueTally", "TraceView", "TriageItem"]


@dataclass(frozen=True)
class QueueItem:
    """The key of one queued turn; ``system`` None means the gold turn itself."""

    record_id: str
    turn: int
    system: str | None


@dataclass(frozen=True)
class QueueTally:
    """Where a session's queue stands: each item is counted once, as the first of done, held,
    skipped and waiting that holds.

    Attributes
    ----------
    total
        Items in the queue.
    done
        Items done (an annotation in force; an item shown to two analysts, decided by two; in the
        adjudication queue, no dispute left), of which ``mine`` this session's analyst decided.
    held
        Items not done that another analyst has on screen now (leased).
    skipped
        Items not done that this analyst still has to decide (skipped, or given back).
    waiting
        Items not done whose decision this analyst has given: they wait for another analyst.
    """

    total: int
    done: int
    mine: int
    held: int
    skipped: int
    waiting: int


@dataclass(frozen=True)
class TraceView:
    """A program and its execution, for display.

    Attributes
    ----------
    program
        The program text (None when there is none).
    status
        :class:`~workbench.grading.status.ProgramStatus` value (``ok``, ``parse_error``...).
    value
        The executed answer (``ProgramResult.answer``), None when execution failed.
    steps
        One line per executed operation (:func:`~workbench.grading.program.trace_lines`:
        ``#0 subtract(60.94, 25.14) = 35.8``; an operation nested in step ``#0`` is ``#0.1``...).
    message
        Why execution failed (empty when it did not).
    """

    program: str | None
    status: str
    value: str | None
    steps: tuple[str, ...]
    message: str


@dataclass(frozen=True)
class TriageItem:
    """Everything the triage view shows about one queued turn.

    The predicted fields (``predicted_answer`` ... ``error_type``, ``predicted_trace``)
    come from the key's system; for a key without a system (a flagged gold turn) they come
    from the run's only system, or are None when the run has several.
    """

    key: QueueItem
    question: str
    gold_answer: str | None
    gold_executed: str | None
    predicted_answer: str | None
    answer_graded: str | None
    correct: bool | None
    reason: str | None
    detail: str | None
    error_type: str | None
    conversation: tuple[tuple[int, str, str | None, str | None], ...]
    gold_trace: TraceView
    predicted_trace: TraceView | None
    flags: tuple[tuple[str, str, float, str], ...]
    pre_text: str
    post_text: str
    table_columns: tuple[str, ...]
    table_rows: tuple[tuple[str, ...], ...]
    numbers_used: frozenset[float]
    annotation: dict[str, Any] | None

    @property
    def model_error_allowed(self) -> bool:
        """Whether "Model error" fits: a system's answer to this turn was graded wrong."""
        return self.correct is False


def _trace(program: str | None, table: Any) -> TraceView:
    result = execute_program(program or "", table=table)
    return TraceView(
        program=program or None,
        status=result.status.value,
        value=result.answer,
        steps=trace_lines(result.steps),
        message=result.message,
    )


def _literals(*programs: str | None) -> frozenset[float]:
    found: set[float] = set()
    for program in programs:
        if not program:
            continue
        try:
            found.update(num.value for num in literal_numbers(parse_program(program)))
        except ProgramSyntaxError:
            continue
    return frozenset(found)


def _cell(value: Any) -> str:
    return "" if value is None else answer_text(value)


def _table(table_json: str | None) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    grid = json.loads(table_json) if table_json else {}
    columns = tuple(str(c) for c in grid.get("columns", []))
    rows = tuple(tuple(_cell(c) for c in row) for row in grid.get("rows", []))
    return columns, rows


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
