"""How ``workbench report`` reads a template's inputs: as ``workbench grade`` reads its own.

A report's inputs go through :func:`workbench.config.resolve` as ``grade``'s do, so the gold is
chosen by the one rule written there (a file that carries its gold needs no ``--dataset``), the
systems are named by :func:`workbench.config.system_names`, and ``benchmark`` decides the rules
of a plain table or of gold carried in the outputs, as ``grade --benchmark`` does.

- :func:`template_values`: the ``-p NAME=VALUE`` options, read as the types the template declares;
- :func:`from_caller`: relative input paths made absolute from the caller's folder (the kernel
  runs in the project root);
- :func:`template_config`: the run config the template resolves from its input parameters;
- :func:`report_name`: the name of a report's files, from its systems and a hash of its parameters;
- :func:`notes_html`: the notes grading had to say about how the inputs were read, for the page
  (the terminal prints the same lines).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from workbench.config import RunConfig, locate, project_root, resolve, split_list, system_names
from workbench.errors import UsageError, WorkbenchError

__all__ = [
    "INPUT_PARAMETERS",
    "from_caller",
    "template_config",
    "input_set",
    "report_name",
    "template_values",
    "notes_html",
]

#: Template parameters that name input files or folders, as one path or (``predictions``) a list;
#: relative ones are taken from the caller's current folder (see :func:`workbench.config.locate`):
#: 05-history's ``folder`` is the reports folder (or ledger) whose runs it shows.
_PATH_PARAMETERS = ("dataset", "predictions", "annotations", "store", "folder")
#: Template parameters that name an output folder: relative ones are in the caller's folder
#: (05-history's ``page_folder`` is where its page is written, as ``--out`` is).
_OUTPUT_PARAMETERS = ("graded_dir", "page_folder")
#: The template parameters that say what the template grades (as :func:`workbench.config.resolve` takes them).
INPUT_PARAMETERS = ("dataset", "predictions", "systems", "column_map", "benchmark")


def from_caller(parameters: dict[str, Any]) -> dict[str, Any]:
    """``parameters`` with every relative input path made absolute from the caller's current
    folder (else the project root, for the bundled data), and every relative output folder
    from the caller's folder: the kernel runs in the project root. A list stays a list (its
    items are never split); a ``;``-separated ``predictions`` text stays a text, each of its
    parts made absolute."""
    out = dict(parameters)
    for key in _OUTPUT_PARAMETERS:
        if isinstance(out.get(key), str | Path) and str(out[key]).strip():
            out[key] = str(Path(out[key]).expanduser().absolute())
    for key in _PATH_PARAMETERS:
        value = out.get(key)
        if isinstance(value, list | tuple):
            out[key] = [str(locate(str(v)).absolute()) for v in value]
        elif key == "predictions" and isinstance(value, str) and value.strip():
            out[key] = ";".join(str(locate(v).absolute()) for v in split_list(value))
        elif isinstance(value, str | Path) and str(value).strip() and str(value).strip().lower() != "none":
            out[key] = str(locate(value).absolute())
    return out


def template_config(known: dict[str, dict[str, Any]], params: dict[str, Any]) -> RunConfig | None:
    """The run config the template resolves from its input parameters (given, else its
    defaults: :data:`INPUT_PARAMETERS` it declares), as in its kernel, whose folder is the
    project root; ``None`` when a default is not a plain value.

    Raises
    ------
    UsageError
        As :func:`workbench.config.resolve`.
    """
    values: dict[str, Any] = {}
    for key in INPUT_PARAMETERS:
        if key in params:
            values[key] = params[key]
        elif key in known:
            try:
                values[key] = ast.literal_eval(known[key]["default"])
            except (ValueError, SyntaxError):
                return None
    with contextlib.chdir(project_root()):
        return resolve(**values)


def input_set(known: dict[str, dict[str, Any]], params: dict[str, Any]) -> RunConfig | None:
    """The input set a report grades (:func:`template_config`), ``None`` when it cannot be resolved
    here (the template then grades itself, and its cell names the error). Reports whose sets are
    equal (``repr``: the key of a batch's graded sets) share one graded folder."""
    try:
        return template_config(known, params)
    except WorkbenchError:
        return None


# --------------------------------------------------------------------------- report names

#: The longest readable part of a report's name (its systems or files), before the hash.
_NAME_CHARS = 64


def _from_project(value: Any, root: Path) -> Any:
    """A parameter's value with every path inside the project ``root`` relative to it (POSIX
    separators): the same in every checkout. Paths outside the project stay as given."""
    if isinstance(value, list | tuple):
        return [_from_project(v, root) for v in value]
    if not isinstance(value, str | Path) or not str(value).strip():
        return value
    parts = split_list(str(value)) if isinstance(value, str) and ";" in value else [str(value)]
    shown = []
    for part in parts:
        path = Path(part)
        if path.is_absolute():
            try:
                part = path.resolve().relative_to(root.resolve()).as_posix()
            except ValueError:
                pass
        shown.append(part)
    return ";".join(shown)


def _readable(parameters: dict[str, Any], root: Path) -> str:
    """The readable part of a report's name: its systems, else its prediction files' systems
    (:func:`workbench.config.system_names`, as grading names them; a path relative to the
    project ``root``), else its dataset's stem."""

    def listed(key: str) -> list[str]:
        value = parameters.get(key)
        if isinstance(value, list | tuple):
            return [str(v) for v in value if str(v).strip()]
        return split_list(value) if isinstance(value, str) else []

    names = listed("systems") or list(system_names([root / p for p in listed("predictions")]))
    if not names and listed("dataset") and listed("dataset")[0].lower() != "none":
        names = [Path(listed("dataset")[0]).stem]
    slug = re.sub(r"[^a-z0-9]+", "-", "-vs-".join(names).lower()).strip("-")
    if len(slug) > _NAME_CHARS:
        slug = slug[:_NAME_CHARS].rsplit("-", 1)[0]
    return slug or "bundled"


def report_name(parameters: dict[str, Any], root: Path | None = None) -> str:
    """The name of a report's files (``<name>.html``, ``.ipynb``, ``.manifest.json``...):
    ``bundled`` for a template's default inputs, else a slug of its systems (or its prediction
    files, or its dataset) and a short hash of its parameters, paths taken relative to the
    project ``root`` (default :func:`workbench.config.project_root`). Two checkouts in different
    folders give the same names for the same batch.

    Examples
    --------
    >>> root = Path("/srv/a")
    >>> report_name({})
    'bundled'
    >>> name = report_name({"predictions": ["/srv/a/data/tora-70b.jsonl"], "dataset": "none"}, root)
    >>> name.startswith("tora-70b-"), name == report_name({"predictions": ["/home/b/data/tora-70b.jsonl"],
    ...                                                     "dataset": "none"}, Path("/home/b"))
    (True, True)
    >>> report_name({"systems": ["rho-math-7b", "rho-math-7b-interpreter"]}, root)[:39]
    'rho-math-7b-vs-rho-math-7b-interpreter-'
    >>> report_name({"predictions": ["/srv/a/out/llama-7b/samples_gsm8k_2025-09-09T13-42-42.jsonl"]}, root)[:9]
    'llama-7b-'
    """
    root = project_root() if root is None else root
    given = {k: _from_project(v, root) for k, v in sorted(parameters.items()) if v not in ("", None)}
    if not given:
        return "bundled"
    digest = hashlib.sha256(json.dumps(given, sort_keys=True, default=str).encode()).hexdigest()[:8]
    return f"{_readable(given, root)}-{digest}"


# --------------------------------------------------------------------------- -p NAME=VALUE

#: What a ``-p`` value must look like, per declared type.
_TYPE_WORDS = {"int": "a whole number", "float": "a number", "bool": "true or false"}
_TRUE, _FALSE = {"true", "yes", "1"}, {"false", "no", "0"}


def _papermill_value(text: str) -> Any:
    """A value as papermill's ``-p`` reads it when the parameter declares no type."""
    if text in ("True", "False"):
        return text == "True"
    if text == "None":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _typed_value(template: str, name: str, text: str, declared: str | None, default: str) -> Any:
    """``text`` read as the type the template declares for ``name`` (papermill's reading when none).

    Raises
    ------
    UsageError
        When the text is not of that type; the message shows the template's default as an example.
    """
    try:
        if declared == "int":
            return int(text)
        if declared == "float":
            return float(text)
        if declared == "bool":
            if text.strip().lower() in _TRUE | _FALSE:
                return text.strip().lower() in _TRUE
            raise ValueError(text)
    except ValueError:
        raise UsageError(
            f"parameter {name} of {template} is {_TYPE_WORDS.get(str(declared), 'a value')} ({declared}), got {text!r}. "
            f"Fix: write e.g. -p {name}={default}"
        ) from None
    if declared == "str":
        return text
    return _papermill_value(text)


def template_values(template: str, given: Sequence[str]) -> dict[str, Any]:
    """The ``-p NAME=VALUE`` options as the template's parameters, each checked against the
    template's ``parameters`` cell (name, then declared type).

    Raises
    ------
    UsageError
        For a malformed option, a name the template does not declare (naming those it
        does), a name given twice, or a value that is not of the declared type.
    """
    if not given:
        return {}
    from workbench.report.templates import template_parameters, template_path

    path = template_path(template)
    known = template_parameters(path)
    values: dict[str, Any] = {}
    for item in given:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UsageError(f"-p {item!r} is not NAME=VALUE. Fix: write e.g. -p n_boot=200")
        if name not in known:
            raise UsageError(f"template {path.stem} has no parameter {name!r}. Fix: use one of {', '.join(known)}")
        if name in values:
            raise UsageError(f"-p {name} was given twice. Fix: give each parameter once")
        spec = known[name]
        values[name] = _typed_value(path.stem, name, text, spec.get("inferred_type_name"), str(spec.get("default")))
    return values


# --------------------------------------------------------------------------- notes on the page


def notes_html(notes: Sequence[str], files: Sequence[str | Path], root: Path | None = None) -> str:
    """The notes of grading (:attr:`workbench.pipeline.run.Run.notes`: a file read as
    single-turn, gold taken from the outputs) as the page shows them, one paragraph each,
    escaped; each input path of ``files`` in them shown relative to the project ``root`` (its
    name when outside it), as the page shows paths. ``""`` when there are none.

    Examples
    --------
    >>> notes_html(["no turn column in /p/data/a.jsonl: every row is turn 0 (single-turn)"], ["/p/data/a.jsonl"],
    ...            Path("/p"))
    '<p class="wb-note">Note on grading: no turn column in data/a.jsonl: every row is turn 0 (single-turn)</p>'
    >>> notes_html([], [])
    ''
    """
    from workbench.views.html import macro

    root = project_root() if root is None else root
    shown = []
    for note in notes:
        for file in sorted({str(f) for f in files}, key=len, reverse=True):
            relative = _from_project(file, root)
            note = note.replace(file, relative if relative != file else Path(file).name)
        shown.append(str(macro("tables.html.j2", "note", f"Note on grading: {note}")))
    return "".join(shown)
