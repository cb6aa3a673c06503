"""The annotation store's unit suite (tests/unit/annotations) run on PostgreSQL, written once.

The unit tests take their store from the ``store_location`` / ``store`` fixtures (a SQLite file
there). :func:`unit_tests` loads one of those test modules and gives its tests and fixtures to a
module here, whose ``store_location`` (below) is a fresh database on the throwaway cluster
instead: the same test functions, another backend. Only tests that take a store (``store`` or
``store_location``) are run again; tests named ``test_sqlite_...`` are about the SQLite file only
and are left out.
"""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from workbench.annotations import Store, open_store

UNIT = Path(__file__).resolve().parents[2] / "unit" / "annotations"


def unit_tests(stem: str, fixtures: tuple[str, ...] = ()) -> dict[str, Any]:
    """The tests of ``tests/unit/annotations/<stem>.py`` that take a store and are not SQLite-only,
    and its module-level ``fixtures`` (by name), to put in a test module's namespace."""
    spec = importlib.util.spec_from_file_location(f"unit_annotations_{stem}", UNIT / f"{stem}.py")
    assert spec is not None and spec.loader is not None, stem
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found = {
        name: value
        for name, value in vars(module).items()
        if name.startswith("test_")
        and not name.startswith("test_sqlite_")
        and callable(value)
        and {"store", "store_location"} & set(inspect.signature(value).parameters)
    }
    assert found, f"no tests in {stem}"
    return {**found, **{name: getattr(module, name) for name in fixtures}}


@pytest.fixture
def store_location(pg_url: str) -> str:
    """A fresh, empty database on the throwaway cluster (conftest.py's ``pg_url``)."""
    return pg_url


@pytest.fixture
def store(store_location: str) -> Iterator[Store]:
    with open_store(store_location) as opened:
        yield opened
