"""Run notebook templates with papermill and render them to offline HTML without code.

The HTML page is our own rather than nbconvert's templates: those load require.js,
MathJax and mermaid from CDNs and drop plotly's output type. The page is the template
``workbench/views/templates/page.html.j2``, rendered by the package's one autoescaping
renderer (:mod:`workbench.views.html`) with its CSS and scripts from ``workbench/views/static``
inlined. plotly.js is embedded once in the page, figures are drawn from their JSON (kept in
``application/json`` script tags, so no output can close a script), text outputs are escaped,
and code cells are left out.

A template that declares ``graded_dir`` reads its run from the graded folder the runner
writes before executing it (:func:`workbench.pipeline.run.open_or_grade`): the runner grades
each input set once (a batch shares the folder of an input set between its reports) and reads
the figures for the manifest and the verdicts from that folder, which it wrote itself.

Tables marked sortable (:func:`workbench.views.tables.html_table` with ``sortable=True``) get a
search box and click-to-sort headers from one script at the end of the page; no markup
carries an event-handler attribute and no script uses ``eval``. The page declares a
Content-Security-Policy that allows only its own inline scripts (by their SHA-256 hash) and
no network at all, so markup that slipped into an output could neither run nor fetch.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from workbench.analysis import formats
from workbench.analysis.changes import build_manifest, compare_runs, read_verdicts, stable_identity
from workbench.analysis.glossary import glossary
from workbench.analysis.metrics import MANIFEST_METRICS, TURN_EXECUTION_ACCURACY, counted_item, for_items
from workbench.config import project_root
from workbench.errors import UsageError, WorkbenchError
from workbench.grading import patterns
from workbench.io.atomic import parquet_writer, write_atomic, write_atomic_set
from workbench.io.paths import check_output_folder, inside, safe_name
from workbench.pipeline.graded import graded_paths
from workbench.pipeline.ledger import append_graded
from workbench.pipeline.reuse import GradeReuse
from workbench.pipeline.run import grade_run
from workbench.report.index import index_folder, shown_paths, write_index
from workbench.report.inputs import from_caller as _from_caller
from workbench.report.inputs import input_set, notes_html, report_name
from workbench.report.kernels import execute as _execute
from workbench.report.kernels import read_ahead
from workbench.report.sections import report_title
from workbench.report.templates import (
    DEFAULT_TEMPLATE,
    INTERACTIVE_TEMPLATES,
    check_batch_template,
    template_parameters,
    template_path,
)
from workbench.views.changes import changes_html, manifest_html
from workbench.views.html import PAGE_MIME, Markup, macro, render, script_json, static_text
from workbench.views.turn_detail import once_per_page

__all__ = [
    "ReportResult",
    "GradedSet",
    "INTERACTIVE_TEMPLATES",
    "check_batch_template",
    "template_path",
    "template_parameters",
    "report_name",
    "run_template",
    "render_html",
]


@dataclass(frozen=True)
class ReportResult:
    """Where a report run wrote its files, and what changed since the previous run.

    ``manifest`` is the run manifest (``<name>.manifest.json``); ``changes`` a one-line
    summary of the changes since the previous run of the template in the same folder, or
    ``None`` when there was none; ``notes`` the lines grading its inputs had to say about how
    they were read (:attr:`workbench.pipeline.run.Run.notes`), when they were graded here;
    ``index`` the index page rewritten with it (``reports/index.html``).
    """

    notebook: Path
    html: Path
    manifest: Path | None = None
    changes: str | None = None
    notes: tuple[str, ...] = ()
    index: Path | None = None


def run_template(
    template: str = DEFAULT_TEMPLATE,
    *,
    parameters: dict[str, Any] | None = None,
    out_dir: str | Path | None = None,
    progress: bool = False,
    graded_sets: dict[str, GradedSet] | None = None,
    before: float | None = None,
    reuse: GradeReuse | None = None,
) -> ReportResult:
    """Execute a template with papermill and write the executed notebook and its HTML.

    A template that declares ``graded_dir`` gets its inputs graded here first, into
    ``<out_dir>/<name>.graded/`` (or the ``graded_dir`` given), and opens that folder instead
    of grading; the manifest's figures and the verdicts are read from it. A batch runs its three
    steps apart (:func:`workbench.report.batch.run_batch`).

    Parameters
    ----------
    template
        A shipped template's name or the path of a notebook
        (:func:`~workbench.report.templates.template_path`).
    parameters
        Values for the template's ``parameters`` cell; unknown names are refused.
    out_dir
        Where to write; default ``reports/<template>/``. When it holds an earlier run of the
        template, the report opens with what changed since (metric deltas, turns that newly
        fail or pass). A template that declares ``page_folder`` (05-history, whose links start
        from its page's folder) is given this folder there, unless ``parameters`` name one.
    progress
        Show papermill's progress bar (on standard error).
    graded_sets
        The graded folder of each input set graded so far and its notes (:class:`GradedSet`),
        shared by the reports of a batch (filled in here): an input set is graded once, and a
        later report of it gets a copy of that folder. The notes of grading are shown on every
        page of the set (after the run's overview) and said once (:attr:`ReportResult.notes`).
    before
        Only a run written before this ``time.time()`` (default: now) is earlier (a batch's start).
    reuse
        The grades of the inputs a batch graded so far, by content (:mod:`workbench.pipeline.reuse`).

    Raises
    ------
    UsageError
        For an unknown template or parameter (the message lists the known ones).
    ReportError
        When a cell fails, or the kernel dies: the message names the cell and the error, and the
        partly executed notebook is kept.
    """
    plan = plan_report(template, parameters=parameters, out_dir=out_dir)
    plan = plan if before is None else replace(plan, before=before)
    grading = grade_report(plan, {} if graded_sets is None else graded_sets, reuse)
    return finish_report(plan, grading, progress=progress)


@dataclass(frozen=True)
class ReportPlan:
    """A report checked and named before it runs: template, declared (``known``) and given
    parameters, folder, files' name (``slug``), graded folder, ``before`` (an earlier run's limit)."""

    path: Path
    params: dict[str, Any]
    known: dict[str, dict[str, Any]]
    out: Path
    slug: str
    graded: Path
    before: float


@dataclass(frozen=True)
class Grading:
    """What grading a report's inputs gave: its graded folder written (else the template grades
    itself), the notes to say, the notes its page shows."""

    written: bool = False
    notes: tuple[str, ...] = ()
    shown_notes: tuple[str, ...] = ()


def plan_report(
    template: str = DEFAULT_TEMPLATE, *, parameters: dict[str, Any] | None = None, out_dir: str | Path | None = None
) -> ReportPlan:
    """Check a report's template and parameters, make its folder and name its files.

    Raises
    ------
    UsageError
        For an unknown template or parameter (the message lists the known ones).
    """
    check_batch_template(template)
    path = template_path(template)
    params = _from_caller(parameters or {})
    known = template_parameters(path)
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise UsageError(
            f"template {path.stem} has no parameter {', '.join(unknown)}. Fix: use one of {', '.join(known)}"
        )
    out = (
        check_output_folder(out_dir).absolute() if out_dir else inside(project_root() / "reports", safe_name(path.stem))
    )
    out.mkdir(parents=True, exist_ok=True)
    slug = report_name(params)
    graded = Path(params["graded_dir"]) if params.get("graded_dir") else inside(out, f"{slug}.graded")
    return ReportPlan(path=path, params=params, known=known, out=out, slug=slug, graded=graded, before=time.time())


def grade_report(plan: ReportPlan, graded_sets: dict[str, GradedSet], reuse: GradeReuse | None = None) -> Grading:
    """Write the plan's graded folder when its template declares ``graded_dir`` (once per input
    set: ``graded_sets`` is filled in, :func:`_grade_once`, which may raise ``OSError``), the
    grades of inputs graded before taken from ``reuse`` (a batch's)."""
    if "graded_dir" not in plan.known:
        return Grading()
    return Grading(*_grade_once(plan.known, plan.params, plan.graded, graded_sets, reuse))


def finish_report(plan: ReportPlan, grading: Grading, *, progress: bool = False, index: bool = True) -> ReportResult:
    """Execute the plan's template on its graded folder, then write its notebook, page, verdicts
    and manifest (each atomically), its ledger rows and, with ``index``, the index page.

    Raises
    ------
    ReportError
        When a cell fails, or the kernel dies: the message names the cell and the error, and the
        partly executed notebook is kept.
    """
    path, params, out, slug, graded = plan.path, plan.params, plan.out, plan.slug, plan.graded
    written, notes, shown_notes = grading.written, grading.notes, grading.shown_notes
    notebook_out = inside(out, f"{slug}.ipynb")
    html_out = inside(out, f"{slug}.html")
    run_params = params
    if "graded_dir" in plan.known:
        # not graded here (bad inputs): the template grades itself, and its cell names the error
        run_params = {**params, "graded_dir": str(graded) if written else ""}
    if "page_folder" in plan.known and not str(params.get("page_folder") or "").strip():
        # a page whose links start from its own folder (05-history) is told its --out, unless the caller named one
        run_params = {**run_params, "page_folder": str(out)}
    with tempfile.TemporaryDirectory(prefix="workbench-ipython-") as ipython_dir:
        executed = _execute(path, notebook_out, run_params, progress=progress, ipython_dir=ipython_dir)

    # the figures come from the graded folder written above, never from what the template wrote
    files = graded_paths(graded)
    summary = json.loads(files["summary"].read_text(encoding="utf-8")) if written else None
    previous = _previous_run(out, path.stem, slug, summary or {}, plan.before)
    manifest = build_manifest(template=path.stem, parameters=params, summary=summary, html_file=html_out.name)
    verdicts = read_verdicts(files["turns"]) if written else None
    changes = None
    if previous is not None and verdicts is not None:
        old_manifest, old_verdicts = previous
        changes = compare_runs(old_manifest, old_verdicts, manifest, verdicts)
    if executed is None:  # a stand-in for papermill that only wrote the notebook
        import nbformat

        executed = nbformat.read(str(notebook_out), as_version=4)
    benchmark = str((summary or {}).get("dataset", {}).get("benchmark", ""))
    item = counted_item(benchmark, verdicts["turn"]) if verdicts is not None else "turn"
    opening = changes_html(changes, item) if verdicts is not None else ""
    closing = manifest_html(shown_paths(manifest.to_dict(), out))
    page = render_html(
        executed,
        title=report_title(benchmark, path.stem),
        opening=opening,
        closing=closing,
        terms=[(entry.term, entry.definition) for entry in glossary(benchmark, item)],
        notes=notes_html(shown_notes, [e.get("path", "") for e in (summary or {}).get("predictions", [])]),
    )
    write_atomic(html_out, lambda p: p.write_text(page, encoding="utf-8"))
    manifest_out = inside(out, f"{slug}.manifest.json")
    if verdicts is not None:
        write_atomic(inside(out, f"{slug}.verdicts.parquet"), parquet_writer(verdicts))
    text = manifest.to_json()
    write_atomic(manifest_out, lambda p: p.write_text(text, encoding="utf-8"))
    if written:  # a row per system in the folder's run ledger (workbench check, 05-history)
        append_graded(out, graded, source="report", template=path.stem, report=html_out.name, parameters=params)
    line = None
    if changes is not None:
        accuracy = next(spec for spec in for_items(MANIFEST_METRICS, item) if spec.key == TURN_EXECUTION_ACCURACY.key)
        moved = ", ".join(
            f"{system} {formats.points(delta)}"
            for system, metric, _, _, delta in changes.metrics.iter_rows()
            if metric == accuracy.key and delta is not None
        )
        failing = changes.newly_failing.height
        line = (
            f"{accuracy.label} {moved or 'n/a'}; {failing} {item}{'' if failing == 1 else 's'} newly failing, "
            f"{changes.newly_passing.height} newly passing (against {changes.previous})"
        )
        if changes.unmatched:
            line += f"; {changes.unmatched}"
    index_page = write_index(index_folder(out, path.stem)) if index else None
    return ReportResult(
        notebook=notebook_out, html=html_out, manifest=manifest_out, changes=line, notes=notes, index=index_page
    )


def _copier(source: Path) -> Callable[[Path], None]:
    return lambda target: shutil.copyfile(source, target)


@dataclass(frozen=True)
class GradedSet:
    """An input set a batch graded: its graded folder, and the notes grading had to say about
    how its inputs were read (:attr:`workbench.pipeline.run.Run.notes`), for every page of it."""

    folder: Path
    notes: tuple[str, ...] = ()


def _grade_once(
    known: dict[str, dict[str, Any]],
    params: dict[str, Any],
    graded: Path,
    done: dict[str, GradedSet],
    reuse: GradeReuse | None = None,
) -> tuple[bool, tuple[str, ...], tuple[str, ...]]:
    """Write the graded folder of the template's inputs into ``graded``: a copy of the folder
    in ``done`` when that input set was graded already, else graded here (and recorded in
    ``done``). Graded in the project root, where the template's kernel runs, so the paths
    read and recorded are the template's; warnings are left to the template, which loads
    the inputs again. With the run's notes twice: to say (when graded here; a copy says none,
    they were said with the first) and to show on the page (always). ``False`` when the inputs
    cannot be graded: the template then grades itself, and the cell that fails names the error
    as before.

    Raises
    ------
    OSError
        When the folder cannot be written.
    """
    config = input_set(known, params)
    if config is None:
        return False, (), ()
    with contextlib.chdir(project_root()):  # the kernel of the report reads them too: it starts now
        files = [
            (str(Path(path).resolve()), system)
            for path, system, cmap in zip(config.predictions, config.systems, config.column_maps, strict=True)
            if cmap is None
        ]
    read_ahead(files)
    key = repr(config)
    earlier = done.get(key)
    if earlier is not None and graded_paths(earlier.folder)["summary"].is_file():
        if earlier.folder.resolve() != graded.resolve():
            pairs = zip(graded_paths(graded).values(), graded_paths(earlier.folder).values(), strict=True)
            write_atomic_set([(target, _copier(source)) for target, source in pairs])
        return True, (), earlier.notes
    with contextlib.chdir(project_root()):  # graded and written there: the run's paths are the project root's
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                run = grade_run(config) if reuse is None else grade_run(config, reuse=reuse)
        except (WorkbenchError, OSError):
            return False, (), ()
        run.write(graded)  # an OSError here is the caller's: the folder cannot be written
    done[key] = GradedSet(graded, tuple(run.notes))
    return True, run.notes, run.notes


def _previous_run(
    out: Path, template: str, slug: str, summary: dict[str, Any], before: float
) -> tuple[Any, Any] | None:
    """The previous run of this report in ``out`` (written before ``before``) and its verdicts: the
    newest manifest of ``template`` written under the same name (``slug``: the same parameters), else the newest
    on the same dataset (its sha256: a nightly job's new predictions), else, for gold carried in
    the outputs (a new file every night), the newest on the same benchmark with a system of the
    same stable identity (:func:`~workbench.analysis.changes.stable_identity`); never another
    system's report that shares the folder."""
    import polars as pl

    dataset = summary.get("dataset") or {}
    systems = {stable_identity(name) for name in summary.get("systems") or {}}
    found = []
    for candidate in (c for c in out.glob("*.manifest.json") if c.stat().st_mtime < before):  # not a batch-mate's
        try:
            manifest = json.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(manifest, dict) or manifest.get("template") != template:
            continue
        then = (manifest.get("inputs") or {}).get("dataset") or {}
        same_systems = bool(systems & {stable_identity(name) for name in manifest.get("metrics") or {}})
        kinship = (
            3
            if candidate.name == f"{slug}.manifest.json"
            else 2
            if dataset.get("sha256") and then.get("sha256") == dataset.get("sha256")
            else 1
            if dataset.get("benchmark") and then.get("benchmark") == dataset.get("benchmark") and same_systems
            else 0
        )
        if kinship:
            found.append((kinship, str(manifest.get("created_at", "")), candidate.stat().st_mtime, candidate, manifest))
    if not found:
        return None
    *_, path, manifest = max(found, key=lambda item: item[:3])
    verdicts = path.with_name(path.name.replace(".manifest.json", ".verdicts.parquet"))
    return manifest, (pl.read_parquet(verdicts) if verdicts.exists() else None)


# --------------------------------------------------------------------------- HTML
#: The plugins of ``mistune.html`` (tables, strikethrough, footnotes).
_MARKDOWN_PLUGINS = ("strikethrough", "footnotes", "table")


def _markdown(source: str, *, escape: bool = False) -> Markup:
    """Markdown as HTML; with ``escape`` raw HTML in it shows as text (for outputs, whose
    markdown may carry data; the templates' own markdown cells may use HTML)."""
    import mistune

    return Markup(str(mistune.markdown(source, escape=escape, plugins=_MARKDOWN_PLUGINS)))


#: The MIME type of a plotly figure's output.
_PLOTLY = "application/vnd.plotly.v1+json"

#: An output as the page's ``content`` macro takes it: ``(kind, value, figure id)``.
_Block = tuple[str, Any, str]


def _output_block(output: Any, counter: list[int]) -> _Block | None:
    """What the page shows of one output (None for nothing: standard error, unknown types)."""
    kind = output.get("output_type")
    if kind == "stream":
        if output.get("name") == "stderr":
            return None
        return ("text", patterns.ANSI_ESCAPE.sub("", output.get("text", "")), "")
    if kind == "error":
        text = f"{output.get('ename', '')}: {output.get('evalue', '')}"
        return ("error", patterns.ANSI_ESCAPE.sub("", text), "")
    data = output.get("data", {})
    if _PLOTLY in data:
        counter[0] += 1
        spec = data[_PLOTLY]
        figure = {"data": spec.get("data", []), "layout": spec.get("layout", {})}
        # keys sorted, as in the notebook file (nbformat writes them sorted): the same page, whether the
        # notebook comes from papermill or from the file
        text = json.dumps(figure, separators=(",", ":"), sort_keys=True)
        return ("figure", script_json(text), f"wb-fig-{counter[0]}")
    if PAGE_MIME in data:
        return ("html", Markup(data[PAGE_MIME]), "")
    if "text/html" in data:
        return ("html", Markup(data["text/html"]), "")
    if "text/markdown" in data:
        return ("markup", _markdown(data["text/markdown"], escape=True), "")
    if "text/plain" in data:
        return ("text", data["text/plain"], "")
    return None


#: The trace types of plotly.js's cartesian bundle (``views/static/plotly-cartesian.min.js``,
#: the npm package plotly.js-cartesian-dist-min of the same version as plotly's own plotly.js).
CARTESIAN_TRACES = frozenset(
    {"bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour", "image", "pie"}
    | {"scatter", "scatterternary", "violin"}
)


#: The cartesian bundle's file, whose first lines name its version (``plotly.js (cartesian - minified) v4.1.1``).
CARTESIAN_BUNDLE = "plotly-cartesian.min.js"


def _plotly_js(figures: list[dict[str, Any]]) -> str:
    """The plotly.js a page inlines: the cartesian bundle (1.5 MB) when it draws every trace of
    ``figures`` and is the version plotly wrote the figures for, else plotly's full bundle (4.8 MB)."""
    from plotly.offline import get_plotlyjs, get_plotlyjs_version

    kinds = {str(trace.get("type") or "scatter") for figure in figures for trace in figure.get("data", [])}
    bundle = static_text(CARTESIAN_BUNDLE)
    if kinds <= CARTESIAN_TRACES and f" v{get_plotlyjs_version()}\n" in bundle[:200]:
        return bundle
    return get_plotlyjs()


def _script_hash(source: str) -> str:
    """The SHA-256 digest of an inline script (base64), as the page's CSP allows it."""
    return base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii")


#: The tag of the template cell whose output is the page's heading: the opening (the changes
#: since the previous run) follows it. Without one, the opening follows the first level-1
#: heading of a markdown cell, else it opens the page.
TITLE_TAG = "title"


#: The classes of the tables of headline figures, in order of preference: the headline table
#: (:func:`workbench.views.tables.headline`, :func:`~workbench.views.tables.systems_table`), else
#: the accuracy by slice, whose first row is the overall figure (the error-slices page). The
#: opening follows the first such table of the page.
HEADLINE_CLASSES = ("wb-headline", "wb-slices")


def _title_cell(cells: list[Any]) -> int | None:
    """The index of the cell the opening follows, or ``None``: the first cell after the page's
    heading (see :data:`TITLE_TAG`) whose output is a table of headline figures
    (:data:`HEADLINE_CLASSES`), so a reader sees the headline figures first and then what
    changed; else the heading's cell."""
    title = None
    for i, cell in enumerate(cells):
        if TITLE_TAG in cell.get("metadata", {}).get("tags", []):
            title = i
            break
    if title is None:
        for i, cell in enumerate(cells):
            if cell.cell_type == "markdown" and cell.source.lstrip().startswith("# "):
                title = i
                break
    for css_class in HEADLINE_CLASSES:
        for i, cell in enumerate(cells[title or 0 :], start=title or 0):
            for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
                data = output.get("data", {})
                if any(f"wb-table {css_class}" in str(data.get(kind, "")) for kind in (PAGE_MIME, "text/html")):
                    return i
    return title


#: The class of the run's overview (:func:`workbench.views.tables.run_overview`): the notes of
#: grading follow it.
OVERVIEW_CLASS = "wb-overview"


def _overview_cell(cells: list[Any]) -> int | None:
    """The index of the cell whose output is the run's overview (:data:`OVERVIEW_CLASS`), else of
    the page's heading (:func:`_title_cell`'s), else ``None``."""
    for i, cell in enumerate(cells):
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            data = output.get("data", {})
            if any(f'class="{OVERVIEW_CLASS}"' in str(data.get(kind, "")) for kind in (PAGE_MIME, "text/html")):
                return i
    for i, cell in enumerate(cells):
        if TITLE_TAG in cell.get("metadata", {}).get("tags", []):
            return i
    return None


def render_html(
    notebook: Any,
    *,
    title: str,
    opening: str = "",
    closing: str = "",
    terms: list[tuple[str, str]] | None = None,
    notes: str = "",
) -> str:
    """Render an executed notebook as one self-contained HTML page without code cells.

    The page is ``templates/page.html.j2`` and its cells ``notebook.html.j2``; its stylesheet
    and scripts are the package's ``views/static`` files. Its Content-Security-Policy allows no
    network, no plugins, styles inline only, images as data URLs, and only the page's own inline
    scripts (by their SHA-256 digests).

    Parameters
    ----------
    notebook
        An executed notebook (``nbformat`` node); cells tagged ``parameters`` or
        ``injected-parameters`` are left out with every code cell's source.
    title
        The page title (escaped).
    opening, closing
        Markup (trusted, not escaped): the changes since the previous run, shown after the
        headline figures (:data:`HEADLINE_CLASSES`; else after the page's heading, the outputs of the
        cell tagged :data:`TITLE_TAG`), and the run manifest, shown last.
    terms
        The glossary, ``(term, definition)`` pairs (escaped), shown before the manifest.
    notes
        Markup (trusted): the notes of grading (:func:`~workbench.report.inputs.notes_html`),
        shown after the run's overview (:data:`OVERVIEW_CLASS`), else after the page's heading.

    Returns
    -------
    str
        The page: plotly.js inlined once when there are figures, the search-and-sort script
        when there are sortable tables, and a Content-Security-Policy allowing only those.

    Examples
    --------
    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Results"), nbformat.v4.new_code_cell()])
    >>> nb.cells[1].outputs = [nbformat.v4.new_output("display_data", data={"text/markdown": "*<b>*"})]
    >>> page = render_html(nb, title="a <title>")
    >>> "<h1>Results</h1>" in page and "<em>&lt;b&gt;</em>" in page and "<title>a &lt;title&gt;</title>" in page
    True
    >>> "<script" in page, "script-src 'none'" in page
    (False, True)
    """
    counter = [0]
    blocks: list[_Block | None] = []
    after = _title_cell(list(notebook.cells))
    overview = _overview_cell(list(notebook.cells))
    if overview is None and notes:
        blocks.append(("html", Markup(notes), ""))
    if after is None and opening:
        blocks.append(("opening", Markup(opening), ""))
    for i, cell in enumerate(notebook.cells):
        tags = cell.get("metadata", {}).get("tags", [])
        if "parameters" in tags or "injected-parameters" in tags:
            continue
        if cell.cell_type == "markdown":
            blocks.append(("markdown", _markdown(cell.source), ""))
        elif cell.cell_type == "code":
            blocks.extend(_output_block(o, counter) for o in cell.get("outputs", []))
        if i == overview and notes:
            blocks.append(("html", Markup(notes), ""))
        if i == after and opening:
            blocks.append(("opening", Markup(opening), ""))
    content = Markup(once_per_page(macro("notebook.html.j2", "content", [b for b in blocks if b is not None])))
    head_scripts: list[str] = []
    tail_scripts: list[str] = []
    if counter[0]:
        figures = [
            output["data"][_PLOTLY]
            for cell in notebook.cells
            if cell.cell_type == "code"
            for output in cell.get("outputs", [])
            if _PLOTLY in output.get("data", {})
        ]
        head_scripts = [static_text("plotly_config.js"), _plotly_js(figures)]
        tail_scripts.append(static_text("plots.js"))
    if "data-wb-sortable" in content:
        tail_scripts.append(static_text("sortable.js"))
    page = render(
        "page.html.j2",
        title=title,
        script_hashes=[_script_hash(s) for s in head_scripts + tail_scripts],
        css=[Markup(static_text("report.css")), Markup(static_text("page.css"))],
        head_scripts=[Markup(s) for s in head_scripts],
        tail_scripts=[Markup(s) for s in tail_scripts],
        content=content,
        terms=terms or [],
        closing=Markup(closing),
    )
    return str(page)
