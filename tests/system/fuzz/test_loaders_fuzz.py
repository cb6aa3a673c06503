"""The loaders on fuzzed file contents: load_predictions and load_gold return a table (a
GoldDataset) or raise a WorkbenchError (InputError, UsageError) with a message; nothing else
escapes, and nothing hangs."""

from __future__ import annotations

import io
import itertools
import json
import warnings
from pathlib import Path

import polars as pl
import pytest
from fuzzkit import fuzz_settings, hostile_text, tried
from hypothesis import example, given
from hypothesis import strategies as st

from workbench.errors import WorkbenchError
from workbench.io.gold import GoldDataset, load_gold
from workbench.io.predictions import load_predictions

_KEYS = (
    "record_id", "turn", "turn_idx", "predicted_answer", "predicted_program", "raw_output", "system", "id",
    "question", "answer", "problem", "solution", "gold_answer", "conversation", "doc_id", "doc", "resps",
    "results", "question_id", "idx", "gt", "pred", "code", "executed", "generated", "ground_truth",
    "dialogue", "annotation", "financial_report", "dev", "unique_id", "predicted_calculation", "filter",
)  # fmt: skip

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    hostile_text,
    st.sampled_from(("#### 18", "\\boxed{3}", "0", "1", "-1", "1.5", "x")),
)
_json_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(_KEYS) | st.text(max_size=4), inner, max_size=6),
    ),
    max_leaves=20,
)
_records = st.dictionaries(st.sampled_from(_KEYS), _json_values, max_size=8)


@st.composite
def _file_texts(draw: st.DrawFn) -> tuple[str, bytes]:
    """A suffix and the bytes of a file: JSON Lines, JSON, CSV or garbage."""
    suffix = draw(st.sampled_from((".jsonl", ".json", ".csv", ".tsv", ".parquet", ".txt")))
    shape = draw(st.sampled_from(("records", "value", "garbage", "truncated")))
    if shape == "garbage":
        return suffix, draw(st.one_of(st.binary(max_size=300), hostile_text.map(lambda t: t.encode("utf-8"))))
    if suffix == ".jsonl":
        lines = [json.dumps(r) for r in draw(st.lists(_records, max_size=5))]
        text = "\n".join(lines)
    elif suffix in (".csv", ".tsv"):
        sep = "\t" if suffix == ".tsv" else ","
        columns = draw(st.lists(st.sampled_from(_KEYS), min_size=1, max_size=6, unique=True))
        rows = draw(st.lists(st.lists(st.text(alphabet="ab1,\"\n\t#", max_size=6), min_size=len(columns),
                                      max_size=len(columns)), max_size=4))  # fmt: skip
        out = io.StringIO()
        out.write(sep.join(columns) + "\n")
        for row in rows:
            out.write(sep.join(row) + "\n")
        text = out.getvalue()
    elif suffix == ".parquet":
        return suffix, draw(st.binary(max_size=200))
    else:
        text = json.dumps(draw(st.lists(_records, max_size=4)) if shape == "records" else draw(_json_values))
    if shape == "truncated" and text:
        text = text[: draw(st.integers(min_value=0, max_value=len(text) - 1))]
    return suffix, text.encode("utf-8")


_counter = itertools.count()


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzzed-files")


def _load_or_error(loader, path: Path):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return loader(path)
        except WorkbenchError as exc:
            assert str(exc), "an error without a message"
            return exc


@fuzz_settings(ci_examples=250)
@given(file=_file_texts())
@example(file=(".jsonl", b'{"record_id": "a", "turn": 0, "predicted_answer": "1"}\n\xff'))
@example(file=(".json", b'[{"record_id": "a", "turn": 1e400, "predicted_answer": "1"}]'))
@example(file=(".jsonl", b'{"question": "q", "answer": "#### ' + b"\\boxed{" * 2000 + b'"}'))
def test_loaders_return_a_table_or_a_workbench_error(fuzz_dir: Path, file: tuple[str, bytes]) -> None:
    tried("load_predictions/load_gold")
    suffix, data = file
    path = fuzz_dir / f"f{next(_counter)}{suffix}"
    path.write_bytes(data)
    preds = _load_or_error(load_predictions, path)
    assert isinstance(preds, pl.DataFrame | WorkbenchError)
    gold = _load_or_error(load_gold, path)
    assert isinstance(gold, GoldDataset | WorkbenchError)
    path.unlink()
