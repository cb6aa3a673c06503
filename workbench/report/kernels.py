"""The report kernel: how papermill starts it, talks to it and stops it, and the call that runs a template in it.

- :func:`kernel_config`: local sockets of the report's own;
- :func:`kernel_manager`: a clean shutdown, a temporary IPython folder whose startup file is
  :data:`KERNEL_STARTUP`, and no ``~/.ipython`` made;
- :func:`import_papermill`: papermill imported without jsonschema's IRI parser (:data:`IRI_PARSER`);
- :func:`execute`: the template run in that kernel; its notebook is written when it ends (or
  stops at a failing cell, or its kernel dies), not after every cell: each write validates the whole
  notebook, and a page's notebook grows to 4 MB (the error-slices page: 2-3 s of CPU in 76 writes);
- :func:`kept_kernel` and :class:`KernelThreads`: the reports a thread runs one after another
  share one kernel, cleaned between them (:data:`CLEAN_KERNEL`), instead of a kernel each.

Why a batch keeps its kernels: a kernel costs about 0.5 s of CPU to start and 0.7 s more to
import what a template imports, and its first plotly figure and polars query pay once more; a
batch of 9 reports on two cores paid that 9 times. Kept, it is paid once per thread. What a
report shows does not depend on it: each report starts with an empty namespace, execution count
1, no widget of an earlier report, warnings shown again, and the folder, import path and
environment of a fresh kernel; only the modules imported and the caches of pure functions (grades,
text scores) carry over. A report whose cell fails, or whose kernel
dies, lets its kernel go: the next report gets a fresh one.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import shutil
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from types import ModuleType
from typing import Any

from workbench.config import project_root
from workbench.errors import ReportError
from workbench.grading import patterns
from workbench.io.paths import terminal_text

__all__ = [
    "CLEAN_KERNEL",
    "KEEP_KERNEL_STATE",
    "IRI_PARSER",
    "KERNEL_STARTUP",
    "KernelThreads",
    "execute",
    "import_papermill",
    "kept_kernel",
    "kernel_config",
    "kernel_manager",
    "read_ahead",
]

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
    (:func:`kernel_manager`), and write the executed notebook to ``notebook_out``. Inside
    :func:`kept_kernel`, in the kernel this thread keeps (cleaned first; ``ipython_dir`` is then the
    kept kernel's own).

    Returns
    -------
    Any
        The executed notebook (an ``nbformat`` node; ``None`` from a stand-in that returns nothing).

    Raises
    ------
    ReportError
        When a cell fails, or the kernel dies: the message names the cell and the error; the partly
        executed notebook is kept (:func:`_register_engine` writes it when the kernel dies).
    """
    papermill = import_papermill()
    kept: _KeptKernel | None = getattr(_THREAD, "kept", None)
    _register_engine()
    options: dict[str, Any] = {"engine_name": _ENGINE, "partial_notebook": str(notebook_out)}
    if kept is None:
        options |= {"kernel_manager_class": kernel_manager(ipython_dir), "config": kernel_config()}
    else:
        # the engine asks the kept kernel for itself (started there, when papermill runs it)
        options["kept_kernel"] = kept
    try:
        return papermill.execute_notebook(
            str(path),
            str(notebook_out),
            parameters=parameters,
            kernel_name="python3",
            progress_bar=progress,
            cwd=str(project_root()),
            request_save_on_cell_execute=False,  # written once, at the end (or at the failing cell)
            # live widgets (the failed-turns grid, linked plots) keep what the page needs in
            # their outputs; their state (plotly.js itself, once per linked plot) is not kept
            store_widget_state=False,
            **options,
        )
    except papermill.PapermillExecutionError as exc:
        if kept is not None:
            kept.stop()
        raise ReportError(
            f"{path.name}: cell {exc.exec_count} failed with {exc.ename}: "
            f"{terminal_text(patterns.ANSI_ESCAPE.sub('', exc.evalue))}. "
            f"The partly executed notebook is {notebook_out}"
        ) from None
    except _KernelDied as died:
        if kept is not None:  # the next report starts a fresh one
            kept.stop()
        where = f"while running cell {died.cell}" if died.cell is not None else "before its first cell"
        raise ReportError(
            f"{path.name}: the kernel died {where} (killed, out of memory, or its process exited). "
            f"The partly executed notebook is {notebook_out}"
        ) from None
    except BaseException:
        if kept is not None:  # a kernel that timed out: the next report starts a fresh one
            kept.stop()
        raise


# --------------------------------------------------------------------------- kept kernels

#: What a kept kernel runs (silently, as :data:`CLEAN_KERNEL`) once started: the folder, import path
#: and environment a fresh kernel has, kept in a module of their own (``reset`` leaves modules).
KEEP_KERNEL_STATE = """\
import os as _os, sys as _sys, types as _types
_state = _types.ModuleType("_workbench_kernel_state")
_state.cwd, _state.path, _state.environ = _os.getcwd(), list(_sys.path), dict(_os.environ)
_sys.modules[_state.__name__] = _state
del _os, _sys, _types, _state
"""

