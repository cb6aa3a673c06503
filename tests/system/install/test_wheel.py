"""The package as an analyst installs it (issue 32): ``python -m build`` makes an sdist and, from it,
a wheel; the wheel is installed with ``--no-deps`` into a fresh virtual environment that reuses this
environment's third-party packages (a ``.pth`` line naming its site-packages, whose own ``.pth``
files, the editable ``workbench`` among them, are not read) but not the checkout; from a temporary
folder, with a temporary home folder, every command then works and writes its outputs there:

- ``workbench report`` with no arguments (the demo set shipped in the package): ``reports/index.html``
  and the overview, whose page passes the offline check of ``tests/system/browser`` in Chromium;
- ``workbench report --template 04-compare-systems`` on two prediction files;
- ``workbench templates copy``, then a copied template run as it is (into ``--out``);
- ``workbench grade``;
- ``workbench triage`` listening on 127.0.0.1 only (no page is opened; Voila's kernel started ahead runs the
  template, and writes nothing but Jupyter's own per-user state).

Nothing is written outside the current folder and ``--out``: the home folder and the new
environment's site-packages are listed before and after. The wheel is built once (a few seconds
without a network: ``--no-isolation``, with the dev extras' setuptools); the module adds about a
minute and a half to ``make test`` on two busy cores.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures"
DEV_SMALL = FIXTURES / "convfinqa" / "dev_small.json"
RUN_A = FIXTURES / "predictions" / "zarifaziz_dev_small.jsonl"
RUN_B = FIXTURES / "predictions" / "zarifaziz_dev_small_12-48-44Z.jsonl"
CHROMIUM = Path("/usr/bin/chromium")
#: Safety nets against a hang, not budgets: CI machines are busy.
COMMAND_TIMEOUT_S = 900
#: The demo set the wheel carries (data/ mapped to workbench/demo/).
DEMO = (
    "SOURCES.md",
    "convfinqa/dev.json",
    "predictions/convfinqa/zarifaziz-claude-sonnet-4-6/2026-05-04T06-35-00Z/predictions.jsonl",
    "predictions/convfinqa/zarifaziz-claude-sonnet-4-6/2026-05-04T12-48-44Z/predictions.jsonl",
)


@dataclass
class Installed:
    """The built distributions and the virtual environment the wheel is installed in."""

    wheel: Path
    sdist: Path
    venv: Path
    site: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin"


@dataclass
class Session:
    """What the commands run from the temporary folder printed and wrote."""

    work: Path
    home: Path
    outputs: dict[str, subprocess.CompletedProcess[str]] = field(default_factory=dict)
    home_before: list[str] = field(default_factory=list)
    home_after: list[str] = field(default_factory=list)
    site_before: list[str] = field(default_factory=list)
    site_after: list[str] = field(default_factory=list)
    triage_addresses: list[str] = field(default_factory=list)


def _listing(folder: Path) -> list[str]:
    """Every file and folder under ``folder`` with its size (a file written over shows too)."""
    return sorted(
        f"{p.relative_to(folder).as_posix()} {p.stat().st_size if p.is_file() else '/'}" for p in folder.rglob("*")
    )


def _check(result: subprocess.CompletedProcess[str], what: str) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, f"{what} exited with {result.returncode}:\n{result.stdout}\n{result.stderr[-4000:]}"
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The sdist and the wheel built from it, the wheel installed into a fresh environment."""
    pytest.importorskip("build", reason="the wheel test needs 'build'; install the dev extras: pip install -e '.[dev]'")
    root = tmp_path_factory.mktemp("install")
    dist = root / "dist"
    _check(
        subprocess.run(
            [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(REPO)],
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
        ),
        "python -m build",
    )
    (wheel,) = dist.glob("workbench-*.whl")
    (sdist,) = dist.glob("workbench-*.tar.gz")
    venv = root / "venv"
    _check(
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], capture_output=True, text=True),
        "python -m venv",
    )
    python = venv / "bin" / "python"
    # before the .pth line: pip must not see the dev environment's (editable) workbench
    _check(
        subprocess.run(
            [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index"]
            + ["--no-cache-dir", "--disable-pip-version-check", "--quiet", str(wheel)],
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
        ),
        "pip install the wheel",
    )
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    dev_sites = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    (site / "reuse-dev-environment.pth").write_text("".join(f"{path}\n" for path in dev_sites), encoding="utf-8")
    return Installed(wheel=wheel, sdist=sdist, venv=venv, site=site)


def _environment(installed: Installed, home: Path) -> dict[str, str]:
    """The environment of an analyst's shell with the new environment first on PATH: a home of its
    own, no setting that points at this checkout or another Jupyter folder. Voila's page templates
    are data files of the reused environment (share/jupyter), named on JUPYTER_PATH."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("JUPYTER", "IPYTHON", "XDG_", "PYTHON", "WORKBENCH", "VIRTUAL_ENV", "MPL"))
    }
    env.update(
        HOME=str(home),
        PATH=f"{installed.bin}{os.pathsep}{env.get('PATH', '')}",
        JUPYTER_PATH=str(Path(sys.prefix) / "share" / "jupyter"),
    )
    return env


@pytest.fixture(scope="module")
def session(installed: Installed, tmp_path_factory: pytest.TempPathFactory) -> Session:
    """Every command of the issue, run from a temporary folder holding copies of two small runs."""
    base = tmp_path_factory.mktemp("analyst")
    work, home = base / "project", base / "home"
    (work / "in").mkdir(parents=True)
    home.mkdir()
    for source in (DEV_SMALL, RUN_A, RUN_B):
        shutil.copyfile(source, work / "in" / source.name)
    env = _environment(installed, home)
    done = Session(work=work, home=home, home_before=_listing(home), site_before=_listing(installed.site))

    def run(name: str, *argv: str) -> None:
        done.outputs[name] = subprocess.run(
            [str(installed.bin / argv[0]), *argv[1:]],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
        )

    run(
        "file", "python", "-c", "import json, workbench; print(json.dumps([workbench.__file__, workbench.__version__]))"
    )
    run("version", "workbench", "--version")
    run("report", "workbench", "report", "--quiet")
    inputs = ["--dataset", f"in/{DEV_SMALL.name}", "--predictions", f"in/{RUN_A.name}"]
    second = ["--predictions", f"in/{RUN_B.name}"]
    run("compare", "workbench", "report", "--quiet", "--template", "04-compare-systems", *inputs, *second)
    run("copy", "workbench", "templates", "copy", "mine")
    run("copied", "workbench", "report", "--quiet", "--template", "mine/01-overview.ipynb", *inputs, "--out", "out")
    run("grade", "workbench", "grade", f"in/{DEV_SMALL.name}", f"in/{RUN_A.name}", "--out", "graded")
    done.triage_addresses = _triage_addresses(installed, work, env)
    done.home_after, done.site_after = _listing(home), _listing(installed.site)
    return done


def _free_port() -> int:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _triage_addresses(installed: Installed, work: Path, env: dict[str, str], timeout_s: float = 300.0) -> list[str]:
    """Start ``workbench triage`` (the shipped template) and return the addresses Voila listens on,
    without opening a page (that would run the template's kernel); then stop it."""
    psutil = pytest.importorskip("psutil")
    port = _free_port()
    log = work.parent / "voila.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [str(installed.bin / "workbench"), "triage", "--no-browser", f"--port={port}"],
            cwd=work,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline and server.poll() is None:
                with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
                    sock.settimeout(0.5)
                    if sock.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.2)
            assert server.poll() is None, (
                f"workbench triage exited with {server.returncode}:\n{log.read_text()[-3000:]}"
            )
            workbench = psutil.Process(server.pid)  # Voila runs as its child (workbench.report.serve)
            return sorted(
                {
                    f"{c.laddr.ip}:{c.laddr.port}"
                    for process in (workbench, *workbench.children(recursive=True))
                    for c in process.net_connections(kind="inet")
                    if c.status == psutil.CONN_LISTEN
                }
            )
        finally:
            server.terminate()
            server.wait(timeout=60)


def test_the_build_makes_an_sdist_and_a_wheel_with_the_templates_and_the_demo(installed: Installed) -> None:
    """The wheel carries the templates and the batch file byte for byte from notebooks/, the demo set
    from data/ (a few MB), the Voila settings and the licence; the sdist holds their sources."""
    import workbench

    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
        templates = sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb")) + ["bundled.yaml"]
        assert len(templates) == 6  # 01 to 05 and bundled.yaml
        for name in templates:
            assert wheel.read(f"workbench/notebooks/{name}") == (REPO / "notebooks" / name).read_bytes(), name
        for name in DEMO:
            assert wheel.read(f"workbench/demo/{name}") == (REPO / "data" / name).read_bytes(), name
        demo = [info for info in wheel.infolist() if info.filename.startswith("workbench/demo/")]
        assert sorted(info.filename.removeprefix("workbench/demo/") for info in demo) == sorted(DEMO)
        assert sum(info.file_size for info in demo) < 5_000_000  # a few MB
        assert json.loads(wheel.read("workbench/report/voila.json"))["Voila"]["ip"] == "127.0.0.1"
        info = f"workbench-{workbench.__version__}.dist-info"
        assert f"{info}/licenses/LICENSE" in names
        metadata = wheel.read(f"{info}/METADATA").decode()
    assert f"Version: {workbench.__version__}\n" in metadata and "License-Expression: MIT\n" in metadata
    assert "Classifier: Framework :: Jupyter\n" in metadata and "Description-Content-Type: text/markdown" in metadata
    assert not any(name.startswith(("tests/", "data/", "notebooks/")) for name in names)
    with tarfile.open(installed.sdist) as sdist:
        held = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert {"setup.py", "pyproject.toml", "LICENSE", "CHANGELOG.md", "README.md"} <= held
    assert {f"notebooks/{name}" for name in templates} | {f"data/{name}" for name in DEMO} <= held
    assert not any(name.startswith(("tests/", "bench/")) for name in held)


def test_the_wheel_is_imported_not_the_checkout_and_says_one_version(session: Session, installed: Installed) -> None:
    module, version = json.loads(_check(session.outputs["file"], "python -c 'import workbench'").stdout)
    assert Path(module).is_relative_to(installed.site), module
    assert not Path(module).is_relative_to(REPO)
    assert _check(session.outputs["version"], "workbench --version").stdout == f"workbench {version}\n"
    assert installed.wheel.name.startswith(f"workbench-{version}-")


def test_report_without_arguments_writes_the_overview_and_the_index_here(session: Session) -> None:
    out = _check(session.outputs["report"], "workbench report").stdout
    folder = session.work / "reports" / "01-overview"
    for name in ("bundled.ipynb", "bundled.html", "bundled.manifest.json", "bundled.graded/turns.parquet"):
        assert (folder / name).is_file(), name
    assert f"html: {folder / 'bundled.html'}" in out and f"index: {session.work / 'reports' / 'index.html'}" in out
    assert 'href="01-overview/bundled.html"' in (session.work / "reports" / "index.html").read_text(encoding="utf-8")
    manifest = json.loads((folder / "bundled.manifest.json").read_text(encoding="utf-8"))
    summary = json.loads((folder / "bundled.graded" / "summary.json").read_text(encoding="utf-8"))
    assert list(manifest["metrics"]) == ["claude-sonnet-4-6"]
    assert summary["systems"]["claude-sonnet-4-6"]["n_turns"] == 1490  # the whole dev set ships
    assert "site-packages" not in (folder / "bundled.html").read_text(encoding="utf-8")  # no machine path


def test_compare_systems_on_two_files(session: Session) -> None:
    _check(session.outputs["compare"], "workbench report --template 04-compare-systems")
    (page,) = (session.work / "reports" / "04-compare-systems").glob("*.html")
    text = page.read_text(encoding="utf-8")
    assert "zarifaziz_dev_small_12-48-44Z" in text and "McNemar" in text


def test_copied_templates_run_as_they_are(session: Session, installed: Installed) -> None:
    out = _check(session.outputs["copy"], "workbench templates copy").stdout
    shipped = installed.site / "workbench" / "notebooks"
    copies = sorted(p.name for p in (session.work / "mine").iterdir())
    assert copies == sorted(p.name for p in shipped.iterdir() if p.is_file()) and len(copies) == 6
    assert all((session.work / "mine" / n).read_bytes() == (shipped / n).read_bytes() for n in copies)
    assert "copied: mine/01-overview.ipynb" in out
    _check(session.outputs["copied"], "workbench report --template mine/01-overview.ipynb --out out")
    (page,) = (session.work / "out").glob("zarifaziz-dev-small-*.html")
    assert "Failed turns" in page.read_text(encoding="utf-8") and (session.work / "out" / "index.html").is_file()


def test_grade_writes_its_outputs(session: Session) -> None:
    _check(session.outputs["grade"], "workbench grade")
    for name in ("turns.parquet", "conversations.parquet", "checks.parquet", "summary.json"):
        assert (session.work / "graded" / name).is_file(), name


def test_triage_is_served_on_this_machine_only(session: Session) -> None:
    assert session.triage_addresses, "Voila listened on nothing"
    assert all(address.startswith("127.0.0.1:") for address in session.triage_addresses), session.triage_addresses


#: Jupyter's own per-user state, written by Voila and by the kernel it starts ahead of the first page
#: (the notebook signing key and database, IPython's profile): Jupyter's, not the tool's outputs.
JUPYTER_STATE = (".ipython", ".local", ".local/share", ".local/share/jupyter")


def _without_jupyter_state(listing: list[str]) -> list[str]:
    return [
        entry
        for entry in listing
        if entry.rsplit(" ", 1)[0] not in JUPYTER_STATE and not entry.startswith((".ipython/", ".local/share/jupyter/"))
    ]


def test_nothing_is_written_outside_the_current_folder_and_out(session: Session) -> None:
    assert _without_jupyter_state(session.home_after) == _without_jupyter_state(session.home_before)
    assert session.site_after == session.site_before
    assert sorted(p.name for p in session.work.iterdir()) == ["graded", "in", "mine", "out", "reports"]
    assert sorted(p.name for p in (session.work / "in").iterdir()) == sorted(p.name for p in (DEV_SMALL, RUN_A, RUN_B))
    folders = sorted(p.name for p in (session.work / "reports").iterdir() if p.is_dir())
    assert folders == ["01-overview", "04-compare-systems"]


def _browser_checks() -> Any:
    """The offline checks of ``tests/system/browser/test_report_browser.py`` (a page opened with the
    network off; every request, blocked request, console error and page error recorded)."""
    path = REPO / "tests" / "system" / "browser" / "test_report_browser.py"
    spec = importlib.util.spec_from_file_location("_report_browser_checks", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_overview_page_passes_the_offline_browser_check(session: Session) -> None:
    """The page the wheel's `workbench report` wrote, in Chromium with the network off: only the
    page is requested, no console or page error (a script or style its Content-Security-Policy
    blocked would log one), every figure drawn."""
    if not CHROMIUM.exists():
        pytest.skip(f"the browser check needs Debian's Chromium at {CHROMIUM}; install it: apt-get install -y chromium")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the browser check needs Playwright (dev extras)")
    checks = _browser_checks()
    folder = session.work / "reports" / "01-overview"
    html = folder / "bundled.html"
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            visit = checks._visit(browser, html)
            policy = visit.page.locator('meta[http-equiv="Content-Security-Policy"]').get_attribute("content")
            assert policy.startswith("default-src 'none'; script-src 'sha256-")
            assert checks._assert_figures_drawn(visit, folder / "bundled.ipynb") > 0
            checks._assert_not_pwned(visit)
            visit.assert_clean(html.as_uri())
        finally:
            browser.close()
