"""No acknowledged annotation is lost when one process opens the store more than once (issue 15, item 1).

On POSIX, closing *any* descriptor of a file drops every fcntl lock the process holds on it. A
header check (``open(path).read(100)``) by a second ``AnnotationStore(path)`` used to drop the
locks of the first one's SQLite connection; another process (``workbench annotations import`` or
``list``) then took itself for the last user of the file, checkpointed and deleted the WAL, and the
first process went on writing into a deleted log: ``annotations list`` never showed those events,
the next import reused their ids, and they were gone when the process stopped.

These tests use real processes (the installed ``workbench`` command for the other writer) and assert
counts and event ids, never times.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import papermill
import pytest
from reliability_support import NOTES, fault

from workbench.annotations.store import AnnotationStore

REPO = Path(__file__).resolve().parents[3]
TEMPLATE = REPO / "notebooks" / "03-triage.ipynb"
FIXTURES = REPO / "tests" / "fixtures"


def workbench_command() -> list[str]:
    """The installed ``workbench`` command of this interpreter's environment."""
    installed = Path(sys.executable).parent / "workbench"
    return [str(installed)] if installed.exists() else [sys.executable, "-m", "workbench.cli"]


def annotation_csv(folder: Path, name: str, record_id: str) -> Path:
    path = folder / f"{name}.csv"
    path.write_text(f"record_id,turn,category,annotator\n{record_id},0,mislabel,cli\n", encoding="utf-8")
    return path


#: One process: the store opened twice, saves through both handles, the CLI writes in between,
#: ``annotations list`` from another process in between; then it exits (cleanly, or killed).
TWICE = """
import json, os, signal, subprocess, sys
from workbench.annotations.store import AnnotationStore
path, first_csv, second_csv, how, *command = sys.argv[1:]
acknowledged = {}

def cli(*args):
    done = subprocess.run([*command, "annotations", *args, "--store", path], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout

def imported(csv):
    out = cli("import", csv)  # "imported 1 annotations from ... (events #N to #N)"
    return int(out.rsplit("#", 1)[1].rstrip(")\\n"))

a = AnnotationStore(path)
acknowledged["a-1"] = a.annotate(annotator="ana", record_id="a-1", turn=0, category="other")
b = AnnotationStore(path)  # the same file again, in the same process
acknowledged["b-1"] = b.annotate(annotator="ana", record_id="b-1", turn=0, category="other")
acknowledged["cli-1"] = imported(first_csv)
acknowledged["a-2"] = a.annotate(annotator="ana", record_id="a-2", turn=0, category="other")
listed = [int(line.split(",")[0]) for line in cli("list", "--all").splitlines()[1:]]
acknowledged["cli-2"] = imported(second_csv)
acknowledged["b-2"] = b.annotate(annotator="ana", record_id="b-2", turn=0, category="other")
a.close()  # closing one handle leaves the other one working
acknowledged["b-3"] = b.annotate(annotator="ana", record_id="b-3", turn=0, category="other")
print(json.dumps({"acknowledged": acknowledged, "listed": listed}), flush=True)
if how == "killed":
    os.kill(os.getpid(), signal.SIGKILL)  # a kernel that is killed closes nothing
"""


