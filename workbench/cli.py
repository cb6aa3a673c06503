"""The ``workbench`` command.

``workbench grade [DATASET] PREDICTIONS... --out DIR`` grades saved model outputs (the
dataset is optional when the gold travels inside the outputs);
``workbench report`` runs a notebook template and writes the executed notebook and HTML
(``-p NAME=VALUE`` sets any parameter the template declares, as papermill's ``-p`` does);
``workbench annotations import|list|backup|recover|copy|agreement`` feeds, reads, backs up, rescues or
copies the annotation store (a SQLite file or a ``postgresql://`` URL), or says how well its analysts
agree; ``workbench export`` writes the cleaned dataset;
``workbench templates list|copy DIR`` lists the shipped templates or copies them for editing;
``workbench triage`` serves the triage app with Voila.
``workbench --version`` prints the package's version (``workbench.__version__``, its one source).
Errors the user can fix are printed as one line (``workbench: error: ...``), exit code 2;
so is an operating-system error (a full disk, a name too long). Text that came from data
(system names, record ids, paths) is printed through :func:`workbench.io.paths.terminal_text`,
so a control character in it is shown, never obeyed by the terminal.
"""

from __future__ import annotations

import argparse
import errno
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from workbench import __version__
from workbench.config import BENCHMARKS, NO_DATASET, resolve
from workbench.errors import ReportError, UsageError, WorkbenchError
from workbench.io.csvsafe import write_csv
from workbench.io.paths import check_output_folder, terminal_text
from workbench.io.predictions.columnmap import MAP_HELP

__all__ = ["main", "build_parser"]

logger = logging.getLogger("workbench")


