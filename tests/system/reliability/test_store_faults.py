"""Annotation store faults (issue 8, part 4): locks, read-only files, damaged files.

Each fault is injected into a store that holds acknowledged events and an earlier backup.
Through the Python API and through ``workbench annotations list/import`` the user gets one
line naming the file, what is wrong and what to do (never a raw sqlite3 traceback); the
damaged file keeps its bytes, the backups keep theirs, and no acknowledged event is lost.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from reliability_support import fault, run_unprivileged, sha256

import workbench.annotations.integrity as integrity_module
import workbench.annotations.store as store_module
from workbench.annotations.integrity import backup_name, list_backups
from workbench.annotations.recovery import recover_store
from workbench.annotations.store import AnnotationStore
from workbench.cli import main
from workbench.errors import InputError, UsageError, WorkbenchError

N_EVENTS = 40


def make_store(folder: Path) -> tuple[Path, dict, Path]:
    """A store with ``N_EVENTS`` acknowledged events (one retracted) and one backup of it."""
    path = folder / "annotations.sqlite"
    with AnnotationStore(path) as store:
        ids = store.annotate_many(
            [
                {
                    "annotator": "ana",
                    "record_id": f"Single_X/2015/page_{i}.pdf-1",
                    "turn": i % 3,
                    "category": "other",
                    "note": "n" * 100,
                }
                for i in range(N_EVENTS - 1)
            ]
        )
        store.retract(ids[0], annotator="ana")
        snapshot = store.snapshot()
        copy = store.backup()
    return path, snapshot, copy


def csv_file(folder: Path) -> Path:
    path = folder / "more.csv"
    path.write_text("record_id,turn,category,annotator\nr-new,0,mislabel,bo\n", encoding="utf-8")
    os.chmod(path, 0o644)
    return path


def one_line(text: str) -> str:
    text = text.strip()
    assert "\n" not in text, text
    assert "Traceback" not in text and "sqlite3." not in text, text
    return text


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- damaged files
def header_garbage(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[:100] = os.urandom(100)
    path.write_bytes(bytes(data))


def truncated_half(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def truncated_inside_header(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:50])


def page_garbage(path: Path) -> None:
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    assert len(data) >= 3 * page
    data[page : 2 * page] = os.urandom(page)  # page 2: the events table's root
    path.write_bytes(bytes(data))


def wrong_tables(path: Path) -> None:
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("INSERT INTO invoices VALUES (1, 9.5)")
    conn.commit()
    conn.close()


def garbage_wal(path: Path) -> None:
    path.with_name(path.name + "-wal").write_bytes(os.urandom(4096 + 24))


DAMAGE: dict[str, tuple[Callable[[Path], None], type[WorkbenchError], tuple[str, ...]]] = {
    "random bytes over the header": (header_garbage, InputError, ("not an SQLite database", "left as it is")),
    "file truncated to half": (truncated_half, InputError, ("damaged", "malformed", "left as it is")),
    "file truncated inside the header": (truncated_inside_header, InputError, ("not an SQLite database",)),
    "random bytes over a table page": (page_garbage, InputError, ("damaged", "left as it is")),
    "valid SQLite file with the wrong tables": (wrong_tables, UsageError, ("not an annotation store", "invoices")),
    "garbage WAL file": (garbage_wal, InputError, ("write-ahead log", "left as they are")),
}


@pytest.mark.parametrize("name", list(DAMAGE))
def test_damaged_store_is_a_one_line_error_and_stays_as_it_is(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damage, error, words = DAMAGE[name]
    path, snapshot, copy = make_store(tmp_path)
    backup_bytes = sha256(copy)
    damage(path)
    fault(f"store: {name}")
    files = sorted(p for p in tmp_path.iterdir() if p.name.startswith("annotations.sqlite"))
    before = {p.name: sha256(p) for p in files}

    for attempt in ("open", "open create=False"):
        with pytest.raises(error) as caught:
            AnnotationStore(path, create=attempt == "open")
        message = one_line(str(caught.value))
        assert all(w in message for w in words), message
        assert str(path) in message and "Fix:" in message
    if error is InputError and name != "file truncated inside the header":
        assert str(copy) in message or name == "garbage WAL file", "the fix names the backup to restore"

    for args in (
        ["annotations", "list", "--store", str(path)],
        ["annotations", "list", "--all", "--store", str(path)],
        ["annotations", "import", str(csv_file(tmp_path)), "--store", str(path)],
        ["export", "--dataset", "nowhere.json", "--annotations", str(path), "--out", str(tmp_path / "x")],
    ):
        code, out, err = cli(capsys, *args)
        assert code == 2, (args, out, err)
        line = one_line(err)
        assert line.startswith("workbench: error: ") and str(path.parent) in line

    after = {p.name: sha256(p) for p in tmp_path.iterdir() if p.name.startswith("annotations.sqlite")}
    assert after == before, "the damaged file(s) must be left byte for byte"
    assert sha256(copy) == backup_bytes, "an existing backup must not change"
    with AnnotationStore(copy, create=False) as restored:  # nothing acknowledged is lost: the backup has it
        assert restored.snapshot() == snapshot


def test_wrong_schema_version_leaves_the_file_as_it_is(tmp_path: Path) -> None:
    path, _, _ = make_store(tmp_path)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 7")
    conn.close()
    before = sha256(path)
    fault("store: unknown schema version")
    with pytest.raises(UsageError, match="schema version 7"):
        AnnotationStore(path)
    assert sha256(path) == before


def test_other_sqlite_database_is_not_switched_to_wal(tmp_path: Path) -> None:
    """Opening someone else's SQLite file as a store used to turn on WAL mode in it."""
    other = tmp_path / "other.sqlite"
    wrong_tables(other)
    before = sha256(other)
    fault("store: another application's SQLite file")
    with pytest.raises(UsageError, match="not an annotation store"):
        AnnotationStore(other)
    assert sha256(other) == before
    assert not other.with_name("other.sqlite-wal").exists()


