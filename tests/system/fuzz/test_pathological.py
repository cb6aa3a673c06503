"""Pathological grading inputs (tests/fixtures/pathological/catalogue.jsonl): each one gets the
status the catalogue gives it, alone and inside a batch of real outputs, and the 99% normal
outputs of that batch get the same verdicts with and without the pathological 1%. What the
batch costs (at most about one time limit per pathological item more than the normal 99%) is
printed by bench/pathological_batch.py, which grades this same batch; no test here times anything.

The batch: 10,000 real GSM8K model outputs (ToRA, program-of-thoughts, OpenAI's GPT-3
solutions, bundled under data/predictions/gsm8k), graded against GSM8K test through
:func:`workbench.pipeline.grade.grade_predictions`, the entry point ``workbench grade`` uses for GSM8K and
MATH; every 100th is replaced by a catalogue entry (cycled), so 100 are pathological.

Catalogue entries: ``id``, ``kind``, ``field`` (``answer``, ``raw_output`` or ``program``: which
prediction field carries the text), ``text`` or ``build`` (``left * times + core + right *
times``, for the long ones), ``gold``, ``status`` (the statuses allowed: some inputs end in a
RecursionError inside SymPy on one machine and in the time limit on another), ``correct``, and
a ``note`` on why that verdict is the right one; ``batch_status`` when the status differs against
the batch's gold (a GSM8K number) from the status against the entry's own gold.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from fuzzkit import LIMIT, active_profile, tried

from workbench.grading import memo
from workbench.grading.policies import POLICIES, GradingPolicy, for_benchmark
from workbench.grading.symbolic import latex_equivalent
from workbench.grading.turn import grade_turn
from workbench.io.gold import load_gold
from workbench.io.link import attach_record_ids
from workbench.io.predictions import load_predictions
from workbench.pipeline.grade import grade_predictions

REPO = Path(__file__).resolve().parents[3]
CATALOGUE = REPO / "tests" / "fixtures" / "pathological" / "catalogue.jsonl"
GSM8K = REPO / "data" / "gsm8k" / "test.jsonl"
RUNS = REPO / "data" / "predictions" / "gsm8k"
RUN_FILES = (
    RUNS / "tora" / "tora-70b.jsonl",
    RUNS / "tora" / "tora-code-34b.jsonl",
    RUNS / "program-of-thoughts" / "gsm8K_zs_s0_e-1_11_19_09_55.jsonl",
    RUNS / "program-of-thoughts" / "gsm8K_s0_e-1_11_17_10_20.jsonl",
    RUNS / "openai-gpt3" / "example_model_solutions.jsonl",
)
BATCH, EVERY = 10_000, 100
#: CPU seconds a SymPy comparison may take in the batch. The product's default (limits.py) under the
#: ``fuzz`` profile or with WORKBENCH_PATHOLOGICAL_LIMIT; a shorter one in CI, which keeps the test
#: shorter (each timeout costs the limit). The limit counts CPU time, so a busy machine gives the
#: same verdicts.
BATCH_LIMIT = float(os.environ.get("WORKBENCH_PATHOLOGICAL_LIMIT", "0") or 0) or (
    LIMIT if active_profile() == "fuzz" else 0.5
)

_FIELDS = {"answer": "predicted_answer", "raw_output": "raw_output", "program": "predicted_program"}


def _entries() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CATALOGUE.read_text(encoding="utf-8").splitlines() if line.strip()]


def _text(entry: dict[str, Any]) -> str:
    if "text" in entry:
        return str(entry["text"])
    b = entry["build"]
    return b["left"] * b["times"] + b["core"] + b["right"] * b["times"]


ENTRIES = _entries()


def _with_limit(policy: GradingPolicy, limit: float) -> GradingPolicy:
    return replace(policy, numbers=replace(policy.numbers, time_limit=limit))


def test_the_catalogue_is_well_formed() -> None:
    ids = [e["id"] for e in ENTRIES]
    assert len(ids) == len(set(ids)) >= 40
    allowed = {"ok", "no_answer", "unparseable", "timeout"}
    for entry in ENTRIES:
        assert entry["field"] in _FIELDS and set(entry["status"]) <= allowed and entry["note"] is not None
        assert set(entry.get("batch_status", [])) <= allowed
        assert ("text" in entry) != ("build" in entry)
    kinds = {e["kind"] for e in ENTRIES}
    assert {"huge power", "deep nesting", "1 MB string", "look-alike minus", "undefined", "program"} <= kinds


#: Entries checked one by one; the ones that may time out and the long ones are checked in the batch.
_ALONE = [e for e in ENTRIES if "timeout" not in e["status"] and len(_text(e)) <= 20_000]


@pytest.mark.parametrize("entry", _ALONE, ids=lambda e: e["id"])
def test_a_pathological_input_gets_its_catalogued_verdict(entry: dict[str, Any]) -> None:
    """Alone, against its own gold, under every policy."""
    tried("pathological entry")
    policies = [for_benchmark(p, "gsm8k") for p in POLICIES.values()]
    fields = {"predicted_answer": None, "predicted_program": None, "raw_output": None}
    fields[_FIELDS[entry["field"]]] = _text(entry)
    grade = grade_turn(gold_executed=entry["gold"], gold_program=None, policy=policies[-1], also=policies, **fields)
    verdict = grade.verdict
    assert verdict.status.value in entry["status"], verdict.detail
    assert verdict.correct is entry["correct"], verdict.detail
    for each in grade.policies:
        assert not each.verdict.correct or each.verdict.status.value == "ok"


# --------------------------------------------------------------------------- the batch
def _real_outputs() -> pl.DataFrame:
    gold = load_gold(GSM8K)
    frames = []
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*prompt-only lines.*", category=UserWarning)
        for path in RUN_FILES:
            frames.append(attach_record_ids(load_predictions(path), gold))
    outputs = pl.concat(frames, how="vertical_relaxed").filter(pl.col("record_id").is_not_null())
    return outputs.sort("system", pl.col("record_id").cast(pl.String).cast(pl.Int64), maintain_order=True).head(BATCH)


def _make_pathological(outputs: pl.DataFrame) -> tuple[pl.DataFrame, list[int], list[dict[str, Any]]]:
    """The batch with every EVERY-th row (from row 37) replaced by a catalogue entry, cycled."""
    rows = outputs.to_dicts()
    positions = list(range(37, len(rows), EVERY))
    used = []
    for k, position in enumerate(positions):
        entry = ENTRIES[k % len(ENTRIES)]
        row = rows[position]
        for column in ("predicted_answer", "predicted_program", "raw_output", "upstream_answer"):
            row[column] = None
        row[_FIELDS[entry["field"]]] = _text(entry)
        used.append(entry)
    return pl.DataFrame(rows, schema=outputs.schema), positions, used


def _grade(gold, predictions: pl.DataFrame, limit: float):  # type: ignore[no-untyped-def]
    memo.clear()  # every run from cold caches: the normal run must not warm the batch run
    policies = [_with_limit(p, limit) for p in POLICIES.values()]
    return grade_predictions(gold, predictions, policy=policies[-1], also=policies, workers=1)


def build_batch() -> tuple[pl.DataFrame, pl.DataFrame, list[int], list[dict[str, Any]]]:
    """The normal 9,900 outputs, the batch (with the 100 pathological ones), their positions and entries."""
    outputs = _real_outputs()
    assert outputs.height == BATCH
    batch, positions, used = _make_pathological(outputs)
    normal = outputs.filter(~pl.int_range(pl.len()).is_in(positions))
    assert normal.height == BATCH - len(positions) == 9_900
    return normal, batch, positions, used


@pytest.mark.slow  # grades 19,900 outputs
@pytest.mark.skipif(not GSM8K.exists() or not all(p.exists() for p in RUN_FILES), reason="bundled GSM8K runs")
def test_one_percent_pathological_changes_no_other_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    gold = load_gold(GSM8K)
    normal, batch, positions, used = build_batch()
    latex_equivalent("1", "2", time_limit=LIMIT)  # a warm worker

    alone = _grade(gold, normal, BATCH_LIMIT)
    mixed = _grade(gold, batch, BATCH_LIMIT)
    for _ in positions:
        tried("pathological batch item")

    keys = ["system", "record_id", "turn"]
    verdict = ["correct", "status", "reason"]
    answered = normal.select(keys).join(alone.turns, on=keys, how="left").select(*keys, *verdict)
    in_batch = normal.select(keys).join(mixed.turns, on=keys, how="left").select(*keys, *verdict)
    assert answered.height == in_batch.height == 9_900
    changed = answered.join(in_batch, on=keys, suffix="_batch").filter(
        (pl.col("correct") != pl.col("correct_batch"))
        | (pl.col("status") != pl.col("status_batch"))
        | (pl.col("reason") != pl.col("reason_batch"))
    )
    if not changed.is_empty():  # say which: the verdicts and details of both runs
        shown = changed.select(keys).join(alone.turns, on=keys).join(mixed.turns, on=keys, suffix="_batch")
        detail = shown.select(*keys, "answer", *verdict, "detail", *[f"{c}_batch" for c in verdict], "detail_batch")
        raise AssertionError(detail.to_dicts()[:5])

    patho = batch[positions].select(keys).with_columns(pl.Series("entry", [e["id"] for e in used]))
    graded = patho.join(mixed.turns, on=keys, how="left").select("entry", "status", "correct", "detail")
    by_id = {e["id"]: e for e in ENTRIES}
    wrong = [
        (row["entry"], row["status"], row["detail"][:80])
        for row in graded.iter_rows(named=True)
        if row["status"] not in by_id[row["entry"]].get("batch_status", by_id[row["entry"]]["status"])
    ]
    statuses = graded["status"].value_counts().sort("status")
    with capsys.disabled():
        print(
            f"\npathological batch: 9,900 normal outputs, {changed.height} verdicts changed by "
            f"{len(positions)} pathological ones (limit {BATCH_LIMIT:g} s of CPU); their statuses: "
            + ", ".join(f"{s}={n}" for s, n in statuses.iter_rows())
        )
    assert not wrong, wrong
