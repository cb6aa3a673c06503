"""Table schemas: one tidy table per grain, keys first.

* gold ``turns``: one row per ``(record_id, turn)`` of a dataset;
* ``documents``: one row per ``doc_id`` (text and table, for drill-down);
* ``predictions``: the canonical model-output table (gold may travel inside it: ``question``,
  ``gold_answer``, ``gold_solution``, and the upstream grader's ``upstream_correct``);
* graded ``turns``: one row per ``(system, record_id, turn)``;
* ``conversations``: derived from graded turns by a ``group_by``, never edited.

The keys ``system`` and ``record_id`` are :data:`KEY_DTYPE` (categories) in every table, so any
two tables join on them; the files the workbench writes hold them as text (:func:`keys_as_text`),
and a table read from a file gets them back as keys (:func:`keys_as_keys`).
"""

from __future__ import annotations

from enum import StrEnum

import polars as pl

from workbench.grading.status import GradeStatus, MatchReason, ProgramStatus

__all__ = [
    "ErrorType",
    "KEY_DTYPE",
    "KEY_COLUMNS",
    "keys_as_keys",
    "keys_as_text",
    "ERROR_TYPE_DTYPE",
    "GOLD_KEYS",
    "GOLD_TURNS",
    "DOCUMENTS",
    "PREDICTION_KEYS",
    "PREDICTIONS",
    "PREDICTION_TARGETS",
    "GRADED_KEYS",
    "GRADED_TURNS",
    "STATUS_DTYPE",
    "REASON_DTYPE",
    "PROGRAM_STATUS_DTYPE",
    "POLICY_KEYS",
    "POLICY_GRADES",
    "POLICY_GRADE_FIELDS",
    "CHECK_CATEGORIES",
    "HUMAN_CATEGORIES",
    "CATEGORY_DTYPE",
    "CHECK_KEYS",
    "CHECKS",
    "ANNOTATION_CATEGORIES",
    "ANNOTATION_CATEGORY_DTYPE",
    "ANNOTATION_KINDS",
    "ANNOTATION_EVENTS",
    "ANNOTATION_KEYS",
    "ANNOTATION_SCHEMA_VERSION",
    "ACTIVE_ANNOTATIONS",
    "as_text",
]


class ErrorType(StrEnum):
    """Why a wrong turn is wrong (the vocabulary of :mod:`workbench.analysis.taxonomy`)."""

    MISSING_PREDICTION = "missing_prediction"
    EXTRACTION_FAILURE = "extraction_failure"
    TIMEOUT = "timeout"
    NO_GOLD = "no_gold"
    ARITHMETIC_SLIP = "arithmetic_slip"
    CARRIED_ERROR = "carried_error"
    SIGN = "sign"
    SCALE = "scale"
    PERCENT = "percent"
    WRONG_OPERATOR = "wrong_operator"
    WRONG_OPERAND = "wrong_operand"
    WRONG_VALUE = "wrong_value"


ERROR_TYPE_DTYPE = pl.Enum([e.value for e in ErrorType])

STATUS_DTYPE = pl.Enum([s.value for s in GradeStatus])
REASON_DTYPE = pl.Enum([r.value for r in MatchReason])
PROGRAM_STATUS_DTYPE = pl.Enum([s.value for s in ProgramStatus])

#: The dtype of the key columns ``system`` and ``record_id`` in every table (issue 35): a category
#: (polars' global categories, so any two tables join on them), 4 bytes a row where a text takes 16.
#: Code that reads them as text (``.str`` methods, a join with a frame built from Python strings)
#: casts to ``pl.String`` at that point; files on disk hold them as text (:func:`keys_as_text`).
KEY_DTYPE: pl.DataType = pl.Categorical()
#: The key columns held as :data:`KEY_DTYPE`.
KEY_COLUMNS = ("system", "record_id")

GOLD_KEYS = ("record_id", "turn")

GOLD_TURNS: dict[str, pl.DataType] = {
    "record_id": KEY_DTYPE,
    "turn": pl.Int32(),
    "question": pl.String(),
    "gold_answer": pl.String(),  # display answer as the dataset writes it ("14.1%")
    "gold_executed": pl.String(),  # executed answer as text ("0.14136", "yes")
    "gold_value": pl.Float64(),  # executed answer as a number (null for yes/no)
    "gold_program": pl.String(),
    "gold_solution": pl.String(),  # reference solution text (GSM8K, MATH), for BLEU/ROUGE; null for ConvFinQA
    "qa_split": pl.Boolean(),
    "n_turns": pl.Int32(),
    "has_type2_question": pl.Boolean(),
    "has_duplicate_columns": pl.Boolean(),
    "has_non_numeric_values": pl.Boolean(),
    "doc_id": pl.String(),
    "level": pl.String(),  # MATH's difficulty level as a number in text ("1" to "5"); null where the data has none
}

DOCUMENTS: dict[str, pl.DataType] = {
    "doc_id": pl.String(),
    "filename": pl.String(),
    "pre_text": pl.String(),
    "post_text": pl.String(),
    "table_json": pl.String(),  # {"columns": [...], "rows": [[label, cell, ...], ...]}
}

