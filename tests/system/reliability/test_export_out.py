"""`workbench export --out` takes only what is its own (issue 15, item 2).

Before the fix, ``export --out store.sqlite`` exited 0: the annotation store became a folder and
the real file was renamed to a hidden ``.store.sqlite.export-...``; ``--out .`` ended in a
traceback; and every export left ``--out`` at mode 0700. Now an export may replace only a new
or empty folder or the folder of an earlier export (its ``manifest.json``, each listed file
unchanged). Everything else is refused in one line (exit code 2) and left as it was: every file
under the test's folder keeps its SHA-256, kind and mode, and the store still opens with the
same events.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from reliability_support import NOTES, fault

import workbench.cleaning.export as exports
import workbench.io.atomic as atomic
from workbench.annotations.store import AnnotationStore
from workbench.cleaning.export import export_cleaned
from workbench.cli import main
from workbench.config import project_root
from workbench.errors import UsageError
from workbench.schema import ACTIVE_ANNOTATIONS

DEV_SMALL = project_root() / "tests/fixtures/convfinqa/dev_small.json"
RECORD = "Single_UNP/2008/page_77.pdf-2"


def state(root: Path) -> dict[str, tuple[str, int, str]]:
    """Every entry under ``root``, without following links: kind, mode, and the SHA-256 of a
    file (the target of a link)."""
    entries: dict[str, tuple[str, int, str]] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(folder, name)
            info = path.lstat()
            rel = path.relative_to(root).as_posix()
            if stat.S_ISLNK(info.st_mode):
                entries[rel] = ("link", stat.S_IMODE(info.st_mode), os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                entries[rel] = ("dir", stat.S_IMODE(info.st_mode), "")
            else:
                entries[rel] = ("file", stat.S_IMODE(info.st_mode), hashlib.sha256(path.read_bytes()).hexdigest())
    return entries


def events(store_path: Path) -> list[tuple[Any, ...]]:
    with AnnotationStore(store_path, create=False) as store:
        return store.events().rows()


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    """``tmp_path/project``: an annotation store with two events, an earlier export, notes."""
    root = tmp_path / "project"
    root.mkdir()
    with AnnotationStore(root / "store.sqlite") as store:
        store.annotate(annotator="ana", record_id=RECORD, turn=4, category="mislabel", corrected_answer="-9.7%")
        store.annotate(annotator="ana", record_id=RECORD, turn=0, category="other", note="look again")
    (root / "notes.txt").write_text("my notes\n", encoding="utf-8")
    assert main(["export", "--dataset", str(DEV_SMALL), "--annotations", str(root / "store.sqlite"),
                 "--out", str(root / "earlier")]) == 0  # fmt: skip
    (root / "mine").mkdir()
    (root / "mine" / "thesis.tex").write_text("precious\n", encoding="utf-8")
    (root / "empty").mkdir()
    yield root


def setup_changed_export(root: Path) -> Path:
    dataset = root / "earlier" / "dev_small.json"
    dataset.write_text(dataset.read_text(encoding="utf-8").replace("page_77", "page_78"), encoding="utf-8")
    return root / "earlier"


def setup_link(root: Path) -> Path:
    (root / "link").symlink_to(root / "earlier")
    return root / "link"


# name -> (how to make the --out path from the project folder, the folder to run in, a phrase of the message)
CASES: dict[str, tuple[Callable[[Path], Path | str], Callable[[Path], Path], str]] = {
    "a file": (lambda root: root / "notes.txt", lambda root: root, "is a file (not a folder)"),
    "the store": (
        lambda root: root / "store.sqlite",
        lambda root: root,
        "is a file (one of the files this export reads)",
    ),
    "dot": (lambda root: ".", lambda root: root, "is the current folder"),
    "dot, empty": (lambda root: ".", lambda root: root / "empty", "is the current folder"),
    "an ancestor of the current folder": (lambda root: "..", lambda root: root / "empty", "holding the current folder"),
    "the folder of the inputs": (lambda root: root, lambda root: root.parent, "which this export reads"),
    "a folder holding other files": (
        lambda root: root / "mine",
        lambda root: root,
        "holds files that no earlier export wrote (thesis.tex)",
    ),
    "a changed earlier export": (setup_changed_export, lambda root: root, "changed since the export wrote it"),
    "a symlink to an earlier export": (setup_link, lambda root: root, "is a symbolic link"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_export_out_refuses_what_is_not_its_own(
    case: str, project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    make_out, cwd, phrase = CASES[case]
    out = make_out(project)
    monkeypatch.chdir(cwd(project))
    store = project / "store.sqlite"
    before_events = events(store)
    before = state(project.parent)
    capsys.readouterr()
    fault(f"export --out onto {case}")
    code = main(["export", "--dataset", str(DEV_SMALL), "--annotations", str(store), "--out", str(out)])
    stdout, stderr = capsys.readouterr()
    assert code == 2, stderr
    assert stdout == ""
    assert stderr.count("\n") == 1 and stderr.startswith("workbench: error: the export folder "), stderr
    shown = str(Path(out).resolve()) if str(out) in (".", "..") else str(out)
    assert shown in stderr and phrase in stderr and "Fix: " in stderr, stderr
    assert state(project.parent) == before  # nothing renamed, added, removed, changed or chmod-ed
    assert events(store) == before_events and len(before_events) == 2
    NOTES.append(f"export --out onto {case}: exit 2, one line, {len(before)} entries unchanged")


def test_export_out_onto_the_store_is_the_reported_case(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The report's exact case: the store keeps its bytes, stays a file, no hidden copy appears."""
    store = project / "store.sqlite"
    digest = hashlib.sha256(store.read_bytes()).hexdigest()
    code = main(["export", "--dataset", str(DEV_SMALL), "--annotations", str(store), "--out", str(store)])
    assert code == 2
    assert store.is_file() and hashlib.sha256(store.read_bytes()).hexdigest() == digest
    assert not [p for p in project.iterdir() if p.name.startswith(".store.sqlite.")]
    with AnnotationStore(store, create=False) as opened:
        assert opened.events()["record_id"].to_list() == [RECORD, RECORD]
    NOTES.append(f"export --out store.sqlite: refused, store sha256 {digest[:16]}... unchanged")


