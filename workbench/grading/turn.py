"""Grade one turn: the answer, and the program when there is one."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.grading.compare import DEFAULT_POLICY, MatchPolicy, Verdict, answers_match
from workbench.grading.equivalence import compare_programs
from workbench.grading.normalize import is_no_answer
from workbench.grading.program import ProgramResult, TableRows, execute_program
from workbench.grading.status import GradeStatus, MatchReason

__all__ = ["TurnGrade", "grade_turn"]


@dataclass(frozen=True, slots=True)
class TurnGrade:
    """The grade of one turn.

    Attributes
    ----------
    verdict
        The answer's :class:`~workbench.grading.compare.Verdict`.
    answer_source
        ``answer`` when the predicted answer was graded, ``program`` when the answer was
        obtained by executing the predicted program, ``none`` when there was neither.
    program
        The predicted program's execution, when there is a predicted program.
    program_correct
        Whether the predicted program is equivalent to the gold program (``None`` when
        either is missing).
    program_detail
        Why the programs are or are not equivalent.
    """

    verdict: Verdict
    answer_source: str
    program: ProgramResult | None
    program_correct: bool | None
    program_detail: str


def grade_turn(
    *,
    predicted_answer: str | None,
    predicted_program: str | None,
    gold_executed: str | None,
    gold_program: str | None,
    table: TableRows | None = None,
    policy: MatchPolicy = DEFAULT_POLICY,
) -> TurnGrade:
    """Grade a turn's answer (or the value of its program) and its program.

    Examples
    --------
    >>> g = grade_turn(predicted_answer=None, predicted_program="divide(25587, 181001)",
    ...                gold_executed="0.14136", gold_program="subtract(206588, 181001), divide(#0, 181001)")
    >>> g.answer_source, g.verdict.correct, g.program_correct
    ('program', True, False)
    """
    has_program = predicted_program is not None and predicted_program.strip() != ""
    program = execute_program(predicted_program, table=table) if has_program else None
    if predicted_answer is not None and not (is_no_answer(predicted_answer) and program and program.ok):
        verdict = answers_match(predicted_answer, gold_executed, policy=policy)
        source = "answer"
    elif program is not None and program.ok:
        verdict = answers_match(program.answer, gold_executed, policy=policy)
        source = "program"
    elif program is not None:
        verdict = Verdict(
            False,
            GradeStatus.UNPARSEABLE,
            MatchReason.UNPARSEABLE,
            None,
            None,
            f"no answer, and the program fails: {program.message}",
        )
        source = "program"
    else:
        verdict = answers_match(None, gold_executed, policy=policy)
        source = "none"
    program_correct: bool | None = None
    detail = ""
    if has_program and gold_program:
        match = compare_programs(predicted_program, gold_program)  # type: ignore[arg-type]
        program_correct, detail = match.equivalent, match.detail
    return TurnGrade(verdict, source, program, program_correct, detail)