# --------------------------------------------------------------------------- locks
HOLD = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
for statement in sys.argv[2:]:
    conn.execute(statement)
print("ready", flush=True)
sys.stdin.read()
conn.execute("COMMIT") if conn.in_transaction else None
"""


class Holder:
    """Another process holding a lock on the store until closed."""

    def __init__(self, path: Path, *statements: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLD, str(path), *statements],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None and self.process.stdout.readline().strip() == "ready"

    def release(self) -> None:
        self.process.communicate("", timeout=120)
        assert self.process.returncode == 0


LOCKS = {
    "another process in BEGIN EXCLUSIVE": ("BEGIN EXCLUSIVE",),
    "another process with locking_mode EXCLUSIVE": ("PRAGMA locking_mode = EXCLUSIVE", "BEGIN EXCLUSIVE"),
    "another process holding an exclusive-mode read lock": (
        "PRAGMA locking_mode = EXCLUSIVE",
        "SELECT count(*) FROM events",
    ),
}


@pytest.mark.parametrize("name", list(LOCKS))
def test_locked_store_says_who_to_wait_for_and_loses_nothing(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_S", 0.2)  # how long the store waits
    monkeypatch.setattr(integrity_module, "BUSY_TIMEOUT_S", 0.2)  # what the message says it waited
    path, snapshot, copy = make_store(tmp_path)
    backup_bytes = sha256(copy)
    holder = Holder(path, *LOCKS[name])
    fault(f"store: {name}")
    try:
        try:  # reading may work (WAL readers do not wait for a writer); writing may not
            store = AnnotationStore(path)
        except InputError as exc:
            store = None
            message = one_line(str(exc))
        if store is not None:
            assert store.snapshot() == snapshot
            with pytest.raises(InputError) as caught:
                store.annotate(annotator="ana", record_id="late", turn=0, category="other")
            message = one_line(str(caught.value))
            store.close()
        assert "another process holds a lock" in message and "close the other notebook" in message, message
        assert str(path) in message and "nothing was written" in message

        code, _, err = cli(capsys, "annotations", "import", str(csv_file(tmp_path)), "--store", str(path))
        assert code == 2 and "another process holds a lock" in one_line(err)
        code, out, err = cli(capsys, "annotations", "list", "--store", str(path))
        assert (code == 0 and out.startswith("event_id")) or (code == 2 and "lock" in one_line(err))
    finally:
        holder.release()
    with AnnotationStore(path) as store:  # the lock gone, every acknowledged event is there and writes work
        assert store.snapshot() == snapshot
        store.annotate(annotator="ana", record_id="late", turn=0, category="other")
        assert store.snapshot()["n_events"] == snapshot["n_events"] + 1
    assert sha256(copy) == backup_bytes


def test_backup_works_while_another_process_writes(tmp_path: Path) -> None:
    path, snapshot, _ = make_store(tmp_path)
    holder = Holder(
        path,
        "BEGIN IMMEDIATE",
        "INSERT INTO events (kind, created_at, annotator, record_id, turn, category) "
        "VALUES ('annotation', '2026-01-01T00:00:00.000000+00:00', 'zoe', 'r', 0, 'other')",
    )
    fault("store: backup during another process's write transaction")
    try:
        with AnnotationStore(path) as store:
            copy = store.backup(tmp_path / "backups")
    finally:
        holder.release()
    with AnnotationStore(copy, create=False) as restored:
        assert restored.snapshot() == snapshot  # the uncommitted write is not in it


# --------------------------------------------------------------------------- read-only
READ_ONLY_SCRIPT = """
import sys
from workbench.annotations.store import AnnotationStore
from workbench.cli import main
from workbench.errors import WorkbenchError
path, csv = sys.argv[1], sys.argv[2]
try:
    with AnnotationStore(path) as store:
        print("read", store.snapshot()["n_events"])
        store.annotate(annotator="ana", record_id="late", turn=0, category="other")
        print("wrote")
