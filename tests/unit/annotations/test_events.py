"""Annotation events: validation names the field, what was expected and the fix; the rule of
which annotations are in force (the latest of a key, unless retracted)."""

from __future__ import annotations

import polars as pl
import pytest

from workbench.annotations import active_annotations, validate_annotation
from workbench.errors import InputError
from workbench.schema import ANNOTATION_EVENTS


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("annotator", "", "non-empty text"),
        ("annotator", "  ", "non-empty text"),
        ("record_id", "", "non-empty text"),
        ("record_id", None, "non-empty text"),
        ("turn", -1, "whole number >= 0"),
        ("turn", "2", "whole number >= 0"),
        ("turn", 1.5, "whole number >= 0"),
        ("turn", True, "whole number >= 0"),
        ("category", "typo", "expected one of missing_value, "),
        ("category", None, "expected one of"),
        ("system", 3, "text or nothing"),
        ("corrected_answer", 1.5, "text or nothing"),
        ("note", ["x"], "text or nothing"),
        ("corrected_program", "divide(1,", "does not parse"),
        ("corrected_program", "frobnicate 3 4", "does not parse"),
        ("exclude", "yes", "expected True or False"),
        ("exclude", 1, "expected True or False"),
    ],
)
def test_validation_names_field_expectation_and_fix(field: str, value: object, expected: str) -> None:
    fields = {"annotator": "ana", "record_id": "r1", "turn": 0, "category": "other", field: value}
    with pytest.raises(InputError) as caught:
        validate_annotation(**fields, where="notes.csv line 4")  # type: ignore[arg-type]
    message = str(caught.value)
    assert message.startswith("notes.csv line 4: ")
    assert f"field '{field}'" in message
    assert expected in message
    assert caught.value.field == field
    assert "Fix: " in message


def test_active_keys_are_record_turn_system_and_a_retraction_restores_the_one_before() -> None:
    events = pl.DataFrame(
        {
            "event_id": [1, 2, 3, 4],
            "kind": ["annotation", "annotation", "annotation", "retraction"],
            "record_id": ["r", "r", "r", "r"],
            "turn": [0, 0, 0, 0],
            "system": [None, "claude", None, None],
            "category": ["mislabel", "model_error", "other", None],
            "retracts": [None, None, None, 3],
        }
    ).with_columns(pl.col("kind").cast(ANNOTATION_EVENTS["kind"]))
    assert active_annotations(events).select("event_id", "system", "category").rows() == [
        (1, None, "mislabel"),  # event 3 is retracted: the one before it is in force again
        (2, "claude", "model_error"),  # a system is a key of its own, after the gold turn (null first)
    ]
    assert active_annotations(events.filter(pl.col("event_id") != 4))["event_id"].to_list() == [3, 2]
