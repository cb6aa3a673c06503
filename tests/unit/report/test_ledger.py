"""The run ledger (issue 34, point 1): what a row holds (from a graded folder as `grade --out`
writes it), and safe appends (two runs at once keep both rows; a SIGKILL mid-append leaves the
earlier rows readable). `workbench report` appending: tests/system/history/test_report_ledger.py.

`workbench grade --out` does not append yet: tests/system/cli/test_cli_one_line.py
(test_full_disk_in_grade_writes_the_set_or_nothing) holds that its folder has exactly six files."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

from workbench.cli import main
from workbench.pipeline.graded import file_sha256
from workbench.report.ledger import append, append_graded, ledger_path, read_ledger, rows_from_graded

REPO = Path(__file__).resolve().parents[3]
GOLD = REPO / "tests/fixtures/convfinqa/dev_small.json"
PREDICTIONS = [
    REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl",
    REPO / "tests/fixtures/predictions/zarifaziz_dev_small_12-48-44Z.jsonl",
]


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("graded")
    files = [str(GOLD), *map(str, PREDICTIONS)]
    assert main(["grade", *files, "--out", str(out)]) == 0
    # what 'workbench grade --out' is to append once its folder may hold the ledger (see the module's note)
    append_graded(out, out, source="grade", column_map=[], parameters={"files": files})
    return out


def test_a_graded_folder_gives_a_row_per_system_with_hashes_slices_and_inputs(graded: Path) -> None:
    rows = read_ledger(ledger_path(graded), with_verdicts=True)
    summary = json.loads((graded / "summary.json").read_text())
    assert [r.system for r in rows] == list(summary["systems"])
    assert len({r.run_id for r in rows}) == 1
    turns = pl.read_parquet(graded / "turns.parquet")
    for row, path in zip(rows, PREDICTIONS, strict=True):
        assert row.source == "grade" and row.benchmark == "convfinqa"
        assert row.gold_sha256 == file_sha256(GOLD)
        assert row.predictions_sha256 == file_sha256(path)
        assert row.headline["turn_execution_accuracy"] == summary["systems"][row.system]["turn_execution_accuracy"]
        assert "policies" not in row.headline
        assert row.column_map == [] and row.parameters["files"] == [str(GOLD), *map(str, PREDICTIONS)]
        # every slice group's n and accuracy, as counted from the graded turns themselves
        mine = turns.filter(pl.col("system") == row.system)
        by_operation = {g["group"]: g for g in row.slices if g["slice"] == "operation"}
        for operation, part in mine.group_by("operation"):
            assert by_operation[str(operation[0])]["n"] == part.height
            assert by_operation[str(operation[0])]["accuracy"] == pytest.approx(part["correct"].fill_null(False).mean())
        overall = row.verdicts.filter(pl.col("slice") == "overall")
        assert overall.height == mine.height
        assert overall["answered"].sum() == mine.filter(pl.col("status") != "no_prediction").height


def test_a_second_append_adds_rows_and_keeps_the_first(graded: Path, tmp_path: Path) -> None:
    for _ in range(2):
        append_graded(tmp_path, graded, source="grade")
    rows = read_ledger(ledger_path(tmp_path))
    assert len(rows) == 4 and rows[0].run_id == rows[1].run_id != rows[2].run_id == rows[3].run_id
    assert rows[0].created_at <= rows[2].created_at


_APPENDER = textwrap.dedent(
    """
    import sys, time
    from workbench.report.ledger import append, rows_from_graded
    graded, ledger, tag, mode = sys.argv[1:5]
    rows = rows_from_graded(graded, source="grade", run_id=tag)
    if mode == "race":
        while not __import__("os").path.exists(ledger + ".go"):
            time.sleep(0.01)
        append(ledger, rows)
        print("done", flush=True)
    else:  # hold the append open, half written, until killed
        import sqlite3
        from workbench.report import ledger as module
        connection = module._connect(__import__("pathlib").Path(ledger))
        connection.execute("BEGIN IMMEDIATE")
        connection.execute(module._SCHEMA)
        big = [r.__class__(**{**r.__dict__, "run_id": tag, "system": f"{r.system}#{i}"}) for i in range(40) for r in rows]
        connection.executemany(
            f"INSERT INTO runs ({', '.join(module._COLUMNS)}) VALUES ({', '.join('?' for _ in module._COLUMNS)})",
            [r._values() for r in big],
        )
        print("inside", flush=True)
        sys.stdin.read()
    """
)


def _appender(graded: Path, ledger: Path, tag: str, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _APPENDER, str(graded), str(ledger), tag, mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )


def test_two_runs_appending_at_once_keep_both_rows(graded: Path, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.sqlite"
    first = _appender(graded, ledger, "first", "race")
    second = _appender(graded, ledger, "second", "race")
    (tmp_path / "ledger.sqlite.go").touch()  # both start appending now
    assert first.communicate()[0].strip() == "done" and first.returncode == 0
    assert second.communicate()[0].strip() == "done" and second.returncode == 0
    rows = read_ledger(ledger)
    assert sorted({r.run_id for r in rows}) == ["first", "second"]
    assert len(rows) == 4


def test_a_sigkill_during_an_append_leaves_the_earlier_rows_readable(graded: Path, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.sqlite"
    append(ledger, rows_from_graded(graded, source="grade", run_id="before"))
    earlier = read_ledger(ledger, with_verdicts=True)
    killed = _appender(graded, ledger, "killed", "kill")
    assert killed.stdout is not None and killed.stdout.readline().strip() == "inside"
    assert Path(f"{ledger}-journal").exists()  # the append is under way, pages already in the file
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    assert killed.returncode == -signal.SIGKILL
    rows = read_ledger(ledger, with_verdicts=True)
    assert [r.run_id for r in rows] == ["before", "before"]
    for now, then in zip(rows, earlier, strict=True):
        assert now.headline == then.headline and now.slices == then.slices
        assert now.verdicts.equals(then.verdicts)
    assert sqlite3.connect(ledger).execute("PRAGMA integrity_check").fetchone() == ("ok",)
    append(ledger, rows_from_graded(graded, source="grade", run_id="after"))  # and it takes appends again
    assert [r.run_id for r in read_ledger(ledger)] == ["before", "before", "after", "after"]


def test_a_file_that_is_no_ledger_is_one_clear_error(tmp_path: Path) -> None:
    from workbench.errors import InputError

    with pytest.raises(InputError, match="no run ledger here"):
        read_ledger(tmp_path / "ledger.sqlite")
    (tmp_path / "ledger.sqlite").write_text("not a database")
    with pytest.raises(InputError, match="not a run ledger"):
        read_ledger(tmp_path / "ledger.sqlite")
