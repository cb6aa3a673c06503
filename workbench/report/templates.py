"""The notebook templates: where they are, what each shows, editable copies, and the triage app.

The templates are the notebooks of the repository's ``notebooks/`` folder, their one source. The
build maps that folder into the package (``workbench/notebooks/`` in a wheel, with the batch file
``bundled.yaml``); a checkout installed in place (``pip install -e``) reads ``notebooks/`` itself.
``workbench report --template NAME`` finds a template by its name from any folder, and an analyst's
own notebook by its path (``--template my/01-overview.ipynb``), such as an editable copy
:func:`copy_templates` wrote (``workbench templates copy DIR``).

A template's one ``parameters`` cell holds one line a parameter, ``name: type = value  # help``,
with a literal value of a type the runner reads (:data:`PARAMETER_TYPES`). A notebook without such
a cell, or whose cell holds anything else, is refused in one line before a kernel starts
(:func:`template_parameters`): papermill would only warn, and the runner could not read its defaults.

The triage template is an app: :func:`voila_command` serves it (or a copy) with Voila on 127.0.0.1,
with the settings of ``voila.json`` beside this module (the repository's ``voila.json`` links to it):
the page's Content-Security-Policy, the workbench's page template (``voila_template/``: Voila's
``lab`` page less its links to a CDN, so the page asks no other host for anything), and one kernel
started ahead of the page (``preheat_kernel``), which runs the template before anyone asks; the
triage takes its first item (and lease) only when a page shows it.
"""

from __future__ import annotations

import ast
import functools
import json
import shutil
import sys
from copy import deepcopy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.config import PROJECT_VARIABLE, checkout_root
from workbench.errors import InputError, UsageError
from workbench.io.atomic import write_atomic
from workbench.io.paths import inside

__all__ = [
    "DEFAULT_TEMPLATE",
    "INTERACTIVE_TEMPLATES",
    "TRIAGE_TEMPLATE",
    "BATCH_FILE",
    "PARAMETER_TYPES",
    "Template",
    "template_folder",
    "list_templates",
    "describe",
    "template_path",
    "check_batch_template",
    "check_parameters_cell",
    "template_parameters",
    "copy_templates",
    "voila_command",
    "check_voila_template",
]

DEFAULT_TEMPLATE = "01-overview"
#: Templates made for a person at a notebook (widgets that wait for clicks): they open in
#: JupyterLab or Voila and are never run as a batch report.
INTERACTIVE_TEMPLATES = frozenset({"03-triage"})
#: The template ``workbench triage`` serves.
TRIAGE_TEMPLATE = "03-triage"
#: The batch file shipped and copied with the templates (the reports ``make report`` writes).
BATCH_FILE = "bundled.yaml"
#: The types a parameter may declare: those ``-p NAME=VALUE`` reads (papermill's scalars).
PARAMETER_TYPES = ("str", "int", "float", "bool")
#: The Voila settings (127.0.0.1, the page's Content-Security-Policy, the page template, a kernel
#: started ahead of the page), beside this module.
VOILA_SETTINGS = Path(__file__).resolve().parent / "voila.json"
#: The Voila page template the settings name: the folder ``voila_template/`` beside this module,
#: installed as ``share/jupyter/voila/templates/workbench`` (a wheel's data files; ``make setup``).
VOILA_TEMPLATE = "workbench"


@dataclass(frozen=True)
class Template:
    """A template shipped with the package: its name, file and one line on what it shows."""

    name: str
    path: Path
    description: str
    interactive: bool


def template_folder() -> Path:
    """The folder of the shipped templates: the package's ``notebooks/`` in an installed wheel,
    else the ``notebooks/`` folder of the checkout installed in place.

    Examples
    --------
    >>> (template_folder() / "01-overview.ipynb").is_file()
    True
    """
    packaged = Path(__file__).resolve().parents[1] / "notebooks"
    checkout = checkout_root()
    return packaged if packaged.is_dir() or checkout is None else checkout / "notebooks"


def describe(path: Path) -> str:
    """One line on what a template shows: its notebook metadata's ``description`` when set, else
    the first level-1 heading of its markdown cells (``# Compare systems``), else the subtitle its
    page gets from :func:`workbench.report.sections.report_title` (``overview``); ``""`` when it
    has none of these."""
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
        described = notebook.get("metadata", {}).get("description")
        texts = [
            "".join(cell["source"]) if isinstance(cell["source"], list) else str(cell["source"])
            for cell in notebook.get("cells", [])
            if isinstance(cell, dict) and cell.get("cell_type") == "markdown" and "source" in cell
        ]
    except (OSError, ValueError, AttributeError, TypeError):
        return ""
    if isinstance(described, str) and described.strip():
        return " ".join(described.split())
    for text in texts:
        for line in text.splitlines():
            if line.startswith("# "):
                return line.removeprefix("# ").strip()
    from workbench.report.sections import report_title

    subtitle = report_title("", path.stem).partition(": ")[2]  # "<benchmark> error report: <subtitle>"
    return "" if subtitle in ("", path.stem) else subtitle[:1].upper() + subtitle[1:]