@pytest.mark.parametrize("how", ["exits", "killed"])
def test_store_opened_twice_in_one_process_loses_nothing_to_another_writer(tmp_path: Path, how: str) -> None:
    path = tmp_path / "annotations.sqlite"
    first, second = annotation_csv(tmp_path, "first", "cli-1"), annotation_csv(tmp_path, "second", "cli-2")
    fault(f"store: opened twice in one process, another process writing, then the process {how}")
    child = subprocess.run(
        [sys.executable, "-c", TWICE, str(path), str(first), str(second), how, *workbench_command()],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert child.returncode == (0 if how == "exits" else -9), child.stderr[-3000:]
    report = json.loads(child.stdout.splitlines()[-1])
    acknowledged: dict[str, int] = report["acknowledged"]
    # every acknowledgement is its own event: the second import did not reuse an id already given
    assert len(set(acknowledged.values())) == len(acknowledged) == 7, acknowledged
    # the other process saw what this one had acknowledged
    assert set(report["listed"]) == {acknowledged[k] for k in ("a-1", "b-1", "cli-1", "a-2")}
    with AnnotationStore(path, create=False) as store:
        events = store.events()
    stored = dict(events.select("record_id", "event_id").iter_rows())
    assert stored == acknowledged, f"acknowledged {acknowledged}, stored {stored}"
    assert events.height == 7
    NOTES.append(
        f"store opened twice, process {how}: 7 events acknowledged, {events.height} stored, ids {sorted(stored.values())}"
    )


# --------------------------------------------------------------------------- the triage template, twice in one kernel
def _code(client, nb: nbformat.NotebookNode, source: str) -> str:  # type: ignore[no-untyped-def]
    """Run ``source`` as a new cell in the kernel; its printed text."""
    cell = nbformat.v4.new_code_cell(source)
    nb.cells.append(cell)
    client.execute_cell(cell, len(nb.cells) - 1)
    return "".join(out.get("text", "") for out in cell.outputs if out.get("output_type") == "stream")


def _saved(text: str) -> list[int]:
    return [int(line.split()[1]) for line in text.splitlines() if line.startswith("saved ")]


def test_triage_template_run_twice_in_one_kernel_loses_nothing(tmp_path: Path) -> None:
    """Run every cell of 03-triage, save through the view; run every cell again (a second store
    handle, session and view on the same file in the same kernel), save two more; the CLI imports
    from another process; the kernel saves again. ``annotations list`` shows every acknowledged
    event while the kernel runs, and the store holds them all after the kernel has stopped."""
    from nbclient import NotebookClient

    store = tmp_path / "annotations.sqlite"
    notebook = tmp_path / "03-triage.ipynb"
    papermill.execute_notebook(
        str(TEMPLATE),
        str(notebook),
        parameters={
            "dataset": str(FIXTURES / "convfinqa" / "dev_small.json"),
            "predictions": str(FIXTURES / "predictions" / "zarifaziz_dev_small.jsonl"),
            "store": str(store),
            "annotator": "kernel",
            "queue": "failed",  # 3 items: 1 saved in the first run, 2 after it resumes at the second
        },
        prepare_only=True,
        kernel_name="python3",
        progress_bar=False,
    )
    nb = nbformat.read(notebook, as_version=4)
    template_cells = [cell for cell in nb.cells if cell.cell_type == "code"]
    client = NotebookClient(nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": str(tmp_path)}})
    csv = annotation_csv(tmp_path, "cli", "cli-1")
    fault("store: the triage template run twice in one kernel, the CLI writing meanwhile")
    acknowledged: list[int] = []
    with client.setup_kernel():
        for run in (1, 2):
            for cell in template_cells:
                client.execute_cell(cell, nb.cells.index(cell))
                errors = [out for out in cell.outputs if out.get("output_type") == "error"]
                assert not errors, f"run {run}: {errors}"
            saves = 1 if run == 1 else 2
            acknowledged += _saved(
                _code(
                    client,
                    nb,
                    "view = triage.triage(session)\n"
                    f"for _ in range({saves}):\n"
                    "    view.select_category('mislabel')\n"
                    "    print('saved', view.save(), view.status.value)",
                )
            )
        done = subprocess.run(
            [*workbench_command(), "annotations", "import", str(csv), "--store", str(store)],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        imported = int(done.stdout.rsplit("#", 1)[1].rstrip(")\n"))
        acknowledged += _saved(_code(client, nb, "session.goto(0)\nprint('saved', session.submit(category='other'))"))
        assert len(acknowledged) == 4, acknowledged
        listed = subprocess.run(
            [*workbench_command(), "annotations", "list", "--all", "--store", str(store)],
            capture_output=True,
            text=True,
        )
        assert listed.returncode == 0, listed.stderr
        seen = [int(line.split(",")[0]) for line in listed.stdout.splitlines()[1:]]
        assert sorted(seen) == sorted([*acknowledged, imported]), f"listed {seen}, acknowledged {acknowledged}"
    # the kernel has stopped
    every = sorted([*acknowledged, imported])
    assert len(set(every)) == 5, every
    with AnnotationStore(store, create=False) as opened:
        events = opened.events()
    assert sorted(events["event_id"].to_list()) == every
    assert dict(events.group_by("annotator").len().iter_rows()) == {"kernel": 4, "cli": 1}
    NOTES.append(
        f"triage template run twice in one kernel: {len(acknowledged)} saves acknowledged in the kernel "
        f"(ids {acknowledged}) + 1 import (id {imported}); {events.height} events stored after the kernel stopped"
    )
