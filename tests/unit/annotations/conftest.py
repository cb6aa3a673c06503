"""The store the annotation tests run against, named by its location (as every caller names one).

Here it is a SQLite file (unit tests start no server). tests/system/postgres/test_store_suite_postgres.py
runs the same tests (test_store.py, test_leases.py, test_session.py) with ``store_location`` a fresh
PostgreSQL database on a throwaway cluster: the store's whole suite, on both backends, written once.
A test about SQLite only (its file, WAL, pragmas, recovery) is named ``test_sqlite_...`` and uses a
file path of its own; the PostgreSQL run leaves those out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.annotations import Store, open_store


@pytest.fixture
def store_location(tmp_path: Path) -> str:
    """Where a fresh, empty store is (a SQLite file; a ``postgresql://`` URL in the PostgreSQL run)."""
    return str(tmp_path / "annotations.sqlite")


@pytest.fixture
def store(store_location: str) -> Iterator[Store]:
    """A fresh store, opened (and closed after the test)."""
    with open_store(store_location) as opened:
        yield opened
