"""The bad-file catalogue: broken copies of the real fixtures, and what each must give.

Every case takes one clean input (a real fixture in ``tests/fixtures``, or a table derived from
one) and breaks it in one way (a *kind*: truncated, wrong type, byte-order mark, ...). Its
expected outcome is one of:

* :class:`Error`: an :class:`~workbench.errors.InputError` naming the file, the line or record,
  the field (when there is one) and a fix, on one line;
* :class:`Unmatched`: the file loads, and exactly ``n`` prediction rows are counted as matching
  no gold turn, with the reason;
* :class:`Same`: the file loads exactly as the clean file does (a UTF-8 or UTF-16 byte-order mark).

``CASES`` is the catalogue; ``tests/unit/io/test_badfiles.py`` runs every case.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl

FIXTURES = Path(__file__).resolve().parent / "fixtures"

# --------------------------------------------------------------------------- outcomes


@dataclass(frozen=True)
class Error:
    """An ``InputError`` is expected.

    ``location``: what the error's location must start with (``None``: a whole-file problem, no
    line to name); ``field``: the field it must name (``None``: none applies); ``words``: what
    the problem must say (case-insensitive).
    """

    location: str | None
    field: str | None
    words: tuple[str, ...] = ()


@dataclass(frozen=True)
class Unmatched:
    """The file loads; ``n`` prediction rows match no gold turn and one reason contains ``why``."""

    n: int
    why: str


@dataclass(frozen=True)
class Same:
    """The file loads exactly as the clean file does."""


Outcome = Error | Unmatched | Same


# --------------------------------------------------------------------------- clean sources


@dataclass(frozen=True)
class Source:
    """A clean input: which loader reads it, its file name, its bytes, and (for predictions) its gold."""

    name: str
    loader: str  # "gold", "predictions", "annotations", "batch"
    filename: str
    clean: Callable[[], bytes]
    gold: Path | None = None
    style: str = "text"  # "jsonl", "json", "csv", "parquet", "yaml"


def _read(rel: str) -> Callable[[], bytes]:
    return lambda: (FIXTURES / rel).read_bytes()


@cache
def _zarifaziz() -> list[dict[str, Any]]:
    path = FIXTURES / "predictions" / "zarifaziz_dev_small.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _canonical_rows() -> list[dict[str, Any]]:
    """The zarifaziz fixture in the canonical columns (no multi-line text, so a row is a line)."""
    return [
        {
            "record_id": o["record_id"],
            "turn": o["turn_idx"],
            "predicted_answer": o["predicted_answer"],
            "predicted_program": o["predicted_calculation"],
        }
        for o in _zarifaziz()
    ]


def _csv_bytes(rows: list[dict[str, Any]]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def _parquet_bytes(frame: pl.DataFrame) -> bytes:
    out = io.BytesIO()
    frame.write_parquet(out)
    return out.getvalue()


def _gold_table_rows() -> list[dict[str, Any]]:
    """ConvFinQA ``dev_small`` as a plain gold table: record_id, turn, question, gold_answer."""
    data = json.loads((FIXTURES / "convfinqa" / "dev_small.json").read_text(encoding="utf-8"))
    return [
        {"record_id": r["id"], "turn": i, "question": q, "gold_answer": a}
        for r in data["dev"]
        for i, (q, a) in enumerate(zip(r["dialogue"]["conv_questions"], r["dialogue"]["executed_answers"], strict=True))
    ]


def _annotation_rows() -> list[dict[str, Any]]:
    """The hand-checked data-quality flags as an annotation CSV (record_id, turn, category, annotator, note)."""
    text = (FIXTURES / "checks" / "hand_checked_dev.csv").read_text(encoding="utf-8")
    return [
        {
            "record_id": r["record_id"],
            "turn": r["turn"],
            "category": r["category"],
            "annotator": "ana",
            "note": r["note"],
        }
        for r in csv.DictReader(io.StringIO(text))
    ]


def _annotation_csv() -> bytes:
    return _csv_bytes(_annotation_rows())


BATCH_YAML = """\
out: reports/nightly
reports:
  - template: 01-overview
    dataset: tests/fixtures/convfinqa/dev_small.json
  - template: 04-compare-systems
    predictions:
      - tests/fixtures/predictions/zarifaziz_dev_small.jsonl
      - tests/fixtures/predictions/zarifaziz_dev_small_12-48-44Z.jsonl
    systems: [claude 06-35, claude 12-48]
    parameters: {n_boot: 500, max_failed_rows: 5}