class _Parser(argparse.ArgumentParser):
    """argparse's parser, quoting what was typed (``unrecognized arguments: ...``) with
    control characters shown, not obeyed; the subcommands' parsers are of this class too."""

    def __init__(self, *args: Any, epilog_from: Callable[[], str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._epilog_from = epilog_from

    def error(self, message: str) -> NoReturn:
        """One line on standard error (argparse prints the usage first), then exit 2."""
        self.exit(2, f"{self.prog}: error: {terminal_text(message)}. Fix: see '{self.prog} --help'\n")

    def format_help(self) -> str:
        """The help, with an epilog computed now (``epilog_from``): files are read for ``--help``
        only, never to parse another command's arguments."""
        if self._epilog_from is not None:
            self.epilog = self._epilog_from()
        return super().format_help()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    parser = _Parser(prog="workbench", description="Error-analysis workbench for numerical-reasoning QA outputs.")
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    grade = sub.add_parser(
        "grade",
        help="grade prediction files against a gold dataset",
        description="workbench grade [DATASET] PREDICTIONS... --out DIR. With two or more files the first is "
        "the gold dataset (ConvFinQA, GSM8K JSONL, MATH JSON, or a plain table); with --dataset none the gold is read "
        "from the prediction files (GSM8K logs carry it); with one file, the bundled ConvFinQA dev set when the outputs "
        "are on it, else the gold they carry (as workbench report without --dataset).",
    )
    grade.add_argument("files", nargs="+", metavar="FILE", help="[DATASET] PREDICTIONS...")
    grade.add_argument(
        "--dataset",
        default=None,
        help="the gold dataset, instead of the first FILE; 'none' when the gold travels in the outputs",
    )
    grade.add_argument("--out", required=True, type=Path, help="directory for turns.parquet, summary.json, ...")
    grade.add_argument(
        "--benchmark",
        choices=BENCHMARKS,
        default="auto",
        help="the grading rules: convfinqa, gsm8k or math (default: recognised from the data); it applies "
        "to a plain table or to gold carried in the outputs, and must agree with a ConvFinQA, GSM8K or MATH dataset",
    )
    grade.add_argument(
        "--engine",
        choices=("local", "dask"),
        default="local",
        help="grade in this process (local, the default) or on a Dask cluster (dask)",
    )
    grade.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="with --engine dask: the scheduler to use (tcp://HOST:8786); default: a local cluster for the run",
    )
    grade.add_argument(
        "--dask-host",
        default=None,
        metavar="HOST",
        help="with --engine dask and no --scheduler: the interface the run's local cluster and its dashboard "
        "listen on (default 127.0.0.1, this machine only)",
    )
    _common(grade)

    notes = sub.add_parser("annotations", help="import or list annotations (the triage notebook's store)")
    notes_sub = notes.add_subparsers(dest="action", required=True)
    imp = notes_sub.add_parser(
        "import",
        help="append the annotations of a CSV file to the store",
        description="CSV columns: record_id, turn, category (required); annotator, system, corrected_answer, "
        "corrected_program, note, exclude (optional). Every row is checked before anything is written.",
    )
    imp.add_argument("file", type=Path, help="the CSV file")
    imp.add_argument("--annotator", default=None, help="annotator for rows without an annotator column")
    _store_option(imp)
    listing = notes_sub.add_parser("list", help="print the annotations in force (or every event) as CSV")
    listing.add_argument("--all", action="store_true", help="every event, retractions included")
    _store_option(listing)
    saving = notes_sub.add_parser(
        "backup",
        help="copy the store to <name>.backup-<UTC time>.sqlite (never overwrites a file)",
        description="A consistent copy taken with SQLite's online backup API, beside the store or in --dir; "
        "others may keep annotating meanwhile.",
    )
    saving.add_argument("--dir", type=Path, default=None, help="folder for the backup (default: the store's)")
    _store_option(saving)
    rescue = notes_sub.add_parser(
        "recover",
        help="copy the events still readable in a damaged store into a new store (the damaged file is only read)",
        description="Writes <name>.recovered-<UTC time>.sqlite beside the store (or in --dir); check it, then "
        "move it over the damaged file.",
    )
    rescue.add_argument("--dir", type=Path, default=None, help="folder for the new store (default: the store's)")
    _store_option(rescue)
    moving = notes_sub.add_parser(
        "copy",
        help="copy every event of store SRC into store DST (SQLite to PostgreSQL and back, or a merge)",
        description="SRC and DST are SQLite files (or sqlite:///path) or postgresql://user@host:port/db URLs "
        "(password from PGPASSWORD, ~/.pgpass or a service file). Events DST already holds are not copied again, "
        "so running it twice adds nothing; event ids are kept when DST has none of them.",
    )
    moving.add_argument("source", metavar="SRC", help="the store to copy from")
    moving.add_argument("target", metavar="DST", help="the store to copy into (created when missing)")
    agreeing = notes_sub.add_parser(
        "agreement",
        help="per category and overall: Cohen's kappa (two analysts) or Krippendorff's alpha, n and a 95%% "
        "bootstrap interval, as CSV",
    )
    agreeing.add_argument("--analysts", default=None, help="only these analysts, separated by commas")
    _store_option(agreeing)

    export = sub.add_parser(
        "export",
        help="write the cleaned dataset in its input layout, the annotations and a manifest",
        description="Corrections are applied, conversations with an excluded turn dropped (or kept and marked); "
        "every file is written atomically, the manifest last.",
    )
    export.add_argument("--dataset", required=True, type=Path, help="the gold dataset the annotations refer to")
    export.add_argument(
        "--annotations", default=None, help="the annotation store: a SQLite file or a postgresql:// URL"
    )
    export.add_argument("--out", required=True, type=Path, help="directory for the cleaned dataset and manifest")
    export.add_argument("--keep-excluded", action="store_true", help="keep excluded conversations, marked")
    export.add_argument("--split", type=float, default=None, help="train fraction of a stratified train/test split")
    export.add_argument("--seed", type=int, default=0, help="seed of the split")

    report = sub.add_parser(
        "report",
        help="run a report template and write notebook + HTML",
        description="Run a notebook template with papermill on the given inputs and write the executed notebook, "
        "an offline HTML page without code and a run manifest.",
        epilog_from=_templates_epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    report.add_argument(
        "--dataset",
        default="",
        help="gold dataset; 'none' when the gold travels in the outputs (default: as grade with one FILE: the bundled "
        "ConvFinQA dev set when the outputs are on it, else the gold they carry)",
    )
    report.add_argument("--benchmark", choices=BENCHMARKS, default=None, help="as grade --benchmark (the template's)")
    report.add_argument(
        "--predictions",
        action="append",
        default=[],
        metavar="FILE",
        help="prediction file; repeat for several (default: the bundled claude-sonnet-4-6 run)",
    )
    report.add_argument(
        "--template",
        default="01-overview",
        help="a shipped template's name (listed below), or the path of a notebook of your own (my/01-overview.ipynb)",
    )
    report.add_argument(
        "-p",
        "--parameters",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        dest="params",
        help="set a parameter of the template (repeatable), its value read as the type the template declares "
        "(int, float, bool, str), as papermill's -p: -p n_boot=200 -p system_a=NAME; "
        "'papermill --help-notebook notebooks/TEMPLATE.ipynb' lists them",
    )
    report.add_argument("--out", type=Path, default=None, help="output directory (default: reports/<template>/)")
    report.add_argument(
        "--config",
        type=Path,
        default=None,
        metavar="FILE.yaml",
        help="run a batch of reports listed in a YAML file (see workbench.report.batch); the other options must be unset",
    )
    report.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="with --config: run N reports at once (default: the cores this process may use, at most 2; "
        "1 runs them one after another, with progress bars); their lines are printed in the batch's order",
    )
    report.add_argument("--quiet", action="store_true", help="no progress bar")
    _common(report)

    shipped = sub.add_parser(
        "templates",
        help="list the shipped templates, or copy them into a folder of yours to edit",
        description="The templates ship inside the package. 'workbench templates copy DIR' writes editable copies "
        "and the batch file into DIR; a copy runs as it is (workbench report --template DIR/01-overview.ipynb, or "
        "in JupyterLab).",
    )
    shipped_sub = shipped.add_subparsers(dest="action", required=True)
    shipped_sub.add_parser("list", help="the shipped templates, one a line, and their folder")
    copy = shipped_sub.add_parser(
        "copy", help="copy every template and the batch file into DIR (made when missing; never overwrites a file)"
    )
    copy.add_argument("dir", type=Path, metavar="DIR", help="the folder for the copies")

    check = sub.add_parser("check", help="fail when the newest run of a reports folder is worse (exit code 3)")
    check.add_argument(
        "folder", type=Path, metavar="FOLDER", help="a reports folder (its ledger.sqlite) or a ledger file"
    )
    check.add_argument("--points", type=float, default=2.0, help="the drop in percentage points that fails (default 2)")
    triage = sub.add_parser(
        "triage",
        help="serve the triage app (03-triage) with Voila on 127.0.0.1",
        description="Serves the shipped triage template, or the notebook given (an edited copy), with Voila on "
        "127.0.0.1 and a Content-Security-Policy that allows no other host. The current folder is the project: "
        "annotations go to reports/annotations.sqlite in it unless the template's 'store' names another.",
    )
    triage.add_argument("notebook", nargs="?", default="", metavar="NOTEBOOK", help="a copy of 03-triage to serve")
    triage.add_argument("--port", type=int, default=None, help="the port (default: Voila's, 8866)")
    triage.add_argument("--no-browser", action="store_true", help="do not open a browser")
    return parser


def _say(text: object, *, file: TextIO | None = None) -> None:
    """Print one line of text that may hold data, control characters shown as escapes."""
    print(terminal_text(text), file=file or sys.stdout)


def _os_error_line(exc: OSError) -> str:
    """One line for an operating-system error: the file, the cause and what to do."""
    fixes = {
        errno.ENOSPC: "free some space on that disk, or write to another disk",
        errno.EDQUOT: "free some space (the disk quota is used up), or write to another disk",
        errno.ENAMETOOLONG: "use a shorter name (at most 255 bytes for each folder or file name)",
        errno.EACCES: "choose a folder you may write to",
        errno.EPERM: "choose a folder you may write to",
        errno.EROFS: "choose a folder on a disk that is not read-only",
        errno.EEXIST: "give the name of a folder, not of a file",
        errno.ENOTDIR: "give a path whose parent folders are folders, not files",
        errno.EISDIR: "give the name of a file, not of a folder",
        errno.ENOENT: "check the path",
    }
    where = f"{exc.filename}: " if exc.filename is not None else ""
    cause = (exc.strerror or type(exc).__name__).rstrip(".")
    return f"{where}{cause[:1].lower()}{cause[1:]}. Fix: {fixes.get(exc.errno or 0, 'check the path and the disk')}"


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--system",
        action="append",
        default=[],
        metavar="NAME",
        help="system name for each prediction file, in order (default: from the file)",
    )
    parser.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="SPEC",
        dest="maps",
        help=MAP_HELP,
    )


