"""The run ledger lives in :mod:`workbench.pipeline.ledger` (``workbench grade --out`` appends to it
without loading any report module); this name stays for the callers that import it from here."""

from __future__ import annotations

from workbench.pipeline.ledger import (
    LEDGER_NAME,
    LedgerRow,
    append,
    append_graded,
    ledger_path,
    read_ledger,
    rows_from_graded,
    verdicts,
)

__all__ = [
    "LEDGER_NAME",
    "LedgerRow",
    "ledger_path",
    "rows_from_graded",
    "append",
    "append_graded",
    "read_ledger",
    "verdicts",
]
