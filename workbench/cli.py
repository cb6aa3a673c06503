"""The ``workbench`` command.

``workbench grade [DATASET] PREDICTIONS... --out DIR`` grades saved model outputs (the
dataset is optional when the gold travels inside the outputs);
``workbench report`` runs a notebook template and writes the executed notebook and HTML.
Errors the user can fix are printed as one line (``workbench: error: ...``), exit code 2.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from workbench.config import BENCHMARKS, NO_DATASET, resolve
from workbench.errors import ReportError, WorkbenchError
from workbench.grade import unmatched_message

__all__ = ["main", "build_parser"]

logger = logging.getLogger("workbench")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    parser = argparse.ArgumentParser(
        prog="workbench", description="Error-analysis workbench for numerical-reasoning QA outputs."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    grade = sub.add_parser(
        "grade",
        help="grade prediction files against a gold dataset",
        description="workbench grade [DATASET] PREDICTIONS... --out DIR. With two or more files the first is "
        "the gold dataset (ConvFinQA, GSM8K JSONL, MATH JSON, or a plain table); with one file, or with "
        "--dataset none, the gold is read from the prediction files (GSM8K logs carry it).",
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
        help="convfinqa, gsm8k or math (default: recognised from the data)",
    )
    _common(grade)

    report = sub.add_parser("report", help="run a report template and write notebook + HTML")
    report.add_argument("--dataset", default="", help="gold dataset (default: the bundled ConvFinQA dev set)")
    report.add_argument(
        "--predictions",
        action="append",
        default=[],
        metavar="FILE",
        help="prediction file; repeat for several (default: the bundled claude-sonnet-4-6 run)",
    )
    report.add_argument("--template", default="01-overview", help="template name under notebooks/")
    report.add_argument("--out", type=Path, default=None, help="output directory (default: reports/<template>/)")
    _common(report)
    return parser


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
        help="column map for files of another shape: record_id=COL,turn=COL:0|1,"
        "predicted_answer=COL,predicted_program=COL,raw_output=COL "
        "(one for all files, or one per file)",
    )


def _grade(args: argparse.Namespace) -> int:
    from workbench.run import grade_run

    dataset, predictions = _split_files(args.dataset, args.files)
    config = resolve(
        dataset=dataset, predictions=predictions, systems=args.system, column_map=args.maps, benchmark=args.benchmark
    )
    run = grade_run(config)
    paths = run.write(args.out)
    for line in unmatched_message(run.unmatched, paths["unmatched"]):
        print(f"workbench: warning: {line}", file=sys.stderr)
    for system, metrics in run.summary.items():
        print(
            f"{system}: turn execution accuracy {metrics['turn_execution_accuracy']:.1%} "
            f"({metrics['n_turns_correct']}/{metrics['n_turns']}), conversation "
            f"{metrics['conversation_execution_accuracy']:.1%}, unmatched {metrics['n_unmatched']}"
        )
        policies = metrics.get("policies", {})
        if policies:
            shown = ", ".join(f"{name} {p['accuracy']:.1%}" for name, p in policies.items())
            print(f"  by policy: {shown}")
    if run.checks.height:
        from workbench.checks import flag_counts

        shown = ", ".join(
            f"{category} {n}" for category, n in flag_counts(run.checks).select("category", "n_turns").iter_rows()
        )
        print(f"data-quality flags (turns): {shown}; evidence in {paths['checks']}")
    print(f"wrote {paths['turns']}, {paths['conversations']}, {paths['checks']}, {paths['summary']}")
    return 0


def _split_files(dataset: str | None, files: list[str]) -> tuple[str | None, list[str]]:
    """``(dataset, predictions)`` from ``--dataset`` and the positional files."""
    if dataset is not None:
        return (None if dataset.strip().lower() == NO_DATASET else dataset), files
    if len(files) == 1:
        return None, files
    return files[0], files[1:]


def _report(args: argparse.Namespace) -> int:
    from workbench.report import run_template

    # resolve() validates counts and paths before the kernel starts.
    resolve(
        dataset=args.dataset,
        predictions=args.predictions,
        systems=args.system,
        column_map=args.maps,
    )
    parameters = {
        "dataset": str(args.dataset),
        "predictions": ";".join(str(p) for p in args.predictions),
        "systems": ";".join(args.system),
        "column_map": ";".join(args.maps),
    }
    parameters = {k: v for k, v in parameters.items() if v}
    result = run_template(args.template, parameters=parameters, out_dir=args.out)
    print(f"notebook: {result.notebook}")
    print(f"html: {result.html}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    logging.basicConfig(level=logging.WARNING, format="workbench: %(levelname)s: %(message)s")
    args = build_parser().parse_args(argv)
    try:
        if args.command == "grade":
            return _grade(args)
        return _report(args)
    except ReportError as exc:
        print(f"workbench: report failed: {exc}", file=sys.stderr)
        return 1
    except WorkbenchError as exc:
        print(f"workbench: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
