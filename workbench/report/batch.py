"""A batch of reports from one YAML file (``workbench report --config FILE.yaml``).

The file lists the reports to run; each entry names a template and its inputs, and may set
any other template parameter::

    out: reports/nightly            # default folder (each report gets <out>/<template>/)
    reports:
      - template: 01-overview
      - template: 04-compare-systems
        predictions:
          - data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6/2026-05-04T06-35-00Z/predictions.jsonl
          - data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6/2026-05-04T12-48-44Z/predictions.jsonl
        systems: [claude 06-35, claude 12-48]
        parameters: {n_boot: 500}

``parameters`` holds what ``workbench report -p NAME=VALUE`` sets on the command line, with
YAML's own types (``n_boot: 500`` is a number); ``run_template`` refuses a name the template does
not declare. ``predictions``, ``systems`` and ``column_map`` are lists (a single text is one item: a ``;``
in a name is part of the name). Relative paths are taken from the folder the command runs
in (then from the project root; a bundled ``data/...`` path from the checkout, else from the
package's demo set). Anchors and aliases (``&a``, ``*a``, ``<<: *a``) may be used, but a file
whose aliases would expand to more than :data:`MAX_YAML_VALUES` values (a "billion laughs" file)
or that refers to itself is refused before anything is expanded. Interactive templates (``03-triage``) are refused: they open in
JupyterLab or Voila.

:func:`run_batch` runs the reports: each input set graded once, in the batch's order (an input
that two sets share, such as a run and its comparison with another, graded once: the later set
takes its grades, :mod:`workbench.pipeline.reuse`), and the
templates executed two at a time (``workbench report --config FILE --jobs N``; default: the
cores this process may use, at most :data:`MAX_DEFAULT_JOBS`; ``--jobs 1`` runs them one after
another). Whatever runs at once, each report's outcome comes back in the batch's order, a
failing report does not stop the others, and every file is written atomically.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import InputError, UsageError, WorkbenchError
from workbench.io.jsonfiles import read_text
from workbench.io.paths import inside, safe_name
from workbench.report.templates import check_batch_template

if TYPE_CHECKING:
    from workbench.pipeline.reuse import GradeReuse
    from workbench.report.runner import Grading, ReportPlan, ReportResult

__all__ = ["ReportJob", "Outcome", "load_batch", "run_batch", "default_jobs", "MAX_YAML_VALUES", "MAX_DEFAULT_JOBS"]

#: Most values (scalars, lists and mappings, each alias counted as the copy it stands for)
#: a batch file may hold; a real one holds a few hundred.
MAX_YAML_VALUES = 100_000

_ENTRY_KEYS = {"template", "dataset", "predictions", "systems", "column_map", "out", "parameters"}
_LIST_KEYS = ("predictions", "systems", "column_map")


@dataclass(frozen=True)
class ReportJob:
    """One report of a batch: a template, its parameters and where to write."""

    template: str
    parameters: dict[str, Any] = field(default_factory=dict)
    out_dir: Path | None = None


def _as_list(value: Any, file: str, where: str, key: str) -> list[str]:
    """A list of texts (a single text is one item, never split)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise InputError(
        file,
        f"expected a string or a list of strings, got {type(value).__name__} {str(value)[:40]!r}",
        location=where,
        field=key,
        fix="write a list",
    )


def _expanded_size(root: Any, file: str) -> int:
    """How many values the composed YAML ``root`` node stands for once every alias is
    expanded, counted on the node graph (each node once, memoised) so a billion laughs
    costs a few thousand steps; refused past :data:`MAX_YAML_VALUES` or on a cycle."""
    import yaml

    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in sizes and not done:
            continue
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        else:
            children = []
        if done:
            open_nodes.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
            if sizes[id(node)] > MAX_YAML_VALUES:
                raise InputError(
                    file,
                    f"its aliases expand to more than {MAX_YAML_VALUES:,} values (a 'billion laughs' file?)",
                    location=f"line {node.start_mark.line + 1}",
                    fix="write the entries out, or use each alias ('*name') on plain values only",
                )
            continue
        for inner in (node, *children):
            if id(inner) in open_nodes:
                raise InputError(
                    file,
                    "an alias refers to a value that contains it",
                    location=f"line {inner.start_mark.line + 1}",
                    fix="use an alias ('*name') only after its anchor's value has ended",
                )
        open_nodes.add(id(node))
        stack.append((node, True))
        for child in children:
            if id(child) not in sizes:
                stack.append((child, False))
    return sizes[id(root)]