except WorkbenchError as exc:
    print("api:", exc)
print("list:", main(["annotations", "list", "--store", path]), file=sys.stderr)
print("import:", main(["annotations", "import", csv, "--store", path]), file=sys.stderr)
"""

READ_ONLY = {
    "read-only store file": (0o444, 0o777),
    "read-only folder": (0o666, 0o555),
    "read-only folder, new store": (None, 0o555),
}


@pytest.mark.parametrize("name", list(READ_ONLY))
def test_read_only_store_is_a_one_line_error(name: str, shared_dir: Path) -> None:
    file_mode, dir_mode = READ_ONLY[name]
    folder = shared_dir / "run"
    folder.mkdir()
    if file_mode is not None:
        path, snapshot, _ = make_store(folder)
        os.chmod(path, file_mode)
    else:
        path, snapshot = folder / "annotations.sqlite", None
    notes = csv_file(shared_dir)
    before = {p.name: sha256(p) for p in folder.iterdir()}
    os.chmod(folder, dir_mode)
    fault(f"store: {name}")
    result = run_unprivileged(READ_ONLY_SCRIPT, str(path), str(notes))
    os.chmod(folder, 0o755)
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr
    api = [line for line in result.stdout.splitlines() if line.startswith("api:")]
    assert len(api) == 1, result.stdout
    assert str(path) in api[0] and ("read-only" in api[0] or "cannot open" in api[0]) and "Fix:" in api[0]
    if file_mode is None:
        assert "workbench: error: no annotation store" in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("workbench: error:")]
    assert errors and all(str(path) in line for line in errors), result.stderr
    assert "import: 2" in result.stderr
    if snapshot is not None:
        assert {p.name: sha256(p) for p in folder.iterdir() if p.name in before} == before
        with AnnotationStore(path) as store:
            assert store.snapshot() == snapshot


# --------------------------------------------------------------------------- backups
class FixedClock(dt.datetime):
    @classmethod
    def now(cls, tz: dt.tzinfo | None = None) -> FixedClock:  # type: ignore[override]
        return cls(2099, 12, 31, 0, 0, 0, tzinfo=tz)


def test_backups_never_overwrite_and_hold_every_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path, snapshot, first = make_store(tmp_path)
    monkeypatch.setattr(store_module.dt, "datetime", FixedClock)
    name = backup_name(path, "20991231T000000Z")
    assert name == "annotations.backup-20991231T000000Z.sqlite"
    squatter = tmp_path / name
    squatter.write_bytes(b"not mine to overwrite")
    fault("store: backup name already taken")
    with AnnotationStore(path) as store:
        second = store.backup()
        third = store.backup()
        elsewhere = store.backup(tmp_path / "elsewhere")
    assert squatter.read_bytes() == b"not mine to overwrite"
    assert (second.name, third.name) == (
        "annotations.backup-20991231T000000Z-2.sqlite",
        "annotations.backup-20991231T000000Z-3.sqlite",
    )
    assert elsewhere == tmp_path / "elsewhere" / name
    for copy in (first, second, third, elsewhere):
        with AnnotationStore(copy, create=False) as restored:
            assert restored.snapshot() == snapshot
    assert not [p for p in tmp_path.rglob("*.tmp")]
    assert list_backups(path)[-1] == third

    hashes = {p: sha256(p) for p in (first, second, third, squatter)}
    code, out, err = cli(capsys, "annotations", "backup", "--store", str(path))
    assert code == 0 and "-4.sqlite" in out, (out, err)
    assert {p: sha256(p) for p in hashes} == hashes


# --------------------------------------------------------------------------- recover
def test_recover_copies_what_is_readable_and_only_reads_the_damaged_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _, copy = make_store(tmp_path)
    with AnnotationStore(path) as store:
        store.annotate_many(
            [
                {"annotator": "bo", "record_id": f"r{i}", "turn": 0, "category": "other", "note": "x" * 80}
                for i in range(300)
            ]
        )
        events = store.events()
    truncated_half(path)
    fault("store: recover from a file truncated to half")
    before = {p.name: sha256(p) for p in tmp_path.iterdir()}
    code, out, err = cli(capsys, "annotations", "recover", "--store", str(path))
    assert code == 0, err
    assert "was left as it is" in out and "recovered-" in out
    rescued = next(tmp_path.glob("annotations.recovered-*.sqlite"))
    with AnnotationStore(rescued, create=False) as store:
        got = store.events()
    assert 0 < got.height < events.height
    assert set(got.rows()) <= set(events.rows()), "every recovered event is one that was written"
    again = recover_store(path)[0]
    assert again != rescued and again.name.startswith("annotations.recovered-")
    assert {p.name: sha256(p) for p in tmp_path.iterdir() if p.name in before} == before


def test_recover_says_so_when_nothing_can_be_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, _, copy = make_store(tmp_path)
    header_garbage(path)
    fault("store: recover from a file with a garbage header")
    before = sha256(path)
    code, _, err = cli(capsys, "annotations", "recover", "--store", str(path))
    line = one_line(err)
    assert code == 2 and "no event can be recovered" in line and str(copy) in line
    assert sha256(path) == before and not list(tmp_path.glob("*.recovered-*"))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


# --------------------------------------------------------------------------- issue 15: one line, gaps counted
def test_damaged_header_with_several_backups_is_one_line_naming_the_newest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _, _ = make_store(tmp_path)
    stamps = iter(["20991231T000001Z", "20991231T000002Z", "20991231T000003Z"])

    class Clock(dt.datetime):
        @classmethod
        def now(cls, tz: dt.tzinfo | None = None) -> Clock:  # type: ignore[override]
            return cls.strptime(next(stamps), "%Y%m%dT%H%M%SZ").replace(tzinfo=tz)

    monkeypatch.setattr(store_module.dt, "datetime", Clock)
    with AnnotationStore(path) as store:
        for _ in range(3):
            store.backup()
    backups = list_backups(path)
    assert len(backups) == 4
    header_garbage(path)
    fault("store: random bytes over the header, four backups")
    expected = (
        f"{path}: not an SQLite database: its header is not SQLite's (damaged, or another kind of file); the file "
        f"was left as it is. Fix: copy the newest backup, {tmp_path / 'annotations.backup-20991231T000003Z.sqlite'}, "
        "over it"
    )
    for args in (["list"], ["list", "--all"], ["import", str(csv_file(tmp_path))], ["backup"]):
        code, out, err = cli(capsys, "annotations", *args, "--store", str(path))
        assert (code, out) == (2, ""), args
        assert one_line(err) == f"workbench: error: {expected}", args
        assert sum(backup.name in err for backup in backups) == 1  # the newest backup only
    with pytest.raises(InputError) as caught:
        AnnotationStore(path)
    assert one_line(str(caught.value)) == expected


def test_recover_counts_gaps_in_the_event_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Rows lost from the middle (ids 5..9) are counted from the ids, not said to be 0."""
    path = tmp_path / "annotations.sqlite"
    with AnnotationStore(path) as store:
        store.annotate_many(
            [{"annotator": "ana", "record_id": f"r{i}", "turn": 0, "category": "other"} for i in range(20)]
        )
    conn = sqlite3.connect(path)  # what a damaged page does: the rows of ids 5..9 are gone
    conn.execute("DELETE FROM events WHERE event_id BETWEEN 5 AND 9")
    conn.commit()
    conn.close()
    fault("store: recover with event ids 5..9 missing")
    code, out, err = cli(capsys, "annotations", "recover", "--store", str(path))
    assert code == 0, err
    rescued = next(tmp_path.glob("annotations.recovered-*.sqlite"))
    assert one_line(out) == (
        f"recovered 15 events of {path} into {rescued}; left out 5 unreadable rows (event ids 5-9) and 0 invalid "
        f"rows; {path} was left as it is. Next: check it (workbench annotations list --all --store {rescued}), "
        f"then move it over {path}"
    )
    with AnnotationStore(rescued, create=False) as store:
        assert store.events()["event_id"].to_list() == [*range(1, 5), *range(10, 21)]


