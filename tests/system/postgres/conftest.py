"""Fixtures: one throwaway PostgreSQL cluster per session (pg_harness.py), a fresh database per test.
Without PostgreSQL every test here is skipped with one line saying how to install it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pg_harness import Cluster, missing, throwaway


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    reason = missing()
    if reason is not None:
        pytest.skip(reason)
    with throwaway() as cluster:
        yield cluster


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> str:
    """A fresh, empty database on the throwaway cluster (socket URL)."""
    return pg_cluster.url(pg_cluster.new_database())