def list_templates() -> list[Template]:
    """The shipped templates, by name.

    Examples
    --------
    >>> [t.name for t in list_templates() if t.interactive]
    ['03-triage']
    """
    return [
        Template(path.stem, path, describe(path), path.stem in INTERACTIVE_TEMPLATES)
        for path in sorted(template_folder().glob("*.ipynb"))
    ]


def template_path(template: str) -> Path:
    """Find a template: a notebook of the analyst's own by its path (``my/01-overview.ipynb``),
    else a shipped one by its name (``01-overview``) from any folder.

    Raises
    ------
    UsageError
        When there is no such template; the message lists the shipped ones.
    """
    candidate = Path(template).expanduser()
    if candidate.suffix == ".ipynb" and candidate.is_file():
        return candidate
    folder = template_folder()
    try:
        path = inside(folder, f"{template.removesuffix('.ipynb')}.ipynb")
    except UsageError:
        path = folder / ".missing"  # a name with '..', '/', NUL...: no such template
    if not path.is_file():
        known = sorted(p.stem for p in folder.glob("*.ipynb"))
        raise UsageError(
            f"no template '{template}'. Fix: use one of {', '.join(known) or '(none found)'}, "
            "or the path of a notebook of your own (my/01-overview.ipynb)"
        )
    return path


def check_batch_template(template: str) -> None:
    """Refuse an interactive template (:data:`INTERACTIVE_TEMPLATES`) in a batch run.

    Raises
    ------
    UsageError
        One sentence saying where to open it instead.

    Examples
    --------
    >>> check_batch_template("01-overview")
    >>> check_batch_template("notebooks/03-triage.ipynb")
    Traceback (most recent call last):
    ...
    workbench.errors.UsageError: 03-triage is interactive (its annotation widgets wait for clicks), so it \
cannot run as a batch report. Fix: serve it with 'workbench triage', or open a copy \
('workbench templates copy DIR') in JupyterLab
    """
    name = Path(template).name.removesuffix(".ipynb")
    if name in INTERACTIVE_TEMPLATES:
        raise UsageError(
            f"{name} is interactive (its annotation widgets wait for clicks), so it cannot run as a batch report. "
            "Fix: serve it with 'workbench triage', or open a copy ('workbench templates copy DIR') in JupyterLab"
        )


_PARAMETER_FIX = (
    "write one parameter a line, 'name: type = value  # help', with a literal value and a type of "
    f"{', '.join(PARAMETER_TYPES)}, as the shipped templates do (derive other values in a later cell)"
)


def _line_problem(text: str) -> str:
    """What is wrong with one line of a parameters cell (``""``: nothing).

    Examples
    --------
    >>> _line_problem('n_boot: int = 1000  # bootstrap replicates'), _line_problem("x = 'a'")
    ('', '')
    >>> _line_problem("root = Path('data')")
    'its value is not a literal (papermill would replace it as text)'
    >>> _line_problem("rows: list = [1, 2]")
    'it declares the type list, which the runner does not read'
    >>> _line_problem("options = {")
    'it is not a whole assignment on one line'
    """
    try:
        body = ast.parse(text).body
    except SyntaxError:
        return "it is not a whole assignment on one line"
    statement = body[0] if len(body) == 1 else None
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value:
        declared = ast.unparse(statement.annotation)
        if declared not in PARAMETER_TYPES:
            return f"it declares the type {declared}, which the runner does not read"
    elif not (
        isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
    ):
        return "it is not one assignment 'name: type = value'"
    try:
        ast.literal_eval(statement.value)  # type: ignore[union-attr]
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return "its value is not a literal (papermill would replace it as text)"
    return ""


