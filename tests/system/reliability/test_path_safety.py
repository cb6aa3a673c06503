"""Path safety (issue 8, part 5): whatever record ids, system names or template names hold,
every file the workbench writes stays inside the folder chosen for it."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest
from reliability_support import NOTES

from workbench.annotations.store import AnnotationStore
from workbench.cli import main
from workbench.config import project_root
from workbench.errors import InputError, UsageError
from workbench.io.paths import MAX_NAME, inside, safe_name
from workbench.report.runner import run_template, template_path

#: Record ids, system names and labels an attacker (or an odd dataset) could bring.
HOSTILE = [
    "../../etc/x",
    "/abs/path",
    "..",
    ".",
    "a\\..\\b",
    "..\\..\\windows\\system32",
    "c:colon",
    "C:\\abs",
    "new\nline",
    "tab\there",
    "Single_ABMD/2015/page_93.pdf-2",
    "x" * 300,
    "é" * 200,
    "~",
    "$HOME",
    "-rf",
    ".hidden",
    "a/../../b",
    "trailing/",
    "spaces  and ; semicolons",
]
#: Only where a CSV file cannot carry them: the store and the name helpers.
HOSTILE_BINARY = ["nul\x00byte", "\x00", "bell\x07"]
OUTSIDE = [Path("/etc/x"), Path("/abs/path"), Path("/abs"), Path("/b")]


@pytest.mark.parametrize("text", HOSTILE + HOSTILE_BINARY)
def test_safe_name_is_one_harmless_component(text: str, tmp_path: Path) -> None:
    name = safe_name(text)
    assert name not in ("", ".", "..") and not name.startswith(".")
    assert not set(name) & set("/\\\x00\n\r\t:") and name.isprintable()
    assert len(name) <= MAX_NAME and Path(name).name == name
    assert inside(tmp_path, name).parent == tmp_path


def test_safe_name_keeps_different_texts_apart_and_plain_names_as_they_are() -> None:
    names = [safe_name(t) for t in HOSTILE + HOSTILE_BINARY + ["a_b", "a/b", "a:b"]]
    assert len(set(names)) == len(names)
    assert safe_name("claude-sonnet-4-6") == "claude-sonnet-4-6" and safe_name("turns.parquet") == "turns.parquet"


@pytest.mark.parametrize("text", ["../x", "/abs/path", "..", "a/../../b", "a\\..\\b", "nul\x00", ""])
def test_inside_refuses_a_way_out(text: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="outside the output folder"):
        inside(tmp_path, text)


def test_inside_refuses_a_symlink_out(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to("/etc")
    with pytest.raises(UsageError, match="outside"):
        inside(tmp_path, "link", "passwd")


@pytest.mark.parametrize("template", ["../../etc/passwd", "/etc/passwd", "..", "../notebooks/01-overview", "a\x00b"])
def test_template_names_cannot_reach_out(template: str) -> None:
    with pytest.raises(UsageError, match="no template"):
        template_path(template)


def files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_every_written_file_stays_in_its_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    existing = {p for p in OUTSIDE if os.path.lexists(p)}
    reports = project_root() / "reports"
    reports_before = files(reports) if reports.exists() else set()
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    rows = [
        {"record_id": rid, "turn": t, "question": f"q{i}", "gold_answer": str(i + t), "gold_program": f"add({i}, {t})"}
        for i, rid in enumerate(HOSTILE)
        for t in range(2)
    ]
    pl.DataFrame(rows).write_csv(inputs / "gold.csv")
    predictions = []
    for n, system in enumerate(HOSTILE[:6]):
        frame = pl.DataFrame(
            [{**{k: r[k] for k in ("record_id", "turn")}, "system": system, "predicted_answer": str(n)} for r in rows]
        )
        frame.write_csv(inputs / f"preds-{n}.csv")
        predictions.append(str(inputs / f"preds-{n}.csv"))
    before = files(tmp_path)

    # grade
    assert main(["grade", str(inputs / "gold.csv"), *predictions, "--out", str(tmp_path / "graded")]) == 0
    # annotations about hostile ids and systems, and a backup
    with AnnotationStore(tmp_path / "store" / "annotations.sqlite") as store:
        for i, rid in enumerate(HOSTILE):
            store.annotate(annotator=HOSTILE[-i], record_id=rid, turn=1, category="mislabel", corrected_answer=str(i))
            store.annotate(annotator="ana", record_id=rid, turn=0, category="model_error", system=HOSTILE[i])
        for text in HOSTILE_BINARY:
            if "\x00" in text:  # SQLite's text functions stop at NUL: refused, as one line
                with pytest.raises(InputError, match="without NUL characters"):
                    store.annotate(annotator="ana", record_id=text, turn=0, category="other", system=text)
            else:
                store.annotate(annotator=text, record_id=text, turn=0, category="other", system=text, note=text)
        store.backup(tmp_path / "backups")
    capsys.readouterr()
    assert main(["annotations", "backup", "--store", str(tmp_path / "store" / "annotations.sqlite")]) == 0
    # export (the binary-named annotations are about records the gold lacks: export the others)
    with AnnotationStore(tmp_path / "store" / "annotations.sqlite") as store:
        active = store.active().filter(pl.col("record_id").is_in(HOSTILE))
    from workbench.cleaning.export import export_cleaned

    result = export_cleaned(inputs / "gold.csv", active, tmp_path / "export", split=0.5)
    assert result.manifest["annotations"]["n_corrected"] == len(HOSTILE)
    # a report, with the hostile systems
    run_template(
        "01-overview",
        parameters={
            "dataset": str(inputs / "gold.csv"),
            "predictions": ";".join(predictions[:2]),
            "systems": ";".join(HOSTILE[:2]),
            "graded_dir": str(tmp_path / "report" / "graded"),
        },
        out_dir=tmp_path / "report",
    )

    new = files(tmp_path) - before
    allowed = ("graded/", "store/", "backups/", "export/", "report/")
    assert new and all(name.startswith(allowed) for name in new), sorted(n for n in new if not n.startswith(allowed))
    assert {p.name for p in (tmp_path / "store").iterdir() if p.name.startswith("annotations.backup-")}
    assert all(os.path.lexists(p) == (p in existing) for p in OUTSIDE)
    assert (files(reports) if reports.exists() else set()) == reports_before
    NOTES.append(
        f"path safety: {len(HOSTILE)} hostile ids/system names (+{len(HOSTILE_BINARY)} binary ones in the store), "
        f"{len(new)} new files checked, all inside their output folders"
    )
