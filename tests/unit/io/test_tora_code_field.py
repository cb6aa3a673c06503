"""A ToRA line whose ``code`` is not a list of texts (issue 31) is refused in one line naming the
file, the line and the field, instead of being graded as the output "5". Written here: the real
lines are those of the ToRA-70B fixture (tests/fixtures/predictions/gsm8k, data/SOURCES.md), with
one field changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from workbench.errors import InputError
from workbench.io.predictions import load_predictions


def _write(path: Path, objects: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(obj) + "\n" for obj in objects), encoding="utf-8")
    return path


def _tora_lines(gsm8k_small_runs: dict[str, Path]) -> list[dict[str, Any]]:
    text = gsm8k_small_runs["tora-70b"].read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()[:3]]


# (the value given as ``code``, what the message says it is)
NOT_A_LIST = [
    (5, "'code' is an int (5)"),
    (18.0, "'code' is a float (18.0)"),
    ("print(5)", "'code' is a str ('print(5)')"),
    ({"0": "x"}, "'code' is a dict ({'0': 'x'})"),
    ([5], "'code' is a list holding [5]"),
]


@pytest.mark.parametrize(("code", "said"), NOT_A_LIST)
def test_code_that_is_not_a_list_of_texts_is_refused_in_one_line(
    tmp_path: Path, gsm8k_small_runs: dict[str, Path], code: object, said: str
) -> None:
    lines = _tora_lines(gsm8k_small_runs)
    lines[1]["code"] = code
    path = _write(tmp_path / "tora.jsonl", lines)
    with pytest.raises(InputError) as info:
        load_predictions(path)
    err = info.value
    assert (err.file, err.location, err.field) == (str(path), f"line 2 (idx {lines[1]['idx']!r})", "code")
    assert err.problem.startswith(said)
    message = str(err)
    assert "\n" not in message and message.startswith(f"{path}: line 2") and "Fix:" in message


def test_lists_of_texts_and_a_missing_code_still_load(tmp_path: Path, gsm8k_small_runs: dict[str, Path]) -> None:
    lines = _tora_lines(gsm8k_small_runs)
    lines[0]["code"] = []
    del lines[2]["code"]
    preds = load_predictions(_write(tmp_path / "tora.jsonl", lines))
    assert preds["raw_output"].to_list() == [None, _tora_lines(gsm8k_small_runs)[1]["code"][0], None]
