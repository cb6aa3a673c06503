"""`make report` on the bundled data: wall time and the size of each HTML report.

Targets (issue 6): under 60 s for the whole `make report` (then 3 reports; 9 since issue 17), under
10 MB per HTML file (every page it wrote). Not a
timed test: it prints figures, and a ratio against a peer measured in the same run, because the
machines are shared and noisy. The peer is the usual way to get an HTML report from a notebook:
`jupyter nbconvert --execute --to html` on the overview template (it executes the same cells;
its HTML fetches require.js and MathJax from CDNs and drops the plotly figures, so its size is
not comparable, only its time).

Run with ``make bench`` or ``python bench/report_speed.py``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def run() -> dict[str, Any]:
    started = time.time()
    wall = timed(["make", "report"])
    # every page `make report` wrote (notebooks/bundled.yaml names them), index.html aside
    written = sorted(p for p in (ROOT / "reports").glob("*/*.html") if p.stat().st_mtime >= started - 1)
    sizes = {str(p.relative_to(ROOT / "reports")): round(p.stat().st_size / 1e6, 2) for p in written}
    with tempfile.TemporaryDirectory() as tmp:
        peer = timed(
            [
                str(BIN / "jupyter"),
                "nbconvert",
                "--execute",
                "--to",
                "html",
                "--output-dir",
                tmp,
                str(ROOT / "notebooks" / "01-overview.ipynb"),
            ]
        )
        ours = timed([str(BIN / "workbench"), "report", "--template", "01-overview", "--out", tmp, "--quiet"])
    return {
        "make_report_s": round(wall, 2),
        "make_report_target_s": 60,
        "reports": len(sizes),
        "html_mb": sizes,
        "html_max_mb": max(sizes.values(), default=0.0),
        "html_target_mb": 10,
        "overview_workbench_report_s": round(ours, 2),
        "overview_nbconvert_peer_s": round(peer, 2),
        "ratio_workbench_over_nbconvert": round(ours / peer, 2),
    }


def main() -> None:
    f = run()
    print(f"make report (setup already done, {f['reports']} reports): {f['make_report_s']:.1f} s [target < 60 s]")
    for page, size in f["html_mb"].items():
        print(f"  reports/{page}: {size:.2f} MB [target < 10 MB]")
    print(
        f"01-overview alone: workbench report {f['overview_workbench_report_s']:.1f} s, nbconvert --execute peer "
        f"{f['overview_nbconvert_peer_s']:.1f} s (ratio {f['ratio_workbench_over_nbconvert']:.2f}x; ours also "
        "writes the graded tables, the manifest and the offline HTML)"
    )


if __name__ == "__main__":
    main()