PREDICTION_KEYS = ("record_id", "turn")

#: Columns a prediction file can supply, and whether each is required.
PREDICTION_TARGETS: dict[str, bool] = {
    "record_id": True,
    "turn": True,
    "system": False,
    "predicted_answer": False,
    "predicted_program": False,
    "raw_output": False,
    "question": False,
    "gold_answer": False,
    "gold_solution": False,
    "upstream_correct": False,
    "upstream_answer": False,
    "predicted_unit": False,
    "level": False,
}

PREDICTIONS: dict[str, pl.DataType] = {
    "record_id": KEY_DTYPE,
    "turn": pl.Int32(),
    "system": KEY_DTYPE,
    "predicted_answer": pl.String(),
    "predicted_program": pl.String(),
    "raw_output": pl.String(),
    "question": pl.String(),  # the question as the outputs file writes it (links rows to gold when ids are missing)
    "gold_answer": pl.String(),  # gold final answer carried inside the outputs file
    "gold_solution": pl.String(),  # gold reference solution carried inside the outputs file
    "upstream_correct": pl.Boolean(),  # the upstream grader's own verdict, when the file has one
    "upstream_answer": pl.String(),  # the answer the upstream harness extracted (ToRA's pred, lm-eval's filtered_resps)
    "predicted_unit": pl.String(),  # the unit the output declares for its answer ("percent", "raw"), when it does
    "level": pl.String(),  # MATH's level carried inside the outputs (math-evaluation-harness lines), when they carry it
    "source_file": pl.String(),
    "source_location": pl.String(),  # "line 12", "record 3", "row 7"
}

GRADED_KEYS = ("system", "record_id", "turn")

GRADED_TURNS: dict[str, pl.DataType] = {
    "system": KEY_DTYPE,
    "record_id": KEY_DTYPE,
    "turn": pl.Int32(),
    "question": pl.String(),
    "gold_answer": pl.String(),
    "gold_executed": pl.String(),
    "gold_program": pl.String(),
    "predicted_answer": pl.String(),
    "predicted_program": pl.String(),
    "answer_source": pl.String(),  # "answer" | "program" | "upstream" | "strict" | "flex" | "none"
    "answer": pl.String(),  # the answer text the main policy compared
    "extraction_rule": pl.String(),  # the rule that found it in the raw output, when extracted
    "correct": pl.Boolean(),
    "status": STATUS_DTYPE,
    "reason": REASON_DTYPE,
    "detail": pl.String(),
    "pred_value": pl.Float64(),
    "gold_value": pl.Float64(),
    "program_status": PROGRAM_STATUS_DTYPE,
    "program_correct": pl.Boolean(),
    "program_detail": pl.String(),
    "program_credit": pl.Float64(),  # fraction of the gold program's steps the prediction reproduces
    "upstream_correct": pl.Boolean(),  # the upstream grader's verdict, when the outputs carry one
    "qa_split": pl.Boolean(),
    "n_turns": pl.Int32(),
    "is_last_turn": pl.Boolean(),
    "has_type2_question": pl.Boolean(),
    "has_duplicate_columns": pl.Boolean(),
    "has_non_numeric_values": pl.Boolean(),
    "operation": pl.String(),  # the gold program's final operation ("lookup" for a bare number)
    "rare_operation": pl.String(),  # a rare operation the gold program uses (exp, greater, table_*), or "none"
    "answer_format": pl.String(),  # percent | ratio | yes/no | plain
    "depends_on": pl.List(pl.Int32()),  # earlier turns the gold program builds on
    "dependency_distance": pl.Int32(),  # how far back it reaches (0: builds on none)
    "error_type": ERROR_TYPE_DTYPE,  # why a wrong turn is wrong (null when correct)
    "graders_disagree": pl.Boolean(),  # the named grading policies disagree on this turn
    "dq_category": pl.String(),  # the most specific data-quality flag on the gold turn (null: none)
    "dq_confidence": pl.Float64(),
    "level": pl.String(),  # MATH's difficulty level ("1" to "5"), from the gold; null where the data has none
    "raw_output": pl.String(),
    "gold_solution": pl.String(),
    "source_location": pl.String(),
}

POLICY_KEYS = ("system", "record_id", "turn", "policy")

#: One row per turn and grading policy: the side-by-side grades. The columns of a few values
#: (policy, answer source, extraction rule) are categories: a million turns under six policies are
#: 6 million rows, and a category takes 4 bytes a row where a text takes 16.
POLICY_GRADES: dict[str, pl.DataType] = {
    "system": KEY_DTYPE,
    "record_id": KEY_DTYPE,
    "turn": pl.Int32(),
    "policy": pl.Categorical(),
    "correct": pl.Boolean(),
    "status": STATUS_DTYPE,
    "reason": REASON_DTYPE,
    "answer": pl.String(),
    "answer_source": pl.Categorical(),
    "extraction_rule": pl.Categorical(),
    "detail": pl.String(),
}