def _table_leaves(data: bytes, root: int) -> list[tuple[int, list[int]]]:
    """The leaf pages of the table b-tree at page ``root`` and the rowids on each, in order."""
    page_size = int.from_bytes(data[16:18], "big") or 65536

    def varint(at: int) -> tuple[int, int]:
        value = 0
        for i in range(9):
            byte = data[at + i]
            if i == 8:
                return (value << 8) | byte, at + 9
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                return value, at + i + 1
        raise AssertionError("unreachable")

    def walk(page: int) -> list[tuple[int, list[int]]]:
        start = (page - 1) * page_size
        head = start + (100 if page == 1 else 0)
        kind, cells = data[head], int.from_bytes(data[head + 3 : head + 5], "big")
        pointers = [int.from_bytes(data[head + (12 if kind == 5 else 8) + 2 * i :][:2], "big") for i in range(cells)]
        if kind == 0x0D:  # table leaf: payload size, rowid
            return [(page, [varint(varint(start + p)[1])[0] for p in pointers])]
        assert kind == 0x05, kind  # table interior: child page, key; then the right-most child
        children = [int.from_bytes(data[start + p : start + p + 4], "big") for p in pointers]
        children.append(int.from_bytes(data[head + 8 : head + 12], "big"))
        return [leaf for child in children for leaf in walk(child)]

    return walk(root)


