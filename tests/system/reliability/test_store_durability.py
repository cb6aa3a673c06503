"""The annotation store across processes (acceptance of the first plan, kept by issue 15): a
SIGKILLed writer loses nothing it acknowledged; two processes writing at once lose nothing; a
reader sees a growing, consistent log while another process writes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from workbench.annotations import AnnotationStore

REPO = Path(__file__).resolve().parents[3]


# --------------------------------------------------------------------------- durability (acceptance)
_WRITER = """
import sys, time
from pathlib import Path
from workbench.annotations import AnnotationStore
path, n, name, start, pause = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])
print("ready", flush=True)
while start != "-" and not Path(start).exists():
    time.sleep(0.001)
store = AnnotationStore(path)
for i in range(n):
    event_id = store.annotate(annotator=name, record_id=f"{name}-{i}", turn=i % 7, category="other", note=str(i))
    print(event_id, flush=True)
    time.sleep(pause)
store.close()
"""


def _writer(path: Path, n: int, name: str, start: Path | str = "-", pause: float = 0.0) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path), str(n), name, str(start), str(pause)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )


def _integrity(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def test_sigkill_loses_no_acknowledged_annotation(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    child = _writer(path, 1000, "killed")
    acknowledged: list[int] = []
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        while len(acknowledged) < 300:
            line = child.stdout.readline()
            assert line.endswith("\n"), f"the writer stopped early: {line!r}"
            acknowledged.append(int(line))
        os.kill(child.pid, signal.SIGKILL)
        rest = child.stdout.read()  # ids acknowledged between our last read and the kill
        acknowledged += [int(line) for line in rest.splitlines(keepends=True) if line.endswith("\n")]
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL, "the writer finished before it was killed; nothing was tested"
    assert len(acknowledged) >= 300
    assert _integrity(path) == "ok"
    with AnnotationStore(path, create=False) as store:
        stored = set(store.events()["event_id"].to_list())
    missing = sorted(set(acknowledged) - stored)
    assert not missing, f"{len(missing)} acknowledged annotations lost: {missing[:10]}"
    assert stored == set(range(1, len(stored) + 1))  # one writer: no gaps, nothing half-written
    assert len(stored) < 1000  # the kill came mid-stream
    print(f"\ndurability: {len(acknowledged)} acknowledged before SIGKILL, {len(stored)} stored, all present")


@pytest.mark.parametrize("pause", [0.0, 0.001], ids=["flat-out", "paced"])
def test_two_processes_write_at_once(tmp_path: Path, pause: float) -> None:
    path = tmp_path / "a.sqlite"  # neither process finds the file: both create it at once
    start = tmp_path / "go"
    children = [_writer(path, 500, name, start, pause) for name in ("ana", "bo")]
    try:
        for child in children:
            assert child.stdout is not None and child.stdout.readline() == "ready\n"
        start.touch()
        # usually 1-3 s; the generous limit only matters on a machine busy with fsyncs
        outputs = [child.communicate(timeout=120)[0] for child in children]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    assert [child.returncode for child in children] == [0, 0]
    printed = [[int(line) for line in out.split()] for out in outputs]
    assert [len(ids) for ids in printed] == [500, 500]
    with AnnotationStore(path, create=False) as store:
        events = store.events()
    assert events.height == 1000
    assert events["event_id"].n_unique() == 1000
    assert sorted(printed[0] + printed[1]) == events["event_id"].to_list()
    by_name = dict(events.group_by("annotator").len().iter_rows())
    assert by_name == {"ana": 500, "bo": 500}
    for name, ids in zip(("ana", "bo"), printed, strict=True):
        assert events.filter(pl.col("annotator") == name)["event_id"].to_list() == ids
    assert _integrity(path) == "ok"
    switches = int((events["annotator"] != events["annotator"].shift(1)).sum())
    if pause:  # paced like people, the writers really overlap: their events interleave
        assert switches >= 10
    print(f"\nconcurrency (pause {pause} s): 1000 events, writers took turns {switches} times")


def test_reading_while_another_process_writes(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    with AnnotationStore(path) as reader:
        child = _writer(path, 300, "writer")
        seen = []
        while child.poll() is None:
            seen.append(reader.snapshot()["n_events"])
        child.communicate(timeout=120)
        assert child.returncode == 0
        assert seen == sorted(seen)  # a reader sees a growing, consistent log
        assert reader.snapshot()["n_events"] == 300
        json.dumps(reader.snapshot())  # serialisable, for export manifests