"""

DEV_SMALL = FIXTURES / "convfinqa" / "dev_small.json"
GSM8K_GOLD = FIXTURES / "gsm8k" / "test_first_20.jsonl"
GHCHEN99 = FIXTURES / "predictions" / "ghchen99_predictions_first_100.json"

SOURCES = {
    s.name: s
    for s in [
        Source("convfinqa-reformatted", "gold", "dev_small.json", _read("convfinqa/dev_small.json"), style="json"),
        Source(
            "convfinqa-original",
            "gold",
            "train_subset.json",
            _read("convfinqa/original_train_subset_50.json"),
            style="json",
        ),
        Source(
            "convfinqa-questions-only",
            "gold",
            "test.json",
            _read("convfinqa/original_test_questions_only_5.json"),
            style="json",
        ),
        Source("gsm8k-gold", "gold", "test.jsonl", _read("gsm8k/test_first_20.jsonl"), style="jsonl"),
        Source("math-jsonl", "gold", "math.jsonl", _read("math/hendrycks_math_test_8.jsonl"), style="jsonl"),
        Source("math-json", "gold", "math500.json", _read("math/math500_test_7.json"), style="json"),
        Source("gold-table-csv", "gold", "gold.csv", lambda: _csv_bytes(_gold_table_rows()), style="csv"),
        Source(
            "gold-table-jsonl",
            "gold",
            "gold.jsonl",
            lambda: "".join(json.dumps(r) + "\n" for r in _gold_table_rows()).encode("utf-8"),
            style="jsonl",
        ),
        Source(
            "zarifaziz-jsonl",
            "predictions",
            "predictions.jsonl",
            _read("predictions/zarifaziz_dev_small.jsonl"),
            gold=DEV_SMALL,
            style="jsonl",
        ),
        Source(
            "ghchen99-json",
            "predictions",
            "ghchen99.json",
            _read("predictions/ghchen99_predictions_first_100.json"),
            gold=GHCHEN99,
            style="json",
        ),
        Source(
            "ghchen99-results",
            "predictions",
            "evaluation_results.json",
            _read("predictions/ghchen99_evaluation_results_20250523_221608.json"),
            gold=GHCHEN99,
            style="json",
        ),
        Source(
            "canonical-csv",
            "predictions",
            "claude.csv",
            lambda: _csv_bytes(_canonical_rows()),
            gold=DEV_SMALL,
            style="csv",
        ),
        Source(
            "canonical-parquet",
            "predictions",
            "claude.parquet",
            lambda: _parquet_bytes(pl.DataFrame(_canonical_rows())),
            gold=DEV_SMALL,
            style="parquet",
        ),
        Source(
            "lm-eval-samples",
            "predictions",
            "samples_gsm8k_2026-11-21T19-50-41.jsonl",
            _read("predictions/lm_eval/tora-70b-rendered/samples_gsm8k_2026-11-21T19-50-41.jsonl"),
            gold=GSM8K_GOLD,
            style="jsonl",
        ),
        Source(
            "openai-gsm8k",
            "predictions",
            "example_model_solutions.jsonl",
            _read("predictions/gsm8k/openai_example_model_solutions_first_20.jsonl"),
            gold=GSM8K_GOLD,
            style="jsonl",
        ),
        Source(
            "tora",
            "predictions",
            "tora-70b.jsonl",
            _read("predictions/gsm8k/tora-70b_first_20.jsonl"),
            gold=GSM8K_GOLD,
            style="jsonl",
        ),
        Source(
            "program-of-thoughts",
            "predictions",
            "pot_zeroshot.jsonl",
            _read("predictions/gsm8k/pot_zeroshot_first_20.jsonl"),
            gold=GSM8K_GOLD,
            style="jsonl",
        ),
        Source("annotation-csv", "annotations", "annotations.csv", _annotation_csv, style="csv"),
        Source("batch-yaml", "batch", "nightly.yaml", lambda: BATCH_YAML.encode("utf-8"), style="yaml"),
    ]
}

# --------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    kind: str
    source: Source
    variant: str
    make: Callable[[], bytes]
    expect: Outcome

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.source.name}:{self.variant}"


def _text(source: Source) -> str:
    return source.clean().decode("utf-8")


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# ---- edits on JSON Lines, JSON, CSV, Parquet
def _edit_jsonl(source: Source, line: int, change: Callable[[dict[str, Any]], Any]) -> Callable[[], bytes]:
    def make() -> bytes:
        lines = _text(source).splitlines()
        obj = json.loads(lines[line - 1])
        change(obj)
        lines[line - 1] = json.dumps(obj, ensure_ascii=False)
        return ("\n".join(lines) + "\n").encode("utf-8")

    return make


def _edit_json(source: Source, change: Callable[[Any], Any]) -> Callable[[], bytes]:
    def make() -> bytes:
        data = json.loads(_text(source))
        change(data)
        return json.dumps(data, indent=1, ensure_ascii=False).encode("utf-8")

    return make


def _edit_csv_line(source: Source, line: int, column: str, value: str) -> Callable[[], bytes]:
    def make() -> bytes:
        rows = list(csv.DictReader(io.StringIO(_text(source))))
        rows[line - 2][column] = value
        return _csv_bytes(rows)

    return make


def _set(obj: dict[str, Any], key: str, value: Any) -> None:
    obj[key] = value


def _records(data: Any) -> list[Any]:
    """The record list of a JSON source (the only list value of a top-level object)."""
    if isinstance(data, list):
        return data
    return next(v for v in data.values() if isinstance(v, list))


def _appended_jsonl_copy(source: Source, line: int) -> Callable[[], bytes]:
    def make() -> bytes:
        lines = _text(source).splitlines()
        return ("\n".join([*lines, lines[line - 1]]) + "\n").encode("utf-8")

    return make


def _n_lines(source: Source) -> int:
    return len(_text(source).splitlines())


# ---- kind 1: truncated
def _truncated_json(source: Source) -> tuple[Callable[[], bytes], int]:
    text = _text(source)
    cut = text.index('": ', len(text) // 2) + 3  # just after a key, in the middle of an object
    return (lambda: text[:cut].encode("utf-8")), _line_of(text, cut)


def _truncated_jsonl(source: Source) -> Callable[[], bytes]:
    lines = _text(source).splitlines()
    return lambda: ("\n".join(lines[:2]) + "\n" + lines[2][: len(lines[2]) // 2]).encode("utf-8")


def _truncated_csv(source: Source) -> Callable[[], bytes]:
    lines = _text(source).splitlines()
    return lambda: ("\n".join(lines[:3]) + "\n" + lines[3][: lines[3].index(",") + 1]).encode("utf-8")


def truncated() -> list[Case]:
    cases = []
    for s in SOURCES.values():
        if s.style == "json":
            make, line = _truncated_json(s)
            cases.append(Case("truncated", s, "cut mid-object", make, Error(f"line {line}", None, ("truncated",))))
        elif s.style == "jsonl":
            cases.append(
                Case("truncated", s, "cut mid-line 3", _truncated_jsonl(s), Error("line 3", None, ("truncated",)))
            )
        elif s.style == "csv":
            field = "category" if s.loader == "annotations" else None
            cases.append(
                Case("truncated", s, "cut mid-line 4", _truncated_csv(s), Error("line 4", field, ("truncated",)))
            )
        elif s.style == "parquet":
            data = s.clean
            cases.append(
                Case(
                    "truncated",
                    s,
                    "cut in half",
                    lambda data=data: data()[: len(data()) // 2],
                    Error(None, None, ("truncated or corrupt",)),
                )
            )
        elif s.style == "yaml":
            text = _text(s)
            cut = text.index("max_failed_rows")
            cases.append(
                Case(
                    "truncated",
                    s,
                    "cut in a flow mapping",
                    lambda text=text, cut=cut: text[:cut].encode("utf-8"),
                    Error(f"line {_line_of(text, cut)}", None, ("YAML", "truncated")),
                )
            )
    return cases


# ---- kind 2: wrong types
def wrong_types() -> list[Case]:
    S = SOURCES
    z, c, pq = S["zarifaziz-jsonl"], S["canonical-csv"], S["canonical-parquet"]
    n_rows = len(_canonical_rows())

    def parquet(change: Callable[[pl.DataFrame], pl.DataFrame]) -> Callable[[], bytes]:
        return lambda: _parquet_bytes(change(pl.DataFrame(_canonical_rows())))

    def ghchen(change: Callable[[list[Any]], Any]) -> Callable[[], bytes]:
        return _edit_json(S["ghchen99-json"], change)

    def results(change: Callable[[dict[str, Any]], Any]) -> Callable[[], bytes]:
        return _edit_json(S["ghchen99-results"], lambda d: change(d["results"][5]))

    def dev(change: Callable[[dict[str, Any]], Any]) -> Callable[[], bytes]:
        return _edit_json(S["convfinqa-reformatted"], lambda d: change(d["dev"][2]))

    dev_id = json.loads(_text(S["convfinqa-reformatted"]))["dev"][2]["id"]
    ghchen_id = json.loads(_text(S["ghchen99-json"]))[2]["id"]
    orig_id = json.loads(_text(S["convfinqa-original"]))[2]["id"]
    cases = [
        Case(
            "wrong type",
            z,
            "turn_idx 'two'",
            _edit_jsonl(z, 3, lambda o: _set(o, "turn_idx", "two")),
            Error("line 3", "turn_idx", ("'two'", "whole number")),
        ),
        Case(
            "wrong type",
            z,
            "turn_idx -1",
            _edit_jsonl(z, 3, lambda o: _set(o, "turn_idx", -1)),
            Error("line 3", "turn_idx", ("-1",)),
        ),
        Case(
            "wrong type",
            z,
            "turn_idx 1.5",
            _edit_jsonl(z, 3, lambda o: _set(o, "turn_idx", 1.5)),
            Error("line 3", "turn_idx", ("1.5", "whole number")),
        ),
        Case(
            "wrong type",
            z,
            "record_id a number",
            _edit_jsonl(z, 3, lambda o: _set(o, "record_id", 123)),
            Unmatched(1, "record_id not in dev_small.json"),
        ),
        Case(
            "wrong type",
            z,
            "record_id a list",
            _edit_jsonl(z, 3, lambda o: _set(o, "record_id", ["a", "b"])),
            Error("line 3", "record_id", ("list",)),
        ),
        Case(
            "wrong type",
            z,
            "answer an object",
            _edit_jsonl(z, 3, lambda o: _set(o, "predicted_answer", {"v": 1})),
            Error("line 3", "predicted_answer", ("JSON object",)),
        ),
        Case("wrong type", c, "turn 'two'", _edit_csv_line(c, 3, "turn", "two"), Error("line 3", "turn", ("'two'",))),
        Case("wrong type", c, "turn -1", _edit_csv_line(c, 3, "turn", "-1"), Error("line 3", "turn", ("-1",))),
        Case("wrong type", c, "turn 1.5", _edit_csv_line(c, 3, "turn", "1.5"), Error("line 3", "turn", ("1.5",))),
        Case(
            "wrong type",
            pq,
            "turn 'two'",
            parquet(lambda f: f.with_columns(pl.Series("turn", ["0", "two", *["0"] * (f.height - 2)]))),
            Error("row 2", "turn", ("'two'",)),
        ),
        Case(
            "wrong type",
            pq,
            "turn -1",
            parquet(
                lambda f: f.with_columns(pl.when(pl.int_range(pl.len()) == 1).then(-1).otherwise("turn").alias("turn"))
            ),
            Error("row 2", "turn", ("-1",)),
        ),
        Case(
            "wrong type",
            pq,
            "record_id a number",
            parquet(lambda f: f.with_columns(pl.int_range(pl.len()).alias("record_id"))),
            Unmatched(n_rows, "record_id not in dev_small.json"),
        ),
        Case(
            "wrong type",
            pq,
            "answer an object",
            parquet(lambda f: f.with_columns(pl.struct(v="predicted_answer").alias("predicted_answer"))),
            Error("row 1", "predicted_answer", ("JSON object",)),
        ),
        Case(
            "wrong type",
            S["ghchen99-json"],
            "id a list",
            ghchen(lambda d: _set(d[2], "id", ["x"])),
            Error("record 2", "record_id", ("list",)),
        ),
        Case(
            "wrong type",
            S["ghchen99-json"],
            "id a number",
            ghchen(lambda d: _set(d[2], "id", 7)),
            Unmatched(len(json.loads(_text(S["ghchen99-json"]))[2]["conversation"]), "record_id not in"),
        ),
        Case(
            "wrong type",
            S["ghchen99-json"],
            "answer an object",
            ghchen(lambda d: _set(d[2]["conversation"][1], "predicted_answer", {"v": 1})),
            Error(f"record 2 (id '{ghchen_id}'), turn 1", "predicted_answer", ("JSON object",)),
        ),
        Case(
            "wrong type",
            S["ghchen99-json"],
            "conversation a string",
            ghchen(lambda d: _set(d[2], "conversation", "two")),
            Error("record 2", "conversation", ("list",)),
        ),
        Case(
            "wrong type",
            S["ghchen99-results"],
            "question_id a number",
            results(lambda r: _set(r, "question_id", 5)),
            Error("results[5]", "question_id", ("5",)),
        ),
        Case(
            "wrong type",
            S["ghchen99-results"],
            "answer an object",
            results(lambda r: _set(r, "predicted_answer", {"v": 1})),
            Error("results[5]", "predicted_answer", ("JSON object",)),
        ),
        Case(
            "wrong type",
            S["lm-eval-samples"],
            "doc_id a list",
            _edit_jsonl(S["lm-eval-samples"], 3, lambda o: _set(o, "doc_id", [2])),
            Error("line 3", "doc_id", ("list",)),
        ),
        Case(
            "wrong type",
            S["tora"],
            "idx a list",
            _edit_jsonl(S["tora"], 3, lambda o: _set(o, "idx", [2])),
            Error("line 3", "record_id", ("list",)),
        ),
        Case(
            "wrong type",
            S["tora"],
            "pred an object",
            _edit_jsonl(S["tora"], 3, lambda o: _set(o, "pred", [{"v": 1}])),
            Error("line 3", "upstream_answer", ("JSON object",)),
        ),
        Case(
            "wrong type",
            S["openai-gsm8k"],
            "solution an object",
            _edit_jsonl(S["openai-gsm8k"], 3, lambda o: _set(o["6b_finetuning"], "solution", {"v": 1})),
            Error("line 3, 6b_finetuning", "raw_output", ("JSON object",)),
        ),
        Case(
            "wrong type",
            S["program-of-thoughts"],
            "executed an object",
            _edit_jsonl(S["program-of-thoughts"], 3, lambda o: _set(o, "executed", {"v": 1})),
            Error("line 3", "predicted_answer", ("JSON object",)),
        ),
        Case(
            "wrong type",
            S["convfinqa-reformatted"],
            "id a list",
            dev(lambda r: _set(r, "id", ["x"])),
            Error("record 2", "id", ("list",)),
        ),
        Case(
            "wrong type",
            S["convfinqa-reformatted"],
            "answer an object",
            dev(lambda r: r["dialogue"]["conv_answers"].__setitem__(1, {"v": 1})),
            Error(f"record 2 (id '{dev_id}'), turn 1", "dialogue.conv_answers", ("dict",)),
        ),
        Case(
            "wrong type",
            S["convfinqa-reformatted"],
            "executed answer a list",
            dev(lambda r: r["dialogue"]["executed_answers"].__setitem__(0, [1, 2])),
            Error(f"record 2 (id '{dev_id}'), turn 0", "dialogue.executed_answers", ("list",)),
        ),
        Case(
            "wrong type",
            S["convfinqa-reformatted"],
            "questions a string",
            dev(lambda r: _set(r["dialogue"], "conv_questions", "two")),
            Error("record 2", "dialogue.conv_questions", ("expected list", "str")),
        ),
        Case(
            "wrong type",
            S["convfinqa-original"],
            "executed answer an object",
            _edit_json(S["convfinqa-original"], lambda d: d[2]["annotation"]["exe_ans_list"].__setitem__(0, {"v": 1})),
            Error(f"record 2 (id '{orig_id}'), turn 0", "annotation.exe_ans_list", ("dict",)),
        ),
        Case(
            "wrong type",
            S["convfinqa-original"],
            "dialogue_break a string",
            _edit_json(S["convfinqa-original"], lambda d: _set(d[2]["annotation"], "dialogue_break", "two")),
            Error("record 2", "annotation.dialogue_break", ("expected list",)),
        ),
        Case(
            "wrong type",
            S["gsm8k-gold"],
            "answer an object",
            _edit_jsonl(S["gsm8k-gold"], 3, lambda o: _set(o, "answer", {"v": 1})),
            Error("line 3", "answer", ("expected str", "dict")),
        ),
        Case(
            "wrong type",
            S["gsm8k-gold"],
            "question a number",
            _edit_jsonl(S["gsm8k-gold"], 3, lambda o: _set(o, "question", 5)),
            Error("line 3", "question", ("expected str", "int")),
        ),
        Case(
            "wrong type",
            S["math-jsonl"],
            "solution a number",
            _edit_jsonl(S["math-jsonl"], 3, lambda o: _set(o, "solution", 5)),
            Error("line 3", "solution", ("expected str",)),
        ),
        Case(
            "wrong type",
            S["math-json"],
            "problem a list",
            _edit_json(S["math-json"], lambda d: _set(d[2], "problem", ["a"])),
            Error("record 2", "problem", ("expected str",)),
        ),
    ]
    gj = S["gold-table-jsonl"]
    cases += [
        Case(
            "wrong type",
            gj,
            "turn 'two'",
            _edit_jsonl(gj, 3, lambda o: _set(o, "turn", "two")),
            Error("line 3", "turn", ("'two'",)),
        ),
        Case(
            "wrong type",
            gj,
            "turn -1",
            _edit_jsonl(gj, 3, lambda o: _set(o, "turn", -1)),
            Error("line 3", "turn", ("-1",)),
        ),
        Case(
            "wrong type",
            gj,
            "turn 1.5",
            _edit_jsonl(gj, 3, lambda o: _set(o, "turn", 1.5)),
            Error("line 3", "turn", ("1.5",)),
        ),
        Case(
            "wrong type",
            gj,
            "record_id a list",
            _edit_jsonl(gj, 3, lambda o: _set(o, "record_id", ["a"])),
            Error("line 3", "record_id", ("list",)),
        ),
        Case(
            "wrong type",
            gj,
            "gold_answer an object",
            _edit_jsonl(gj, 3, lambda o: _set(o, "gold_answer", {"v": 1})),
            Error("line 3", "gold_answer", ("dict",)),
        ),
    ]
    g = S["gold-table-csv"]
    for value in ("two", "-1", "1.5"):
        cases.append(
            Case(
                "wrong type",
                g,
                f"turn {value!r}",
                _edit_csv_line(g, 3, "turn", value),
                Error("line 3", "turn", (repr(value),)),
            )
        )
    a = S["annotation-csv"]
    for value in ("two", "-1", "1.5"):
        cases.append(
            Case(
                "wrong type",
                a,
                f"turn {value!r}",
                _edit_csv_line(a, 3, "turn", value),
                Error("line 3", "turn", (value,)),
            )
        )
    b = S["batch-yaml"]

    def yaml_edit(old: str, new: str) -> Callable[[], bytes]:
        return lambda: _text(b).replace(old, new, 1).encode("utf-8")

    cases += [
        Case(
            "wrong type",
            b,
            "template a list",
            yaml_edit("template: 01-overview", "template: [01-overview]"),
            Error("report 1", "template", ("list",)),
        ),
        Case(
            "wrong type",
            b,
            "predictions a number",
            yaml_edit(
                "    predictions:\n      - tests/fixtures/predictions/zarifaziz_dev_small.jsonl\n"
                "      - tests/fixtures/predictions/zarifaziz_dev_small_12-48-44Z.jsonl\n",
                "    predictions: 42\n",
            ),
            Error("report 2", "predictions", ("42",)),
        ),
        Case(
            "wrong type",
            b,
            "parameters a list",
            yaml_edit("parameters: {n_boot: 500, max_failed_rows: 5}", "parameters: [500, 5]"),
            Error("report 2", "parameters", ("mapping",)),
        ),
        Case(
            "wrong type",
            b,
            "dataset a mapping",
            yaml_edit("dataset: tests/fixtures/convfinqa/dev_small.json", "dataset: {path: dev_small.json}"),
            Error("report 1", "dataset", ("dict",)),
        ),
        Case(
            "wrong type",
            b,
            "entry out a list",
            yaml_edit("  - template: 04-compare-systems\n", "  - template: 04-compare-systems\n    out: [a, b]\n"),
            Error("report 2", "out", ("list",)),
        ),
        Case(
            "wrong type",
            b,
            "top-level out a list",
            yaml_edit("out: reports/nightly", "out: [reports]"),
            Error(None, "out", ("list",)),
        ),
    ]
    return cases


# ---- kinds 3 and 4: byte-order marks, non-UTF-8 bytes
def _text_sources() -> list[Source]:
    return [s for s in SOURCES.values() if s.style != "parquet"]


def byte_order_marks() -> list[Case]:
    cases = []
    for s in _text_sources():
        cases.append(Case("UTF-8 BOM", s, "BOM first", lambda s=s: b"\xef\xbb\xbf" + s.clean(), Same()))
        cases.append(Case("UTF-16 BOM", s, "UTF-16 LE", lambda s=s: _text(s).encode("utf-16"), Same()))
        cases.append(Case("UTF-16 BOM", s, "UTF-16 BE", lambda s=s: b"\xfe\xff" + _text(s).encode("utf-16-be"), Same()))
    return cases


def non_utf8() -> list[Case]:
    cases = []
    for s in _text_sources():
        data = s.clean()
        lines = data.split(b"\n")
        line = {"yaml": 2, "csv": 3, "jsonl": 3}.get(s.style, max(2, len(lines) // 2))
        if len(lines) < 3:  # one-line JSON: in the middle of line 1
            line = 1
        before = sum(len(x) + 1 for x in lines[: line - 1])
        at = before + len(lines[line - 1]) // 2
        bad = data[:at] + b"\xe9" + data[at:]  # latin-1 e-acute
        cases.append(
            Case(
                "non-UTF-8",
                s,
                f"latin-1 byte on line {line}",
                lambda bad=bad: bad,
                Error(f"line {line}", None, ("0xe9", f"byte offset {at}", "not UTF-8")),
            )
        )
    return cases


# ---- kind 5: empty
def empty() -> list[Case]:
    cases = []
    for s in SOURCES.values():
        cases.append(Case("empty", s, "0 bytes", lambda: b"", Error(None, None, ("empty",))))
        if s.style != "parquet":
            cases.append(Case("empty", s, "whitespace only", lambda: b"  \n\n\t \n", Error(None, None, ("empty",))))
    return cases


# ---- kind 6: duplicate keys (a JSON key, a CSV column, a YAML key given twice)
_SCALAR_KEY_LINE = re.compile(r'^\s*"(?P<key>[^"]+)": [^\[{].*,$')


def _duplicate_json_key(source: Source) -> tuple[Callable[[], bytes], int, str]:
    lines = _text(source).splitlines()
    if len(lines) < 3:
        return None  # type: ignore[return-value]
    start = len(lines) // 2
    index = next(i for i in range(start, len(lines)) if _SCALAR_KEY_LINE.match(lines[i]))
    key = _SCALAR_KEY_LINE.match(lines[index]).group("key")  # type: ignore[union-attr]
    new = [*lines[: index + 1], lines[index], *lines[index + 1 :]]
    return (lambda: ("\n".join(new) + "\n").encode("utf-8")), index + 2, key


def duplicate_keys() -> list[Case]:
    cases = []
    for s in SOURCES.values():
        if s.style == "jsonl":
            key = next(iter(json.loads(_text(s).splitlines()[2])))

            def make(s: Source = s, key: str = key) -> bytes:
                lines = _text(s).splitlines()
                lines[2] = "{" + json.dumps(key) + ": null, " + lines[2].lstrip()[1:]
                return ("\n".join(lines) + "\n").encode("utf-8")

            cases.append(
                Case("duplicate key", s, f"'{key}' twice on line 3", make, Error("line 3", key, ("appears twice",)))
            )
        elif s.style == "json" and len(_text(s).splitlines()) > 3:
            make, line, key = _duplicate_json_key(s)
            cases.append(
                Case("duplicate key", s, f"'{key}' twice", make, Error(f"line {line}", key, ("appears twice",)))
            )
        elif s.style == "json":  # one-line JSON
            text = _text(s)
            cut = text.index('"id": ')
            cases.append(
                Case(
                    "duplicate key",
                    s,
                    "'id' twice",
                    lambda text=text, cut=cut: (text[:cut] + '"id": "x", ' + text[cut:]).encode("utf-8"),
                    Error("line 1", "id", ("appears twice",)),
                )
            )
        elif s.style == "csv":
            text = _text(s)
            header = text.split("\n", 1)[0].split(",")

            def make_csv(text: str = text, header: list[str] = header) -> bytes:
                head, rest = text.split("\n", 1)
                return (head + "," + header[1] + "\n" + rest).encode("utf-8")

            words = ("twice",)
            cases.append(
                Case("duplicate key", s, f"column '{header[1]}' twice", make_csv, Error("line 1", header[1], words))
            )
        elif s.style == "yaml":
            text = _text(s)
            cases.append(
                Case(
                    "duplicate key",
                    s,
                    "'template' twice in report 2",
                    lambda text=text: text.replace(
                        "  - template: 04-compare-systems\n",
                        "  - template: 04-compare-systems\n    template: 01-overview\n",
                    ).encode("utf-8"),
                    Error(f"line {_line_of(text, text.index('04-compare')) + 1}", "template", ("appears twice",)),
                )
            )
    return cases


# ---- kind 7: duplicate (record_id, turn, system) rows
def duplicate_rows() -> list[Case]:
    S = SOURCES
    z, c, pq = S["zarifaziz-jsonl"], S["canonical-csv"], S["canonical-parquet"]
    n = len(_canonical_rows())
    gh = S["ghchen99-json"]
    gh_data = json.loads(_text(gh))
    res = S["ghchen99-results"]
    n_results = len(json.loads(_text(res))["results"])
    lm = S["lm-eval-samples"]
    cases = [
        Case(
            "duplicate row",
            z,
            "line 3 again at the end",
            _appended_jsonl_copy(z, 3),
            Error(f"line {n + 1}", "record_id, turn_idx", ("duplicate", "first at line 3")),
        ),
        Case(
            "duplicate row",
            c,
            "line 3 again at the end",
            lambda: c.clean() + _text(c).splitlines()[2].encode("utf-8") + b"\n",
            Error(f"line {n + 2}", "record_id, turn", ("duplicate", "first at line 3")),
        ),
        Case(
            "duplicate row",
            pq,
            "row 3 again at the end",
            lambda: _parquet_bytes(pl.concat([pl.DataFrame(_canonical_rows()), pl.DataFrame(_canonical_rows())[2]])),
            Error(f"row {n + 1}", "record_id, turn", ("duplicate", "first at row 3")),
        ),
        Case(
            "duplicate row",
            gh,
            "record 2 again at the end",
            _edit_json(gh, lambda d: d.append(d[2])),
            Error(
                f"record {len(gh_data)} (id '{gh_data[2]['id']}'), turn 0",
                "record_id, turn",
                ("duplicate", "first at record 2"),
            ),
        ),
        Case(
            "duplicate row",
            res,
            "results[5] again at the end",
            _edit_json(res, lambda d: d["results"].append(d["results"][5])),
            Error(f"results[{n_results}]", "record_id, turn", ("duplicate", "first at results[5]")),
        ),
        Case(
            "duplicate row",
            lm,
            "line 3 again at the end",
            _appended_jsonl_copy(lm, 3),
            Error(f"line {_n_lines(lm) + 1}", "doc_id, filter", ("duplicate", "first at line 3")),
        ),
        Case(
            "duplicate row",
            S["tora"],
            "line 3 again at the end",
            _appended_jsonl_copy(S["tora"], 3),
            Error(f"line {_n_lines(S['tora']) + 1}", "record_id, turn", ("duplicate", "first at line 3")),
        ),
        Case(
            "duplicate row",
            S["openai-gsm8k"],
            "line 3 again at the end",
            _appended_jsonl_copy(S["openai-gsm8k"], 3),
            Unmatched(4, "question asked more often than gold has it"),
        ),
        Case(
            "duplicate row",
            S["program-of-thoughts"],
            "line 3 again at the end",
            _appended_jsonl_copy(S["program-of-thoughts"], 3),
            Unmatched(1, "question asked more often than gold has it"),
        ),
        Case(
            "duplicate row",
            S["convfinqa-reformatted"],
            "record 2 again at the end",
            _edit_json(S["convfinqa-reformatted"], lambda d: d["dev"].append(d["dev"][2])),
            Error("record 12", "id", ("appears twice",)),
        ),
        Case(
            "duplicate row",
            S["gold-table-csv"],
            "line 3 again at the end",
            lambda: S["gold-table-csv"].clean() + _text(S["gold-table-csv"]).splitlines()[2].encode("utf-8") + b"\n",
            Error(f"line {len(_gold_table_rows()) + 2}", "record_id, turn", ("duplicate", "first at line 3")),
        ),
    ]
    return cases


# ---- kinds 8 and 9: unknown records, turns out of range
def _n_turns(record_id: str) -> int:
    data = json.loads((FIXTURES / "convfinqa" / "dev_small.json").read_text(encoding="utf-8"))
    return next(len(r["dialogue"]["conv_questions"]) for r in data["dev"] if r["id"] == record_id)


def unknown_records() -> list[Case]:
    S = SOURCES
    z, c = S["zarifaziz-jsonl"], S["canonical-csv"]
    nope = "Single_NOPE/2000/page_1.pdf-1"
    gh = S["ghchen99-json"]
    n_gh = len(json.loads(_text(gh))[2]["conversation"])
    lm = S["lm-eval-samples"]

    def lm_change() -> bytes:
        lines = _text(lm).splitlines()
        out = []
        for line in lines:
            obj = json.loads(line)
            if obj["doc_id"] == 1:
                obj["doc_id"] = 999
                line = json.dumps(obj, ensure_ascii=False)
            out.append(line)
        return ("\n".join(out) + "\n").encode("utf-8")

    return [
        Case(
            "unknown record",
            z,
            "record_id not in gold",
            _edit_jsonl(z, 3, lambda o: _set(o, "record_id", nope)),
            Unmatched(1, "record_id not in dev_small.json"),
        ),
        Case(
            "unknown record",
            c,
            "record_id not in gold",
            _edit_csv_line(c, 3, "record_id", nope),
            Unmatched(1, "record_id not in dev_small.json"),
        ),
        Case(
            "unknown record",
            S["canonical-parquet"],
            "record_id not in gold",
            lambda: _parquet_bytes(
                pl.DataFrame(_canonical_rows()).with_columns(
                    pl.when(pl.int_range(pl.len()) == 2).then(pl.lit(nope)).otherwise("record_id").alias("record_id")
                )
            ),
            Unmatched(1, "record_id not in dev_small.json"),
        ),
        Case(
            "unknown record",
            gh,
            "id not in gold",
            _edit_json(gh, lambda d: _set(d[2], "id", nope)),
            Unmatched(n_gh, "record_id not in ghchen99_predictions_first_100.json"),
        ),
        Case(
            "unknown record",
            S["ghchen99-results"],
            "question_id not in gold",
            _edit_json(S["ghchen99-results"], lambda d: _set(d["results"][5], "question_id", nope + "-0")),
            Unmatched(1, "record_id not in ghchen99_predictions_first_100.json"),
        ),
        Case("unknown record", lm, "doc_id 999", lm_change, Unmatched(1, "record_id not in test_first_20.jsonl")),
        Case(
            "unknown record",
            S["tora"],
            "idx 999",
            _edit_jsonl(S["tora"], 3, lambda o: _set(o, "idx", 999)),
            Unmatched(1, "record_id not in test_first_20.jsonl"),
        ),
        Case(
            "unknown record",
            S["openai-gsm8k"],
            "question not in gold",
            _edit_jsonl(S["openai-gsm8k"], 3, lambda o: _set(o, "question", "How many bad files are there?")),
            Unmatched(4, "question not in gold"),
        ),
        Case(
            "unknown record",
            S["program-of-thoughts"],
            "question not in gold",
            _edit_jsonl(S["program-of-thoughts"], 3, lambda o: _set(o, "question", "How many bad files are there?")),
            Unmatched(1, "question not in gold"),
        ),
    ]


def turns_out_of_range() -> list[Case]:
    S = SOURCES
    z, c = S["zarifaziz-jsonl"], S["canonical-csv"]
    rid = _zarifaziz()[2]["record_id"]
    n = _n_turns(rid)
    why = f"turn 7 is out of range for a {n}-turn conversation"
    res = S["ghchen99-results"]
    qid = json.loads(_text(res))["results"][5]["question_id"]
    gh_record = qid.rpartition("-")[0]
    n_gh = next(len(r["conversation"]) for r in json.loads(_text(S["ghchen99-json"])) if r["id"] == gh_record)
    return [
        Case(
            "turn out of range", z, "turn_idx 7", _edit_jsonl(z, 3, lambda o: _set(o, "turn_idx", 7)), Unmatched(1, why)
        ),
        Case("turn out of range", c, "turn 7", _edit_csv_line(c, 3, "turn", "7"), Unmatched(1, why)),
        Case(
            "turn out of range",
            S["canonical-parquet"],
            "turn 7",
            lambda: _parquet_bytes(
                pl.DataFrame(_canonical_rows()).with_columns(
                    pl.when(pl.int_range(pl.len()) == 2).then(7).otherwise("turn").alias("turn")
                )
            ),
            Unmatched(1, why),
        ),
        Case(
            "turn out of range",
            res,
            "question_id ...-7",
            _edit_json(res, lambda d: _set(d["results"][5], "question_id", gh_record + "-7")),
            Unmatched(1, f"turn 7 is out of range for a {n_gh}-turn conversation"),
        ),
    ]


# ---- kind 10: mixed schemas
def mixed_schemas() -> list[Case]:
    S = SOURCES
    z, c = S["zarifaziz-jsonl"], S["canonical-csv"]
    n = len(_canonical_rows())

    def canonical_line(o: dict[str, Any]) -> None:
        keep = {"record_id": o["record_id"], "turn": o["turn_idx"], "predicted_answer": o["predicted_answer"]}
        o.clear()
        o.update(keep)

    def zarifaziz_block() -> bytes:
        rows = [
            {
                "record_id": o["record_id"],
                "turn_idx": o["turn_idx"],
                "predicted_answer": o["predicted_answer"],
                "predicted_unit": o["predicted_unit"],
                "question": o["question"],
            }
            for o in _zarifaziz()[:3]
        ]
        return c.clean() + _csv_bytes(rows)

    def gsm8k_math() -> bytes:
        lines = _text(S["gsm8k-gold"]).splitlines()
        lines[3] = (FIXTURES / "math" / "hendrycks_math_test_8.jsonl").read_text(encoding="utf-8").splitlines()[0]
        return ("\n".join(lines) + "\n").encode("utf-8")

    def math_gsm8k() -> bytes:
        lines = _text(S["math-jsonl"]).splitlines()
        lines[2] = _text(S["gsm8k-gold"]).splitlines()[0]
        return ("\n".join(lines) + "\n").encode("utf-8")

    def annotation_block() -> bytes:
        a = S["annotation-csv"]
        return a.clean() + b"record_id,turn,category,annotator,note,rule,verdict\nX,0,other,ana,n,r,v\n"

    def tora_zarifaziz() -> bytes:
        lines = _text(S["tora"]).splitlines()
        lines[4] = _text(z).splitlines()[0]
        return ("\n".join(lines) + "\n").encode("utf-8")

    return [
        Case(
            "mixed schemas",
            z,
            "line 5 canonical",
            _edit_jsonl(z, 5, canonical_line),
            Error("line 5", "turn_idx", ("mixes two schemas", "canonical", "zarifaziz")),
        ),
        Case(
            "mixed schemas",
            c,
            "zarifaziz CSV pasted below",
            zarifaziz_block,
            Error(f"line {n + 2}", None, ("turn_idx", "predicted_unit", "header has 4 columns")),
        ),
        Case(
            "mixed schemas",
            S["tora"],
            "line 5 zarifaziz",
            tora_zarifaziz,
            Error("line 5", "idx", ("mixes two schemas", "ToRA", "turn_idx")),
        ),
        Case(
            "mixed schemas",
            S["gsm8k-gold"],
            "line 4 MATH",
            gsm8k_math,
            Error("line 4", "question", ("mixes two schemas", "MATH", "GSM8K")),
        ),
        Case(
            "mixed schemas",
            S["math-jsonl"],
            "line 3 GSM8K",
            math_gsm8k,
            Error("line 3", "problem", ("mixes two schemas", "MATH", "GSM8K")),
        ),
        Case(
            "mixed schemas",
            S["annotation-csv"],
            "other CSV pasted below",
            annotation_block,
            Error(f"line {len(_annotation_rows()) + 2}", None, ("more value", "header has 5", "rule")),
        ),
    ]


# ---- extra kind: a CSV quote that is never closed (the rest of the file would be one value)
def unclosed_quotes() -> list[Case]:
    cases = []
    for s in SOURCES.values():
        if s.style != "csv":
            continue

        def make(s: Source = s) -> bytes:
            lines = _text(s).splitlines()
            row = next(csv.reader([lines[2]]))
            row[-1] = '"' + row[-1].replace('"', "")
            lines[2] = ",".join(f'"{v}"' if "," in v else v for v in row[:-1]) + "," + row[-1]
            return ("\n".join(lines) + "\n").encode("utf-8")

        cases.append(Case("unclosed quote", s, "last value of line 3", make, Error("line 3", None, ("quote",))))
    return cases


# ---- extra kind: hostile JSON (100,000-deep nesting, a 100,000-digit number, non-finite gold)
DEPTH = 100_000
HOSTILE_VALUES = {
    "100,000-deep array": ("[" * DEPTH + "]" * DEPTH, "[0]", ("nested more than 100 levels deep",)),
    "100,000-deep object": ('{"a":' * DEPTH + "1" + "}" * DEPTH, ".a", ("nested more than 100 levels deep",)),
    "100,000-digit number": ("9" * 100_000, "", ("100,000 digits", "4,300")),
}
_RAW = "@@raw@@"


def _shown_path(steps: list[str]) -> str:
    """A field path as the JSON reader names it: at most 6 steps, then '...'."""
    return ("".join(steps[:6]) + ("..." if len(steps) > 6 else "")).removeprefix(".")


def _with_raw_jsonl(source: Source, line: int, key: str, raw: str) -> Callable[[], bytes]:
    def make() -> bytes:
        lines = _text(source).splitlines()
        obj = json.loads(lines[line - 1])
        obj[key] = _RAW
        lines[line - 1] = json.dumps(obj, ensure_ascii=False).replace(f'"{_RAW}"', raw)
        return ("\n".join(lines) + "\n").encode("utf-8")

    return make


def _with_raw_json(source: Source, change: Callable[[Any], Any], raw: str) -> tuple[Callable[[], bytes], int]:
    """``source`` with ``raw`` JSON text where ``change`` puts the placeholder; and its line."""
    data = json.loads(_text(source))
    change(data)
    text = json.dumps(data, indent=1, ensure_ascii=False)
    line = _line_of(text, text.index(f'"{_RAW}"'))
    return (lambda: text.replace(f'"{_RAW}"', raw).encode("utf-8")), line


def hostile_json() -> list[Case]:
    """Every JSON and JSON Lines source with a 100,000-deep value and a 100,000-digit number in an
    extra field; every gold loader with a non-finite gold answer."""
    cases = []
    for s in SOURCES.values():
        for variant, (raw, step, words) in HOSTILE_VALUES.items():
            deep = [step] * (DEPTH if step else 0)
            if s.style == "jsonl":
                field = _shown_path([".extra_field", *deep])
                make = _with_raw_jsonl(s, 3, "extra_field", raw)
                cases.append(Case("hostile JSON", s, f"{variant} on line 3", make, Error("line 3", field, words)))
            elif s.style == "json":
                data = json.loads(_text(s))
                prefix = (
                    ["[1]"]
                    if isinstance(data, list)
                    else [f".{next(k for k, v in data.items() if isinstance(v, list))}", "[1]"]
                )
                make, line = _with_raw_json(s, lambda d: _set(_records(d)[1], "extra_field", _RAW), raw)
                field = _shown_path([*prefix, ".extra_field", *deep])
                cases.append(
                    Case("hostile JSON", s, f"{variant} in record 1", make, Error(f"line {line}", field, words))
                )
    S = SOURCES
    finite = ("not a finite number",)
    dev, orig = S["convfinqa-reformatted"], S["convfinqa-original"]
    dev_id = json.loads(_text(dev))["dev"][2]["id"]
    orig_id = json.loads(_text(orig))[2]["id"]
    make_dev, _ = _with_raw_json(
        dev, lambda d: d["dev"][2]["dialogue"]["executed_answers"].__setitem__(1, _RAW), "1e999999"
    )
    make_orig, _ = _with_raw_json(orig, lambda d: d[2]["annotation"]["exe_ans_list"].__setitem__(0, _RAW), "NaN")

    def gsm8k_inf() -> bytes:
        lines = _text(S["gsm8k-gold"]).splitlines()
        obj = json.loads(lines[2])
        obj["answer"] = obj["answer"].rsplit("####", 1)[0] + "#### inf"
        lines[2] = json.dumps(obj, ensure_ascii=False)
        return ("\n".join(lines) + "\n").encode("utf-8")

    def math_inf() -> bytes:
        lines = _text(S["math-jsonl"]).splitlines()
        obj = json.loads(lines[2])
        obj["solution"] += " So the answer is $\\boxed{-Infinity}$."
        lines[2] = json.dumps(obj, ensure_ascii=False)
        return ("\n".join(lines) + "\n").encode("utf-8")

    def table_rows_with(answer: Any) -> list[dict[str, Any]]:
        rows = _gold_table_rows()
        rows[2] = {**rows[2], "gold_answer": answer}
        return rows

    return [
        *cases,
        Case(
            "hostile JSON",
            dev,
            "executed answer 1e999999",
            make_dev,
            Error(f"record 2 (id '{dev_id}'), turn 1", "dialogue.executed_answers", finite),
        ),
        Case(
            "hostile JSON",
            orig,
            "exe_ans_list NaN",
            make_orig,
            Error(f"record 2 (id '{orig_id}'), turn 0", "annotation.exe_ans_list", finite),
        ),
        Case("hostile JSON", S["gsm8k-gold"], "#### inf", gsm8k_inf, Error("line 3", "answer", finite)),
        Case("hostile JSON", S["math-jsonl"], "boxed -Infinity", math_inf, Error("line 3", "solution", finite)),
        Case(
            "hostile JSON",
            S["gold-table-csv"],
            "gold_answer 1e999",
            lambda: _csv_bytes(table_rows_with("1e999")),
            Error("line 4", "gold_answer", finite),
        ),
        Case(
            "hostile JSON",
            S["gold-table-jsonl"],
            "gold_answer NaN",
            lambda: "".join(json.dumps(r) + "\n" for r in table_rows_with(float("nan"))).encode("utf-8"),
            Error("line 3", "gold_answer", finite),
        ),
    ]


KINDS = {
    "truncated": truncated,
    "wrong type": wrong_types,
    "BOM": byte_order_marks,
    "non-UTF-8": non_utf8,
    "empty": empty,
    "duplicate key": duplicate_keys,
    "duplicate row": duplicate_rows,
    "unknown record": unknown_records,
    "turn out of range": turns_out_of_range,
    "mixed schemas": mixed_schemas,
    "unclosed quote": unclosed_quotes,
    "hostile JSON": hostile_json,
}

CASES: list[Case] = [case for build in KINDS.values() for case in build()]
