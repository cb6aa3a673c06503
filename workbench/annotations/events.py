"""Annotation events: what makes one valid, and which annotations are in force.

:func:`validate_annotation` checks one annotation before it is stored (the store and the CSV
import use the same check); :func:`active_annotations` applies the rule "the latest annotation
of a turn, unless retracted" to the events of a store.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import polars as pl

from workbench.annotations.names import name_problem
from workbench.errors import InputError
from workbench.grading.program import ProgramSyntaxError, parse_program
from workbench.schema import ANNOTATION_CATEGORIES, ANNOTATION_KEYS

__all__ = ["active_annotations", "validate_annotation"]

#: The fields an annotation is given (the keyword arguments of :meth:`AnnotationStore.annotate`).
_FIELDS = (
    "annotator",
    "record_id",
    "turn",
    "category",
    "system",
    "corrected_answer",
    "corrected_program",
    "note",
    "exclude",
)
_REQUIRED = ("annotator", "record_id", "turn", "category")


def active_annotations(events: pl.DataFrame) -> pl.DataFrame:
    """The annotations in force: not retracted, the latest per ``(record_id, turn, system)``.

    A ``system`` that is null (an annotation about the gold turn) is its own key, different
    from every system. When the latest annotation of a key is retracted, the one before it
    (if any, and not retracted) is in force again.

    Parameters
    ----------
    events
        Rows of :data:`workbench.schema.ANNOTATION_EVENTS` (:meth:`AnnotationStore.events`).

    Returns
    -------
    pl.DataFrame
        The columns of :data:`ANNOTATION_EVENTS` without ``kind`` and ``retracts``, sorted
        by ``record_id``, ``turn``, ``system`` (null first).

    Examples
    --------
    >>> from workbench.schema import ANNOTATION_EVENTS
    >>> events = pl.DataFrame(
    ...     {"event_id": [1, 2, 3], "kind": ["annotation", "annotation", "retraction"], "record_id": ["r", "r", "r"],
    ...      "turn": [0, 0, 0], "category": ["mislabel", "other", None], "retracts": [None, None, 2]},
    ... ).with_columns(pl.col("kind").cast(ANNOTATION_EVENTS["kind"]))
    >>> active_annotations(events.select("event_id", "kind", "record_id", "turn", "category", "retracts")).rows()
    [(1, 'r', 0, 'mislabel')]
    """
    retracted = events.filter(pl.col("kind") == "retraction").get_column("retracts").drop_nulls()
    keep = [c for c in events.columns if c not in ("kind", "retracts")]
    return (
        events.filter((pl.col("kind") == "annotation") & ~pl.col("event_id").is_in(retracted.implode()))
        .sort("event_id")
        .unique(subset=[k for k in ANNOTATION_KEYS if k in events.columns], keep="last", maintain_order=True)
        .sort([k for k in (*ANNOTATION_KEYS, "event_id") if k in events.columns], nulls_last=False)
        .select(keep)
    )


# --------------------------------------------------------------------------- validation
def _text_or_none(value: Any) -> Any:
    """Empty or blank optional text means "not given"."""
    if isinstance(value, str) and not value.strip():
        return None
    return value


def _check(values: Mapping[str, Any], file: str, location: str = "") -> tuple[Any, ...]:
    """Validate one annotation and return it as the row to insert (``_FIELDS`` order)."""

    def fail(field: str, problem: str, fix: str) -> InputError:
        return InputError(file, problem, location=location, field=field, fix=fix)

    unknown = [k for k in values if k not in _FIELDS]
    if unknown:
        raise fail(
            unknown[0], f"unknown field {unknown[0]!r}", f"use only the fields {', '.join(_FIELDS)} (or drop it)"
        )
    missing = [k for k in _REQUIRED if k not in values]
    if missing:
        raise fail(missing[0], f"missing required field {missing[0]!r}", f"give {', '.join(_REQUIRED)}")
    for name in ("annotator", "record_id"):
        value = values[name]
        if not isinstance(value, str) or not value.strip():
            raise fail(name, f"expected a non-empty text, got {value!r}", f"give the {name.replace('_', ' ')}")
    shared = name_problem(values["annotator"])
    if shared is not None:
        raise fail("annotator", shared, "sign with the analyst's own name")
    for name in _FIELDS:
        if isinstance(values.get(name), str) and "\x00" in values[name]:
            raise fail(name, f"expected text without NUL characters, got {values[name]!r}", "remove the NUL bytes")
    turn = values["turn"]
    if isinstance(turn, bool) or not isinstance(turn, numbers.Integral) or turn < 0:
        raise fail("turn", f"expected a whole number >= 0, got {turn!r}", "give the 0-based turn index")
    category = values["category"]
    if category not in ANNOTATION_CATEGORIES:
        raise fail(
            "category",
            f"expected one of {', '.join(ANNOTATION_CATEGORIES)}, got {category!r}",
            "use one of the listed categories",
        )
    optional = {name: _text_or_none(values.get(name)) for name in ("system", "corrected_answer", "note")}
    for name, value in optional.items():
        if value is not None and not isinstance(value, str):
            raise fail(name, f"expected text or nothing, got {value!r}", f"give the {name.replace('_', ' ')} as text")
    if category == "model_error" and optional["system"] is None:
        raise fail(
            "system",
            "a model error needs the system whose answer was wrong, got none",
            "give the system, or pick the data-problem category that fits the gold turn",
        )
    program = _text_or_none(values.get("corrected_program"))
    if program is not None:
        if not isinstance(program, str):
            raise fail("corrected_program", f"expected program text, got {program!r}", "give the program as text")
        try:
            parse_program(program)
        except ProgramSyntaxError as exc:
            raise fail(
                "corrected_program",
                f"the program {program!r} does not parse ({exc})",
                "write it in the ConvFinQA program language, e.g. 'subtract(60.94, 25.14), divide(#0, 25.14)'",
            ) from None
    exclude = values.get("exclude", False)
    if not isinstance(exclude, bool):
        raise fail("exclude", f"expected True or False, got {exclude!r}", "give exclude as a boolean")
    return (
        values["annotator"].strip(),
        values["record_id"],
        int(turn),
        category,
        optional["system"],
        optional["corrected_answer"],
        program,
        optional["note"],
        exclude,
    )


def validate_annotation(
    *,
    annotator: Any,
    record_id: Any,
    turn: Any,
    category: Any,
    system: Any = None,
    corrected_answer: Any = None,
    corrected_program: Any = None,
    note: Any = None,
    exclude: Any = False,
    where: str = "",
) -> None:
    """Check one annotation before it is stored; raise :class:`InputError` when it cannot be.

    Parameters
    ----------
    annotator, record_id, turn, category, system, corrected_answer, corrected_program, note, exclude
        The fields of :meth:`AnnotationStore.annotate`. Blank optional text counts as not given.
    where
        Where the annotation comes from (``"annotations.csv line 4"``), for the message.

    Raises
    ------
    InputError
        Naming ``where``, the field, what was expected and got, and the fix: an empty
        annotator or record id, a shared default name as annotator (``analyst``), a turn that is
        not a whole number >= 0, an unknown category, a model error without its system,
        a corrected program that does not parse, an ``exclude`` that is not a bool.

    Examples
    --------
    >>> validate_annotation(annotator="ana", record_id="r1", turn=2, category="mislabel")
    >>> validate_annotation(annotator="ana", record_id="r1", turn=2, category="typo", where="a.csv line 4")
    Traceback (most recent call last):
    ...
    workbench.errors.InputError: a.csv line 4: field 'category': expected one of missing_value, unit_inconsistency, \
sign_inconsistency, mislabel, ambiguous_question, model_error, other, got 'typo'. Fix: use one of the listed categories
    """
    _check(
        {
            "annotator": annotator,
            "record_id": record_id,
            "turn": turn,
            "category": category,
            "system": system,
            "corrected_answer": corrected_answer,
            "corrected_program": corrected_program,
            "note": note,
            "exclude": exclude,
        },
        where or "annotation",
    )
