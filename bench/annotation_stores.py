"""Annotation stores under a team's load (issue 33): 10 annotator processes each save 500 events,
on the SQLite store and on the PostgreSQL store, chosen only by the location given to ``open_store``.

Each annotator is its own process (spawned, as analysts' kernels are), opens the store, waits
until every other one is ready, then saves its events one ``annotate()`` at a time: each call is
committed before it returns, so its latency is that of an acknowledged save. Figures per backend:
events/s over the whole run (from the first save started to the last one acknowledged), the p50,
p99 and largest latency of a save, and the events stored against those acknowledged (0 lost). The
PostgreSQL half starts a throwaway cluster (``tests/system/postgres/pg_harness.py``: ``initdb`` into
a temporary folder, ``fsync=on``, the default ``synchronous_commit``), over its Unix socket; without
PostgreSQL or psycopg it records that it was skipped, and why.

Not a timed test (``make bench``); the load average is recorded so a figure from a busy machine can
be read. Run with ``python bench/annotation_stores.py [--processes N] [--events N]``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "system" / "postgres"))  # the throwaway cluster is defined once, for the tests

PROCESSES = 10
EVENTS = 500


def _annotator(location: str, name: str, events: int, ready: Any, go: Any, results: Any) -> None:
    """One annotator: open the store, say ready, wait for the start, save ``events`` annotations
    and report (start, end, each save's seconds, the acknowledged event ids)."""
    from workbench.annotations import open_store

    with open_store(location) as store:
        ready.put(name)
        go.wait()
        seconds: list[float] = []
        acknowledged: list[int] = []
        started = time.monotonic()
        for turn in range(events):
            before = time.perf_counter()
            event = store.annotate(
                annotator=name, record_id=f"{name}-r{turn // 10}", turn=turn % 10, category="other", note=f"save {turn}"
            )
            seconds.append(time.perf_counter() - before)
            acknowledged.append(event)
        ended = time.monotonic()
    results.put((name, started, ended, seconds, acknowledged))


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def measure(location: str, *, processes: int = PROCESSES, events: int = EVENTS) -> dict[str, Any]:
    """``processes`` annotator processes each save ``events`` events into the store at ``location``."""
    from workbench.annotations import open_store

    open_store(location).close()  # the schema, once, before the clock
    ctx = mp.get_context("spawn")
    ready, results, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    workers = [
        ctx.Process(target=_annotator, args=(location, f"a{i:02d}", events, ready, go, results))
        for i in range(processes)
    ]
    for worker in workers:
        worker.start()
    for _ in workers:
        ready.get(timeout=120)
    go.set()
    reports = [results.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join()
    failed = [w.exitcode for w in workers if w.exitcode != 0]
    if failed:
        raise RuntimeError(f"{len(failed)} annotator processes failed (exit codes {failed})")
    wall = max(r[2] for r in reports) - min(r[1] for r in reports)
    seconds = [s for r in reports for s in r[3]]
    acknowledged = {e for r in reports for e in r[4]}
    with open_store(location, create=False) as store:
        stored = set(store.events().get_column("event_id").to_list())
    return {
        "processes": processes,
        "events_per_process": events,
        "events_acknowledged": len(acknowledged),
        "events_stored": len(stored),
        "events_lost": len(acknowledged - stored),
        "wall_s": round(wall, 3),
        "events_per_s": round(len(seconds) / wall, 1),
        "save_p50_ms": round(_percentile(seconds, 0.50) * 1000, 2),
        "save_p99_ms": round(_percentile(seconds, 0.99) * 1000, 2),
        "save_max_ms": round(max(seconds) * 1000, 2),
    }


def run(processes: int = PROCESSES, events: int = EVENTS) -> dict[str, Any]:
    from pg_harness import missing, throwaway

    figures: dict[str, Any] = {"load_average_1m_before": round(os.getloadavg()[0], 2)}
    with tempfile.TemporaryDirectory() as folder:
        figures["sqlite"] = measure(str(Path(folder) / "annotations.sqlite"), processes=processes, events=events)
    reason = missing()
    if reason is not None:
        figures["postgresql"] = {"skipped": reason}
    else:
        with throwaway() as cluster:
            figures["postgresql"] = measure(cluster.url(cluster.new_database()), processes=processes, events=events)
        sqlite, server = figures["sqlite"], figures["postgresql"]
        figures["events_per_s_postgresql_over_sqlite"] = round(server["events_per_s"] / sqlite["events_per_s"], 2)
        figures["save_p99_postgresql_over_sqlite"] = round(server["save_p99_ms"] / sqlite["save_p99_ms"], 2)
    figures["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=PROCESSES, help="annotator processes")
    parser.add_argument("--events", type=int, default=EVENTS, help="events each annotator saves")
    args = parser.parse_args(argv)
    print(json.dumps(run(args.processes, args.events), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
