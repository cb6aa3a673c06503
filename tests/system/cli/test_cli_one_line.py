"""Issue 15, items 7 to 9 on the command line: hostile or unlucky input gets one line on
standard error (no traceback, exit code 2) and changes nothing; ``--version``; interactive
templates refused in batch; control characters from data never reach the terminal."""

from __future__ import annotations

import errno
import hashlib
import importlib.metadata
import json
import os
import re
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import workbench.pipeline.graded as outputs
from workbench.cli import main

REPO = Path(__file__).resolve().parents[3]
GOLD = REPO / "tests/fixtures/convfinqa/dev_small.json"
PREDS = REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl"
N_FILES = 6  # turns, conversations, unmatched, policy_inputs, checks, summary
HOSTILE = "x\x1b]0;pwned\x07\x1b[2J\x9b31m\x00y"
#: What a terminal would obey: C0 but newline, DEL, C1.
TERMINAL_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(code: int, err: str) -> str:
    """The single error line, after checking the exit code and that there is nothing else."""
    assert code == 2, err
    assert "Traceback" not in err and err.endswith("\n") and err.count("\n") == 1, err
    return err.rstrip("\n")


def _tree(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (hidden ones too) with the SHA-256 of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# --------------------------------------------------------------------------- --out
@pytest.mark.parametrize("command", ["grade", "report"])
def test_out_naming_an_existing_file_is_refused_and_the_file_untouched(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "store.sqlite"
    target.write_bytes(b"SQLite format 3\x00 precious")
    before = _tree(tmp_path)
    argv = ["grade", str(GOLD), str(PREDS)] if command == "grade" else ["report"]
    line = _one_line(*_run(capsys, *argv, "--out", str(target))[::2])
    assert line == (
        f"workbench: error: --out {target} is a file, not a folder; it was left as it is. "
        "Fix: give the name of a folder (a new one, or one the workbench wrote before)"
    )
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("command", ["grade", "report"])
def test_out_name_too_long_for_the_file_system(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / ("a" * 300)
    argv = ["grade", str(GOLD), str(PREDS)] if command == "grade" else ["report"]
    line = _one_line(*_run(capsys, *argv, "--out", str(out))[::2])
    assert line == (
        f"workbench: error: --out {str(out)[:60]}...: the name '{'a' * 40}'... has 300 bytes, more than the "
        "file system allows (255; file name too long). Fix: use a shorter folder name"
    )
    assert list(tmp_path.iterdir()) == []


def test_out_below_a_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    out = tmp_path / "notes.txt" / "graded"
    line = _one_line(*_run(capsys, "grade", str(GOLD), str(PREDS), "--out", str(out))[::2])
    assert line == (
        f"workbench: error: --out {out}: {tmp_path / 'notes.txt'} is a file, not a folder. "
        "Fix: give a path whose parent folders are folders"
    )
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"


# --------------------------------------------------------------------------- full disk
def _fail_kth(stage: str, k: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the k-th write, flush or rename of the grade output set fail with ENOSPC."""
    if stage == "write":
        original = outputs.write_atomic_set

        def failing_set(items: list[tuple[Path, Callable[[Path], None]]]) -> list[Path]:
            assert len(items) == N_FILES

            def half(tmp: Path, write: Callable[[Path], None] = items[k - 1][1]) -> None:
                write(tmp)
                tmp.write_bytes(tmp.read_bytes()[:10])
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

            return original([*items[: k - 1], (items[k - 1][0], half), *items[k:]])

        monkeypatch.setattr(outputs, "write_atomic_set", failing_set)
        return
    name = {"flush": "fsync", "rename": "replace"}[stage]
    real = getattr(os, name)
    calls = [0]

    def failing(*args: Any, **kwargs: Any) -> Any:
        counted = name == "fsync" or str(args[0]).endswith(".tmp")  # renames of the set only
        if counted:
            calls[0] += 1
            if calls[0] == k:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(*args, **kwargs)

    monkeypatch.setattr(os, name, failing)


@pytest.mark.parametrize("stage", ["write", "flush", "rename"])
def test_full_disk_in_grade_writes_the_set_or_nothing(
    stage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """For every k, a full disk at the k-th file leaves the previous set byte for byte, and a
    new folder without any file (no partial set); one line each time. The run ledger
    (ledger.sqlite, appended once the set is written) is left as it was too: a run whose set
    failed adds no row. A full disk in the ledger's own append: tests/unit/report/test_ledger.py."""
    out = tmp_path / "graded"
    code, _, err = _run(capsys, "grade", str(GOLD), str(PREDS), "--system", "first", "--out", str(out))
    assert code == 0, err
    before = _tree(out)
    assert len(before) == N_FILES + 1 and "ledger.sqlite" in before
    names = ["turns", "conversations", "unmatched", "policy_inputs", "checks"]
    files = [*(f"{n}.parquet" for n in names), "summary.json"]
    for k in range(1, N_FILES + 1):
        for folder, previous in ((out, before), (tmp_path / f"new-{k}" / "graded", None)):
            with monkeypatch.context() as patch:
                _fail_kth(stage, k, patch)
                line = _one_line(
                    *_run(capsys, "grade", str(GOLD), str(PREDS), "--system", "second", "--out", str(folder))[::2]
                )
            assert line == (
                f"workbench: error: could not write the outputs into {folder} ({folder / files[k - 1]}: no space "
                "left on device. Fix: free some space on that disk, or write to another disk); nothing was written "
                "and the files already there are as they were"
            ), (stage, k)
            if previous is None:
                assert not (tmp_path / f"new-{k}").exists(), (stage, k)
            else:
                assert _tree(folder) == previous, (stage, k)
    code, _, err = _run(capsys, "grade", str(GOLD), str(PREDS), "--system", "second", "--out", str(out))
    after = _tree(out)
    assert code == 0 and after != before and len(after) == N_FILES + 1
    assert after["ledger.sqlite"] != before["ledger.sqlite"]  # the successful run added its row
    print(f"{stage}: {N_FILES} failure points x 2 folders, each one line; previous set kept {before['summary.json']}")


# --------------------------------------------------------------------------- YAML
def _billion_laughs(path: Path) -> Path:
    lines = [
        "reports:",
        "  - template: 01-overview",
        "    parameters:",
        "      l0: &a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]",
    ]
    lines += [f"      l{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    lines.append("    dataset: *a9")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_yaml_alias_bomb_is_refused_before_expanding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """9**10 = 3.5 billion 'lol's: refused in one line, in a few megabytes (it took 2.9 GB and
    then a MemoryError)."""
    bomb = _billion_laughs(tmp_path / "bomb.yaml")
    tracemalloc.start()
    try:
        code, out, err = _run(capsys, "report", "--config", str(bomb))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    line = _one_line(code, err)
    assert line == (
        f"workbench: error: {bomb}: line 9: its aliases expand to more than 100,000 values (a 'billion laughs' "
        "file?). Fix: write the entries out, or use each alias ('*name') on plain values only"
    )
    assert out == "" and peak < 50 * 2**20
    print(f"alias bomb refused; peak Python memory {peak / 2**20:.1f} MiB")


# --------------------------------------------------------------------------- item 9
def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"workbench {importlib.metadata.version('workbench')}\n"


@pytest.mark.parametrize("template", ["03-triage", "notebooks/03-triage.ipynb"])
def test_interactive_template_is_refused_in_batch(
    template: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _one_line(*_run(capsys, "report", "--template", template, "--out", str(tmp_path / "r"))[::2])
    assert line == (
        "workbench: error: 03-triage is interactive (its annotation widgets wait for clicks), so it cannot run as a "
        "batch report. Fix: serve it with 'workbench triage', or open a copy ('workbench templates copy DIR') "
        "in JupyterLab"
    )
    assert list(tmp_path.iterdir()) == []


def test_interactive_template_is_refused_in_a_batch_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    batch = tmp_path / "nightly.yaml"
    batch.write_text(
        f"out: {tmp_path / 'r'}\nreports:\n  - template: 01-overview\n  - template: 03-triage\n", encoding="utf-8"
    )
    line = _one_line(*_run(capsys, "report", "--config", str(batch))[::2])
    assert line == (
        f"workbench: error: {batch}: report 2: field 'template': 03-triage is interactive (its annotation widgets "
        "wait for clicks), so it cannot run as a batch report. Fix: serve it with 'workbench triage', or open a "
        "copy ('workbench templates copy DIR') in JupyterLab."
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nightly.yaml"]  # nothing ran


# --------------------------------------------------------------------------- item 8
def test_control_characters_in_a_system_name_are_shown_not_obeyed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, "grade", str(GOLD), str(PREDS), "--system", HOSTILE, "--out", str(tmp_path))
    assert code == 0, err
    assert not TERMINAL_CONTROL.search(out + err)
    assert out.startswith("x\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\x00y: turn execution accuracy")
    # the data itself is kept as it was
    assert list(json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))["systems"]) == [HOSTILE]


def test_control_characters_in_record_ids_and_error_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A record id the gold does not know (a warning line) and a bad value (the error line):
    both quote the data, neither lets a control character through."""
    rows = [json.loads(line) for line in PREDS.read_text(encoding="utf-8").splitlines()]
    rows[0]["record_id"] = "\x1b[2J\x1b]0;pwned\x07Single_X\nfake line"
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    code, out, err = _run(capsys, "grade", str(GOLD), str(unknown), "--out", str(tmp_path / "a"))
    assert code == 0, err
    assert not TERMINAL_CONTROL.search(out + err)
    warning = [line for line in err.splitlines() if "matches no gold turn" in line]
    assert len(warning) == 1 and "record '\\x1b[2J\\x1b]0;pwned\\x07Single_X\\nfake line'" in warning[0]

    rows[0]["turn_idx"] = "\x1b[2J\x07one"
    bad = tmp_path / "bad\x1b[31m.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    code, out, err = _run(capsys, "grade", str(GOLD), str(bad), "--out", str(tmp_path / "b"))
    line = _one_line(code, err)
    assert not TERMINAL_CONTROL.search(out + err)
    assert "bad\\x1b[31m.jsonl" in line and "\\x1b[2J\\x07one" in line


def test_control_characters_in_arguments_argparse_quotes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["grade", "x.jsonl", "--out", "o", "--bogus", HOSTILE])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and not TERMINAL_CONTROL.search(err)
    assert err == (
        "workbench: error: unrecognized arguments: --bogus x\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\x00y. "
        "Fix: see 'workbench --help'\n"
    )


def test_argparse_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["grade", "x.jsonl"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == (
        "workbench grade: error: the following arguments are required: --out. Fix: see 'workbench grade --help'\n"
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_real_full_disk_error_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The error the kernel gives on a full disk, not a hand-made one: each file of the set is
    written to /dev/full, a device that is always full (the Parquet bytes as well, since they
    are encoded in memory and written with Python's file API)."""
    out = tmp_path / "graded"
    code, _, err = _run(capsys, "grade", str(GOLD), str(PREDS), "--out", str(out))
    assert code == 0, err
    before = _tree(out)
    monkeypatch.setattr(Path, "write_bytes", lambda self, data: Path("/dev/full").write_text(data.hex()))
    line = _one_line(*_run(capsys, "grade", str(GOLD), str(PREDS), "--system", "other", "--out", str(out))[::2])
    assert line == (
        f"workbench: error: could not write the outputs into {out} ({out / 'turns.parquet'}: no space left on device. "
        "Fix: free some space on that disk, or write to another disk); nothing was written and the files already "
        "there are as they were"
    )
    assert _tree(out) == before