#: What a kept kernel runs (silently: no execution count, no history) before each report after
#: its first: the earlier report's widgets closed, the warnings it was shown forgotten (each
#: module's ``__warningregistry__``: a warning shown once per place is shown again), the folder,
#: import path and environment of a fresh kernel put back (:data:`KEEP_KERNEL_STATE`), its
#: namespace, output history and execution count reset (IPython's ``reset``, as a fresh kernel
#: has them), and what it freed collected. Modules stay imported.
CLEAN_KERNEL = """\
import os as _os, sys as _sys, types as _types
if "ipywidgets" in _sys.modules:
    _sys.modules["ipywidgets"].Widget.close_all()
for _module in list(_sys.modules.values()):
    if isinstance(_module, _types.ModuleType) and isinstance(vars(_module).get("__warningregistry__"), dict):
        vars(_module)["__warningregistry__"].clear()
_sys.modules["warnings"].onceregistry.clear()
_state = _sys.modules["_workbench_kernel_state"]
_os.chdir(_state.cwd)
_sys.path[:] = _state.path
_os.environ.clear()
_os.environ.update(_state.environ)
get_ipython().reset(new_session=True)
__import__("gc").collect()
"""

#: What a kept kernel imports as it starts, silently, while the batch grades its first inputs (it is
#: started ahead: :meth:`_KeptKernel.launch`): the modules every bundled template imports. Importing
#: them shows nothing a report can see; a kept kernel keeps its modules between reports anyway.
#: (``__import__`` binds no name: the first report finds the namespace of a fresh kernel.)
WARM_IMPORTS = (
    "list(map(__import__, ('workbench.report.sections', 'workbench.views.plots', 'workbench.views.tables',"
    " 'workbench.widgets.grid')))"
)

#: Whether the kernel ran :data:`KEEP_KERNEL_STATE` (an error when it did not).
_STATE_RECORDED = "assert __import__('sys').modules['_workbench_kernel_state']"

#: How long a kept kernel may take to start (as papermill's default), and to clean.
_START_TIMEOUT = 60.0
#: The papermill engine that runs every report, in a kept kernel or its own (:func:`_register_engine`).
_ENGINE = "workbench"
_THREAD = threading.local()


class _KeptKernel:
    """One thread's kernel, kept between the reports it runs; only that thread touches it (its
    client's sockets belong to the thread's event loop)."""

    def __init__(self) -> None:
        self.km: Any = None
        self.kc: Any = None
        self.used = False
        self.connected = False  # launched and answering, its starting state recorded
        self.ipython_dir = ""

    def launch(self) -> None:
        """Start the kernel's process without waiting for it: it starts, records its starting
        state (:data:`KEEP_KERNEL_STATE`) and imports :data:`WARM_IMPORTS` while this thread does
        other work (grades the first inputs); :meth:`ready` waits for it. A kernel that cannot be
        started here is started again by :meth:`ready`, which reports why it cannot."""
        from jupyter_core.utils import run_sync

        if self.km is None:
            try:
                run_sync(self._launch)()
            except Exception:  # (ready() starts one again and says what is wrong)
                self.stop()

    def ready(self) -> tuple[Any, Any]:
        """The kernel and its client, ready for a report: started when there is none (or it died),
        waited for when launched ahead, else cleaned (:data:`CLEAN_KERNEL`)."""
        from jupyter_core.utils import run_sync

        if self.km is not None and not run_sync(self._alive)():
            self.stop()
        if self.km is not None and self.used and not run_sync(self._clean)():
            self.stop()  # (its error is on the kernel's standard error)
        if self.km is None:
            run_sync(self._launch)()
        if not self.connected:
            try:
                run_sync(self._connect)()
            except BaseException:
                self.stop()
                raise
        self.used = True
        return self.km, self.kc

    async def _alive(self) -> bool:
        return bool(await self.km.is_alive())

    async def _launch(self) -> None:
        """Start the kernel and queue :data:`KEEP_KERNEL_STATE` and :data:`WARM_IMPORTS` for it
        (sent now, run as soon as it is up; their replies are not waited for here)."""
        self.ipython_dir = tempfile.mkdtemp(prefix="workbench-ipython-")
        km = kernel_manager(self.ipython_dir)(kernel_name="python3", config=kernel_config())
        await km.start_kernel(cwd=str(project_root()), extra_arguments=["--HistoryManager.hist_file=:memory:"])
        self.km, self.used, self.connected = km, False, False
        kc = km.client()
        # the shell channel only: it queues what the kernel runs first. The others start with
        # _connect; a heartbeat thread started here and stopped at once (a batch refused before its
        # first report) could still be making its socket as the client closes, and print a traceback
        kc.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=False)
        self.kc = kc
        for code in (KEEP_KERNEL_STATE, WARM_IMPORTS):
            kc.execute(code, silent=True, store_history=False, allow_stdin=False)

    async def _connect(self) -> None:
        """Wait until the launched kernel answers (after the code queued for it has run), and check
        that it recorded its starting state."""
        self.kc.start_channels(shell=False, iopub=True, stdin=True, hb=True, control=True)
        self.kc.allow_stdin = False
        await self.kc.wait_for_ready(timeout=_START_TIMEOUT)
        if not await self._run_silently(_STATE_RECORDED):
            raise ReportError("a report kernel could not record its starting folder and environment")
        self.connected = True

    async def _clean(self) -> bool:
        """Run :data:`CLEAN_KERNEL`; ``False`` when it failed (the kernel is then let go)."""
        return await self._run_silently(CLEAN_KERNEL)

    async def _run_silently(self, code: str) -> bool:
        """Run ``code`` in the kernel without an execution count or history; whether it ran."""
        try:
            reply = await self.kc.execute_interactive(
                code, silent=True, store_history=False, allow_stdin=False, timeout=_START_TIMEOUT
            )
        except TimeoutError:
            return False
        return bool(reply["content"].get("status") == "ok")

    def stop(self) -> None:
        """Shut the kernel down (a clean shutdown request; killed when it does not stop)."""
        from jupyter_core.utils import run_sync

        if self.km is not None:
            run_sync(self._stop)()
        self.km = self.kc = None
        self.connected = False
        if self.ipython_dir:
            shutil.rmtree(self.ipython_dir, ignore_errors=True)
            self.ipython_dir = ""

    async def _stop(self) -> None:
        try:
            if self.kc is not None:
                self.kc.stop_channels()
            # a kernel never waited for (launched ahead, let go before a report) is still starting:
            # asked to shut down then, it prints asyncio's warnings on the report's standard error;
            # it holds nothing yet, so it is stopped at once
            await self.km.shutdown_kernel(now=not self.connected)
        finally:
            await self.km.cleanup_resources()


