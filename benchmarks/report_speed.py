"""`make report` on the bundled data: wall time and the size of each HTML report.

Targets (issue 6): under 60 s for the whole `make report`, under 10 MB per HTML file. Not a
timed test: it prints figures, and a ratio against a peer measured in the same run, because the
machines are shared and noisy. The peer is the usual way to get an HTML report from a notebook:
`jupyter nbconvert --execute --to html` on the overview template (it executes the same cells;
its HTML fetches require.js and MathJax from CDNs and drops the plotly figures, so its size is
not comparable, only its time).

Run with ``make bench`` or ``python benchmarks/report_speed.py``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
TEMPLATES = ("01-overview", "02-error-slices", "04-compare-systems")


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    wall = timed(["make", "report"])
    print(f"make report (setup already done, {len(TEMPLATES)} templates): {wall:.1f} s [target < 60 s]")
    for template in TEMPLATES:
        page = ROOT / "reports" / template / "bundled.html"
        size = page.stat().st_size / 1e6
        print(f"  {page.relative_to(ROOT)}: {size:.2f} MB [target < 10 MB]")
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
    print(
        f"01-overview alone: workbench report {ours:.1f} s, nbconvert --execute peer {peer:.1f} s "
        f"(ratio {ours / peer:.2f}x; ours also writes the graded tables, the manifest and the offline HTML)"
    )


if __name__ == "__main__":
    main()
