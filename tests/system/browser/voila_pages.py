"""What the Voila page tests share: the triage template prepared for a fixture, served as
``workbench triage`` serves it (:func:`workbench.report.templates.voila_command`: the workbench
page template, one kernel started ahead of the page), and a watch on every request a page makes.

Not a test module: ``test_triage_voila_page.py`` (here) and
``tests/system/postgres/test_two_analysts_voila.py`` import it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import nbformat
import papermill
import pytest

from workbench.report.templates import voila_command

#: Screenshots go here when ``WORKBENCH_SHOTS`` names a folder.
SHOTS = os.environ.get("WORKBENCH_SHOTS", "")
REPO = Path(__file__).resolve().parents[3]
TEMPLATE = REPO / "notebooks" / "03-triage.ipynb"


def _free_port() -> int:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, server: subprocess.Popen[bytes], log: Path, timeout_s: float = 300.0) -> None:
    """Wait until the server accepts connections (a GET would start a kernel, so only connect)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"voila exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    pytest.fail(f"voila did not listen on port {port} within {timeout_s:.0f} s:\n{log.read_text()[-3000:]}")


#: Safety net against a hang while a kernel runs the template (not a budget: CI machines are busy).
KERNEL_TIMEOUT_S = 300.0
#: Records every Content-Security-Policy refusal in the page (the browser makes no request for those).
_REFUSALS = (
    "window.__refused = [];"
    "document.addEventListener('securitypolicyviolation', (e) => window.__refused.push(e.blockedURI));"
)


def prepare(folder: Path, *, store: str, queue: str = "failed", markers: Path | None = None, **parameters: str) -> Path:
    """A copy of the triage template in ``folder`` with its parameters set for the small fixture
    (Voila injects none); with ``markers``, a last cell writes a file there named by the kernel's
    process id, holding ``VOILA_PREHEAT``: the kernel has run the whole template, view included."""
    notebook = folder / "03-triage.ipynb"
    papermill.execute_notebook(
        str(TEMPLATE),
        str(notebook),
        parameters={
            "dataset": str(REPO / "tests/fixtures/convfinqa/dev_small.json"),
            "predictions": str(REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl"),
            "store": store,
            "queue": queue,  # failed: the fixture's 3 failed turns
            **parameters,  # e.g. annotator
        },
        prepare_only=True,
        kernel_name="python3",
        progress_bar=False,
    )
    if markers is not None:
        markers.mkdir(parents=True, exist_ok=True)
        book = nbformat.read(notebook, as_version=4)
        book.cells.append(
            nbformat.v4.new_code_cell(
                "import os, pathlib\n"
                f"pathlib.Path({str(markers)!r}, str(os.getpid())).write_text(os.environ.get('VOILA_PREHEAT', ''))"
            )
        )
        nbformat.write(book, notebook)
    return notebook


def wait_for_markers(markers: Path, count: int, log: Path) -> list[Path]:
    """Wait until ``count`` kernels have run the whole template (their marker files)."""
    deadline = time.monotonic() + KERNEL_TIMEOUT_S
    while time.monotonic() < deadline:
        found = sorted(markers.iterdir(), key=lambda p: p.stat().st_mtime_ns)
        if len(found) >= count:
            return found
        time.sleep(0.2)
    pytest.fail(
        f"{count} kernel(s) did not run the template within {KERNEL_TIMEOUT_S:.0f} s:\n{log.read_text()[-3000:]}"
    )


@contextmanager
def serve(notebook: Path, project: Path) -> Iterator[tuple[int, Path]]:
    """Serve ``notebook`` as ``workbench triage`` does, from ``project``; yield the port and the log."""
    port = _free_port()
    argv, added = voila_command(notebook, port=port, browser=False)
    env = {k: v for k, v in os.environ.items() if k != "JUPYTERHUB_USER"} | added
    log = project / "voila.log"
    with log.open("wb") as out:
        server = subprocess.Popen(argv, cwd=project, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            _wait_for_port(port, server, log)
            yield port, log
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=30)


@dataclass
class Watch:
    """Every request, failed request, WebSocket and Content-Security-Policy refusal of the pages
    watched, and which of them are for another host than the Voila server."""

    port: int
    requests: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    pages: list[Any] = field(default_factory=list)

    def attach(self, page: Any) -> Any:
        page.add_init_script(_REFUSALS)
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("requestfailed", lambda request: self.failed.append(f"{request.url} ({request.failure})"))
        page.on("websocket", lambda socket: self.requests.append(socket.url))
        self.pages.append(page)
        return page

    def _elsewhere(self, url: str) -> bool:
        parts = urlsplit(url.split(" (")[0])
        return parts.scheme in ("http", "https", "ws", "wss") and parts.netloc != f"127.0.0.1:{self.port}"

    def refused(self) -> list[str]:
        """What the pages' Content-Security-Policy refused (the pages still open)."""
        return [url for page in self.pages if not page.is_closed() for url in page.evaluate("window.__refused")]

    def elsewhere(self) -> dict[str, list[str]]:
        """Requests, failed requests and refusals for another host (empty lists: none)."""
        return {
            "requested": [u for u in self.requests if self._elsewhere(u)],
            "failed": [u for u in self.failed if self._elsewhere(u)],
            "refused": self.refused(),  # any refusal at all: the page asks for nothing its policy forbids
        }


def shot(page: Any, name: str) -> None:
    """A screenshot of ``page`` as ``<WORKBENCH_SHOTS>/<name>.png`` when that variable is set."""
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"))
