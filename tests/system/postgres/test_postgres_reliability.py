"""Reliability on the server store: several writer processes, SIGKILLed writers, and a server
crashed and restarted under a writer lose no acknowledged event (what annotate() returned
is in the database), and the writer says one line. Counted, never timed."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from pg_harness import Cluster

from workbench.annotations import open_store

WRITER = Path(__file__).with_name("pg_writer.py")


def _writer(url: str, count: int, name: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WRITER), url, str(count), name], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_four_writer_processes_lose_no_acknowledged_event(pg_url: str) -> None:
    open_store(pg_url).close()  # the schema, once
    writers = [_writer(pg_url, 150, f"w{i}") for i in range(4)]
    acknowledged: list[int] = []
    for writer in writers:
        out, err = writer.communicate()
        assert writer.returncode == 0, err
        acknowledged += [int(line) for line in out.split()]
    with open_store(pg_url, create=False) as store:
        events = store.events()
    stored = events.get_column("event_id").to_list()
    assert len(acknowledged) == len(set(acknowledged)) == 600
    assert sorted(acknowledged) == sorted(stored)
    assert events.group_by("annotator").len().sort("annotator").rows() == [(f"w{i}", 150) for i in range(4)]
    print(f"reliability (PostgreSQL): 4 writer processes, {len(acknowledged)} acknowledged, {len(stored)} stored")


def test_sigkill_of_a_writer_twenty_times_loses_no_acknowledged_event(pg_url: str) -> None:
    open_store(pg_url).close()
    acknowledged: list[int] = []
    for i in range(20):
        writer = _writer(pg_url, 0, f"k{i}")
        assert writer.stdout is not None
        for _ in range(2 + i % 5):  # kill after a few acknowledged saves, at a different point each time
            acknowledged.append(int(writer.stdout.readline()))
        writer.send_signal(signal.SIGKILL)
        rest, _err = writer.communicate()
        acknowledged += [int(line) for line in rest.split()]  # printed before the kill landed
    with open_store(pg_url, create=False) as store:
        stored = set(store.events().get_column("event_id").to_list())
    lost = set(acknowledged) - stored
    assert not lost
    print(f"reliability (PostgreSQL): 20 SIGKILLs, {len(acknowledged)} acknowledged, {len(stored)} stored, 0 lost")


def test_a_server_restarted_mid_write_keeps_what_was_acknowledged_and_the_writer_says_one_line(
    pg_cluster: Cluster,
) -> None:
    """The server crashes (``pg_ctl stop -m immediate``: no shutdown checkpoint, WAL recovery at the
    next start) under a writer saving as fast as it can on its open connection, then comes back:
    every save acknowledged is in the database, and the writer says one line: the URL, that the
    server failed while writing and the call was not acknowledged, the fix; no traceback."""
    url = pg_cluster.url(pg_cluster.new_database())
    open_store(url).close()
    pg_cluster.checkpoint()  # recovery replays this test's writes, not every database the session made
    writer = _writer(url, 0, "w")
    assert writer.stdout is not None
    acknowledged = [int(writer.stdout.readline()) for _ in range(25)]  # writing steadily by now
    pg_cluster.stop("immediate")
    try:
        rest, err = writer.communicate(timeout=120)  # a guard against a hang, not a measure
    finally:
        pg_cluster.start()
    acknowledged += [int(line) for line in rest.split()]
    assert writer.returncode == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    line = err.strip()
    assert line.startswith(f"workbench: error: {url}: the PostgreSQL server failed while writing ("), line
    assert "this call was not acknowledged, everything acknowledged before it is kept" in line and "Fix:" in line
    with open_store(url, create=False) as store:
        stored = set(store.events().get_column("event_id").to_list())
    lost = set(acknowledged) - stored
    assert not lost and len(acknowledged) == len(set(acknowledged)) >= 25
    print(
        f"reliability (PostgreSQL): server crashed and restarted mid-write, {len(acknowledged)} acknowledged, "
        f"{len(stored)} stored, 0 lost; the writer said: {line}"
    )
