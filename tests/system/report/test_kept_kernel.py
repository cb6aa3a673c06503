"""A batch keeps one kernel per thread between its reports (workbench.report.kernels.kept_kernel),
and no report can tell: each starts with an empty namespace, execution count 1, none of an
earlier report's widgets, and the warnings an earlier report was shown shown again. A failing
cell or a kernel that dies lets the kernel go; the next report gets a fresh one. Real kernels,
started by papermill as a report's are."""

from __future__ import annotations

import json
import os
from concurrent.futures import Future
from pathlib import Path

import nbformat
import pytest

from workbench.errors import ReportError
from workbench.report import kernels
from workbench.report.kernels import KernelThreads, execute, kept_kernel

_MODULE = """
import warnings


def hello():
    warnings.warn("said once per place", UserWarning)
"""


def _notebook(folder: Path, name: str, *cells: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, str(path))
    return path


def _run(path: Path, folder: Path) -> tuple[dict[str, object], list[dict[str, object]]]:
    """Execute ``path`` as a report does; what its last cell printed (JSON) and its code cells."""
    out = folder / f"{path.stem}.out.ipynb"
    execute(path, out, {}, progress=False, ipython_dir=str(folder / f"{path.stem}.ipython"))
    cells = json.loads(out.read_text(encoding="utf-8"))["cells"]
    printed = "".join("".join(o["text"]) for o in cells[-1]["outputs"] if o.get("name") == "stdout")
    return json.loads(printed), cells


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    """A notebook that says which kernel runs it, what it finds left, and triggers a warning
    from a module (a warning Python shows once per place, per process)."""
    (tmp_path / "wb_probe_module.py").write_text(_MODULE, encoding="utf-8")
    return _notebook(
        tmp_path,
        "probe",
        f"import json, os, sys, warnings\nsys.path.insert(0, {str(tmp_path)!r})\nimport wb_probe_module\n"
        "import ipywidgets\nfrom ipywidgets.widgets.widget import _instances",
        "found = {'left': 'left_behind' in globals(), 'widgets': len(_instances), 'cwd': os.getcwd(),"
        " 'path': sys.path[1:], 'env': os.environ.get('WB_PROBE')}\n"
        "left_behind = ipywidgets.IntSlider()\nos.chdir(sys.path[0])\nsys.path.append('/nowhere')\n"
        "os.environ['WB_PROBE'] = 'set by an earlier report'",
        "wb_probe_module.hello()",
        "print(json.dumps({**found, 'pid': os.getpid()}))",
    )


def _warned(cells: list[dict[str, object]]) -> bool:
    outputs = cells[2]["outputs"]
    assert isinstance(outputs, list)
    return any("said once per place" in "".join(o.get("text", "")) for o in outputs)


def test_reports_in_a_kept_kernel_share_it_and_cannot_tell(probe: Path, tmp_path: Path) -> None:
    with kept_kernel():
        first, first_cells = _run(probe, tmp_path)
        second, second_cells = _run(probe, tmp_path)
    assert first["pid"] == second["pid"]  # one kernel for both
    assert first["pid"] != os.getpid()
    assert second["left"] is False  # the namespace is empty again
    assert second["widgets"] == 0  # the first report's widget was closed
    # the folder, import path and environment of a fresh kernel, whatever the first report changed
    assert (second["cwd"], second["path"], second["env"]) == (first["cwd"], first["path"], None)
    assert "/nowhere" not in second["path"]  # type: ignore[operator]
    assert [c["execution_count"] for c in second_cells] == [1, 2, 3, 4] == [c["execution_count"] for c in first_cells]
    assert _warned(first_cells) and _warned(second_cells)  # shown again, as a fresh kernel would
    with pytest.raises(ProcessLookupError):  # shut down on leaving
        os.kill(int(str(first["pid"])), 0)


def test_a_kept_kernel_started_ahead_is_warm_and_its_first_report_cannot_tell(tmp_path: Path) -> None:
    """The kernel starts on entering (while a batch grades) and imports the templates' modules, as
    a kept kernel keeps them; its first report still finds the namespace and execution count of a
    fresh kernel's."""
    names = _notebook(
        tmp_path,
        "names",
        "import json, os, sys\nprint(json.dumps({'warm': 'workbench.views.tables' in sys.modules, 'pid': os.getpid(),"
        " 'names': sorted(n for n in globals() if not n.startswith('_'))}))",
    )
    with kept_kernel():
        kept = kernels._THREAD.kept
        assert kept.km is not None and not kept.connected  # launched, not waited for
        ahead, ahead_cells = _run(names, tmp_path)
    fresh, fresh_cells = _run(names, tmp_path)
    assert ahead["warm"] is True and fresh["warm"] is False
    assert ahead["names"] == fresh["names"]  # the warm imports bound no name
    assert ahead_cells[0]["execution_count"] == fresh_cells[0]["execution_count"] == 1
    with pytest.raises(ProcessLookupError):
        os.kill(int(str(ahead["pid"])), 0)


