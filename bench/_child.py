"""``python -m bench._child NAME KWARGS_JSON``: import ``bench.NAME``, call ``run(**kwargs)``
and print the figures as JSON on the last stdout line (used by bench/run_all.py)."""

from __future__ import annotations

import contextlib
import importlib
import json
import sys


def main() -> int:
    name, kwargs = sys.argv[1], json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    module = importlib.import_module(f"bench.{name}")
    with contextlib.redirect_stdout(sys.stderr):
        figures = module.run(**kwargs)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