def _store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        default=None,
        help="the annotation store: a SQLite file (or sqlite:///path), or postgresql://user@host:port/db with the "
        "password in PGPASSWORD or ~/.pgpass (default: reports/annotations.sqlite in the project)",
    )


def _annotations(args: argparse.Namespace) -> int:
    from workbench.annotations.backends import open_store, store_location
    from workbench.annotations.csv_import import read_annotation_csv
    from workbench.annotations.recovery import recover_store

    if args.action == "copy":
        from workbench.annotations.transfer import copy_events

        source, target = store_location(args.source), store_location(args.target)
        if source.path is not None and not source.path.exists():
            raise UsageError(f"no annotation store at {source.display}. Fix: give the store to copy from as SRC")
        with open_store(source, create=False) as src, open_store(target) as dst:
            done = copy_events(src, dst)
        ids = "kept their event ids" if done.kept_ids else "were numbered after its events"
        skipped = f"; {done.conflicting} retractions of annotations it had retracted otherwise" * bool(done.conflicting)
        _say(
            f"copied {source.display} into {target.display}: {done.added} events added (they {ids}), "
            f"{done.present} already there{skipped}"
        )
        return 0
    location = store_location(args.store or "")  # a postgresql:// URL is a server, never a folder
    path = location.display
    if args.action == "import":
        rows = read_annotation_csv(args.file, annotator=args.annotator)  # checked before the store is touched
        with open_store(location) as store:
            ids = store.annotate_many(rows, where=str(args.file)) if rows else []
        span = f" (events #{ids[0]} to #{ids[-1]})" if ids else ""
        _say(f"imported {len(ids)} annotations from {args.file} into {path}{span}")
        return 0
    if location.path is not None and not location.path.exists():
        raise UsageError(f"no annotation store at {path}. Fix: give --store, or import or annotate first")
    if args.action == "recover":
        if location.path is None:
            raise UsageError(
                f"recover rescues a damaged SQLite file, and {path} is a PostgreSQL server (its own recovery "
                "keeps what was committed). Fix: to keep a copy, run workbench annotations copy URL FILE.sqlite"
            )
        done = recover_store(location.path, args.dir)
        lost = f" (event ids {done.missing_ids})" if done.missing_ids else ""
        _say(
            f"recovered {done.kept} events of {path} into {done.path}; left out {done.unreadable} unreadable "
            f"rows{lost} and {done.invalid} invalid rows; {path} was left as it is. Next: check it "
            f"(workbench annotations list --all --store {done.path}), then move it over {path}"
        )
        return 0
    if args.action == "agreement":
        from workbench.annotations.agreement import agreement_at

        sys.stdout.write(write_csv(agreement_at(location, args.analysts)))
        return 0
    if args.action == "backup":
        with open_store(location, create=False) as store:
            copy = store.backup(args.dir)
        _say(f"backed up {path} to {copy}")
        return 0
    with open_store(location, create=False) as store:
        table = store.events() if args.all else store.active()

    sys.stdout.write(write_csv(table))  # formula-looking cells quoted
    return 0


