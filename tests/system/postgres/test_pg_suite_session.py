"""tests/unit/annotations/test_session.py on PostgreSQL: the same tests (not copied), with
``store_location`` a fresh database on the throwaway cluster (store_suite.py); its
``test_sqlite_...`` tests are about the SQLite file and are left out."""

from __future__ import annotations

from store_suite import store, store_location, unit_tests  # noqa: F401 (the fixtures the tests take)

globals().update(unit_tests("test_session", ("run", "two_system_run")))