def test_a_kept_kernel_reads_the_inputs_ahead_before_its_report(tmp_path: Path) -> None:
    """What the runner asks the kept kernel to read ahead (while it grades) is read before the
    next report runs, in the kernel, for that report to take."""
    from workbench.config import project_root

    tora = project_root() / "data/predictions/gsm8k/tora/tora-70b.jsonl"
    probe = _notebook(
        tmp_path,
        "ahead",
        "import json\nfrom workbench.io.predictions import table\n"
        "print(json.dumps({'ahead': sorted(k[4] for k in table._AHEAD),"
        " 'taken': table.read_predictions(table.Path(" + repr(str(tora)) + "), system='tora')"
        " is not None and not table._AHEAD}))",
    )
    with kept_kernel():
        kernels.read_ahead([(str(tora), "tora")])
        found, _ = _run(probe, tmp_path)
    assert found == {"ahead": ["tora"], "taken": True}


def test_a_kept_kernel_let_go_before_any_report_says_nothing() -> None:
    """A batch refused before its first report (a bad template) stops the kernel it started ahead
    at once: no thread of the kernel's client may print a traceback (one did, in its heartbeat)."""
    import subprocess
    import sys

    code = (
        "from workbench.report.kernels import kept_kernel\nfor _ in range(3):\n    with kept_kernel():\n        pass\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert (done.returncode, done.stderr) == (0, "")


def test_outside_a_kept_kernel_each_report_has_its_own(probe: Path, tmp_path: Path) -> None:
    first, _ = _run(probe, tmp_path)
    second, _ = _run(probe, tmp_path)
    assert first["pid"] != second["pid"]


def test_a_failing_cell_or_a_dead_kernel_lets_the_kernel_go(probe: Path, tmp_path: Path) -> None:
    failing = _notebook(tmp_path, "failing", "left_behind = 1", "raise ValueError('boom')")
    dying = _notebook(tmp_path, "dying", "import os\nos._exit(3)")
    with kept_kernel():
        first, _ = _run(probe, tmp_path)
        with pytest.raises(ReportError, match="failed with ValueError: boom"):
            _run(failing, tmp_path)
        after_failure, _ = _run(probe, tmp_path)
        with pytest.raises(Exception, match="(?i)dead|died|kernel"):
            _run(dying, tmp_path)
        after_death, cells = _run(probe, tmp_path)
    assert len({first["pid"], after_failure["pid"], after_death["pid"]}) == 3
    assert after_failure["left"] is False and after_death["left"] is False
    assert cells[0]["execution_count"] == 1


def test_kernel_threads_run_what_is_submitted_each_in_its_own_kept_kernel(probe: Path, tmp_path: Path) -> None:
    failing = _notebook(tmp_path, "failing", "raise ValueError('boom')")
    with KernelThreads(2) as threads:
        futures: list[Future[object]] = [threads.submit(_run, probe, tmp_path) for _ in range(4)]
        failed = threads.submit(_run, failing, tmp_path)
        pids = {result[0]["pid"] for result in (f.result() for f in futures)}  # type: ignore[index]
        with pytest.raises(ReportError, match="boom"):
            failed.result()
    assert 1 <= len(pids) <= 2  # at most one kernel per thread ran the four
    for pid in pids:
        with pytest.raises(ProcessLookupError):  # each thread shut its kernel down as it ended
            os.kill(int(str(pid)), 0)


def test_kernel_threads_cancel_what_has_not_started(tmp_path: Path) -> None:
    import threading

    started, gate = threading.Event(), threading.Event()

    def job() -> bool:
        started.set()
        return gate.wait(30)

    threads = KernelThreads(1)
    running = threads.submit(job)
    waiting = threads.submit(lambda: "never")
    assert started.wait(30)
    threads.shutdown(wait=False, cancel_futures=True)
    gate.set()
    assert running.result() is True
    assert waiting.cancelled()
    threads.shutdown(wait=True)