def _export(args: argparse.Namespace) -> int:
    from workbench.annotations.backends import store_location
    from workbench.cleaning.before_after import read_annotation_store
    from workbench.cleaning.export import export_cleaned

    active, snapshot = read_annotation_store(args.annotations or "")
    from workbench.annotations.agreement import in_force_at  # an adjudicated turn: the adjudicator's decision

    active, decided = in_force_at(store_location(args.annotations)) if args.annotations else (active, None)
    result = export_cleaned(
        args.dataset,
        active,
        args.out,
        keep_excluded=args.keep_excluded,
        split=args.split,
        seed=args.seed,
        snapshot=snapshot,
        parameters={"command": "workbench export"},
        inputs=[] if args.annotations is None else [p for p in [store_location(args.annotations).path] if p],
        decided_by=decided,
    )
    for name, path in result.files.items():
        _say(f"{name}: {path}")
    return 0


def _grade(args: argparse.Namespace) -> int:
    from workbench.pipeline.grade import unmatched_message
    from workbench.pipeline.ledger import append_graded
    from workbench.pipeline.run import grade_run
    from workbench.quality.checks import flag_counts

    check_output_folder(args.out)  # before grading: a bad --out costs no time
    dataset, predictions = _split_files(args.dataset, args.files)
    config = resolve(
        dataset=dataset, predictions=predictions, systems=args.system, column_map=args.maps, benchmark=args.benchmark
    )
    run = grade_run(config, engine=args.engine, scheduler=args.scheduler, host=args.dask_host)
    try:
        paths = run.write(args.out)
    except OSError as exc:
        raise UsageError(
            f"could not write the outputs into {args.out} ({_os_error_line(exc)}); nothing was written "
            "and the files already there are as they were"
        ) from None
    for line in run.notes:
        _say(f"workbench: note: {line}", file=sys.stderr)
    for line in unmatched_message(run.unmatched, paths["unmatched"]):
        _say(f"workbench: warning: {line}", file=sys.stderr)
    problems = run.item == "problem"  # GSM8K, MATH: one turn a problem, no conversations to count
    for system, metrics in run.summary.items():
        counted = f"{metrics['n_turns_correct']}/{metrics['n_turns']}"
        accuracy = (
            f"accuracy {metrics['turn_execution_accuracy']:.1%} ({counted} problems)"
            if problems
            else f"turn execution accuracy {metrics['turn_execution_accuracy']:.1%} ({counted}), "
            f"conversation {metrics['conversation_execution_accuracy']:.1%}"
        )
        _say(f"{system}: {accuracy}, unmatched {metrics['n_unmatched']}")
        policies = metrics.get("policies", {})
        if policies:
            shown = ", ".join(f"{name} {p['accuracy']:.1%}" for name, p in policies.items())
            _say(f"  by policy: {shown}")
    if run.checks.height:
        shown = ", ".join(
            f"{category} {n}" for category, n in flag_counts(run.checks).select("category", "n_turns").iter_rows()
        )
        _say(f"data-quality flags (turns): {shown}; evidence in {paths['checks']}")
    inputs = {"dataset": dataset, "predictions": predictions, "systems": args.system, "column_map": args.maps}
    ledger = append_graded(args.out, args.out, source="grade", parameters={**inputs, "benchmark": args.benchmark})
    _say(f"wrote {paths['turns']}, {paths['conversations']}, {paths['checks']}, {paths['summary']}; ledger {ledger}")
    return 0


