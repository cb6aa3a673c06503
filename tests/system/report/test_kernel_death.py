"""A report whose kernel dies (killed, out of memory) leaves the notebook executed so far, as a failing
cell does, and says where in its one line.

Before, papermill wrote the notebook only at the end or at a failing cell (the runner asks it not to
write after every cell), so a kernel that died left nothing to see how far the report got, and
``workbench report`` printed nbclient's "Kernel died" line and a DeadKernelError traceback. Now the
cell it died in is marked failed (with an error output saying so), the cells before keep their
outputs, the later ones are not run, and the one line names the cell and the notebook. Real kernels,
as a report's: in a kept kernel (a batch's, and ``workbench report``'s) and in a kernel of its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

from workbench.errors import ReportError
from workbench.report.kernels import execute, kept_kernel

REPO = Path(__file__).resolve().parents[3]
#: A safety net against a hang, not a budget: CI machines are busy.
SAFETY_S = 300


def _dying(folder: Path) -> Path:
    """A template whose third code cell kills its kernel (as the out-of-memory killer would)."""
    nb = nbformat.v4.new_notebook()
    parameters = nbformat.v4.new_code_cell('label: str = "ran"  # what the first cell prints')
    parameters.metadata["tags"] = ["parameters"]
    nb.cells = [
        nbformat.v4.new_markdown_cell("# A report that dies"),
        parameters,
        nbformat.v4.new_code_cell("print(label, 'before')"),
        nbformat.v4.new_code_cell("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"),
        nbformat.v4.new_code_cell("print('never')"),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / "dying.ipynb"
    nbformat.write(nb, str(path))
    return path


def _check_partial(notebook: Path) -> None:
    """The notebook executed so far: the cells before the death with their outputs, the one it died in
    marked failed and saying so, the next one not run."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    code = [cell for cell in cells if cell["cell_type"] == "code"]
    statuses = [cell["metadata"]["papermill"]["status"] for cell in code]
    assert statuses[-3:] == ["completed", "failed", "pending"], statuses
    assert "".join(code[-3]["outputs"][0]["text"]) == "ran before\n"
    (said,) = code[-2]["outputs"]
    assert said["output_type"] == "error" and "kernel died" in said["evalue"]
    assert code[-1]["outputs"] == [] and code[-1]["execution_count"] is None


@pytest.mark.parametrize("kept", [True, False], ids=["kept-kernel", "own-kernel"])
def test_a_dead_kernel_leaves_the_notebook_executed_so_far(tmp_path: Path, kept: bool) -> None:
    template = _dying(tmp_path)
    out = tmp_path / "out.ipynb"
    with kept_kernel() if kept else contextlib.nullcontext(), pytest.raises(ReportError) as raised:
        execute(template, out, {}, progress=False, ipython_dir=str(tmp_path / "ipython"))
    # cell 3: its execution count, or (the kernel died before saying it) its place among the code cells
    message = str(raised.value)
    assert message.startswith("dying.ipynb: the kernel died while running cell 3 "), message
    assert message.endswith(f"The partly executed notebook is {out}"), message
    _check_partial(out)


def test_workbench_report_says_one_line(tmp_path: Path) -> None:
    template = _dying(tmp_path)
    env: dict[str, Any] = {**os.environ}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    argv = [sys.executable, "-m", "workbench", "report", "--quiet", "--template", str(template), "--out", "out"]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=SAFETY_S, check=False)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr[-3000:]
    line = done.stderr.strip()
    assert line.startswith("workbench: report failed: dying.ipynb: the kernel died while running cell 3 "), line
    notebook = Path(line.rsplit("The partly executed notebook is ", 1)[1])
    assert notebook.parent == tmp_path / "out", line
    _check_partial(notebook)
