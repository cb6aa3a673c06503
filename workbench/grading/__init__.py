"""Pure, typed grading: answer extraction, answer matching, program execution and
program equivalence. Every function here returns a frozen result with a status and a
reason; none raises for odd model output.

The stable public API:

* :func:`extract_answer` - find the final answer in a raw output (``strict`` or ``flex``);
* :func:`answers_match` - compare a predicted answer with the gold (numbers, LaTeX, text);
* :func:`execute_program` - run a FinQA/ConvFinQA program and trace its steps;
* :func:`programs_equivalent` - symbolic equivalence of two programs;
* :data:`POLICIES` - the named grading policies computed side by side.

Examples
--------
>>> from workbench.grading import extract_answer, answers_match
>>> answers_match(extract_answer("so she makes $18 a day.\\n#### 18").answer, "18").correct
True
"""

from __future__ import annotations

from workbench.grading.compare import DEFAULT_POLICY, MatchPolicy, Verdict, answers_match
from workbench.grading.equivalence import ProgramMatch, compare_programs, programs_equivalent, step_credit
from workbench.grading.extract import Extraction, extract_answer, last_boxed
from workbench.grading.policies import DEFAULT_GRADING_POLICY, POLICIES, GradingPolicy, PolicyGrade
from workbench.grading.program import ProgramResult, execute_program, parse_program
from workbench.grading.status import ExtractionRule, ExtractionStatus, GradeStatus, MatchReason, ProgramStatus
from workbench.grading.turn import TurnGrade, grade_turn

__all__ = [
    "extract_answer",
    "Extraction",
    "last_boxed",
    "answers_match",
    "Verdict",
    "MatchPolicy",
    "DEFAULT_POLICY",
    "execute_program",
    "parse_program",
    "ProgramResult",
    "programs_equivalent",
    "compare_programs",
    "step_credit",
    "ProgramMatch",
    "GradingPolicy",
    "PolicyGrade",
    "POLICIES",
    "DEFAULT_GRADING_POLICY",
    "grade_turn",
    "TurnGrade",
    "GradeStatus",
    "MatchReason",
    "ProgramStatus",
    "ExtractionStatus",
    "ExtractionRule",
]