def read_ahead(files: list[tuple[str, str | None]]) -> None:
    """Have this thread's kept kernel, when it has one running, read these prediction files (path,
    system) now, while this thread grades them: the report it runs next reads them again to open
    its graded folder, and takes them from there
    (:func:`workbench.io.predictions.table.read_ahead`). Sent without waiting: it runs in the
    kernel before the report, silently; a file it cannot read is read, and reported, by the report."""
    kept: _KeptKernel | None = getattr(_THREAD, "kept", None)
    if kept is None or kept.kc is None or not files:
        return
    code = f"__import__('workbench.io.predictions.table', fromlist=['read_ahead']).read_ahead({files!r})"
    kept.kc.execute(code, silent=True, store_history=False, allow_stdin=False)


def _papermill_runs_reports() -> bool:
    """Whether reports run in papermill's own ``execute_notebook`` (a stand-in for it, in tests,
    runs no kernel: none is started ahead for it). Papermill not imported yet has not been
    replaced (and is not imported here: the kernel starts while it is, later)."""
    papermill = sys.modules.get("papermill")
    return papermill is None or getattr(papermill.execute_notebook, "__module__", "").startswith("papermill.")


@contextlib.contextmanager
def kept_kernel() -> Iterator[None]:
    """Within it, the reports this thread runs (:func:`execute`) share one kernel, started ahead
    on entering (:meth:`_KeptKernel.launch`: it starts while the first inputs are graded) and shut
    down on leaving; outside it, each report has a kernel of its own."""
    kept = _KeptKernel()
    earlier = getattr(_THREAD, "kept", None)
    _THREAD.kept = kept
    try:
        if _papermill_runs_reports():
            kept.launch()
        yield
    finally:
        _THREAD.kept = earlier
        kept.stop()


class KernelThreads:
    """``workers`` threads that run what is submitted, each inside :func:`kept_kernel` (the reports
    one thread runs share its kernel); ``submit``, ``shutdown`` and ``with`` as a
    ``ThreadPoolExecutor``'s. A thread's kernel is shut down by that thread when it ends."""

    def __init__(self, workers: int, name: str = "report") -> None:
        self._jobs: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]] | None]
        self._jobs = queue.SimpleQueue()
        self._threads = [threading.Thread(target=self._serve, name=f"{name}_{n}") for n in range(workers)]
        for thread in self._threads:
            thread.start()

    def _serve(self) -> None:
        with kept_kernel():
            while (job := self._jobs.get()) is not None:
                future, fn, args, kwargs = job
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    result = fn(*args, **kwargs)
                except BaseException as exc:  # handed to whoever waits on the future
                    future.set_exception(exc)
                else:
                    future.set_result(result)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        self._jobs.put((future, fn, args, kwargs))
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if cancel_futures:
            while True:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if job is not None:
                    job[0].cancel()
        for _ in self._threads:
            self._jobs.put(None)
        if wait:
            for thread in self._threads:
                thread.join()

    def __enter__(self) -> KernelThreads:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown(wait=True)


