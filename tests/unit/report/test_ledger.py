"""The run ledger (issue 34, point 1): what a row holds (`workbench grade --out` appends one per
system, with the column map and parameters it used), and safe appends (two runs at once keep both
rows; a SIGKILL mid-append leaves the earlier rows readable; a full disk during the append is one
line and leaves the earlier rows). `workbench report` appending:
tests/system/history/test_report_ledger.py."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from workbench.cli import main
from workbench.pipeline.graded import file_sha256
from workbench.pipeline.ledger import append, append_graded, ledger_path, read_ledger, rows_from_graded

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
    assert main(["grade", *files, "--out", str(out)]) == 0  # appends its rows to out/ledger.sqlite
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
        assert row.column_map == [] and row.parameters["dataset"] == str(GOLD)
        assert row.parameters["predictions"] == [*map(str, PREDICTIONS)] and row.template == ""
        # every slice group's n and accuracy, as counted from the graded turns themselves
        mine = turns.filter(pl.col("system") == row.system)
        by_operation = {g["group"]: g for g in row.slices if g["slice"] == "operation"}
        for operation, part in mine.group_by("operation"):
            assert by_operation[str(operation[0])]["n"] == part.height
            assert by_operation[str(operation[0])]["accuracy"] == pytest.approx(part["correct"].fill_null(False).mean())
        overall = row.verdicts.filter(pl.col("slice") == "overall")
        assert overall.height == mine.height
        assert overall["answered"].sum() == mine.filter(pl.col("status") != "no_prediction").height


def test_grade_out_twice_adds_the_rows_of_each_run_with_its_column_map_and_parameters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two systems in another shape (read through --map), graded twice into one folder: two rows a
    run, each with the map and the parameters that run used."""
    shaped = []
    for path in PREDICTIONS:
        frame = pl.read_ndjson(path).select(
            pl.col("record_id").alias("rid"),
            (pl.col("turn_idx") + 1).alias("q_order"),
            pl.col("predicted_answer").alias("ans"),
        )
        shaped.append(tmp_path / f"{path.stem}.csv")
        frame.write_csv(shaped[-1])
    spec = "record_id=rid,turn=q_order:1,predicted_answer=ans"
    out = tmp_path / "graded"
    runs = [["--system", "a", "--system", "b"], ["--system", "a", "--system", "b", "--benchmark", "convfinqa"]]
    for options in runs:
        assert main(["grade", str(GOLD), *map(str, shaped), "--out", str(out), "--map", spec, *options]) == 0
        assert capsys.readouterr().out.rstrip().endswith(f"; ledger {out / 'ledger.sqlite'}")
    rows = read_ledger(ledger_path(out), with_verdicts=True)
    assert [(r.system, r.source) for r in rows] == [("a", "grade"), ("b", "grade")] * 2
    assert rows[0].run_id == rows[1].run_id != rows[2].run_id == rows[3].run_id
    summary = json.loads((out / "summary.json").read_text())
    for row in rows:
        assert row.column_map == [spec]
        assert row.parameters["predictions"] == [*map(str, shaped)] and row.parameters["systems"] == ["a", "b"]
        assert row.parameters["column_map"] == [spec] and row.parameters["dataset"] == str(GOLD)
        assert row.headline["turn_execution_accuracy"] == summary["systems"][row.system]["turn_execution_accuracy"]
        assert row.verdicts.filter(pl.col("slice") == "overall").height == summary["systems"][row.system]["n_turns"]
    assert [r.parameters["benchmark"] for r in rows] == ["auto", "auto", "convfinqa", "convfinqa"]


def _full_after(pages: int) -> Any:
    """``ledger._connect`` on a disk that fills up: the database may not grow beyond ``pages``
    more pages (SQLite's own ``max_page_count``, so the error is SQLite's SQLITE_FULL)."""
    from workbench.pipeline import ledger as module

    real = module._connect

    def connect(path: Path) -> sqlite3.Connection:
        connection = real(path)
        size = connection.execute("PRAGMA page_count").fetchone()[0]
        connection.execute(f"PRAGMA max_page_count = {size + pages}")
        return connection

    return connect


def test_a_full_disk_in_the_ledger_append_is_one_line_and_keeps_the_earlier_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The graded set is written first, then the ledger row: a full disk at the row leaves the new
    set (it was written, and the line says so) and the ledger with its earlier rows only."""
    from workbench.pipeline import ledger as module

    out = tmp_path / "graded"
    files = [str(GOLD), *map(str, PREDICTIONS)]
    assert main(["grade", *files, "--out", str(out)]) == 0
    capsys.readouterr()
    earlier = read_ledger(ledger_path(out), with_verdicts=True)
    monkeypatch.setattr(module, "_connect", _full_after(1))
    assert main(["grade", *files, "--system", "x", "--system", "y", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"workbench: error: {out / 'ledger.sqlite'}: could not add this run to the ledger (database or disk is full); "
        "the run's other outputs are written, and the ledger keeps its earlier rows without this run. "
        "Fix: free some space on that disk (or make the folder writable), then run again\n"
    )
    assert list(json.loads((out / "summary.json").read_text())["systems"]) == ["x", "y"]  # the new set
    rows = read_ledger(ledger_path(out), with_verdicts=True)
    assert [(r.run_id, r.system) for r in rows] == [(r.run_id, r.system) for r in earlier]
    assert all(now.verdicts.equals(then.verdicts) for now, then in zip(rows, earlier, strict=True))
    assert sqlite3.connect(ledger_path(out)).execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert not Path(f"{ledger_path(out)}-journal").exists()


def test_a_second_append_adds_rows_and_keeps_the_first(graded: Path, tmp_path: Path) -> None:
    for _ in range(2):
        append_graded(tmp_path, graded, source="grade")
    rows = read_ledger(ledger_path(tmp_path))
    assert len(rows) == 4 and rows[0].run_id == rows[1].run_id != rows[2].run_id == rows[3].run_id
    assert rows[0].created_at <= rows[2].created_at


_APPENDER = textwrap.dedent(
    """
    import sys, time
    from workbench.pipeline.ledger import append, rows_from_graded
    graded, ledger, tag, mode = sys.argv[1:5]
    rows = rows_from_graded(graded, source="grade", run_id=tag)
    if mode == "race":
        while not __import__("os").path.exists(ledger + ".go"):
            time.sleep(0.01)
        append(ledger, rows)
        print("done", flush=True)
    else:  # hold the append open, half written, until killed
        import sqlite3
        from workbench.pipeline import ledger as module
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
