"""A writer process for the PostgreSQL reliability tests: opens the store at argv[1] and keeps it
open (one connection, as a triage kernel does), saves argv[2] annotations (0: until killed or an
error) as annotator argv[3], and prints each acknowledged event id (flushed) as soon as annotate()
returns. An error ends it with the one line the CLI would print (``workbench: error: ...``), exit 2."""

from __future__ import annotations

import sys

from workbench.annotations import open_store
from workbench.errors import WorkbenchError


def main(url: str, count: int, name: str) -> int:
    try:
        with open_store(url) as store:
            turn = 0
            while count == 0 or turn < count:
                event = store.annotate(
                    annotator=name, record_id=f"{name}-r", turn=turn, category="other", note=f"{turn}"
                )
                print(event, flush=True)
                turn += 1
    except WorkbenchError as exc:
        print(f"workbench: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
