"""1% pathological answers in a batch of 10,000 real GSM8K outputs: what they cost.

The batch of ``tests/system/fuzz/test_pathological.py`` (imported from there, so both grade the same
rows): 10,000 real outputs (ToRA, program-of-thoughts, GPT-3), every 100th replaced by an entry
of ``tests/fixtures/pathological/catalogue.jsonl``. Both runs go through
:func:`workbench.pipeline.grade.grade_predictions` under every policy, one process, from cold caches.

Figures: ``T_normal`` (the 9,900 normal outputs alone, the peer), ``T_batch`` (the 10,000),
the extra cost per pathological item in units of the limit (target: at most about 1; a timeout
costs the limit in CPU plus a spare worker's start-up), the CPU seconds of this process and of
its workers (``RUSAGE_CHILDREN`` after ``shutdown_workers``), and how many normal verdicts the
pathological ones changed (0, as the test asserts).

Run with ``python bench/pathological_batch.py [--limit SECONDS]`` (default 2.0, the product's).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "system" / "fuzz"))  # the batch is defined once, in the test

import polars as pl  # noqa: E402
import test_pathological as batch_def  # noqa: E402

from workbench.grading.limits import DEFAULT_TIME_LIMIT, shutdown_workers  # noqa: E402
from workbench.grading.symbolic import latex_equivalent  # noqa: E402
from workbench.io.gold import load_gold  # noqa: E402


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed_grade(gold: Any, predictions: pl.DataFrame, limit: float) -> tuple[Any, float, float, float]:
    shutdown_workers()  # reaped workers count in RUSAGE_CHILDREN
    latex_equivalent("1", "2", time_limit=limit)  # one warm worker, as in the test
    children = _children_cpu()
    wall, cpu = time.perf_counter(), time.process_time()
    graded = batch_def._grade(gold, predictions, limit)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    shutdown_workers()
    time.sleep(0.5)  # let the reaper threads collect the workers
    return graded, wall, cpu, _children_cpu() - children


def run(limit: float = DEFAULT_TIME_LIMIT) -> dict[str, Any]:
    gold = load_gold(batch_def.GSM8K)
    normal, batch, positions, used = batch_def.build_batch()
    alone, t_normal, cpu_normal, workers_normal = _timed_grade(gold, normal, limit)
    mixed, t_batch, cpu_batch, workers_batch = _timed_grade(gold, batch, limit)
    keys = ["system", "record_id", "turn"]
    verdict = ["correct", "status", "reason"]
    a = normal.select(keys).join(alone.turns, on=keys, how="left").select(*keys, *verdict)
    b = normal.select(keys).join(mixed.turns, on=keys, how="left").select(*keys, *verdict)
    changed = a.join(b, on=keys, suffix="_batch").filter(
        pl.any_horizontal([pl.col(c) != pl.col(f"{c}_batch") for c in verdict])
    )
    patho = batch[positions].select(keys).join(mixed.turns, on=keys, how="left")
    statuses = dict(patho["status"].value_counts().sort("status").iter_rows())
    n = len(positions)
    return {
        "limit_cpu_s": limit,
        "pathological_items": n,
        "catalogue_entries_used": len({e["id"] for e in used}),
        "T_normal_s": round(t_normal, 2),
        "T_batch_s": round(t_batch, 2),
        "extra_per_item_over_limit_wall": round((t_batch - t_normal) / n / limit, 3),
        "cpu_normal_s": {"this_process": round(cpu_normal, 2), "workers": round(workers_normal, 2)},
        "cpu_batch_s": {"this_process": round(cpu_batch, 2), "workers": round(workers_batch, 2)},
        "extra_per_item_over_limit_cpu": round(
            ((cpu_batch + workers_batch) - (cpu_normal + workers_normal)) / n / limit, 3
        ),
        "pathological_statuses": statuses,
        "normal_verdicts_changed": changed.height,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=DEFAULT_TIME_LIMIT, help="CPU seconds per SymPy call")
    f = run(parser.parse_args().limit)
    n, limit = f["pathological_items"], f["limit_cpu_s"]
    print(f"1% pathological in 10,000 GSM8K outputs, limit {limit} s of CPU [target: extra <= ~1 limit per item]")
    print(f"  T_normal {f['T_normal_s']} s (9,900 normal), T_batch {f['T_batch_s']} s (+{n} pathological)")
    print(
        f"  extra per pathological item: {f['extra_per_item_over_limit_wall']} x limit (wall), "
        f"{f['extra_per_item_over_limit_cpu']} x limit (CPU, this process + workers)"
    )
    print(f"  CPU normal {f['cpu_normal_s']}, batch {f['cpu_batch_s']}")
    print(
        f"  pathological statuses {f['pathological_statuses']}; normal verdicts changed: {f['normal_verdicts_changed']}"
    )


if __name__ == "__main__":
    main()