def test_recover_counts_the_rows_of_a_damaged_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, _, _ = make_store(tmp_path)
    with AnnotationStore(path) as store:
        store.annotate_many(
            [
                {"annotator": "bo", "record_id": f"r{i}", "turn": 0, "category": "other", "note": "x" * 200}
                for i in range(60)
            ]
        )
        total = store.snapshot()["n_events"]
    conn = sqlite3.connect(path)
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'events'").fetchone()[0]
    conn.close()
    data = bytearray(path.read_bytes())
    leaves = _table_leaves(bytes(data), root)
    assert len(leaves) >= 3
    page, lost = leaves[len(leaves) // 2]  # a page in the middle
    page_size = int.from_bytes(data[16:18], "big") or 65536
    data[(page - 1) * page_size : page * page_size] = os.urandom(page_size)
    path.write_bytes(bytes(data))
    fault("store: recover with random bytes over a leaf page of the events table")
    done = recover_store(path)
    assert done.unreadable == len(lost) and done.kept + done.unreadable + done.invalid == total
    assert done.missing_ids == (f"{lost[0]}-{lost[-1]}" if len(lost) > 1 else str(lost[0]))
    with AnnotationStore(done.path, create=False) as store:
        assert not set(store.events()["event_id"].to_list()) & set(lost)