def _read_yaml(path: Path) -> Any:
    """Parse the batch file: UTF-8 (or UTF-16 with a byte-order mark); a key given twice in one
    mapping is an error naming it (YAML readers silently keep the last)."""
    import yaml

    class _UniqueKeyLoader(yaml.SafeLoader):
        def construct_document(self, node):  # type: ignore[no-untyped-def]
            _expanded_size(node, str(path))  # before anything is expanded
            return super().construct_document(node)

        def construct_mapping(self, node, deep=False):  # type: ignore[no-untyped-def]
            if isinstance(node, yaml.MappingNode):
                seen: set[Any] = set()
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":  # '<<: *anchor': its keys may be overridden
                        continue
                    key = self.construct_object(key_node, deep=True)
                    if isinstance(key, str) and key in seen:
                        raise InputError(
                            str(path),
                            f"key '{key}' appears twice in one mapping (a YAML reader would keep only the last)",
                            location=f"line {key_node.start_mark.line + 1}",
                            field=key,
                            fix="remove or rename one of the two",
                        )
                    seen.add(key)
            return super().construct_mapping(node, deep=deep)

    text = read_text(path)
    if not text.strip():
        raise InputError(str(path), "the file is empty", fix="write 'reports:' followed by '- template: 01-overview'")
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except RecursionError:
        raise InputError(
            str(path), "values are nested too deeply to read", fix="write the entries with a few levels of nesting"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(
            str(path),
            f"not valid YAML ({problem})" + ("; the file looks truncated" if "<stream end>" in str(problem) else ""),
            location=f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "",
            fix="check the indentation and quoting there",
        ) from None


def load_batch(path: str | Path) -> list[ReportJob]:
    """Read and check a batch file.

    Raises
    ------
    InputError
        When the file is not YAML, has no ``reports`` list, or an entry has an unknown key, no
        template, or a value of the wrong type; the message names the file, the entry and the
        field.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "b.yaml"
    >>> _ = f.write_text("out: r\\nreports:\\n  - template: 01-overview\\n    parameters: {max_failed_rows: 5}\\n")
    >>> [(j.template, j.parameters, j.out_dir.as_posix()) for j in load_batch(f)]
    [('01-overview', {'max_failed_rows': 5}, 'r/01-overview')]
    """
    path = Path(path)
    data = _read_yaml(path)
    if not isinstance(data, Mapping) or not isinstance(data.get("reports"), list) or not data["reports"]:
        raise InputError(
            str(path),
            "expected a mapping with a non-empty 'reports' list",
            fix="write 'reports:' followed by entries such as '- template: 01-overview'",
        )
    unknown_top = sorted(set(data) - {"out", "reports"})
    if unknown_top:
        raise InputError(str(path), f"unknown key {', '.join(unknown_top)}", fix="use 'out' and 'reports' only")
    if not isinstance(data.get("out"), str | None):
        raise InputError(
            str(path),
            f"expected a folder name, got {type(data['out']).__name__} {data['out']!r:.40}",
            field="out",
            fix="write 'out: reports/nightly'",
        )
    base = Path(data["out"]) if data.get("out") else None
    jobs = []
    for index, entry in enumerate(data["reports"], start=1):
        where = f"report {index}"
        if not isinstance(entry, Mapping) or "template" not in entry:
            raise InputError(
                str(path),
                "expected a mapping with a 'template' name",
                location=where,
                fix="write '- template: 01-overview'",
            )
        if not isinstance(entry["template"], str) or not entry["template"].strip():
            raise InputError(
                str(path),
                f"expected a template name, got {type(entry['template']).__name__} {entry['template']!r:.40}",
                location=where,
                field="template",
                fix="write '- template: 01-overview'",
            )
        try:
            check_batch_template(entry["template"])
        except UsageError as exc:
            raise InputError(str(path), str(exc).rstrip("."), location=where, field="template") from None
        unknown = sorted(set(entry) - _ENTRY_KEYS)
        if unknown:
            raise InputError(
                str(path),
                f"unknown key {', '.join(unknown)}",
                location=where,
                fix=f"use {', '.join(sorted(_ENTRY_KEYS))}; other template parameters go under 'parameters'",
            )
        if not isinstance(entry.get("parameters") or {}, Mapping):
            raise InputError(
                str(path),
                "expected a mapping",
                location=where,
                field="parameters",
                fix="write 'parameters: {name: value}'",
            )
        for key in ("dataset", "out"):
            if key in entry and not isinstance(entry[key], str | None):
                raise InputError(
                    str(path),
                    f"expected a text, got {type(entry[key]).__name__} {entry[key]!r:.40}",
                    location=where,
                    field=key,
                    fix=f"write {key} as one name or path",
                )
        params = dict(entry.get("parameters") or {})
        if entry.get("dataset"):
            params["dataset"] = str(entry["dataset"])
        for key in _LIST_KEYS:
            if entry.get(key):
                params[key] = _as_list(entry[key], str(path), where, key)
        # a template given as a path ("notebooks/01-overview.ipynb") names a folder under out:, never a path
        default = inside(base, safe_name(Path(entry["template"]).stem)) if base else None
        out = Path(entry["out"]) if entry.get("out") else default
        jobs.append(ReportJob(template=entry["template"], parameters=params, out_dir=out))
    return jobs


#: The most reports a batch runs at once by default: a report keeps about one core busy (its
#: kernel, then its page), and two at a time halve a batch on two cores.
MAX_DEFAULT_JOBS = 2


def default_jobs() -> int:
    """How many reports a batch runs at once by default: the cores this process may use, at
    most :data:`MAX_DEFAULT_JOBS`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_DEFAULT_JOBS, cores))


@dataclass(frozen=True)
class Outcome:
    """One report of a batch once done: its place in the batch (from 1), the job, and its
    result or the error that stopped it (a :class:`~workbench.errors.WorkbenchError` or an
    ``OSError``; a :class:`~workbench.errors.ReportError` when a cell failed)."""

    index: int
    job: ReportJob
    result: ReportResult | None = None
    error: Exception | None = None


def run_batch(
    jobs: list[ReportJob],
    *,
    workers: int | None = None,
    progress: bool = False,
    started: Callable[[int, ReportJob], None] | None = None,
) -> Iterator[Outcome]:
    """Run a batch's reports and yield their outcomes in the batch's order.

    Each input set is graded once (:func:`workbench.report.runner.grade_report`), in this
    process and in the batch's order; with ``workers`` above 1 (default :func:`default_jobs`)
    that many templates then run at once (each thread's reports in a kernel it keeps between
    them: :func:`~workbench.report.kernels.kept_kernel`), each report's as soon as its inputs are
    graded, and an outcome is yielded as soon as it and every report before it are done. The
    index pages are written once all are done. With ``workers`` 1 (or one report) each report
    runs here in turn, as :func:`~workbench.report.runner.run_template`, in one kept kernel; only
    then is ``progress`` (papermill's bar) shown. ``started(index, job)`` is called just before a
    report's outcome (one at a time: before it runs, then with its progress bar).

    A report that fails gives an :class:`Outcome` with its error and the others still run.
    """
    from workbench.pipeline.reuse import GradeReuse

    workers = default_jobs() if workers is None else workers
    if workers < 1:
        raise UsageError(f"--jobs {workers}: expected 1 or more reports at once. Fix: give --jobs 1 or 2")
    before = time.time()  # earlier runs are those written before the batch, whatever the order
    reuse = GradeReuse()  # an input two sets share is graded once (a run, then its comparison)
    if len(jobs) == 1:  # nothing to share its grades with (a 100k-turn run kept 64M characters)
        yield from _run_in_turn(jobs, progress, started, before, None)
        return
    if workers == 1:
        yield from _run_in_turn(jobs, progress, started, before, reuse)
        return
    yield from _run_at_once(jobs, min(workers, len(jobs)), started, before, reuse)


def _run_in_turn(
    jobs: list[ReportJob],
    progress: bool,
    started: Callable[[int, ReportJob], None] | None,
    before: float,
    reuse: GradeReuse | None,
) -> Iterator[Outcome]:
    """:func:`run_batch` one report after another, in one kernel kept between them
    (:func:`~workbench.report.kernels.kept_kernel`)."""
    from workbench.report import runner
    from workbench.report.kernels import kept_kernel

    graded_sets: dict[str, runner.GradedSet] = {}
    with kept_kernel():
        for index, job in enumerate(jobs, start=1):
            if started is not None:
                started(index, job)
            try:
                result = runner.run_template(
                    job.template,
                    parameters=job.parameters,
                    out_dir=job.out_dir,
                    progress=progress,
                    graded_sets=graded_sets,
                    before=before,
                    reuse=reuse,
                )
            except (WorkbenchError, OSError) as exc:
                yield Outcome(index, job, error=exc)
                continue
            yield Outcome(index, job, result=result)


def _after(earlier: list[Future[Grading]], plan: ReportPlan, reuse: GradeReuse) -> Grading:
    """Grade ``plan``'s input set once the ``earlier`` sets it shares a prediction file with are
    graded (whatever their outcome), so the inputs they share are taken from ``reuse``."""
    from workbench.report import runner

    wait(earlier)
    return runner.grade_report(plan, {}, reuse)


def _run_at_once(
    jobs: list[ReportJob],
    workers: int,
    started: Callable[[int, ReportJob], None] | None,
    before: float,
    reuse: GradeReuse,
) -> Iterator[Outcome]:
    """:func:`run_batch` with ``workers`` reports at once: every report planned first (its
    relative paths taken from the caller's folder); then, in the project root (where every
    kernel runs and inputs are graded, so no report changes the folder under another), each
    input set graded once, ``workers`` sets at a time in threads (SymPy's worker and polars
    run outside the GIL; a set that shares a prediction file with earlier sets after them, so
    that what they share is graded once: :func:`_after`), and each report handed to a thread
    that runs its kernel (a process of its own) and writes its files as soon as its set is graded. Each result names the index page
    it is listed in; the pages are written at the end, once, so each lists every report."""
    import contextlib
    import warnings
    from concurrent.futures import ThreadPoolExecutor

    from workbench.config import project_root
    from workbench.report import runner
    from workbench.report.index import INDEX_NAME, index_folder, write_index
    from workbench.report.inputs import input_set
    from workbench.report.kernels import KernelThreads

    plans: list[runner.ReportPlan | Exception] = []
    for job in jobs:
        try:
            planned = runner.plan_report(job.template, parameters=job.parameters, out_dir=job.out_dir)
            plans.append(replace(planned, before=before))
        except (WorkbenchError, OSError) as exc:
            plans.append(exc)
    graded_sets: dict[str, runner.GradedSet] = {}
    gradings: dict[str, Future[runner.Grading]] = {}  # the first report of each input set, graded
    waiting: list[tuple[int, ReportJob, Future[ReportResult] | Exception, Path]] = []
    indexes: dict[Path, None] = {}

    def finished(block: bool) -> Iterator[Outcome]:
        while waiting:
            index, job, pending, folder = waiting[0]
            value: ReportResult | Exception
            if isinstance(pending, Future):
                if not (block or pending.done()):
                    return
                try:
                    value = pending.result()
                except (WorkbenchError, OSError) as exc:
                    value = exc
            else:
                value = pending
            waiting.pop(0)
            if started is not None:
                started(index, job)
            if isinstance(value, Exception):
                yield Outcome(index, job, error=value)
            else:
                indexes[folder] = None
                yield Outcome(index, job, result=replace(value, index=folder / INDEX_NAME))

    with (
        warnings.catch_warnings(),  # grading ignores warnings in each thread: the caller's filters come back
        contextlib.chdir(project_root()),
        ThreadPoolExecutor(workers, thread_name_prefix="grade") as graders,
        KernelThreads(workers) as pool,  # each thread keeps a kernel for the reports it runs
    ):
        keys: list[str | None] = []
        files: dict[str, set[Path]] = {}  # the prediction files of each set, by its key
        for plan in plans:
            key = None
            if isinstance(plan, runner.ReportPlan) and "graded_dir" in plan.known:
                config = input_set(plan.known, plan.params)
                key = None if config is None else repr(config)
                if config is not None and key is not None and key not in gradings:
                    files[key] = {Path(p).resolve() for p in config.predictions}
                    # the graders take sets in order: an earlier set is graded or being graded
                    earlier = [gradings[k] for k, used in files.items() if k != key and used & files[key]]
                    gradings[key] = graders.submit(_after, earlier, plan, reuse)
            keys.append(key)
        try:
            for index, (job, plan, key) in enumerate(zip(jobs, plans, keys, strict=True), start=1):
                if isinstance(plan, Exception):
                    waiting.append((index, job, plan, Path()))
                    continue
                try:
                    if key is not None and key not in graded_sets:  # the first report of its set
                        grading = gradings[key].result()
                        if grading.written:
                            graded_sets[key] = runner.GradedSet(plan.graded, grading.notes)
                    else:  # a later one gets a copy of the folder (or grades here: its inputs are not a set)
                        grading = runner.grade_report(plan, graded_sets, reuse)
                except (WorkbenchError, OSError) as exc:
                    waiting.append((index, job, exc, Path()))
                else:
                    future = pool.submit(runner.finish_report, plan, grading, progress=False, index=False)
                    waiting.append((index, job, future, index_folder(plan.out, plan.path.stem)))
                yield from finished(block=False)
            yield from finished(block=True)
        except BaseException:  # Ctrl-C, or the caller stopped reading: nothing more starts
            graders.shutdown(wait=False, cancel_futures=True)
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    for folder in indexes:
        write_index(folder)
