"""The report kernel: how papermill starts it, talks to it and stops it, and the call that runs a template in it.

- :func:`kernel_config`: local sockets of the report's own;
- :func:`kernel_manager`: a clean shutdown, a temporary IPython folder whose startup file is
  :data:`KERNEL_STARTUP`, and no ``~/.ipython`` made;
- :func:`import_papermill`: papermill imported without jsonschema's IRI parser (:data:`IRI_PARSER`);
- :func:`execute`: the template run in that kernel; its notebook is written when it ends (or
  stops at a failing cell), not after every cell: each write validates the whole notebook, and a
  page's notebook grows to 4 MB (the error-slices page: 2-3 s of CPU in 76 writes).
"""

from __future__ import annotations

import os
import sys
import tempfile
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

from workbench.config import project_root
from workbench.errors import ReportError
from workbench.grading import patterns
from workbench.io.paths import terminal_text

__all__ = ["IRI_PARSER", "KERNEL_STARTUP", "execute", "import_papermill", "kernel_config", "kernel_manager"]

#: jsonschema 4.25+ imports this module when it is installed, which builds an Earley parser at import
#: (1.3-2.5 s of CPU, in every process that imports nbformat; jsonschema issue #1428), for its "iri"
#: format checks only: no notebook's schema and no report checks an IRI.
IRI_PARSER = "rfc3987_syntax"


def import_papermill() -> ModuleType:
    """papermill (with nbformat and jsonschema), imported without :data:`IRI_PARSER` when jsonschema
    is not imported yet: in this process, jsonschema then checks no "iri" format (the parser itself
    can still be imported later). Once imported, the same module."""
    if "jsonschema" in sys.modules:
        import papermill as module

        return module
    blocked = IRI_PARSER not in sys.modules
    if blocked:
        sys.modules[IRI_PARSER] = None  # type: ignore[assignment]
    try:
        import papermill as module
    finally:
        if blocked and sys.modules.get(IRI_PARSER, ...) is None:
            del sys.modules[IRI_PARSER]
    return module


def kernel_config() -> Any:
    """The kernel talks to papermill over local sockets (IPC), not TCP: nothing listens on
    a port, and ipykernel has no reason to warn that TCP is unencrypted.

    Each kernel gets socket paths of its own (``<tmp>/workbench-kernel-<random>-<n>``): left to
    its default, jupyter_client names them ``kernel-ipc-<n>`` in the current folder, so two
    reports started at once from one folder could connect to each other's kernel (seen as
    "Invalid Signature" under load)."""
    from traitlets.config import Config

    ip = os.path.join(tempfile.gettempdir(), f"workbench-kernel-{uuid.uuid4().hex}")
    return Config({"KernelManager": {"transport": "ipc", "ip": ip}})


#: The report kernel's one startup line (its IPython folder is the runner's own): jsonschema's IRI
#: parser is not imported (:data:`IRI_PARSER`). plotly's widgets import nbformat, hence jsonschema, in
#: every kernel; no report validates an IRI.
KERNEL_STARTUP = f"import sys\nsys.modules.setdefault({IRI_PARSER!r}, None)\n"


def kernel_manager(ipython_dir: str = "") -> type:
    """The kernel manager papermill's client starts the template's kernel with: jupyter_client's
    own, except that it asks the kernel to shut down without interrupting it first.

    jupyter_client's ``shutdown_kernel`` sends the kernel SIGINT before the shutdown request; a
    kernel still finishing a message (the last cell's comm or widget traffic) then catches the
    KeyboardInterrupt and logs "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel." on the
    report's standard error, although nothing went wrong. The shutdown request alone stops an
    idle kernel cleanly (and a kernel that does not stop is still killed after the wait).

    A report writes nothing outside its folders: the kernel's IPython folder is ``ipython_dir`` when
    given (a temporary one: IPython would make ``~/.ipython/profile_default``, and no startup file of the
    user's runs in a report), and kernels are looked for in ``~/.ipython/kernels`` only when it
    exists (jupyter_client's own lookup makes ``~/.ipython``)."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.paths import jupyter_path
    from traitlets import default

    class CleanShutdownKernelManager(AsyncKernelManager):  # type: ignore[misc]
        async def _async_interrupt_kernel(self) -> None:
            if self.shutting_down:  # the interrupt that precedes a shutdown request: not sent
                return
            await super()._async_interrupt_kernel()

        async def _async_pre_start_kernel(self, **kw: Any) -> Any:
            if ipython_dir:
                kw["env"] = {**kw.get("env", os.environ), "IPYTHONDIR": ipython_dir}
                startup = Path(ipython_dir, "profile_default", "startup")
                startup.mkdir(parents=True, exist_ok=True)
                (startup / "00-workbench.py").write_text(KERNEL_STARTUP, encoding="utf-8")
            return await super()._async_pre_start_kernel(**kw)

        @default("kernel_spec_manager")
        def _kernel_spec_manager_default(self) -> KernelSpecManager:
            ipython = Path(os.environ.get("IPYTHONDIR") or Path.home() / ".ipython").expanduser() / "kernels"
            dirs = jupyter_path("kernels") + ([str(ipython)] if ipython.is_dir() else [])
            return KernelSpecManager(data_dir=self.data_dir, kernel_dirs=dirs)

    return CleanShutdownKernelManager


def execute(path: Path, notebook_out: Path, parameters: dict[str, Any], *, progress: bool, ipython_dir: str) -> Any:
    """Run the template with papermill in the project root, its kernel's IPython folder ``ipython_dir``
    (:func:`kernel_manager`), and write the executed notebook to ``notebook_out``.

    Returns
    -------
    Any
        The executed notebook (an ``nbformat`` node; ``None`` from a stand-in that returns nothing).

    Raises
    ------
    ReportError
        When a cell fails: the message names the cell and the error; the partly executed notebook is kept.
    """
    papermill = import_papermill()
    try:
        return papermill.execute_notebook(
            str(path),
            str(notebook_out),
            parameters=parameters,
            kernel_name="python3",
            progress_bar=progress,
            cwd=str(project_root()),
            config=kernel_config(),
            kernel_manager_class=kernel_manager(ipython_dir),
            request_save_on_cell_execute=False,  # written once, at the end (or at the failing cell)
            # live widgets (the failed-turns grid, linked plots) keep what the page needs in
            # their outputs; their state (plotly.js itself, once per linked plot) is not kept
            store_widget_state=False,
        )
    except papermill.PapermillExecutionError as exc:
        raise ReportError(
            f"{path.name}: cell {exc.exec_count} failed with {exc.ename}: "
            f"{terminal_text(patterns.ANSI_ESCAPE.sub('', exc.evalue))}. "
            f"The partly executed notebook is {notebook_out}"
        ) from None
