"""Start-up of a grading run (issue 35, point 5): SymPy's worker is started ahead only when the run
has rows known to need it, and whether the cascade's rows are shared among threads is decided from
the whole run (the rows that wait on a worker), never from a clock."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from workbench import parallel
from workbench.config import resolve
from workbench.grading.limits import shutdown_workers
from workbench.grading.policies import POLICIES
from workbench.grading.workers import POOL
from workbench.io.gold import GoldDataset, load_gold
from workbench.io.predictions import load_predictions
from workbench.pipeline import grade
from workbench.pipeline.grade import grade_predictions
from workbench.pipeline.run import grade_run

MATH = Path(__file__).resolve().parents[2] / "fixtures" / "math" / "hendrycks_math_test_8.jsonl"
WITHOUT_MATH_VERIFY = [p for name, p in POLICIES.items() if name != "math-verify"]


def _workers() -> int:
    """This process's worker processes (idle or in use), as the pool holds them."""
    with POOL.lock:
        return len(POOL.idle) + len(POOL.busy)


@pytest.fixture
def no_workers() -> Iterator[None]:
    shutdown_workers()
    assert _workers() == 0
    yield
    shutdown_workers()


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Each ``map_chunks`` call of the grading (items, ``waiting``) and each ``start_worker`` call."""
    seen: list[dict[str, Any]] = []

    def map_chunks(fn: Callable[[list[Any]], list[Any]], items: Sequence[Any], **options: Any) -> list[Any]:
        name = getattr(fn, "func", fn).__name__
        seen.append({"call": "map_chunks", "fn": name, "items": len(items), "waiting": options.get("waiting", 0)})
        return parallel.map_chunks(fn, items, **options)

    def start_worker() -> None:
        seen.append({"call": "start_worker"})

    monkeypatch.setattr(grade, "map_chunks", map_chunks)
    monkeypatch.setattr(grade, "start_worker", start_worker)
    return seen


def test_a_convfinqa_run_without_math_verify_starts_no_worker(
    dev_gold: GoldDataset, claude_run_path: Path, no_workers: None
) -> None:
    """The bundled run's answers (its programs left out: some of its program pairs need SymPy),
    under every policy but Math-Verify: no row needs the worker, and none is started."""
    outputs = load_predictions(claude_run_path).with_columns(pl.lit(None, pl.String).alias("predicted_program"))
    run = grade_predictions(dev_gold, outputs, also=WITHOUT_MATH_VERIFY)
    assert run.turns.height == 1490 and run.turns["correct"].sum() > 1000
    assert _workers() == 0


def test_no_worker_is_started_ahead_or_waited_for_without_rows_that_need_it(
    dev_gold: GoldDataset, claude_run_path: Path, calls: list[dict[str, Any]]
) -> None:
    outputs = load_predictions(claude_run_path).with_columns(pl.lit(None, pl.String).alias("predicted_program"))
    run = grade_predictions(dev_gold, outputs, also=WITHOUT_MATH_VERIFY)
    assert run.turns.height == 1490
    assert not [c for c in calls if c["call"] == "start_worker"]
    chunked = [c for c in calls if c["call"] == "map_chunks"]
    assert chunked and all(c["waiting"] == 0 for c in chunked)  # one call each, on this thread


def test_program_pairs_that_differ_start_the_worker_ahead(
    dev_gold: GoldDataset, claude_run_path: Path, calls: list[dict[str, Any]], no_workers: None
) -> None:
    """With its programs, the run compares programs, some of them in SymPy: the worker is started
    ahead; the program comparisons of the inputs the fast path decided are not shared among threads."""
    run = grade_predictions(dev_gold, load_predictions(claude_run_path), also=WITHOUT_MATH_VERIFY)
    assert run.turns["program_detail"].str.contains("SymPy").sum() > 0
    assert [c["call"] for c in calls].count("start_worker") == 1
    programs = [c for c in calls if c["call"] == "map_chunks" and c["fn"] == "_grade_programs"]
    assert programs and all(c["waiting"] == 0 for c in programs)


def test_math_verify_rows_start_the_worker_ahead_and_share_one(
    dev_gold: GoldDataset, claude_run_path: Path, calls: list[dict[str, Any]]
) -> None:
    outputs = load_predictions(claude_run_path).head(40)
    grade_predictions(dev_gold, outputs, also=[POLICIES["math-verify"]], checks=False)
    assert [c["call"] for c in calls].count("start_worker") == 1
    chunked = [(c["items"], c["waiting"]) for c in calls if c["call"] == "map_chunks"]
    # the cascade grades Math-Verify on the 40 answered inputs (the fast path decides the other
    # policies), in batched worker calls: one worker serves them, no thread each
    assert (40, 0) in chunked
    assert sum(waiting for _, waiting in chunked) == 0


def test_latex_rows_are_shared_among_threads(tmp_path: Path, calls: list[dict[str, Any]]) -> None:
    """Five systems' LaTeX outputs (``\\frac``, which the fast path leaves to the cascade) on 8 MATH
    problems: 40 distinct comparisons in SymPy's worker, started ahead; the cascade's rows are
    shared among threads (at least ``THREAD_CHUNK`` waiting)."""
    paths = []
    for system in range(5):
        path = tmp_path / f"sys{system}.jsonl"
        lines = [
            {"record_id": str(i), "turn": 0, "raw_output": f"so it is $\\boxed{{\\frac{{{i + system}}}{{2}}}}$"}
            for i in range(8)
        ]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        paths.append(path)
    run = grade_run(resolve(dataset=MATH, predictions=paths, systems=[f"s{i}" for i in range(5)]))
    assert run.turns.height == 40
    assert [c["call"] for c in calls].count("start_worker") == 1
    waiting = [c["waiting"] for c in calls if c["call"] == "map_chunks"]
    assert max(waiting) == 40 >= parallel.THREAD_CHUNK


def test_outputs_in_latex_start_the_worker_ahead(
    gsm8k_small_path: Path, gsm8k_small_runs: dict[str, Path], calls: list[dict[str, Any]]
) -> None:
    """ToRA's GSM8K outputs write LaTeX (``\\boxed{}``): an answer the fast path leaves to the
    cascade may go to SymPy, so the worker starts ahead, as soon as the first outputs are read."""
    gold = load_gold(gsm8k_small_path)
    grade_predictions(gold, load_predictions(gsm8k_small_runs["tora-70b"]), also=WITHOUT_MATH_VERIFY, checks=False)
    assert [c["call"] for c in calls].count("start_worker") == 1
