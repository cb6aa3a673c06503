"""Run every benchmark in bench/, each in a fresh process, and write bench/results/latest.json
and bench/results/latest.md (also printed).

Each benchmark module exposes ``run() -> dict``; this script runs ``python -m bench._child
NAME`` per module, which calls ``run()`` and prints its figures as JSON on its last stdout line.
Peak RSS per benchmark is the child's ``ru_maxrss`` from ``os.wait4`` (the child and the
processes it waited for).

Usage: ``python bench/run_all.py [--only NAME ...] [--million-copies N] [--million-distinct-turns N]``
(``make bench``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
BENCHMARKS = (
    "grading_throughput",
    "math_verify_pairs",
    "convfinqa_grading",
    "slices_speed",
    "million_turns",
    "million_distinct_turns",
    "report_speed",
    "report_100k",
    "hostile_inputs",
    "pathological_batch",
    "annotation_stores",
)


def run_child(name: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench._child", name, json.dumps(kwargs)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    stdout = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    entry: dict[str, Any] = {"wall_s": round(wall, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024)}
    if proc.returncode != 0:
        entry["error"] = f"exit code {proc.returncode}"
        return entry
    entry["figures"] = json.loads(stdout.strip().splitlines()[-1])
    return entry


def machine() -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    import workbench

    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "workbench": workbench.__version__,
    }


def _flat(prefix: str, value: Any) -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [row for k, v in value.items() for row in _flat(f"{prefix}.{k}" if prefix else str(k), v)]
    if isinstance(value, float):
        return [(prefix, f"{value:,.3f}".rstrip("0").rstrip("."))]
    if isinstance(value, int) and not isinstance(value, bool):
        return [(prefix, f"{value:,}")]
    return [(prefix, str(value))]


def table(results: dict[str, Any]) -> str:
    m = results["machine"]
    lines = [
        f"# Benchmarks, {m['date']}",
        "",
        f"workbench {m['workbench']}, Python {m['python']}, {m['cpu_count']} CPUs, {m['platform']}",
        "",
        "| benchmark | wall (s) | peak RSS (MB) |",
        "|---|---:|---:|",
    ]
    for name, entry in results["benchmarks"].items():
        lines.append(f"| {name} | {entry['wall_s']:.1f} | {entry['peak_rss_mb']:,} |")
    for name, entry in results["benchmarks"].items():
        lines += ["", f"## {name}", "", "| figure | value |", "|---|---:|"]
        if "error" in entry:
            lines.append(f"| error | {entry['error']} |")
            continue
        lines += [f"| {k} | {v} |" for k, v in _flat("", entry["figures"])]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=BENCHMARKS, help="run only these")
    parser.add_argument("--million-copies", type=int, default=None, help="copies for million_turns (default 336)")
    parser.add_argument(
        "--million-distinct-turns",
        type=int,
        default=None,
        help="turns for million_distinct_turns (default 1,000,000; fewer are run as such, not extrapolated)",
    )
    args = parser.parse_args(argv)
    options = {
        "million_turns": {"copies": args.million_copies} if args.million_copies else {},
        "million_distinct_turns": {"turns": args.million_distinct_turns} if args.million_distinct_turns else {},
    }
    results: dict[str, Any] = {"machine": machine(), "benchmarks": {}}
    failed = False
    for name in args.only or BENCHMARKS:
        kwargs = options.get(name, {})
        print(f"running {name} ...", flush=True)
        entry = run_child(name, kwargs)
        failed |= "error" in entry
        print(f"  {entry['wall_s']:.1f} s, peak RSS {entry['peak_rss_mb']:,} MB {entry.get('error', '')}", flush=True)
        results["benchmarks"][name] = entry
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "latest.json").write_text(json.dumps(results, indent=2) + "\n")
    text = table(results)
    (RESULTS / "latest.md").write_text(text)
    print()
    print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
