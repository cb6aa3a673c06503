"""The overview report of a 105,520-turn run: ``workbench report --template 01-overview``, and the page in Chromium.

The run (issue 35, point 3) is GSM8K-shaped: 8 checkpoints (``ckpt-0`` ... ``ckpt-7``) x 13,190
problems (10 copies of the 1,319 GSM8K test questions, record ids ``q#k``), built from the bundled
outputs exactly as ``million_distinct_turns`` builds its GSM8K part (seeded; the gold changed per
record, the final answer following it, right or wrong, in varied spellings and markers). It is
written (not timed) as one JSON Lines file per checkpoint that carries its gold (``question``,
``gold_answer``), as a user's outputs of a new benchmark would, and reported with
``--dataset none --benchmark gsm8k``.

Timed, each in its own process: ``workbench report --template 01-overview`` on the 8 files
(``report_s``; ``report_peak_rss_mb`` is the largest resident set of the command and the processes
it waited for: the kernel that grades and the HTML export), the page's size (``page_mb``: the HTML
written beside the executed notebook), and how long headless Chromium (``/usr/bin/chromium`` through
Playwright) takes from asking for the page (a ``file://`` URL) to showing the first page of the
failed-problems table (its first row visible: ``first_grid_page_s``; ``load_event_s`` is the page's
load event).

Targets (issue 35): the report in at most 60 s, a peak under 1.5 GB, a page of at most 8 MB, the
first grid page in Chromium in at most 3 s. Run with ``make bench`` or ``python bench/report_100k.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from bench.million_distinct_turns import CHECKPOINTS, SEED, build_gsm8k  # noqa: E402
from workbench.schema import keys_as_text  # noqa: E402

BIN = Path(sys.executable).parent
COPIES = 10  # 10 x 1,319 problems x 8 checkpoints = 105,520 turns
CHROMIUM = "/usr/bin/chromium"
#: The first row of the failed-problems table of the exported page.
FIRST_ROW = "table.wb-failed tbody tr"
TARGET_REPORT_S = 60
TARGET_RSS_MB = 1536
TARGET_PAGE_MB = 8
TARGET_FIRST_PAGE_S = 3


def build(folder: Path, copies: int = COPIES) -> list[Path]:
    """One JSON Lines file per checkpoint, each row carrying its gold; their paths, in order."""
    gold, preds = build_gsm8k(copies, np.random.default_rng(SEED))
    carried = preds.drop("question", "gold_answer").join(
        keys_as_text(gold.turns.select("record_id", "turn", "question", "gold_answer")),  # the files' keys are text
        on=["record_id", "turn"],
        how="left",
    )
    columns = ["record_id", "turn", "question", "predicted_answer", "raw_output", "gold_answer"]
    paths = []
    for k in range(CHECKPOINTS):
        path = folder / f"ckpt-{k}.jsonl"
        rows = carried.filter(pl.col("system") == f"ckpt-{k}").select(columns)
        rows.write_ndjson(path)
        paths.append(path)
    return paths


def report(paths: list[Path], out: Path) -> tuple[float, int]:
    """``workbench report --template 01-overview`` on ``paths``: wall seconds and peak RSS (MB) of
    the command and the processes it waited for."""
    command = [str(BIN / "workbench"), "report", "--template", "01-overview", "--dataset", "none"]
    command += ["--benchmark", "gsm8k", "--out", str(out), "--quiet"]
    for k, path in enumerate(paths):
        command += ["--predictions", str(path), "--system", f"ckpt-{k}"]
    start = time.perf_counter()
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"workbench report failed: {stderr.strip()[-2000:]}")
    return wall, round(usage.ru_maxrss / 1024)


def first_grid_page(page_path: Path) -> dict[str, float]:
    """Seconds from asking headless Chromium for the page to its load event and to the first row
    of the failed-problems table being visible (a fresh browser; the page read from disk)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            start = time.perf_counter()
            page.goto(page_path.as_uri(), wait_until="commit", timeout=120_000)
            page.locator(FIRST_ROW).first.wait_for(state="visible", timeout=120_000)
            shown = time.perf_counter() - start
            page.wait_for_load_state("load", timeout=120_000)
            loaded = time.perf_counter() - start
            rows = page.locator(FIRST_ROW).count()
        finally:
            browser.close()
    return {"first_grid_page_s": round(shown, 2), "load_event_s": round(loaded, 2), "grid_rows_on_page": rows}


def run(copies: int = COPIES) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="report_100k.") as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        paths = build(folder, copies)
        build_s = time.perf_counter() - start
        out = folder / "report"
        wall, peak = report(paths, out)
        pages = sorted(out.glob("*.html"))
        if not pages:
            raise RuntimeError(f"workbench report wrote no HTML page in {out}")
        page = max(pages, key=lambda p: p.stat().st_size)
        browser = first_grid_page(page)
        turns = sum(1 for path in paths for _ in path.open(encoding="utf-8"))
        return {
            "turns": turns,
            "problems": turns // CHECKPOINTS,
            "checkpoints": CHECKPOINTS,
            "build_s": round(build_s, 2),
            "report_s": round(wall, 2),
            "report_target_s": TARGET_REPORT_S,
            "report_peak_rss_mb": peak,
            "report_target_rss_mb": TARGET_RSS_MB,
            "page_mb": round(page.stat().st_size / 1e6, 2),
            "page_target_mb": TARGET_PAGE_MB,
            **browser,
            "first_grid_page_target_s": TARGET_FIRST_PAGE_S,
            "load_average_1min": round(os.getloadavg()[0], 2),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=COPIES, help=f"copies of the test set (default {COPIES})")
    args = parser.parse_args(argv)
    f = run(args.copies)
    print(json.dumps(f))
    print(
        f"{f['turns']:,} turns ({f['checkpoints']} checkpoints x {f['problems']:,} problems), built in {f['build_s']:.1f} s"
    )
    print(
        f"  workbench report --template 01-overview: {f['report_s']:.1f} s [target <= {TARGET_REPORT_S} s], "
        f"peak RSS {f['report_peak_rss_mb']:,} MB [target < {TARGET_RSS_MB:,} MB], page {f['page_mb']:.2f} MB "
        f"[target <= {TARGET_PAGE_MB} MB]"
    )
    print(
        f"  headless Chromium: first grid page shown {f['first_grid_page_s']:.2f} s after the request "
        f"[target <= {TARGET_FIRST_PAGE_S} s], load event {f['load_event_s']:.2f} s; "
        f"load average {f['load_average_1min']:.1f} on {os.cpu_count()} CPUs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