#: The fields of one policy's grade of one distinct input: each policy's struct column in a graded
#: folder's ``policy_inputs.parquet`` (see :mod:`workbench.pipeline.policy_inputs`).
POLICY_GRADE_FIELDS: dict[str, pl.DataType] = {
    name: dtype for name, dtype in POLICY_GRADES.items() if name not in ("system", "record_id", "turn", "policy")
}


#: Data-quality categories the detectors flag automatically (most specific first: when a
#: turn has several flags, the slice shows the first of these it has).
CHECK_CATEGORIES = ("mislabel", "unit_inconsistency", "sign_inconsistency", "missing_value")
#: Categories only a human assigns (annotation, issue 5).
HUMAN_CATEGORIES = ("ambiguous_question", "other")
CATEGORY_DTYPE = pl.Enum([*CHECK_CATEGORIES, *HUMAN_CATEGORIES])

CHECK_KEYS = ("record_id", "turn", "category", "rule")

#: One row per data-quality flag: a gold turn, a category, readable evidence, a confidence.
CHECKS: dict[str, pl.DataType] = {
    "record_id": KEY_DTYPE,
    "turn": pl.Int32(),
    "category": CATEGORY_DTYPE,
    "rule": pl.String(),  # which detector fired ("display_vs_executed", "systems_agree", ...)
    "evidence": pl.String(),  # one readable sentence with the numbers involved
    "confidence": pl.Float64(),  # 0..1: how likely the flag is a real data problem
}


#: What an analyst can say about a turn: the data-quality categories, or a model error.
ANNOTATION_CATEGORIES = (
    "missing_value",
    "unit_inconsistency",
    "sign_inconsistency",
    "mislabel",
    "ambiguous_question",
    "model_error",
    "other",
)
ANNOTATION_CATEGORY_DTYPE = pl.Enum(list(ANNOTATION_CATEGORIES))
#: An event either annotates a turn or retracts an earlier event (undo).
ANNOTATION_KINDS = ("annotation", "retraction")
#: Version of the annotation store's table layout (SQLite ``PRAGMA user_version``).
ANNOTATION_SCHEMA_VERSION = 1

#: The turn an annotation is about (``system`` null: about the gold turn itself).
ANNOTATION_KEYS = ("record_id", "turn", "system")

#: One row per annotation event, append-only, in the order the store received them.
ANNOTATION_EVENTS: dict[str, pl.DataType] = {
    "event_id": pl.Int64(),  # assigned by the store, increasing
    "kind": pl.Enum(list(ANNOTATION_KINDS)),
    "created_at": pl.Datetime("us", "UTC"),
    "annotator": pl.String(),
    "record_id": KEY_DTYPE,
    "turn": pl.Int32(),
    "system": KEY_DTYPE,  # null: the annotation is about the gold turn, not one system's answer
    "category": ANNOTATION_CATEGORY_DTYPE,  # null for a retraction
    "corrected_answer": pl.String(),  # the right gold answer, when the annotator gives one
    "corrected_program": pl.String(),  # the right gold program, when given
    "note": pl.String(),
    "exclude": pl.Boolean(),  # drop this turn's conversation from the cleaned dataset
    "retracts": pl.Int64(),  # for a retraction: the event_id it takes back
}

#: The annotations in force: one row per annotated key, the events without ``kind``/``retracts``.
ACTIVE_ANNOTATIONS: dict[str, pl.DataType] = {
    k: v for k, v in ANNOTATION_EVENTS.items() if k not in ("kind", "retracts")
}


def keys_as_keys(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its key columns (:data:`KEY_COLUMNS` it has) as :data:`KEY_DTYPE`: a table
    read from a file or built from text joins the tables of the workbench.

    Examples
    --------
    >>> keys_as_keys(pl.DataFrame({"record_id": ["a"], "turn": [0]})).schema["record_id"]
    Categorical
    """
    cast = [pl.col(c).cast(KEY_DTYPE) for c in KEY_COLUMNS if c in frame.columns and frame.schema[c] != KEY_DTYPE]
    return frame.with_columns(cast) if cast else frame


def keys_as_text(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its key columns (:data:`KEY_COLUMNS` it has) as text: as they are written to
    a file (the graded folder's layout keeps them as text) and shown at a pandas edge.

    Examples
    --------
    >>> keys_as_text(keys_as_keys(pl.DataFrame({"system": ["s"]}))).schema["system"]
    String
    """
    cast = [pl.col(c).cast(pl.String) for c in KEY_COLUMNS if c in frame.columns and frame.schema[c] == KEY_DTYPE]
    return frame.with_columns(cast) if cast else frame


def as_text(dtype: pl.DataType) -> pl.DataType:
    """The dtype a column of ``dtype`` is built in from Python values: text for an enum (cast to
    the enum once, so an unknown value fails loudly), else ``dtype`` itself.

    Examples
    --------
    >>> as_text(STATUS_DTYPE), as_text(pl.Float64())
    (String, Float64)
    """
    return pl.String() if isinstance(dtype, pl.Enum) else dtype