def check_parameters_cell(path: Path) -> None:
    """Refuse a notebook whose parameters the runner cannot read: not a notebook, no cell tagged
    ``parameters`` or several, or a line of that cell that is not ``name: type = value  # help``
    with a literal value and a type of :data:`PARAMETER_TYPES` (comments and blank lines aside).

    Raises
    ------
    InputError
        One line naming the notebook, the cell's line and what to write instead.
    """
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(
            str(path), f"not a notebook ({exc})", fix="give a notebook (.ipynb) saved by Jupyter"
        ) from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise InputError(
            str(path), "not a notebook (no list of cells)", fix="give a notebook (.ipynb) saved by Jupyter"
        )
    tagged = [
        cell
        for cell in cells
        if isinstance(cell, dict)
        and isinstance(cell.get("metadata"), dict)
        and "parameters" in (cell["metadata"].get("tags") or [])
    ]
    if len(tagged) != 1:
        raise InputError(
            str(path),
            f"{'no cell is' if not tagged else f'{len(tagged)} cells are'} tagged 'parameters'",
            fix="tag the one cell that sets the parameters 'parameters' (JupyterLab: Property Inspector, "
            "Cell Tags), as the shipped templates do",
        )
    source = tagged[0].get("source", "")
    source = "".join(source) if isinstance(source, list) else str(source)
    for number, line in enumerate(source.splitlines(), start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        problem = _line_problem(text)
        if problem:
            shown = text if len(text) <= 60 else f"{text[:57]}..."
            raise InputError(
                str(path), f"{shown!r}: {problem}", location=f"parameters cell, line {number}", fix=_PARAMETER_FIX
            )


def template_parameters(path: Path) -> dict[str, dict[str, Any]]:
    """The parameters a template declares, as papermill reads them, once its parameters cell is
    one the runner reads (:func:`check_parameters_cell`).

    Raises
    ------
    InputError
        When it is not.
    """
    try:
        stat = Path(path).stat()
    except OSError:
        check_parameters_cell(Path(path))  # names the file and why it cannot be read
        raise
    return deepcopy(_declared(str(path), stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=32)
def _declared(path: str, mtime_ns: int, size: int) -> dict[str, dict[str, Any]]:
    """:func:`template_parameters` of the file as it is (its time and size are the key): a batch
    plans each template several times, and papermill validates the whole notebook to read it."""
    check_parameters_cell(Path(path))
    from workbench.report.kernels import import_papermill

    return dict(import_papermill().inspect_notebook(path))


def copy_templates(folder: str | Path) -> list[tuple[Path, bool]]:
    """Copy every shipped template and the batch file into ``folder`` (made when missing):
    editable copies, which run as they are (``workbench report --template FOLDER/01-overview.ipynb``,
    or in JupyterLab). A file there of the same name holding the same bytes is left as it is;
    one holding other bytes is refused before anything is copied.

    Returns
    -------
    list[tuple[Path, bool]]
        Each copy, in the order of :func:`list_templates` then the batch file, and whether it was
        written now (``False``: it was there already).

    Raises
    ------
    UsageError
        When ``folder`` is a file, or one of the names is taken by another file.
    """
    target = Path(folder).expanduser()
    if target.exists() and not target.is_dir():
        raise UsageError(f"{folder} is a file, not a folder. Fix: give a folder for the copies")
    batch = template_folder() / BATCH_FILE
    sources = [t.path for t in list_templates()] + ([batch] if batch.is_file() else [])
    if not sources:
        raise UsageError(f"no templates in {template_folder()}. Fix: reinstall the workbench")
    copies = [(source, target / source.name) for source in sources]
    taken = [copy for source, copy in copies if copy.exists() and copy.read_bytes() != source.read_bytes()]
    if taken:
        raise UsageError(
            f"{taken[0]} exists and is not the template{'' if len(taken) == 1 else f' ({len(taken)} such files)'}; "
            "nothing was copied. Fix: copy into another folder, or move those files away"
        )
    done = []
    for source, copy in copies:
        done.append((copy, not copy.exists()))
        if done[-1][1]:
            write_atomic(copy, lambda tmp, source=source: shutil.copyfile(source, tmp))  # type: ignore[misc]
    return done


def voila_command(
    notebook: str | Path = "", *, port: int | None = None, browser: bool = True
) -> tuple[list[str], dict[str, str]]:
    """The command that serves the triage app with Voila, and the variables it adds to the
    environment: the shipped triage template (or the ``notebook`` given, such as an edited copy)
    on 127.0.0.1, with the settings of :data:`VOILA_SETTINGS` (the Content-Security-Policy, the
    page template :data:`VOILA_TEMPLATE`, which names no other host, and a kernel started ahead of
    the page), from any folder. The current folder is the project (:data:`~workbench.config.PROJECT_VARIABLE`):
    the annotation store is its ``reports/annotations.sqlite`` unless the template names another,
    although Voila runs the kernel in the notebook's folder.

    Raises
    ------
    UsageError
        When the notebook is not found, or the page template is not installed.
    InputError
        When its parameters cell is not one the runner reads.

    Examples
    --------
    >>> argv, env = voila_command(port=8866, browser=False)
    >>> argv[1:3], argv[3].endswith("03-triage.ipynb"), argv[-2:]
    (['-m', 'voila'], True, ['--port=8866', '--no-browser'])
    >>> list(env)
    ['WORKBENCH_PROJECT']
    """
    path = template_path(str(notebook).strip() or TRIAGE_TEMPLATE)
    check_parameters_cell(path)
    check_voila_template()
    argv = [sys.executable, "-m", "voila", str(path.absolute()), f"--Voila.config_file_paths={VOILA_SETTINGS.parent}"]
    argv += [f"--port={port}"] if port is not None else []
    argv += [] if browser else ["--no-browser"]
    return argv, {PROJECT_VARIABLE: str(Path.cwd())}


def check_voila_template() -> None:
    """Refuse, in one line, to serve the triage when Voila would not find the page template
    :data:`VOILA_TEMPLATE` among its templates (Voila would stop with a traceback).

    Raises
    ------
    UsageError
        Saying how to install it.
    """
    from jupyter_core.paths import jupyter_path

    if not any(
        (Path(folder) / "index.html.j2").is_file() for folder in jupyter_path("voila", "templates", VOILA_TEMPLATE)
    ):
        raise UsageError(
            f"Voila's page template '{VOILA_TEMPLATE}' is not installed in this environment. Fix: run 'make setup' "
            "in the checkout, or install the workbench wheel (pip install workbench-*.whl)"
        )
