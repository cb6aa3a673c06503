"""One SQLite connection per store file per process (issue 15, item 1): every
``AnnotationStore`` open on a file shares it, closing one leaves the others working, the last
close closes it, the file is not read outside SQLite while it is open, and a forked child
never uses its parent's connection."""

from __future__ import annotations

import gc
import os
import sqlite3
from pathlib import Path

import pytest

import workbench.annotations.connections as connections_module
import workbench.annotations.integrity as integrity_module
import workbench.annotations.recovery as recovery_module
from workbench.annotations.recovery import recover_store
from workbench.annotations.store import AnnotationStore
from workbench.errors import UsageError


def _note(store: AnnotationStore, record_id: str) -> int:
    return store.annotate(annotator="ana", record_id=record_id, turn=0, category="other")


def _is_closed(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("SELECT 1")
    except sqlite3.ProgrammingError:
        return True
    return False


def test_every_path_to_one_file_shares_one_connection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "annotations.sqlite"
    first = AnnotationStore(path)
    link = tmp_path / "link.sqlite"
    link.symlink_to(path)
    monkeypatch.chdir(tmp_path)
    others = [AnnotationStore(path), AnnotationStore(link), AnnotationStore("annotations.sqlite")]
    conn = first._connection()
    assert all(other._connection() is conn for other in others)
    ids = [_note(store, f"r{i}") for i, store in enumerate([first, *others])]
    assert ids == [1, 2, 3, 4]
    first.close()
    first.close()  # again: no effect
    assert not _is_closed(conn)
    assert _note(others[0], "after") == 5  # the other handles keep working
    with pytest.raises(UsageError, match="is closed"):
        _note(first, "late")
    others[0].close()
    others[1].close()
    assert not _is_closed(conn)
    others[2].close()
    assert _is_closed(conn), "the last close closes the connection"
    with AnnotationStore(path) as again:
        assert again._connection() is not conn
        assert again.events()["event_id"].to_list() == [1, 2, 3, 4, 5]


def test_the_file_is_not_read_while_the_process_has_it_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the header with open() would drop the open connection's locks (POSIX closes them all)."""
    reads: list[Path] = []
    check = integrity_module._check_header
    monkeypatch.setattr(integrity_module, "_check_header", lambda p: (reads.append(p), check(p))[1])
    path = tmp_path / "annotations.sqlite"
    first = AnnotationStore(path)
    assert len(reads) == 1  # before the connection existed
    for _ in range(3):  # a notebook cell run again, the session and view made again
        second = AnnotationStore(path, create=False)
        _note(second, "x")
    assert len(reads) == 1
    del second
    first.close()
    gc.collect()
    with AnnotationStore(path):
        assert len(reads) == 2  # no connection any more: the header is checked again


def test_a_dropped_handle_gives_its_share_back(tmp_path: Path) -> None:
    path = tmp_path / "annotations.sqlite"
    kept = AnnotationStore(path)
    dropped = AnnotationStore(path)  # a notebook variable assigned again: the old handle is collected
    conn = kept._connection()
    del dropped
    gc.collect()
    assert not _is_closed(conn)
    kept.close()
    assert _is_closed(conn)
    assert all(shared.conn is not conn for shared in connections_module._OPEN.values())


def test_recover_reads_an_open_store_through_its_connection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "annotations.sqlite"

    def no_bytes(*_: object) -> None:
        raise AssertionError("the store is open in this process: its bytes must not be read")

    monkeypatch.setattr(recovery_module, "_copy_bytes", no_bytes)
    with AnnotationStore(path) as store:
        ids = [_note(store, f"r{i}") for i in range(5)]
        done = recover_store(path, tmp_path / "rescued")
        assert (done.kept, done.unreadable, done.invalid, done.missing_ids) == (5, 0, 0, "")
        assert _note(store, "after") == 6
    with AnnotationStore(done.path, create=False) as rescued:
        assert rescued.events()["event_id"].to_list() == ids


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_never_uses_the_parents_connection(tmp_path: Path) -> None:
    path = tmp_path / "annotations.sqlite"
    parent = AnnotationStore(path)
    _note(parent, "parent-1")
    report = tmp_path / "child.txt"
    pid = os.fork()
    if pid == 0:  # the child: report what happened, then leave at once
        lines = []
        try:
            try:
                _note(parent, "child-inherited")
                lines.append("inherited handle wrote")
            except UsageError as exc:
                lines.append(f"refused: {exc}")
            parent.close()  # only marks it closed: the connection is the parent's
            with AnnotationStore(path) as own:
                lines.append(f"own wrote {_note(own, 'child-own')}")
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            lines.append(f"failed: {type(exc).__name__}: {exc}")
        finally:
            report.write_text("\n".join(lines))
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    lines = report.read_text().splitlines()
    assert lines[0].startswith(f"refused: the annotation store {path} was opened by the process this one was forked")
    assert lines[1] == "own wrote 2"
    assert _note(parent, "parent-2") == 3  # the parent's connection was not closed by the child
    assert parent.events()["record_id"].to_list() == ["parent-1", "child-own", "parent-2"]
    parent.close()
