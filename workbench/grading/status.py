"""Vocabularies of grading outcomes, shared by every grading module.

These are plain ``str`` enums so that they pass through process pools and land in
tables as readable strings; :mod:`workbench.schema` turns them into ``pl.Enum`` dtypes.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["GradeStatus", "MatchReason", "ProgramStatus", "ExtractionStatus", "ExtractionRule", "LimitStatus"]


class GradeStatus(StrEnum):
    """Whether a comparison could be carried out at all."""

    OK = "ok"
    NO_ANSWER = "no_answer"
    UNPARSEABLE = "unparseable"
    NO_GOLD = "no_gold"
    NO_PREDICTION = "no_prediction"
    TIMEOUT = "timeout"


class MatchReason(StrEnum):
    """The rule that decided a verdict: match rules first, then mismatch types."""

    EXACT = "exact"
    NORMALISED = "normalised"
    YES_NO = "yes_no"
    OFFICIAL_ROUND5 = "official_round5"
    REL_TOLERANCE = "rel_tolerance"
    REPORTED_PRECISION = "reported_precision"
    PERCENT_READING = "percent_reading"
    SYMBOLIC = "symbolic"
    ITEMS = "items"  # several answers matched one to one, in any order (issue 31)
    SPAN_F1 = "span_f1"  # text spans whose DROP F1 reaches the pass mark (issue 31)
    # mismatches
    SIGN_FLIP = "sign_flip"
    SCALE = "scale"
    PERCENT_CONFUSION = "percent_confusion"
    ROUNDING = "rounding"
    WRONG_VALUE = "wrong_value"
    NO_ANSWER = "no_answer"
    UNPARSEABLE = "unparseable"
    NO_GOLD = "no_gold"
    NO_PREDICTION = "no_prediction"
    TIMEOUT = "timeout"


class ProgramStatus(StrEnum):
    """Outcome of parsing and executing a program."""

    OK = "ok"
    EMPTY = "empty"
    PARSE_ERROR = "parse_error"
    UNKNOWN_OPERATION = "unknown_operation"
    BAD_ARITY = "bad_arity"
    BAD_REFERENCE = "bad_reference"
    BAD_ARGUMENT = "bad_argument"
    DIVISION_BY_ZERO = "division_by_zero"
    NUMERIC_ERROR = "numeric_error"
    NEEDS_TABLE = "needs_table"
    TABLE_ROW_NOT_FOUND = "table_row_not_found"
    TIMEOUT = "timeout"


class ExtractionStatus(StrEnum):
    """Whether an answer was found in a model's output."""

    FOUND = "found"
    NOT_FOUND = "not_found"
    EMPTY = "empty"
    TOO_LONG = "too_long"  # longer than extract.MAX_OUTPUT_CHARS: not read


class ExtractionRule(StrEnum):
    """The rule that found an answer in a model's output, strict markers first."""

    SOLUTION_BLOCK = "solution_block"
    BOXED = "boxed"
    HASHES = "hashes"
    FINAL_ANSWER_IS = "final_answer_is"
    ANSWER_IS = "answer_is"
    ANSWER_LINE = "answer_line"
    LAST_NUMBER = "last_number"
    LAST_FORMULA = "last_formula"
    CHOICE_LETTER = "choice_letter"  # the letter that stands as the answer (a choice gold, issue 31)
    LAST_LINE = "last_line"  # a short last line read whole (a text-span gold, issue 31)
    NONE = "none"


class LimitStatus(StrEnum):
    """How a limited call ended (:func:`workbench.grading.limits.call_with_limit`)."""

    OK = "ok"
    TIMEOUT = "timeout"
    ERROR = "error"
