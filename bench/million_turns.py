"""Grading and slicing a million turns: the ConvFinQA dev gold and both claude-sonnet-4-6 dev
runs replicated ``--copies`` times (default 336) with record and document ids suffixed ``#k``:
2 systems x 1,490 turns x 336 = 1,001,280 graded turns.

Times, separately, ``workbench.pipeline.grade.grade_predictions(gold, [a, b])`` and
``workbench.analysis.slices.slice_accuracy(turns, intervals=False)`` on the graded turns, and reports
the peak RSS of the process (``ru_maxrss``) after building the inputs, after grading and after
slicing. With fewer copies the times are also extrapolated linearly to 336 copies (and said so).

Targets (issue 7): under 60 s and under 3 GB. Run with ``make bench`` or
``python bench/million_turns.py [--copies N]``.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

from workbench.analysis.slices import slice_accuracy  # noqa: E402
from workbench.io.gold import GoldDataset, load_gold  # noqa: E402
from workbench.io.predictions import load_predictions  # noqa: E402
from workbench.pipeline.grade import grade_predictions  # noqa: E402

COPIES = 336
RUNS = "data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6"
PREDICTIONS = {
    "a": f"{RUNS}/2026-05-04T06-35-00Z/predictions.jsonl",
    "b": f"{RUNS}/2026-05-04T12-48-44Z/predictions.jsonl",
}


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def _replicate(frame: pl.DataFrame, columns: tuple[str, ...], copies: int) -> pl.DataFrame:
    return pl.concat(
        [frame.with_columns(pl.format("{}#{}", pl.col(c), pl.lit(k)).alias(c) for c in columns) for k in range(copies)]
    )


def build(copies: int) -> tuple[GoldDataset, list[pl.DataFrame]]:
    gold = load_gold(ROOT / "data/convfinqa/dev.json")
    big = GoldDataset(
        turns=_replicate(gold.turns, ("record_id", "doc_id"), copies),
        documents=_replicate(gold.documents, ("doc_id",), copies),
        path=gold.path,
        layout=gold.layout,
        benchmark=gold.benchmark,
    )
    preds = [
        _replicate(load_predictions(ROOT / path, system=name), ("record_id",), copies)
        for name, path in PREDICTIONS.items()
    ]
    return big, preds


def run(copies: int = COPIES) -> dict[str, Any]:
    start = time.perf_counter()
    gold, preds = build(copies)
    t_build = time.perf_counter() - start
    mb_build = peak_mb()

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graded = grade_predictions(gold, preds)
    t_grade = time.perf_counter() - start
    mb_grade = peak_mb()

    start = time.perf_counter()
    table = slice_accuracy(graded.turns, intervals=False)
    t_slices = time.perf_counter() - start
    mb_slices = peak_mb()

    scale = COPIES / copies
    out: dict[str, Any] = {
        "copies": copies,
        "turns": graded.turns.height,
        "groups": table.height,
        "build_s": round(t_build, 2),
        "grade_s": round(t_grade, 2),
        "slices_s": round(t_slices, 2),
        "grade_plus_slices_s": round(t_grade + t_slices, 2),
        "grade_turns_per_s": round(graded.turns.height / t_grade),
        "target_s": 60,
        "peak_rss_mb_after_build": round(mb_build),
        "peak_rss_mb_after_grade": round(mb_grade),
        "peak_rss_mb": round(mb_slices),
        "target_rss_mb": 3072,
        "accuracy": {
            system: round(float(part["correct"].mean()), 4)
            for (system,), part in graded.turns.partition_by("system", as_dict=True).items()
        },
    }
    if copies != COPIES:
        out["extrapolated_to_copies"] = COPIES
        out["extrapolated_turns"] = round(graded.turns.height * scale)
        out["extrapolated_grade_s"] = round(t_grade * scale, 1)
        out["extrapolated_slices_s"] = round(t_slices * scale, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=COPIES, help=f"replicas of the dev set (default {COPIES})")
    f = run(parser.parse_args(argv).copies)
    print(f"{f['turns']:,} turns ({f['copies']} copies of 2 x 1,490), built in {f['build_s']:.1f} s")
    print(f"  grade_predictions: {f['grade_s']:.1f} s ({f['grade_turns_per_s']:,} turns/s)")
    print(f"  slice_accuracy (no intervals, {f['groups']} groups): {f['slices_s']:.2f} s")
    print(
        f"  peak RSS {f['peak_rss_mb']:,} MB (after build {f['peak_rss_mb_after_build']:,}, after grading {f['peak_rss_mb_after_grade']:,}) [target < 3 GB]"
    )
    if "extrapolated_grade_s" in f:
        print(
            f"  EXTRAPOLATED linearly to {f['extrapolated_to_copies']} copies ({f['extrapolated_turns']:,} turns): "
            f"grading {f['extrapolated_grade_s']:.0f} s, slicing {f['extrapolated_slices_s']:.1f} s [target < 60 s] "
            "(memory not extrapolated)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
