"""The one mapping from the package's names to the plain words a page shows.

The graded tables name things in snake_case: a verdict's reason (``percent_reading``), an error
type (``wrong_value``), a data-quality category and the rule that raised it
(``unit_inconsistency``, ``display_vs_executed``), the rule that found an answer in an output
(``final_answer_is``) and where the answer came from (``flex``), a program's status
(``division_by_zero``), a graded table (``policy_grades``). A reader sees each in the words of
:data:`WORDS` (:func:`plain`); a name not listed reads with its underscores as spaces
(``table_average`` reads ``table average``). A table's column headings are :data:`COLUMNS`
(:func:`column`). Both vocabularies live here and nowhere else: tables, plots, the failed-turn
panel, the changes section and the widgets read them from this module.

Two kinds of names have their own record and are not repeated here: a slice's title is its
:class:`~workbench.analysis.slices.Slice` record's, a metric's label its
:class:`~workbench.analysis.metrics.MetricSpec`'s.

What a run counts is a ``turn`` (a question of a ConvFinQA conversation) or a ``problem`` (GSM8K,
MATH: one question each); :func:`counted` writes a count of them in words, singular or plural, and
:func:`slice_item` reads which one a table of figures by slice group counts.

Examples
--------
>>> plain("percent_reading"), plain("wrong_value"), plain("table_average"), plain("type 2")
('read as a percent', 'wrong value', 'table average', 'type 2')
>>> column("record_id"), column("turn")
('record id', 'turn')
>>> counted(1, "corrected answer"), counted(1490, "turn"), counted(2, "problem", "problems")
('1 corrected answer', '1,490 turns', '2 problems')
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal

import polars as pl

__all__ = ["WORDS", "COLUMNS", "plain", "column", "counted", "Item", "slice_item", "items"]

#: What a run counts (as :data:`workbench.analysis.metrics.Item`).
Item = Literal["turn", "problem"]

#: Names of values in plain words (reasons, error types, data-quality categories and rules,
#: extraction rules, answer sources, program statuses, the graded tables). A name that reads
#: well with its underscores as spaces (``unit_inconsistency``) is listed anyway when it is part
#: of a fixed vocabulary, so a test can check that every vocabulary is covered.
WORDS: Mapping[str, str] = MappingProxyType(
    {
        # a verdict's reason (workbench.grading.status.MatchReason): the rule that decided it
        "exact": "exact match",
        "normalised": "same after normalising",
        "yes_no": "same yes or no",
        "official_round5": "equal to 5 decimals",
        "rel_tolerance": "within 0.1%",
        "reported_precision": "at the precision written",
        "percent_reading": "read as a percent",
        "symbolic": "equal by algebra",
        "sign_flip": "sign flipped",
        "scale": "scale",
        "percent_confusion": "percent and decimal confused",
        "rounding": "rounded too far",
        "wrong_value": "wrong value",
        "no_answer": "no answer",
        "unparseable": "answer unreadable",
        "no_gold": "no gold answer",
        "no_prediction": "no prediction",
        "timeout": "timed out",
        # an error type (workbench.schema.ErrorType); scale, timeout, no_gold, wrong_value above
        "missing_prediction": "missing prediction",
        "extraction_failure": "extraction failure",
        "arithmetic_slip": "arithmetic slip",
        "carried_error": "carried error",
        "sign": "sign",
        "percent": "percent",
        "wrong_operator": "wrong operator",
        "wrong_operand": "wrong operand",
        # a data-quality category (workbench.schema.CATEGORY_DTYPE, ANNOTATION_CATEGORIES)
        "mislabel": "mislabel",
        "unit_inconsistency": "unit inconsistency",
        "sign_inconsistency": "sign inconsistency",
        "missing_value": "missing value",
        "ambiguous_question": "ambiguous question",
        "model_error": "model error",
        "other": "other",
        # the rule that raised a data-quality flag (workbench.quality)
        "display_vs_executed": "written vs executed gold",
        "question_unit": "question's unit vs gold",
        "program_vs_executed": "gold program vs executed gold",
        "argument_not_in_document": "number not in the document",
        "table_sign": "sign vs the table",
        "systems_agree": "systems agree, gold differs",
        # the rule that found an answer in an output (workbench.grading.status.ExtractionRule)
        "solution_block": "solution block",
        "boxed": "\\boxed{}",
        "hashes": "#### line",
        "final_answer_is": "'the final answer is'",
        "answer_is": "'the answer is'",
        "answer_line": "'A:' line",
        "last_number": "last number",
        "last_formula": "last formula",
        "none": "none",
        # where the answer graded came from (workbench.grading.policies.select_answer)
        "answer": "answer field",
        "strict": "strict extraction",
        "flex": "flexible extraction",
        "raw": "whole output",
        "program": "program's value",
        "upstream": "harness's answer",
        # a grade's or a program's status (workbench.grading.status.GradeStatus, ProgramStatus)
        "ok": "ok",
        "empty": "empty",
        "parse_error": "cannot be parsed",
        "unknown_operation": "unknown operation",
        "bad_arity": "wrong number of arguments",
        "bad_reference": "refers to a missing step",
        "bad_argument": "bad argument",
        "division_by_zero": "division by zero",
        "numeric_error": "numeric error",
        "needs_table": "needs the document's table",
        "table_row_not_found": "table row not found",
        # the graded tables a run writes (workbench.pipeline.graded)
        "turns": "turns",
        "conversations": "conversations",
        "unmatched": "unmatched predictions",
        "policy_grades": "verdicts under each policy",
        "checks": "data-quality flags",
        "summary": "summary",
    }
)

#: A table's column headings in plain words (a column not listed keeps its name).
COLUMNS: Mapping[str, str] = MappingProxyType(
    {
        "record_id": "record id",
        "gold_answer": "gold answer",
        "gold_executed": "gold (executed)",
        "gold_program": "gold program",
        "predicted_answer": "predicted answer",
        "predicted_program": "predicted program",
        "answer": "answer graded",
        "raw_output": "raw output",
        "detail": "grader's detail",
        "error_type": "error type",
        "dq_category": "data-quality flag",
        "dq_confidence": "flag confidence",
        "n_turns": "turns",
        "n_correct": "correct",
        "n_conversations": "conversations",
        "n_flags": "flags",
        "source_file": "file",
        "source_location": "where in the file",
        "why": "why not graded",
        "category": "category",
        "rule": "rule",
        "confidence": "confidence",
        "evidence": "evidence",
    }
)


def plain(name: str) -> str:
    """``name`` (a reason, an error type, a category, a rule...) in the words a page shows.

    Examples
    --------
    >>> plain("reported_precision"), plain("display_vs_executed"), plain("unit_inconsistency")
    ('at the precision written', 'written vs executed gold', 'unit inconsistency')
    >>> plain("policies disagree"), plain("table_max")
    ('policies disagree', 'table max')
    """
    words = WORDS.get(name)
    return words if words is not None else name.replace("_", " ")


def column(name: str) -> str:
    """The heading of the column ``name`` (:data:`COLUMNS`; a column not listed keeps its name).

    Examples
    --------
    >>> column("predicted_answer"), column("n_conversations"), column("accuracy [95% interval]")
    ('predicted answer', 'conversations', 'accuracy [95% interval]')
    """
    return COLUMNS.get(name, name)


def counted(n: int, word: str, plural: str | None = None) -> str:
    """``n`` things, with separators, the word singular for one and plural otherwise
    (``word + "s"`` unless ``plural`` is given).

    Examples
    --------
    >>> counted(0, "turn"), counted(1, "exclusion"), counted(12_345, "verdict")
    ('0 turns', '1 exclusion', '12,345 verdicts')
    """
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def items(item: str) -> str:
    """The plural of what a run counts: ``turns`` or ``problems``.

    Examples
    --------
    >>> items("turn"), items("problem")
    ('turns', 'problems')
    """
    return f"{item}s"


def slice_item(table: pl.DataFrame) -> Item:
    """What a table of figures by slice group counts (a ``turn`` or a ``problem``), from its
    counts: single questions (GSM8K, MATH) have as many conversations as turns in every group,
    and no turn index but 0. A table without those counts is of turns.

    Examples
    --------
    >>> t = pl.DataFrame({"slice": ["turn_index", "operation"], "group": ["0", "add"],
    ...                   "n_turns": [5, 3], "n_conversations": [5, 3]})
    >>> slice_item(t), slice_item(t.with_columns(n_conversations=pl.lit(1)))
    ('problem', 'turn')
    """
    if not {"n_turns", "n_conversations"} <= set(table.columns) or not table.height:
        return "turn"
    if "slice" in table.columns and "group" in table.columns:
        turns = table.filter(pl.col("slice") == "turn_index")["group"].cast(pl.String).unique().to_list()
        if not set(turns) <= {"0"}:
            return "turn"
    return "problem" if bool((table["n_turns"] == table["n_conversations"]).all()) else "turn"
