"""Fixtures: one throwaway PostgreSQL cluster per session (pg_harness.py), a fresh database per test.
Without PostgreSQL every test here is skipped with one line saying how to install it."""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pg_harness import INSTALL, PASSWORD, Cluster, _bin, _free_port


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    bin_dir = _bin()
    if bin_dir is None:
        pytest.skip(INSTALL)
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'psycopg[binary]'")
    folder = Path(tempfile.mkdtemp(prefix="workbench-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        entry = pwd.getpwnam("postgres")
        os.chown(folder, entry.pw_uid, entry.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    (folder / "pw").write_text(PASSWORD + "\n")
    if as_user:
        os.chown(folder / "pw", pwd.getpwnam("postgres").pw_uid, -1)
    cluster = Cluster(bin_dir, folder, _free_port(), as_user)
    cluster._run(
        str(bin_dir / "initdb"),
        "-D",
        str(folder / "data"),
        "-U",
        "postgres",
        "-E",
        "UTF8",
        "--locale=C",
        "--auth-local=trust",
        "--auth-host=scram-sha-256",
        f"--pwfile={folder / 'pw'}",
    )
    cluster._run("mkdir", str(cluster.socket_dir))
    cluster.start()
    try:
        yield cluster
    finally:
        try:
            cluster.stop("immediate")
        finally:
            shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> str:
    """A fresh, empty database on the throwaway cluster (socket URL)."""
    return pg_cluster.url(pg_cluster.new_database())
