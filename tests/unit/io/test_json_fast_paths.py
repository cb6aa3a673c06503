"""The JSON reader's shortcuts give what the plain calls give (hypothesis properties).

``workbench.io.jsonfiles`` parses with one kept decoder instead of ``json.loads`` per line, and
decides the nesting depth of a flat record without walking it; the prediction reader takes text
cells as they are. Each shortcut must give the same value, or fail with the same error, as the
call it stands for, on any JSON text: a line with a byte-order mark, a key given twice, invalid
JSON, deep nesting.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from workbench.errors import InputError
from workbench.io import jsonfiles
from workbench.io.jsonfiles import MAX_DEPTH, iter_json_lines
from workbench.io.predictions import load_predictions
from workbench.io.predictions.base import text

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


def _outcome(call: Any, text: str) -> tuple[str, Any]:
    try:
        return "value", call(text)
    except Exception as exc:  # the exception's type and words are what must be the same
        return type(exc).__name__, str(exc)


def _plain_loads(text: str) -> Any:
    return json.loads(text, object_pairs_hook=jsonfiles._unique_pairs)


@given(VALUES)
def test_kept_decoder_reads_any_json_as_json_loads(value: Any) -> None:
    text = json.dumps(value)
    assert _outcome(jsonfiles._loads, text) == _outcome(_plain_loads, text)


@given(st.text(max_size=40))
@example('\ufeff{"a": 1}')
@example('{"a": 1, "a": 2}')
@example('{"a": {"b": 1, "b": 1}}')
@example('{"a": 1} x')
@example("")
@example("NaN")
def test_kept_decoder_fails_as_json_loads(text: str) -> None:
    assert _outcome(jsonfiles._loads, text) == _outcome(_plain_loads, text)


def _walked_depth_over(value: Any, limit: int) -> bool:
    """Nesting deeper than ``limit``, by recursion (the definition the reader's walk stands for)."""

    def depth(v: Any) -> int:
        if isinstance(v, dict):
            return 1 + max((depth(c) for c in v.values()), default=0)
        if isinstance(v, list):
            return 1 + max((depth(c) for c in v), default=0)
        return 0

    return depth(value) > limit


@given(VALUES, st.integers(min_value=0, max_value=4))
@example({"a": 1, "b": "x"}, 0)
@example({}, 0)
@example({"a": []}, 1)
def test_depth_check_matches_its_definition(value: Any, limit: int) -> None:
    assert jsonfiles._deeper_than(value, limit) == _walked_depth_over(value, limit)


@given(SCALARS | st.lists(SCALARS, max_size=3))
def test_a_text_cell_is_taken_as_str_takes_it(value: Any) -> None:
    shown = text(value)
    if isinstance(value, str):
        assert shown == str(value) and shown is value
    elif value is None:
        assert shown is None
    else:
        assert isinstance(shown, str)


def test_a_line_too_deep_or_doubled_is_one_line_naming_it(tmp_path: Path) -> None:
    deep = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    path = tmp_path / "p.jsonl"
    path.write_text('{"record_id": "a", "turn": 0, "predicted_answer": "1"}\n{"x": ' + deep + "}\n")
    with pytest.raises(InputError, match="line 2"):
        list(iter_json_lines(path))
    path.write_text('{"record_id": "a", "turn": 0, "predicted_answer": "1", "turn": 1}\n')
    with pytest.raises(InputError, match="key 'turn' appears twice"):
        list(iter_json_lines(path))
    path.write_text('{"record_id": "a", "turn": 0, "predicted_answer": "1"}\n\ufeff{"record_id": "b"}\n')
    with pytest.raises(InputError, match="line 2.*BOM|BOM.*line 2"):
        list(iter_json_lines(path))


def test_cells_of_every_type_read_as_before(tmp_path: Path) -> None:
    """Numbers, lists, booleans and nulls in text columns read as their text, as before the shortcut."""
    path = tmp_path / "mixed.jsonl"
    rows = [
        {"record_id": 7, "turn": 0, "predicted_answer": 0.1, "raw_output": ["a", 2], "gold_answer": True},
        {"record_id": "b", "turn": 1.0, "predicted_answer": "x", "raw_output": None, "gold_answer": 10**30},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    frame = load_predictions(path, system="s")
    assert frame.select("record_id", "turn", "predicted_answer", "raw_output", "gold_answer").rows() == [
        ("7", 0, text(0.1), "a 2", text(True)),
        ("b", 1, "x", None, text(10**30)),
    ]
    path.write_text(json.dumps({"record_id": "c", "turn": 0, "predicted_answer": {"v": 1}}) + "\n")
    with pytest.raises(InputError, match="line 1.*found a JSON object|found a JSON object.*line 1"):
        load_predictions(path, system="s")