def _split_files(dataset: str | None, files: list[str]) -> tuple[str | None, list[str]]:
    """``(dataset, predictions)`` from ``--dataset`` and the positional files: with one file and
    no ``--dataset`` no dataset is named (``""``), and :func:`~workbench.config.resolve`'s rule
    decides, as for ``workbench report``."""
    if dataset is not None:
        return (None if dataset.strip().lower() == NO_DATASET else dataset), files
    if len(files) == 1:
        return "", files
    return files[0], files[1:]


def _templates_epilog() -> str:
    """How to name a template, then the shipped templates, one line each, for ``workbench report --help``."""
    from workbench.report.templates import list_templates

    own = (
        "your own templates (--template PATH): any notebook with one cell tagged 'parameters', such as an\n"
        "  edited copy from 'workbench templates copy DIR' (--template DIR/01-overview.ipynb)\n"
    )
    shipped = list_templates()
    if not shipped:
        return own + "templates: none found in the package"
    width = max(len(t.name) for t in shipped)
    lines = [
        f"  {t.name:<{width}}  {t.description or 'a notebook template'}"
        + (" (interactive: open it in JupyterLab or Voila, not a batch report)" if t.interactive else "")
        for t in shipped
    ]
    return own + "templates (--template NAME):\n" + "\n".join(lines)


#: ``workbench report`` options that set a template parameter of their own.
_INPUT_OPTIONS = {
    "dataset": "--dataset",
    "predictions": "--predictions",
    "systems": "--system",
    "column_map": "--map",
    "benchmark": "--benchmark",
}


def _templates(args: argparse.Namespace) -> int:
    from workbench.report.templates import BATCH_FILE, copy_templates, list_templates, template_folder

    if args.action == "copy":
        copies = copy_templates(args.dir)
        for path, new in copies:
            _say(f"{'copied' if new else 'already there'}: {path}")
        _say(f"run a copy as it is: workbench report --template {copies[0][0]}")
        return 0
    shipped = list_templates()
    width = max([len(t.name) for t in shipped] + [len(BATCH_FILE)])
    for t in shipped:
        how = " (interactive: workbench triage, or a copy in JupyterLab)" if t.interactive else ""
        _say(f"{t.name:<{width}}  {t.description}{how}")
    _say(f"{BATCH_FILE:<{width}}  the batch of reports 'make report' runs (workbench report --config FILE)")
    _say(f"in {template_folder()}; 'workbench templates copy DIR' writes editable copies")
    return 0


def _triage(args: argparse.Namespace) -> int:
    import os

    from workbench.report.serve import STOPPED, serve
    from workbench.report.templates import voila_command

    argv, env = voila_command(args.notebook, port=args.port, browser=not args.no_browser)
    served = serve(argv, {**os.environ, **env})  # Voila as a child: a stop is one line, not its shutdown's tracebacks
    if served.stopped:
        _say(STOPPED, file=sys.stderr)
    return served.code


