"""Interrupted exports (issue 8, part 4): ``out_dir`` is always a complete export.

A previous export sits in OUT; a new one is interrupted at every write step (the k-th file
write raises, for every k), at the swap itself, and by SIGKILL at several moments, including
between the two renames of the fallback swap. Afterwards OUT holds the previous export (or,
once the swap is done, the new one), every file matching its manifest entry.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from reliability_support import NOTES, fault, sha256, tree

import workbench.cleaning.export as exports
import workbench.io.atomic as atomic
from workbench.annotations.store import AnnotationStore
from workbench.cleaning.export import export_cleaned
from workbench.config import project_root
from workbench.errors import UsageError
from workbench.io.gold import load_gold

ROOT = project_root()
DEV_SMALL = ROOT / "tests/fixtures/convfinqa/dev_small.json"
DEV = ROOT / "data/convfinqa/dev.json"


def annotations(gold_path: Path, folder: Path, n: int) -> pl.DataFrame:
    """``n`` gold corrections on the first records of ``gold_path``, from a real store."""
    ids = load_gold(gold_path).turns["record_id"].unique(maintain_order=True).head(n).to_list()
    with AnnotationStore(folder / f"notes-{n}.sqlite") as store:
        for i, record_id in enumerate(ids):
            store.annotate(annotator="ana", record_id=record_id, turn=0, category="mislabel", corrected_answer=str(i))
        return store.active()


def complete_export(out: Path) -> dict[str, Any]:
    """Check ``out`` is one whole export (files = manifest's, each hash as listed); return its manifest."""
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    listed = {entry["path"]: entry["sha256"] for entry in manifest["files"].values()}
    assert {p.name for p in out.iterdir()} == {*listed, "manifest.json"}
    for name, digest in listed.items():
        assert sha256(out / name) == digest, name
    return manifest


def leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


@pytest.fixture
def previous(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    out = tmp_path / "OUT"
    export_cleaned(DEV_SMALL, annotations(DEV_SMALL, tmp_path, 2), out, split=0.5, seed=1)
    complete_export(out)
    return out, tree(out)


def count_writes(tmp_path: Path) -> int:
    calls = []
    original = exports.write_atomic

    def counting(path: Path, write: Any) -> Path:
        calls.append(path.name)
        return original(path, write)

    exports.write_atomic = counting
    try:
        export_cleaned(DEV_SMALL, annotations(DEV_SMALL, tmp_path, 3), tmp_path / "count", split=0.6, seed=2)
    finally:
        exports.write_atomic = original
    return len(calls)


@pytest.mark.parametrize("half_written", [False, True], ids=["raise-before-writing", "raise-after-half-a-file"])
def test_an_export_interrupted_at_every_write_step_leaves_the_previous_one(
    previous: tuple[Path, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, half_written: bool
) -> None:
    out, before = previous
    new_notes = annotations(DEV_SMALL, tmp_path, 3)
    steps = count_writes(tmp_path)
    assert steps == 7  # dataset, train, test, split.csv, annotations.parquet, annotations.csv, manifest.json
    original = exports.write_atomic
    for k in range(1, steps + 1):
        calls = []

        def failing(path: Path, write: Any, k: int = k, calls: list[str] = calls) -> Path:
            calls.append(path.name)
            if len(calls) == k:
                if half_written:

                    def half(tmp: Path) -> None:
                        write(tmp)
                        data = tmp.read_bytes()
                        tmp.write_bytes(data[: len(data) // 2])
                        raise OSError(28, "No space left on device")

                    return original(path, half)
                raise OSError(28, "No space left on device")
            return original(path, write)

        monkeypatch.setattr(exports, "write_atomic", failing)
        fault(f"export: write step {k} of {steps} fails" + (" after half a file" if half_written else ""))
        with pytest.raises(OSError, match="No space left"):
            export_cleaned(DEV_SMALL, new_notes, out, split=0.6, seed=2)
        assert tree(out) == before, f"step {k}"
        complete_export(out)
        assert leftovers(out) == [], f"step {k}"
    monkeypatch.setattr(exports, "write_atomic", original)
    export_cleaned(DEV_SMALL, new_notes, out)  # and then a whole new export goes through
    assert complete_export(out)["annotations"]["n_corrected"] == 3
    assert tree(out) != before and leftovers(out) == []


@pytest.mark.parametrize("exchange", [True, False], ids=["atomic-exchange", "two-renames"])
def test_a_failing_swap_leaves_the_previous_export(
    previous: tuple[Path, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: bool
) -> None:
    out, before = previous
    new_notes = annotations(DEV_SMALL, tmp_path, 3)
    real_rename = os.rename
    if exchange:

        def broken_exchange(a: Path, b: Path) -> bool:
            raise OSError(5, "Input/output error")

        monkeypatch.setattr(atomic, "_exchange", broken_exchange)
    else:
        monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)

        def second_rename_fails(src: Any, dst: Any) -> None:
            if Path(dst) == out and ".export-" in Path(src).name:  # the new export into place; not the restore
                raise OSError(5, "Input/output error")
            real_rename(src, dst)

        monkeypatch.setattr(atomic.os, "rename", second_rename_fails)
    fault(f"export: the swap fails ({'exchange' if exchange else 'second rename'})")
    with pytest.raises(OSError, match="Input/output"):
        export_cleaned(DEV_SMALL, new_notes, out)
    monkeypatch.setattr(atomic.os, "rename", real_rename)
    assert tree(out) == before and leftovers(out) == []
    if not exchange:  # the fallback path works when nothing fails
        export_cleaned(DEV_SMALL, new_notes, out)
        assert complete_export(out)["annotations"]["n_corrected"] == 3 and leftovers(out) == []


# --------------------------------------------------------------------------- SIGKILL
CHILD = """
import sys, os, itertools
from pathlib import Path
import polars as pl
from workbench.cleaning.export import export_cleaned
gold, out, notes_a, notes_b = sys.argv[1:5]
frames = [pl.read_parquet(notes_a), pl.read_parquet(notes_b)]
print("ready", flush=True)
for i in itertools.count():
    export_cleaned(gold, frames[i % 2], out, split=0.7 if i % 2 else None)
    print("done", i, flush=True)
"""

CHILD_BETWEEN_RENAMES = """
import os, signal, sys
import workbench.io.atomic as atomic
from workbench.cleaning.export import export_cleaned
import polars as pl
gold, out, notes = sys.argv[1:4]
atomic._exchange = lambda a, b: False
real = os.rename
def rename(src, dst):
    real(src, dst)
    if ".previous-" in os.fspath(dst):  # OUT moved aside, the new export not yet in its place
        os.kill(os.getpid(), signal.SIGKILL)
atomic.os.rename = rename
export_cleaned(gold, pl.read_parquet(notes), out)
"""


def test_sigkill_mid_export_leaves_a_complete_export(previous: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    out, before = previous
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    annotations(DEV, tmp_path, 4).write_parquet(a)
    annotations(DEV, tmp_path, 5).write_parquet(b)
    seen = {"previous": 0, "new": 0}
    for delay in (0.05, 0.2, 0.45, 0.7, 1.0, 1.4, 1.9):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(DEV), str(out), str(a), str(b)], stdout=subprocess.PIPE, text=True
        )
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=120)
        fault(f"export: SIGKILL {delay:.2f} s into a loop of exports")
        manifest = complete_export(out)
        seen["previous" if tree(out) == before else "new"] += 1
        assert manifest["input"]["path"] in (str(DEV), str(DEV_SMALL))
    # the next export removes what the killed ones left beside OUT
    export_cleaned(DEV_SMALL, annotations(DEV_SMALL, tmp_path, 1), out)
    complete_export(out)
    assert leftovers(out) == []
    assert sum(seen.values()) == 7
    NOTES.append(f"export SIGKILL outcomes (OUT held the previous / a new export): {seen}")


def test_sigkill_between_the_two_renames_is_undone_by_the_next_export(
    previous: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    out, before = previous
    notes = tmp_path / "n.parquet"
    annotations(DEV_SMALL, tmp_path, 3).write_parquet(notes)
    child = subprocess.run(
        [sys.executable, "-c", CHILD_BETWEEN_RENAMES, str(DEV_SMALL), str(out), str(notes)], capture_output=True
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    fault("export: SIGKILL between moving OUT aside and moving the new export in")
    assert not out.exists()
    moved = [p for p in out.parent.iterdir() if p.name.startswith(".OUT.previous-")]
    assert len(moved) == 1 and tree(moved[0]) == before  # the previous export, whole, beside OUT
    atomic.recover_interrupted(out)  # what the next export does first
    assert tree(out) == before and leftovers(out) == []


def test_a_folder_with_other_files_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious", encoding="utf-8")
    with pytest.raises(UsageError, match=r"holds files that no earlier export wrote \(thesis.tex\)"):
        export_cleaned(DEV_SMALL, annotations(DEV_SMALL, tmp_path, 1), out)
    assert [p.name for p in out.iterdir()] == ["thesis.tex"] and leftovers(out) == []