def _register_engine() -> None:
    """Register :data:`_ENGINE` with papermill: its own nbclient engine, except that

    - the report runs in the kept kernel it is given, if any (``kept_kernel``: its kernel and
      client, started or cleaned there), which it leaves running;
    - a kernel that dies leaves the notebook executed so far in ``partial_notebook`` (papermill
      writes the notebook at the end, or at a failing cell, as :func:`execute` asks it, and not when
      its kernel dies), the cell it died in marked failed with an error output saying so, and
      :class:`_KernelDied` is raised; nbclient's own line for it, logged through papermill's logger
      ("Kernel died while waiting for execute reply."), is dropped (:class:`_SaidByTheRunner`): the
      runner says it, in the report's one line."""
    papermill = import_papermill()
    from nbclient.exceptions import DeadKernelError
    from papermill.clientwrap import PapermillNotebookClient
    from papermill.engines import NBClientEngine, papermill_engines
    from papermill.utils import merge_kwargs, remove_args

    if _ENGINE in papermill_engines._engines:
        return

    class WorkbenchEngine(NBClientEngine):  # type: ignore[misc]
        @classmethod
        def execute_managed_notebook(  # as NBClientEngine's, in the kept kernel when given
            cls,
            nb_man: Any,
            kernel_name: str,
            log_output: bool = False,
            stdout_file: Any = None,
            stderr_file: Any = None,
            start_timeout: float = _START_TIMEOUT,
            execution_timeout: float | None = None,
            **kwargs: Any,
        ) -> Any:
            partial = kwargs.pop("partial_notebook")
            kept: _KeptKernel | None = kwargs.pop("kept_kernel", None)
            try:
                if kept is None:
                    return super().execute_managed_notebook(
                        nb_man,
                        kernel_name,
                        log_output=log_output,
                        stdout_file=stdout_file,
                        stderr_file=stderr_file,
                        start_timeout=start_timeout,
                        execution_timeout=execution_timeout,
                        **kwargs,
                    )
                km, kc = kept.ready()
                kwargs["km"] = km
                kwargs = remove_args(["input_path"], **kwargs)
                safe_kwargs = remove_args(["timeout", "startup_timeout"], **kwargs)
                final_kwargs = merge_kwargs(
                    safe_kwargs,
                    timeout=execution_timeout if execution_timeout else kwargs.get("timeout"),
                    startup_timeout=start_timeout,
                    kernel_name=kernel_name,
                    log=papermill.log.logger,
                    log_output=log_output,
                    stdout_file=stdout_file,
                    stderr_file=stderr_file,
                )
                client = PapermillNotebookClient(nb_man, **final_kwargs)
                client.kc = kc
                return client.execute()
            except DeadKernelError:
                nb_man.output_path = partial  # papermill's last save (its notebook_complete, on the way out) writes it
                raise _KernelDied(_mark_dead_cell(nb_man)) from None

    papermill_engines.register(_ENGINE, WorkbenchEngine)
    papermill.log.logger.addFilter(_SaidByTheRunner())


class _SaidByTheRunner(logging.Filter):
    """Drops nbclient's log line for a kernel that died (:func:`execute` says it, with the cell and
    the partly executed notebook)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Kernel died")


class _KernelDied(Exception):
    """A report's kernel died while running ``cell`` (its number, as :func:`_mark_dead_cell` gives
    it; ``None`` before the first cell)."""

    def __init__(self, cell: int | None) -> None:
        super().__init__(cell)
        self.cell = cell


def _mark_dead_cell(nb_man: Any) -> int | None:
    """Mark the cell a report's kernel died in (the last one papermill started) as failed, with an
    error output saying so, and return its number: its execution count, else its place among the
    code cells (``None`` when no cell had started)."""
    import nbformat

    cells = nb_man.nb.cells
    started = [i for i, cell in enumerate(cells) if cell.get("metadata", {}).get("papermill", {}).get("start_time")]
    if not started:
        return None
    cell = cells[started[-1]]
    nb_man.cell_exception(cell, cell_index=started[-1])
    if cell.cell_type == "code":
        said = "the kernel died while running this cell (killed, out of memory, or its process exited)"
        cell.outputs.append(nbformat.v4.new_output("error", ename="DeadKernelError", evalue=said, traceback=[]))
    code = [c for c in cells[: started[-1] + 1] if c.cell_type == "code"]
    return cell.get("execution_count") or len(code)