def _check(args: argparse.Namespace) -> int:
    from workbench.report.gate import check_ledger

    result = check_ledger(args.folder, args.points)
    for note in result.notes:
        _say(f"workbench: note: {note}", file=sys.stderr)
    for regression in result.regressions:
        _say(f"regression: {regression.line()}")
    return result.exit_code


def _report(args: argparse.Namespace) -> int:
    from workbench.report import runner
    from workbench.report.batch import ReportJob, load_batch, run_batch
    from workbench.report.inputs import template_values

    if args.config is not None:
        options = {"dataset": "--dataset", "predictions": "--predictions", "system": "--system", "maps": "--map"}
        options |= {"benchmark": "--benchmark", "out": "--out", "params": "-p"}
        given = [flag for name, flag in options.items() if getattr(args, name)]
        if given or args.template != "01-overview":
            raise UsageError(
                f"--config was given with {', '.join(given) or '--template'}. "
                "Fix: put those settings in the YAML file (template parameters under 'parameters:'), or drop --config"
            )
        jobs = load_batch(args.config)
    else:
        runner.check_batch_template(args.template)
        if args.out is not None:
            check_output_folder(args.out)
        # lists, not ';'-joined texts: a file or system named 'a;b' stays one; run_template
        # takes relative paths from this (the caller's) folder
        inputs = {
            "dataset": args.dataset,
            "predictions": list(args.predictions),
            "systems": list(args.system),
            "column_map": list(args.maps),
            "benchmark": args.benchmark or "",
        }
        parameters: dict[str, Any] = {k: v for k, v in inputs.items() if v}
        for name, value in template_values(args.template, args.params).items():
            if name in parameters:
                raise UsageError(f"{name} was given twice, with {_INPUT_OPTIONS[name]} and with -p. Fix: give it once")
            parameters[name] = value
        # resolve() validates counts and paths before the kernel starts.
        typed = {k: v for k, v in parameters.items() if k in _INPUT_OPTIONS and isinstance(v, str | list)}
        resolve(
            dataset=str(typed.get("dataset", "")),
            predictions=typed.get("predictions", ""),
            systems=typed.get("systems", ""),
            column_map=typed.get("column_map", ""),
            benchmark=str(typed.get("benchmark") or "auto"),
        )
        jobs = [ReportJob(args.template, parameters, args.out)]
    failures = 0
    indexes: dict[Path, None] = {}  # the index pages rewritten, in order, each said once at the end

    def started(index: int, job: ReportJob) -> None:
        if len(jobs) > 1:
            _say(f"[{index}/{len(jobs)}] {job.template}", file=sys.stderr)

    for outcome in run_batch(jobs, workers=args.jobs, progress=not args.quiet, started=started):
        result, exc = outcome.result, outcome.error
        if exc is not None or result is None:
            if len(jobs) == 1 and exc is not None:
                raise exc
            failures += 1
            kind = "report failed" if isinstance(exc, ReportError) else "error"
            text = _os_error_line(exc) if isinstance(exc, OSError) else str(exc)
            _say(f"workbench: {kind}: {outcome.job.template}: {text}", file=sys.stderr)
            continue
        for line in result.notes:
            _say(f"workbench: note: {line}", file=sys.stderr)
        _say(f"notebook: {result.notebook}")
        _say(f"html: {result.html}")
        if result.changes is not None:
            _say(f"changes since the previous run: {result.changes}")
        if result.index is not None:
            indexes[result.index] = None
    for index_page in indexes:
        _say(f"index: {index_page}")
    return 1 if failures else 0


class _TerminalFormatter(logging.Formatter):
    """Log lines with control characters shown as escapes (messages may quote data)."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal_text(super().format(record), multiline=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    handler = logging.StreamHandler()
    handler.setFormatter(_TerminalFormatter("workbench: %(levelname)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])  # no-op when logging is set up already
    args = build_parser().parse_args(argv)
    try:
        commands = {
            "grade": _grade,
            "annotations": _annotations,
            "export": _export,
            "report": _report,
            "templates": _templates,
            "triage": _triage,
            "check": _check,
        }
        return commands[args.command](args)
    except ReportError as exc:
        _say(f"workbench: report failed: {exc}", file=sys.stderr)
        return 1
    except WorkbenchError as exc:
        _say(f"workbench: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        _say(f"workbench: error: {_os_error_line(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
