"""What only the server store has: its schema version and migrations, the append-only trigger,
logins the libpq way, and one-line errors that never show a password."""

from __future__ import annotations

import psycopg
import pytest
from pg_harness import PASSWORD, Cluster

from workbench.annotations import open_store
from workbench.annotations.postgres import _MIGRATIONS, SCHEMA_VERSION, PostgresStore
from workbench.errors import InputError, UsageError


def test_the_schema_is_created_with_its_version_and_events_are_append_only(pg_url: str) -> None:
    with open_store(pg_url) as store:
        event = store.annotate(annotator="ana", record_id="r1", turn=0, category="other")
        assert store.schema_version() == SCHEMA_VERSION
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for statement in ("UPDATE events SET note = 'x'", "DELETE FROM events", "TRUNCATE events"):
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                conn.execute(statement)
        assert conn.execute("SELECT event_id FROM events").fetchall() == [(event,)]
        assert [v for (v,) in conn.execute("SELECT version FROM workbench_schema ORDER BY version")] == [1, 2]


def test_an_older_schema_is_migrated_and_a_newer_one_refused_in_one_line(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:  # a store as version 1 wrote it (no leases)
        conn.execute("CREATE TABLE workbench_schema (version INTEGER PRIMARY KEY, migrated_at TEXT NOT NULL)")
        for statement in _MIGRATIONS[0][1]:
            conn.execute(statement)
        conn.execute("INSERT INTO workbench_schema VALUES (1, '2026-01-01T00:00:00+00:00')")
    with open_store(pg_url, create=False) as store:
        assert store.schema_version() == 2
        from workbench.annotations import leases

        assert leases.acquire(store, ("r", 0, None), owner="s", annotator="ana", now=1.0)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO workbench_schema VALUES (99, '2099-01-01T00:00:00+00:00')")
    with pytest.raises(UsageError) as refused:
        open_store(pg_url)
    message = str(refused.value)
    assert "\n" not in message and "schema version 99" in message and f"up to {SCHEMA_VERSION}" in message


def test_no_store_and_not_a_store_are_said_in_one_line(pg_cluster: Cluster) -> None:
    url = pg_cluster.url(pg_cluster.new_database())
    with pytest.raises(UsageError, match="no annotation store in"):
        open_store(url, create=False)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE events (x int)")
    with pytest.raises(UsageError, match="not an annotation store"):
        open_store(url)


def test_a_password_comes_the_libpq_way_and_is_never_shown(
    pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = pg_cluster.new_database()
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    with open_store(pg_cluster.tcp_url(database)) as store:  # PGPASSWORD
        store.annotate(annotator="ana", record_id="r", turn=0, category="other")
    monkeypatch.delenv("PGPASSWORD")
    in_url = pg_cluster.tcp_url(database).replace("postgres@", f"postgres:{PASSWORD}@")
    with open_store(in_url) as store:  # works, and is shown redacted
        assert PASSWORD not in repr(store) and "postgres:***@" in repr(store)
        assert store.snapshot()["n_events"] == 1
    wrong = in_url.replace(PASSWORD, "wrong-" + PASSWORD)
    with pytest.raises(InputError) as failed:
        open_store(wrong)
    message = str(failed.value)
    assert PASSWORD not in message and "\n" not in message
    assert "postgres:***@127.0.0.1" in message and "PGPASSWORD" in message


@pytest.mark.parametrize(
    ("change", "fix"),
    [
        ("database", "createdb"),  # a database that does not exist
        ("port", "server is running"),  # nothing listens there
        ("user", "user name"),  # a role that does not exist
    ],
)
def test_a_wrong_database_port_or_user_is_one_line_with_the_fix(pg_cluster: Cluster, change: str, fix: str) -> None:
    url = {
        "database": pg_cluster.url("no_such_db"),
        "port": pg_cluster.url("postgres").replace(f"port={pg_cluster.port}", "port=1"),
        "user": pg_cluster.url("postgres").replace("postgres@", "nobody@"),
    }[change]
    with pytest.raises(InputError) as failed:
        PostgresStore(url, connect_timeout=3)
    message = str(failed.value)
    assert "\n" not in message and fix in message and message.startswith(url.split("?")[0])


def test_a_store_goes_on_after_the_server_restarts(pg_cluster: Cluster) -> None:
    url = pg_cluster.url(pg_cluster.new_database())
    with open_store(url) as store:
        acknowledged = [store.annotate(annotator="ana", record_id="r", turn=t, category="other") for t in range(3)]
        pg_cluster.stop("fast")
        try:
            with pytest.raises(InputError) as lost:
                store.annotate(annotator="ana", record_id="r", turn=9, category="other")
        finally:
            pg_cluster.start()
        assert "\n" not in str(lost.value) and "not acknowledged" in str(lost.value)
        after = store.annotate(annotator="ana", record_id="r", turn=4, category="other")  # a new connection
        ids = store.events().get_column("event_id").to_list()
    assert set(acknowledged) <= set(ids) and after in ids