def test_export_may_replace_an_earlier_export_and_an_empty_folder(project: Path) -> None:
    for folder in (project / "earlier", project / "empty"):
        result = export_cleaned(DEV_SMALL, pl.DataFrame(schema=dict(ACTIVE_ANNOTATIONS)), folder)
        assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in result.files.values())


# --------------------------------------------------------------------------- mode
@pytest.mark.parametrize("mode", [0o700, 0o750, 0o755, 0o2775])
def test_a_replaced_export_folder_keeps_its_mode(mode: int, project: Path) -> None:
    out = project / "earlier"
    os.chmod(out, mode)
    export_cleaned(DEV_SMALL, pl.DataFrame(schema=dict(ACTIVE_ANNOTATIONS)), out, split=0.5)
    assert stat.S_IMODE(out.stat().st_mode) == mode
    assert (out / "train.json").exists()  # the new export is in place


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077, 0o002])
def test_a_new_export_folder_gets_the_umask_mode(umask: int, tmp_path: Path) -> None:
    previous = os.umask(umask)
    try:
        export_cleaned(DEV_SMALL, pl.DataFrame(schema=dict(ACTIVE_ANNOTATIONS)), tmp_path / "new")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o777 & ~umask


def test_the_cli_export_folder_is_not_0700(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    previous = os.umask(0o022)
    try:
        assert main(["export", "--dataset", str(DEV_SMALL), "--out", str(tmp_path / "cli")]) == 0
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "cli").stat().st_mode) == 0o755


# --------------------------------------------------------------------------- a file appearing meanwhile
@pytest.mark.parametrize("exchange", [True, False], ids=["atomic-exchange", "two-renames"])
def test_a_file_written_into_the_earlier_export_meanwhile_is_kept(
    exchange: bool, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that appears in ``out`` after the checks (another program, a user) is found when
    ``out`` is moved aside: ``out`` is put back, with the file, and the export refused."""
    out = project / "earlier"
    real_staging = exports.make_staging

    def staging_then_a_late_file(target: Path, mode: int | None) -> Path:
        folder = real_staging(target, mode)
        (target / "late.txt").write_text("written meanwhile\n", encoding="utf-8")
        return folder

    monkeypatch.setattr(exports, "make_staging", staging_then_a_late_file)
    if not exchange:
        monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    before = state(out)
    fault(f"export: a file appears in --out during the export ({'exchange' if exchange else 'two renames'})")
    with pytest.raises(UsageError, match=r"holds files that no earlier export wrote \(late.txt\)"):
        export_cleaned(DEV_SMALL, pl.DataFrame(schema=dict(ACTIVE_ANNOTATIONS)), out)
    after = state(out)
    assert after.pop("late.txt")[0] == "file" and after == before
    assert sorted(p.name for p in project.iterdir() if p.name.startswith(".earlier.")) == []
