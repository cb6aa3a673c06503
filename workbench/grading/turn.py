"""Grade one turn: the answer under one or more policies, and the program when there is one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.grading import patterns
from workbench.grading.choice import choice_gold
from workbench.grading.compare import AnswerKind, MatchPolicy, Verdict
from workbench.grading.equivalence import ProgramMatch, compare_programs
from workbench.grading.extract import MAX_OUTPUT_CHARS, Expectation, Extraction, after_failed_span
from workbench.grading.mathverify import math_verify_prefetch
from workbench.grading.normalize import is_no_answer
from workbench.grading.policies import (
    DEFAULT_GRADING_POLICY,
    GradingPolicy,
    PolicyGrade,
    grade_answer,
    select_answer,
)
from workbench.grading.program import ProgramResult, TableRows, execute_program
from workbench.grading.status import ExtractionStatus, GradeStatus, MatchReason

__all__ = ["TurnGrade", "grade_program", "grade_turn", "prefetch_turns", "needs_worker", "expectation"]


@dataclass(frozen=True, slots=True)
class TurnGrade:
    """The grade of one turn.

    Attributes
    ----------
    verdict
        The answer's :class:`~workbench.grading.compare.Verdict` under the main policy.
    answer_source
        Where the compared answer came from: ``answer``, ``program`` (the predicted
        program's value), ``upstream``, ``strict``/``flex`` (extraction), or ``none``.
    answer
        The answer text compared.
    extraction
        The extraction (span and rule) when the answer was extracted from the raw output.
    program
        The predicted program's execution, when there is a predicted program.
    program_match
        The comparison of the predicted and gold programs (``None`` when either is missing).
    policies
        The turn graded under every policy asked for, main policy included.
    """

    verdict: Verdict
    answer_source: str
    answer: str | None
    extraction: Extraction | None
    program: ProgramResult | None
    program_match: ProgramMatch | None
    policies: tuple[PolicyGrade, ...] = ()

    @property
    def program_correct(self) -> bool | None:
        """Whether the programs are equivalent; ``None`` when either is missing or the
        comparison could not finish (see ``program_match.status``)."""
        if self.program_match is None or self.program_match.status != "ok":
            return None
        return self.program_match.equivalent

    @property
    def program_detail(self) -> str:
        return self.program_match.detail if self.program_match else ""


def _grade_under(
    policy: GradingPolicy,
    *,
    predicted_answer: str | None,
    program: ProgramResult | None,
    upstream_answer: str | None,
    raw_output: str | None,
    gold: str | None,
    gold_display: str | None,
    question: str | None,
    unit: str | None,
    kind: AnswerKind,
    verdicts: dict[tuple[str, MatchPolicy, str | None, str | None], Verdict],
    extractions: dict[tuple[str | None, str], Extraction],
) -> PolicyGrade:
    program_answer = program.answer if program is not None and program.ok else None
    answer, source, extraction = select_answer(
        policy,
        predicted_answer=predicted_answer,
        program_answer=program_answer,
        upstream_answer=upstream_answer,
        raw_output=raw_output,
        extractions=extractions,
        expect=expectation(policy, gold, kind),
    )
    if source == "none" and program is not None and not program.ok:
        verdict = Verdict(
            False,
            GradeStatus.UNPARSEABLE,
            MatchReason.UNPARSEABLE,
            None,
            None,
            f"no answer, and the program fails: {program.message}",
        )
        return PolicyGrade(policy.name, verdict, None, "program", None)
    if extraction is not None and extraction.status is ExtractionStatus.TOO_LONG:
        verdict = Verdict(
            False,
            GradeStatus.UNPARSEABLE,
            MatchReason.UNPARSEABLE,
            None,
            None,
            f"the output is longer than {MAX_OUTPUT_CHARS:,} characters (extract.MAX_OUTPUT_CHARS); "
            "no answer is extracted from it",
        )
        return PolicyGrade(policy.name, verdict, None, source, extraction)
    if policy.matcher == "exact_string" and gold_display is not None:
        gold = gold_display  # the baseline compares with the answer as the dataset writes it
    # policies that compare the same answer the same way share one verdict: a SymPy comparison
    # that times out costs the time limit once per turn, not once per policy
    key = (policy.matcher, policy.numbers, answer, gold)
    shared = verdicts.get(key)
    if shared is None:
        shared = verdicts[key] = grade_answer(policy, answer, gold, question=question, unit=unit, kind=kind)
    if (
        shared.status is GradeStatus.UNPARSEABLE
        and extraction is not None
        and extraction.policy == "flex"
        and policy.matcher == "cascade"
        and policy.numbers.symbolic  # SymPy read the LaTeX and it failed (not merely unread)
    ):
        # a failed LaTeX span must not hide a good one: the next answer flexible extraction finds
        text = raw_output if raw_output and raw_output.strip() else predicted_answer
        retry = after_failed_span(text, extraction) if text and answer and "\\" in answer else None
        if retry is not None:
            again = grade_answer(policy, retry.answer, gold, question=question, unit=unit, kind=kind)
            if again.status is not GradeStatus.UNPARSEABLE:
                return PolicyGrade(policy.name, again, retry.answer, source, retry)
    return PolicyGrade(policy.name, shared, answer, source, extraction)


def expectation(policy: GradingPolicy, gold: str | None, kind: AnswerKind = "auto") -> Expectation:
    """What a gold asks extraction for under ``policy``: ``span`` under the reading-comprehension
    rules (``MatchPolicy.span_f1``), ``choice`` for a choice letter (``C``, ``\\text{(C)}``), else ``any``.

    Examples
    --------
    >>> from workbench.grading.policies import POLICIES, for_benchmark
    >>> expectation(POLICIES["flex"], "C"), expectation(POLICIES["flex"], "18")
    ('choice', 'any')
    >>> expectation(for_benchmark(POLICIES["flex"], "drop"), "Tolbert")
    'span'
    """
    if policy.numbers.span_f1 is not None:
        return "span"
    if kind != "number" and choice_gold(gold, latex=kind == "latex" or policy.numbers.latex_gold) is not None:
        return "choice"
    return "any"


def grade_turn(
    *,
    predicted_answer: str | None,
    predicted_program: str | None,
    gold_executed: str | None,
    gold_program: str | None,
    gold_answer: str | None = None,
    table: TableRows | None = None,
    raw_output: str | None = None,
    upstream_answer: str | None = None,
    question: str | None = None,
    unit: str | None = None,
    kind: AnswerKind = "auto",
    policy: GradingPolicy = DEFAULT_GRADING_POLICY,
    also: Sequence[GradingPolicy] = (),
) -> TurnGrade:
    """Grade a turn's answer (or the value of its program, or the answer extracted from
    its raw output) and its program.

    Parameters
    ----------
    predicted_answer, predicted_program, raw_output, upstream_answer
        What the system gave: its answer field, its program, its unfiltered output, and
        the answer its own harness extracted.
    gold_executed, gold_program
        The gold answer text and program.
    gold_answer
        The gold answer as the dataset displays it (``"1,875"``, ``"14.1%"``), which the
        ``exact-string`` baseline compares with; ``gold_executed`` when not given.
    table
        The document's table rows, for ``table_*`` operations.
    question, unit
        The question and the unit the output declares, which decide percent readings.
    kind
        Passed to :func:`~workbench.grading.compare.answers_match`.
    policy
        The main policy; ``also`` lists more policies to grade under (see ``policies``).

    Examples
    --------
    >>> g = grade_turn(predicted_answer=None, predicted_program="divide(25587, 181001)",
    ...                gold_executed="0.14136", gold_program="subtract(206588, 181001), divide(#0, 181001)")
    >>> g.answer_source, g.verdict.correct, g.program_correct, g.program_match.partial_credit
    ('program', True, False, 0.0)
    >>> g = grade_turn(predicted_answer=None, predicted_program=None, raw_output="9 * 2 = 18. #### 18",
    ...                gold_executed="18", gold_program=None)
    >>> g.answer, g.answer_source, g.extraction.rule.value
    ('18', 'flex', 'hashes')
    """
    program, program_match = grade_program(predicted_program, gold_program, table)
    grades = []
    verdicts: dict[tuple[str, MatchPolicy, str | None, str | None], Verdict] = {}
    extractions: dict[tuple[str | None, str], Extraction] = {}  # a long output is read once per turn
    for each in (policy, *[p for p in also if p.name != policy.name]):
        grades.append(
            _grade_under(
                each,
                predicted_answer=predicted_answer,
                program=program,
                upstream_answer=upstream_answer,
                raw_output=raw_output,
                gold=gold_executed,
                gold_display=gold_answer,
                question=question,
                unit=unit,
                kind=kind,
                verdicts=verdicts,
                extractions=extractions,
            )
        )
    main = grades[0]
    return TurnGrade(
        main.verdict, main.answer_source, main.answer, main.extraction, program, program_match, tuple(grades)
    )


def grade_program(
    predicted_program: str | None, gold_program: str | None, table: TableRows | None = None
) -> tuple[ProgramResult | None, ProgramMatch | None]:
    """What :func:`grade_turn` finds of a turn's program, which depends on nothing else: its
    execution (``None`` without a program) and its comparison with the gold program (``None``
    without either).

    Examples
    --------
    >>> program, match = grade_program("divide(25587, 181001)", "subtract(206588, 181001), divide(#0, 181001)")
    >>> program.status.value, match.equivalent, match.partial_credit
    ('ok', False, 0.0)
    """
    if predicted_program is None or predicted_program.strip() == "":
        return None, None
    program = execute_program(predicted_program, table=table)
    return program, compare_programs(predicted_program, gold_program) if gold_program else None


def needs_worker(
    policies: Sequence[GradingPolicy],
    *,
    kind: AnswerKind,
    gold: str | None,
    has_prediction: bool = True,
    predicted_program: str | None = None,
    gold_program: str | None = None,
    output: str | None = None,
) -> bool:
    """Whether grading a turn is known, before it is graded, to call (or be likely to call) a
    worker process (:mod:`workbench.grading.limits`): a prediction graded by a ``math_verify``
    policy; one compared with SymPy by a symbolic policy because the answers are LaTeX
    (``kind='latex'``, a LaTeX gold set: ``latex_gold``, a gold ``gold`` with maths markup, or,
    when it is given, an ``output`` with maths markup: the predicted answer, else the raw output);
    or a predicted program that differs from the gold program (their comparison may end in SymPy).

    Whatever is not foreseen (an output not looked at) starts a worker at its first call.

    Examples
    --------
    >>> from workbench.grading.policies import POLICIES
    >>> needs_worker([POLICIES["cascade"], POLICIES["symbolic"]], kind="auto", gold="12.5")
    False
    >>> needs_worker([POLICIES["symbolic"]], kind="auto", gold="\\frac{1}{2}")
    True
    >>> needs_worker([POLICIES["math-verify"]], kind="auto", gold="12.5")
    True
    >>> needs_worker([POLICIES["math-verify"]], kind="auto", gold="12.5", has_prediction=False)
    False
    >>> needs_worker([], kind="auto", gold="7", predicted_program="add(3, 4)", gold_program="add(4, 3)")
    True
    >>> needs_worker([POLICIES["symbolic"]], kind="auto", gold="7", output="so it is $\\frac{14}{2}$")
    True
    >>> needs_worker([POLICIES["symbolic"]], kind="auto", gold="7", output="N/A")
    False
    """
    if not has_prediction:
        return False
    if predicted_program and gold_program and predicted_program.strip() and predicted_program != gold_program:
        return True
    if gold is None or not gold.strip():
        return False
    if any(policy.matcher == "math_verify" for policy in policies):
        return True
    latex = kind == "latex" or patterns.MATH_MARKUP.search(gold) is not None
    if output is not None and not is_no_answer(output):
        latex = latex or patterns.MATH_MARKUP.search(output) is not None
    return any(
        policy.matcher == "cascade" and policy.numbers.symbolic and (latex or policy.numbers.latex_gold)
        for policy in policies
    )


def prefetch_turns(rows: Iterable[Mapping[str, Any]], policies: Sequence[GradingPolicy]) -> int:
    r"""Compute ahead, in a few worker calls, what the graders that work in a worker process will
    be asked about ``rows`` by :func:`grade_turn`: Math-Verify's verdicts
    (:func:`~workbench.grading.mathverify.math_verify_prefetch`) for each ``math_verify`` policy.
    How many verdicts wait; grading the rows afterwards gives the same grades, faster.

    ``rows`` hold :func:`grade_turn`'s arguments by name (``predicted_answer``,
    ``predicted_program``, ``raw_output``, ``upstream_answer``, ``gold_executed``). A row with a
    predicted program and no answer of its own is left out (its answer is the program's value,
    known only once the program runs): it is graded alone.

    Examples
    --------
    >>> from workbench.grading.policies import POLICIES
    >>> rows = [{"predicted_answer": None, "raw_output": "so it is $\\boxed{12}$", "gold_executed": "12"}]
    >>> prefetch_turns(rows, [POLICIES["math-verify"]])
    1
    >>> grade_turn(predicted_answer=None, predicted_program=None, raw_output="so it is $\\boxed{12}$",
    ...            gold_executed="12", gold_program=None, policy=POLICIES["math-verify"]).verdict.correct
    True
    """
    count = 0
    rows = list(rows)
    chosen = {policy.name: policy for policy in policies if policy.matcher == "math_verify"}
    for policy in chosen.values():  # one in practice: a later prefetch drops what an earlier kept
        pairs = []
        for row in rows:
            predicted, program = row.get("predicted_answer"), row.get("predicted_program")
            if program is not None and program.strip() and (predicted is None or is_no_answer(predicted)):
                continue
            answer, _, _ = select_answer(
                policy,
                predicted_answer=predicted,
                program_answer=None,
                upstream_answer=row.get("upstream_answer"),
                raw_output=row.get("raw_output"),
            )
            gold = row.get("gold_executed")
            if answer is not None and gold is not None and not is_no_answer(answer):
                pairs.append((answer, str(gold)))
        count += math_verify_prefetch(pairs, policy.numbers.time_limit)
    return count
