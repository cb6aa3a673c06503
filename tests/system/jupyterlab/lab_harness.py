"""What the JupyterLab tests share (their ``conftest.py`` takes the fixtures from here): a real JupyterLab server on 127.0.0.1 with a token, in a
temporary folder with its own settings (notebook windowing off, so every output is in the page;
no news, no update checks), and Debian's Chromium driven by Playwright at 1280x800, whose every
request to another host is refused and recorded.

Every test here skips, saying how to install what is missing, without Chromium or Playwright.
Set ``WORKBENCH_SHOTS=folder`` to keep a screenshot of each state the tests reach.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

#: Debian's Chromium: the browser the tests drive (Playwright's own download does not work offline).
CHROMIUM = Path("/usr/bin/chromium")
_HERE = Path(__file__).resolve().parent
REPO = _HERE.parents[2]

#: JupyterLab, its kernel and the grading before an output shows: safety nets against a hang, not budgets.
RENDER_TIMEOUT_MS = 300_000
ACTION_TIMEOUT_MS = 120_000

#: The settings JupyterLab starts with: no windowing (every output in the page), no news.
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
        "windowingMode": "none",
        "autoStartDefaultKernel": True,
    },
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
}


def shot(page: Any, name: str, *, always: bool = False) -> None:
    """A screenshot of ``page`` as ``name``.png in ``$WORKBENCH_SHOTS``, when it is set (``always``:
    else in the temporary folder's ``lab-shots``)."""
    folder = os.environ.get("WORKBENCH_SHOTS", "") or (str(Path(tempfile.gettempdir()) / "lab-shots") if always else "")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"))


def _free_port() -> int:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, server: subprocess.Popen[bytes], log: Path, timeout_s: float = 300.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"jupyter lab exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    pytest.fail(f"jupyter lab did not listen on port {port} within {timeout_s:.0f} s:\n{log.read_text()[-3000:]}")


@dataclass
class Lab:
    """A running JupyterLab: its folder, address and token, and the browser that visits it."""

    root: Path
    port: int
    token: str
    browser: Any
    outside: list[str] = field(default_factory=list)
    opened: int = 0
    #: The browser's errors (console errors, uncaught exceptions) of the page last opened.
    console: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)

    def trust(self, notebook: str) -> None:
        """Sign ``notebook`` (under :attr:`root`) as trusted, in the server's own signature store."""
        subprocess.run([sys.executable, "-m", "jupyter", "trust", str(self.root / notebook)], env=self.env, check=True)

    def open(self, notebook: str) -> Any:
        """A new 1280x800 page with ``notebook`` (a path under :attr:`root`) open and its kernel idle."""
        page = self.browser.new_page(viewport={"width": 1280, "height": 800})

        def route(route: Any) -> None:
            url = route.request.url
            if url.startswith(("http://127.0.0.1:", "ws://127.0.0.1:")):
                route.continue_()
            else:  # would leave the machine: recorded and refused
                self.outside.append(url)
                route.abort()

        page.route("**/*", route)
        self.console = []
        page.on("console", lambda m: self.console.append(f"{m.type}: {m.text[:500]}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.console.append(f"uncaught: {str(e)[:500]}"))
        # a workspace of its own, reset: no tab of an earlier test comes back with its kernel
        self.opened += 1
        url = f"http://127.0.0.1:{self.port}/lab/workspaces/w{self.opened}/tree/{notebook}?reset&token={self.token}"
        page.goto(url, timeout=RENDER_TIMEOUT_MS)
        page.locator(".jp-Notebook").first.wait_for(timeout=RENDER_TIMEOUT_MS)
        # on a busy machine JupyterLab may ask for the kernel before it has read the kernelspecs
        choose = page.locator(".jp-Dialog", has_text="Select Kernel").get_by_role("button", name="Select")
        with contextlib.suppress(Exception):
            choose.click(timeout=5_000)
        # the kernel is up (the status bar says so) before anything runs
        page.get_by_text(re.compile(r"Python 3 \(ipykernel\) \| Idle")).wait_for(timeout=RENDER_TIMEOUT_MS)
        return page

    def errors(self, page: Any) -> str:
        """What the notebook's error outputs say (for a failing test's message)."""
        texts = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").all_inner_texts()
        return "\n".join(t[-1500:] for t in texts) or "(no error output)"

    @contextlib.contextmanager
    def session(self, notebook: str, name: str) -> Iterator[Any]:
        """:meth:`open` ``notebook``; when the body fails, a screenshot ``<name>-failed`` is kept
        and the notebook's error outputs are added to the failure."""
        page = self.open(notebook)
        try:
            yield page
        except Exception as exc:
            shot(page, f"{name}-failed", always=True)
            console = "\n".join(self.console[-20:]) or "(none)"
            raise AssertionError(f"{exc}\nnotebook errors:\n{self.errors(page)}\nbrowser errors:\n{console}") from exc
        finally:
            page.close()

    def run_all(self, page: Any) -> None:
        """Run every cell of the open notebook (the Run menu's Run All Cells), again if the first
        cell has not started within a minute (a kernel still connecting may drop the request)."""
        started = page.locator(".jp-InputArea-prompt", has_text=re.compile(r"\[(\*|\d+)\]")).first
        for _ in range(3):
            page.locator(".jp-Notebook").first.click(position={"x": 5, "y": 5})
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_role("menuitem", name=re.compile(r"^Run All Cells")).click()
            try:
                started.wait_for(timeout=60_000)
                return
            except Exception:  # noqa: BLE001 - try the menu again
                continue
        raise AssertionError("Run All Cells did not start the notebook's first cell in three tries")


def template_copy(root: Path, template: str, **parameters: str) -> str:
    """A copy of ``notebooks/<template>.ipynb`` in ``root`` whose parameters cell gives
    ``parameters`` (text values) instead of the template's defaults; returns its name."""
    notebook = json.loads((REPO / "notebooks" / f"{template}.ipynb").read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if "parameters" in (cell.get("metadata", {}).get("tags") or []):
            lines = "".join(cell["source"]).split("\n")
            for name, value in parameters.items():
                at = [i for i, line in enumerate(lines) if line.startswith(f"{name}: str = ")]
                assert at, f"{template} has no text parameter {name}"
                lines[at[0]] = f"{name}: str = {json.dumps(value)}"
            cell["source"] = "\n".join(lines)
    name = f"{template}.ipynb"
    (root / name).write_text(json.dumps(notebook), encoding="utf-8")
    return name


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium for the module's pages."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the JupyterLab tests need Playwright; install it: pip install -e '.[dev]'"
    )
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[Lab]:
    """A JupyterLab server for the module, serving a fresh temporary folder."""
    root = tmp_path_factory.mktemp("lab")
    home = tmp_path_factory.mktemp("lab-home")
    for name, value in SETTINGS.items():
        path = home / "settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value), encoding="utf-8")
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
    }
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.news_url=None",
        "--LabApp.extension_manager=readonly",
    ]
    if os.geteuid() == 0:  # a container's root: JupyterLab refuses it without this
        command.append("--allow-root")
    log = home / "lab.log"
    with log.open("wb") as out:
        server = subprocess.Popen(command, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            _wait_for_port(port, server, log)
            lab = Lab(root=root, port=port, token=token, browser=browser, env=env)
            yield lab
            assert lab.outside == [], f"requests to other hosts: {lab.outside}"
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=20)
