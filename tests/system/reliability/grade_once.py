"""Grade once in a fresh process and write the graded outputs (used by test_determinism.py).

``python tests/system/reliability/grade_once.py OUT --workers N [--engine local|dask] [--scheduler ADDR]
[--dataset PATH] PREDICTIONS... [--system NAME ...]``

``--workers 2`` forces the process pool of :func:`workbench.parallel.map_chunks` even for a
small input (threshold and chunk size lowered), so the pooled path is what is compared.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("predictions", nargs="+")
    parser.add_argument("--dataset", default=None)
    parser.add_argument("--system", action="append", default=[])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--engine", default="local")
    parser.add_argument("--scheduler", default=None)
    args = parser.parse_args()

    import workbench.parallel as parallel
    import workbench.pipeline.grade as grade
    from workbench.config import resolve
    from workbench.pipeline.run import grade_run

    if args.workers > 1:
        parallel.POOL_THRESHOLD = 1
        parallel.CHUNK_SIZE = 97
    grade.map_chunks = partial(_map_chunks, parallel.map_chunks, args.workers)
    config = resolve(dataset=args.dataset, predictions=args.predictions, systems=args.system)
    run = grade_run(config, engine=args.engine, scheduler=args.scheduler)
    run.write(args.out)
    return 0


def _map_chunks(original, forced, fn, items, **options):  # type: ignore[no-untyped-def]
    options["workers"] = forced
    return original(fn, items, **options)


if __name__ == "__main__":
    sys.exit(main())
