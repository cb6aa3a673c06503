"""A writer process for the PostgreSQL reliability tests: opens the store at argv[1], saves
argv[2] annotations (0: until killed) as annotator argv[3], and prints each acknowledged event id
(flushed) as soon as annotate() returns."""

from __future__ import annotations

import sys

from workbench.annotations import open_store


def main(url: str, count: int, name: str) -> None:
    with open_store(url) as store:
        turn = 0
        while count == 0 or turn < count:
            event = store.annotate(annotator=name, record_id=f"{name}-r", turn=turn, category="other", note=f"{turn}")
            print(event, flush=True)
            turn += 1


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
