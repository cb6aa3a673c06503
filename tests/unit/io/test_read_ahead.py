"""Prediction files read ahead (workbench.io.predictions.table.read_ahead), as a report's kernel
reads its inputs while the runner grades them: the next read of the same unchanged file, as the
same system and without a column map, takes that table once; anything else is read as before,
with its own warnings and errors."""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import pytest

from workbench.config import project_root
from workbench.errors import InputError
from workbench.io.predictions import table
from workbench.io.predictions.columnmap import parse_column_map
from workbench.io.predictions.table import read_ahead, read_predictions

GSM8K = project_root() / "data/predictions/gsm8k"


@pytest.fixture(autouse=True)
def _nothing_kept_after() -> object:
    yield
    table._AHEAD.clear()


@pytest.fixture
def tora(tmp_path: Path) -> Path:
    path = tmp_path / "tora-70b.jsonl"
    shutil.copy(GSM8K / "tora/tora-70b.jsonl", path)
    return path


def test_a_file_read_ahead_is_taken_once_and_equals_a_fresh_read(tora: Path) -> None:
    fresh = read_predictions(tora, system="tora")
    read_ahead([(str(tora), "tora")])
    (ahead,) = table._AHEAD.values()
    taken = read_predictions(tora, system="tora")
    assert taken is ahead and table._AHEAD == {}
    assert taken.frame.equals(fresh.frame) and taken.single_turn == fresh.single_turn
    again = read_predictions(tora, system="tora")  # taken once: this one is read
    assert again is not taken and again.frame.equals(fresh.frame)


def test_another_system_a_column_map_or_a_changed_file_is_read_again(tora: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"id": "a", "answer": "1"}\n', encoding="utf-8")
    read_ahead([(str(tora), "tora"), (str(plain), "s")])
    kept = table._AHEAD.copy()
    assert len(kept) == 1  # the plain file needs its map: read ahead without one, it fails, and is not kept
    assert read_predictions(tora, system="other").frame["system"].unique().to_list() == ["other"]
    cmap = parse_column_map("record_id=id,predicted_answer=answer")
    assert read_predictions(plain, system="s", column_map=cmap).frame["predicted_answer"].to_list() == ["1"]
    assert table._AHEAD == kept  # neither took the file read ahead
    lines = tora.read_text(encoding="utf-8").splitlines(keepends=True)
    tora.write_text("".join(lines[:10]), encoding="utf-8")
    stat = tora.stat()
    os.utime(tora, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert read_predictions(tora, system="tora").frame.height == 10  # the file as it is now


def test_a_file_that_warns_or_fails_is_left_to_its_own_read(tmp_path: Path) -> None:
    pot = GSM8K / "program-of-thoughts/gsm8K_s0_e-1_11_17_10_20.jsonl"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"record_id": "a", "turn": 0, "predicted_answer": "1"}\n{"record_id": \n', encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reading ahead shows nothing
        read_ahead([(str(pot), None), (str(bad), None), (str(tmp_path / "gone.jsonl"), None)])
    assert table._AHEAD == {}
    with pytest.warns(UserWarning, match="skipped 2 prompt-only lines"):  # said where the report reads it
        read_predictions(pot)
    with pytest.raises(InputError, match="line 2"):
        read_predictions(bad)
