"""tests/unit/annotations/test_session_start.py on PostgreSQL: the same tests (not copied), with
``store_location`` a fresh database on the throwaway cluster (store_suite.py)."""

from __future__ import annotations

from store_suite import store, store_location, unit_tests  # noqa: F401 (the fixtures the tests take)

globals().update(unit_tests("test_session_start", ("run",)))
