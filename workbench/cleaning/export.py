"""Export a cleaned dataset: corrections applied, exclusions honoured, in the input's own layout.

:func:`export_cleaned` reads the original gold file, changes only what the active annotations
say, and writes one folder, as a whole: every file is written into a temporary folder beside
``out_dir``, which then takes the place of ``out_dir`` (an atomic exchange of the two where
the system offers one), so ``out_dir`` always holds either the complete previous export or the
complete new one, never a mix, even when the process is killed half-way. It holds:

* the cleaned dataset, under the input's file name and in its layout (ConvFinQA reformatted
  JSON, GSM8K JSON Lines, or a plain gold table in CSV, TSV, Parquet, JSON Lines or a JSON list);
* with ``split``: ``train.<ext>`` and ``test.<ext>`` in the same layout and ``split.csv``
  (:func:`~workbench.cleaning.split.stratified_split`);
* ``annotations.parquet`` and ``annotations.csv``: the active annotations the export applied;
* ``manifest.json`` last: workbench version, input path and SHA-256, layout, the annotation
  snapshot, parameters, record and turn counts, and every file written with its SHA-256.

Every CSV or TSV file of an export (a plain table, ``split.csv``, ``annotations.csv``) has its
formula-looking cells quoted (:mod:`workbench.io.csvsafe`: ``=HYPERLINK(...)`` is written
``'=HYPERLINK(...)``, numbers such as ``-12.5`` stay), so a spreadsheet shows them as text. The
quote is then part of the value: a plain-table CSV export read back has ``'=x`` where the input
had ``=x`` (a record id so changed no longer matches predictions that use ``=x``); the manifest
counts the quoted cells of each CSV file under ``output.quoted_cells``. JSON, JSON
Lines and Parquet files, ``annotations.parquet`` among them, keep every value verbatim: use
them to re-grade when an id or answer begins with ``=``, ``+``, ``-``, ``@``, a tab or a CR.

``out_dir`` is the export's own: it may be new, empty, or the folder of an earlier export
(recognised by its ``manifest.json``, each listed file unchanged) and nothing else. A file (the
annotation store, say), a link, the current folder or one holding it or the inputs, a folder
holding other files: each is refused with one line and left as it was. A replaced folder keeps
its mode; a new one gets the usual mode of a new folder.

:func:`workbench.cleaning.plan.apply_annotations` gives the same cleaned gold in memory, for re-grading
without a file. The export is written by :mod:`workbench.cleaning.plan` (what the annotations
change), :mod:`workbench.cleaning.split` (the stratified split) and
:mod:`workbench.cleaning.layouts` (the dataset in its layout); the folder is swapped in by
:mod:`workbench.io.atomic`.

What an annotation does
-----------------------
Only *gold-level* annotations (``system`` null) change the gold:

* ``corrected_answer`` replaces the turn's answer. In the reformatted ConvFinQA layout it sets
  ``dialogue.conv_answers[turn]`` (the text as given) and ``dialogue.executed_answers[turn]``
  (a number when the text is a plain number or a plain percentage, ``"14.1%"`` giving 0.141;
  else the text, as ``"yes"``); in GSM8K it rewrites the answer's final ``#### n`` line; in a
  table it sets ``gold_answer``.
* ``corrected_program`` replaces ``dialogue.turn_program[turn]`` (``gold_program`` in a table);
  GSM8K and MATH have no program, and a program correction for them is an error.
* ``exclude`` drops the whole record (a conversation's turns build on each other); with
  ``keep_excluded=True`` the record stays, marked (``"workbench": {"excluded": true,
  "excluded_turns": [...]}`` in JSON records, an ``excluded`` column in tables).

System-level annotations (``system`` set, such as ``model_error``) change nothing in the gold.
An annotation about a record or turn the dataset does not have is an :class:`InputError`.

GSM8K records are numbered by their position, so excluding one renumbers those after it in the
exported file (the manifest says so under ``output.renumbered``).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from workbench.annotations.agreement import DECISION_RULE
from workbench.cleaning.layouts import SUPPORTED_LAYOUTS, CsvFile, dataset_writers, text_writer
from workbench.cleaning.plan import active_frame, apply_plan, plan_annotations
from workbench.cleaning.split import split_records, split_summary, stratified_split
from workbench.errors import UsageError
from workbench.io.atomic import fsync_tree, make_staging, parquet_writer, recover_interrupted, swap_in, write_atomic
from workbench.io.gold import load_gold
from workbench.io.manifest import Manifest
from workbench.io.paths import inside
from workbench.pipeline.graded import file_sha256
from workbench.schema import KEY_DTYPE

__all__ = ["ExportResult", "export_cleaned"]

logger = logging.getLogger(__name__)

#: File names an export writes besides the dataset.
_ANNOTATIONS_PARQUET = "annotations.parquet"
_ANNOTATIONS_CSV = "annotations.csv"
_SPLIT_CSV = "split.csv"
_MANIFEST = "manifest.json"


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export_cleaned` wrote.

    Attributes
    ----------
    out_dir
        The folder written into.
    files
        Paths by role: ``dataset``, ``annotations_parquet``, ``annotations_csv``, ``manifest``
        and, with a split, ``train``, ``test``, ``split``.
    manifest
        The content of ``manifest.json``.
    """

    out_dir: Path
    files: dict[str, Path]
    manifest: dict[str, Any]


def _output_names(path: Path, split: float | None) -> dict[str, str]:
    suffix = path.suffix
    names = {"annotations_parquet": _ANNOTATIONS_PARQUET, "annotations_csv": _ANNOTATIONS_CSV, "manifest": _MANIFEST}
    if split is not None:
        names |= {"train": f"train{suffix}", "test": f"test{suffix}", "split": _SPLIT_CSV}
    taken = set(names.values())
    names["dataset"] = path.name if path.name not in taken else f"cleaned{suffix}"
    return names


def _json_safe(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


#: The keys by which a ``manifest.json`` is recognised as one an export wrote.
_MANIFEST_KEYS = frozenset({"workbench_version", "input", "annotations", "files"})

#: A ``manifest.json`` larger than this is not one an export wrote (they are a few kB).
_MANIFEST_MAX_BYTES = 1 << 24

#: What to do instead, in the messages of :func:`_claim_out`.
_OUT_FIX = "give --out (out_dir) a new folder, an empty folder, or the folder of an earlier export"


def _earlier_export(out: Path) -> dict[str, str] | None:
    """The files an earlier export's ``manifest.json`` in ``out`` lists (name -> SHA-256), or
    ``None`` when ``out`` holds no manifest the export wrote (missing, a link, not JSON, or
    without the export's keys, or listing a name that is not a plain file name in ``out``)."""
    manifest = out / _MANIFEST
    try:
        if manifest.is_symlink() or not manifest.is_file() or manifest.stat().st_size > _MANIFEST_MAX_BYTES:
            return None
        old = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # ValueError: JSONDecodeError, UnicodeDecodeError
        return None
    if not isinstance(old, dict) or not _MANIFEST_KEYS <= set(old) or not isinstance(old["files"], dict):
        return None
    listed: dict[str, str] = {}
    for entry in old["files"].values():
        name = entry.get("path") if isinstance(entry, dict) else None
        digest = entry.get("sha256") if isinstance(entry, dict) else None
        if not isinstance(name, str) or name != Path(name).name or name in ("", ".", "..", _MANIFEST):
            return None
        if not isinstance(digest, str):
            return None
        listed[name] = digest
    return listed


def _is_temp(name: str) -> bool:
    return name.startswith(".") and name.endswith(".tmp")


def _foreign_entries(folder: Path, previous: Mapping[str, str] | None) -> list[str]:
    """Entries of ``folder`` no earlier export wrote: all of them without a manifest, else those
    the manifest does not list (temporary files of a write aside) and listed ones that are not
    plain files (a link, a folder)."""
    own = set(previous or ()) | ({_MANIFEST} if previous is not None else set())
    foreign = []
    for entry in folder.iterdir():
        if _is_temp(entry.name) and entry.is_file() and not entry.is_symlink():
            continue
        if entry.name not in own or entry.is_symlink() or not entry.is_file():
            foreign.append(entry.name)
    return sorted(foreign)


def _refuse_foreign(out: Path, foreign: Sequence[str]) -> UsageError:
    shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
    return UsageError(
        f"the export folder {out} holds files that no earlier export wrote ({shown}), and an export replaces "
        f"the whole folder; nothing was changed. Fix: {_OUT_FIX}"
    )


def _claim_out(out: Path, inputs: Sequence[Path]) -> tuple[dict[str, str] | None, int | None]:
    """Check that the export may become ``out``; raise a one-line :class:`UsageError` if not.

    ``out`` may be missing, an empty folder, or a folder that holds an earlier export and
    nothing else (recognised by its ``manifest.json``; each listed file still as the manifest
    hashed it). Refused, and left untouched: a symbolic link, a file (such as the annotation
    store), the current folder or a folder holding it, a folder holding one of ``inputs``, a
    folder holding other files or a changed export.

    Returns
    -------
    tuple
        The earlier export's files (name -> SHA-256; ``None`` when there is none) and the mode
        of the folder replaced (``None`` for a new folder).
    """
    if out.is_symlink():
        raise UsageError(
            f"the export folder {out} is a symbolic link (to {os.readlink(out)}); an export never replaces or "
            f"follows a link; nothing was changed. Fix: give the folder itself, or {_OUT_FIX}"
        )
    resolved = out.resolve()
    sources = [Path(p).resolve() for p in inputs]
    if os.path.lexists(out) and not out.is_dir():
        what = "one of the files this export reads" if resolved in sources else "not a folder"
        raise UsageError(
            f"the export folder {out} is a file ({what}); an export writes a folder and never replaces a file; "
            f"nothing was changed. Fix: {_OUT_FIX}"
        )
    here = Path.cwd().resolve()
    if resolved == here or resolved in here.parents:
        what = "the current folder" if resolved == here else f"a folder holding the current folder ({here})"
        raise UsageError(
            f"the export folder {out} is {what}, and an export replaces its whole folder; nothing was "
            f"changed. Fix: {_OUT_FIX}, such as {here / 'cleaned'}"
        )
    for source in sources:
        if resolved in source.parents:
            raise UsageError(
                f"the export folder {out} holds {source}, which this export reads, and an export replaces its whole "
                f"folder: it would overwrite or remove its input; nothing was changed. Fix: {_OUT_FIX}"
            )
    recover_interrupted(out)
    if not out.is_dir():
        return None, None
    mode = stat.S_IMODE(out.stat().st_mode)
    previous = _earlier_export(out)
    foreign = _foreign_entries(out, previous)
    if foreign:
        raise _refuse_foreign(out, foreign)
    for name, digest in (previous or {}).items():
        if (out / name).exists() and file_sha256(out / name) != digest:
            raise UsageError(
                f"the export folder {out} holds {name}, changed since the export wrote it (its SHA-256 is not the "
                f"one in {_MANIFEST}), and an export replaces the whole folder; nothing was changed. Fix: move "
                f"your changes out of {out}, or {_OUT_FIX}"
            )
    return previous, mode


def _refusal(out: Path, previous: Mapping[str, str] | None) -> Callable[[Path], UsageError | None]:
    """For :func:`workbench.io.atomic.swap_in`: the refusal when what was moved aside from
    ``out`` holds more than the earlier export ``previous`` lists (or is not a folder), else ``None``."""

    def refusal(moved: Path) -> UsageError | None:
        foreign = ["(not a folder)"] if moved.is_symlink() or not moved.is_dir() else _foreign_entries(moved, previous)
        return _refuse_foreign(out, foreign) if foreign else None

    return refusal


def export_cleaned(
    gold_path: str | Path,
    annotations: pl.DataFrame,
    out_dir: str | Path,
    *,
    keep_excluded: bool = False,
    split: float | None = None,
    seed: int = 0,
    snapshot: Mapping[str, Any] | None = None,
    parameters: Mapping[str, Any] | None = None,
    inputs: Sequence[str | Path] = (),
    decided_by: Mapping[str, int] | None = None,
) -> ExportResult:
    """Write the cleaned dataset in its input layout, the annotations, and a manifest.

    The original file's records are read and only what the annotations say is changed (see
    the module docstring); every other field and value, and the record order, stay as they
    were. The export is written into a temporary folder beside ``out_dir`` (``manifest.json``
    last) which then replaces ``out_dir`` as a whole, so ``out_dir`` holds either the complete
    previous export or the complete new one; files of an earlier export this one does not
    write (a split's files) are gone with it.

    Parameters
    ----------
    gold_path
        The gold file, in one of :data:`SUPPORTED_LAYOUTS`.
    annotations
        The active annotations (``AnnotationStore.active()``); see :func:`~workbench.cleaning.plan.apply_annotations`.
    out_dir
        The folder to write: a new one (created, with the usual mode of a new folder, ``0o777``
        less the umask), an empty one, or the folder of an earlier export and nothing else
        (recognised by its ``manifest.json``, each file it lists unchanged); a folder replaced
        keeps its mode. Anything else is refused and left untouched: a file (such as the
        annotation store), a symbolic link, the current folder or one holding it, a folder
        holding ``gold_path`` or one of ``inputs``, a folder holding other files. The dataset
        keeps the input's file name (``cleaned.<ext>`` if that name is one the export writes
        itself).
    keep_excluded
        Keep excluded records, marked, instead of dropping them. They are left out of a split.
    split
        The share of records in train for a stratified train/test split (see
        :func:`~workbench.cleaning.split.stratified_split`), or ``None`` for no split.
    seed
        Seeds the split.
    snapshot
        What the annotation store looked like (``AnnotationStore.snapshot()``), for the manifest.
    parameters
        More parameters to record in the manifest (say, the command line's).
    inputs
        Other files the export reads (the annotation store), which ``out_dir`` may neither be
        nor hold.
    decided_by
        How many turns each rule decided (:func:`workbench.annotations.agreement.in_force`, whose
        table ``annotations`` then is); the manifest records it with the rule in words
        (``inputs.annotations.decided_by``).

    Returns
    -------
    ExportResult

    Raises
    ------
    UsageError
        An unsupported layout, ``split`` outside (0, 1), an ``out_dir`` the export may not
        replace (see ``out_dir``), every record excluded, or ``parameters`` reusing a name of
        the export's own.
    InputError
        An annotation names a record or turn the dataset does not have (and the other cases
        of :func:`~workbench.cleaning.plan.apply_annotations`).

    Examples
    --------
    >>> import tempfile
    >>> from workbench.config import project_root
    >>> from workbench.schema import ACTIVE_ANNOTATIONS
    >>> notes = pl.DataFrame(schema=dict(ACTIVE_ANNOTATIONS))
    >>> with tempfile.TemporaryDirectory() as out:
    ...     result = export_cleaned(project_root() / "tests/fixtures/convfinqa/dev_small.json", notes, out)
    ...     sorted(result.files), result.manifest["output"]["n_turns"], load_gold(result.files["dataset"]).layout
    (['annotations_csv', 'annotations_parquet', 'dataset', 'manifest'], 42, 'convfinqa-reformatted')
    """
    path = Path(gold_path)
    out = Path(out_dir)
    if out.name in ("", ".", ".."):  # "." or "a/..": the folder it stands for
        out = out.resolve()
    if split is not None and (isinstance(split, bool) or not isinstance(split, int | float) or not 0 < split < 1):
        raise UsageError(
            f"split must be the share of records in train, strictly between 0 and 1, got {split!r}; "
            "give e.g. 0.8, or leave it out for no split"
        )
    own = {"keep_excluded": keep_excluded, "split": split, "seed": seed}
    clash = sorted(set(own) & set(parameters or {}))
    if clash:
        raise UsageError(
            f"parameters may not reuse the export's own names ({', '.join(clash)}); pass them as arguments instead"
        )
    previous, mode = _claim_out(out, [path, *(Path(p) for p in inputs)])
    gold = load_gold(path)
    if gold.layout not in SUPPORTED_LAYOUTS:
        raise UsageError(
            f"cannot write a cleaned dataset in the layout '{gold.layout}' of {path}; the export writes "
            f"{', '.join(SUPPORTED_LAYOUTS)}; convert the dataset to one of them first"
        )
    names = _output_names(path, split)
    active = active_frame(annotations)
    plan = plan_annotations(gold, active)
    cleaned = apply_plan(gold, plan)
    n_records_in = gold.turns["record_id"].n_unique()
    if cleaned.turns.height == 0 and not keep_excluded:
        raise UsageError(
            f"every record of {path} is excluded ({len(plan.excluded)} records); nothing to export; "
            "retract some exclusions or pass keep_excluded=True"
        )

    assignment: pl.DataFrame | None = None
    if split is not None:
        assignment = stratified_split(split_records(cleaned), split, seed)

    writers = dataset_writers(path, gold, plan, keep_excluded=keep_excluded, assignment=assignment)
    split_table: pl.DataFrame | None = None
    if assignment is not None:
        # excluded records kept with keep_excluded stay out of train and test, and split.csv says so
        marked = pl.DataFrame(
            {"record_id": sorted(plan.excluded) if keep_excluded else []}, schema={"record_id": KEY_DTYPE}
        )
        split_table = pl.concat(
            [assignment, marked.with_columns(split=pl.lit("excluded"), stratum=pl.lit(None, pl.String))]
        )
        writers["split"] = CsvFile(split_table)
    writers["annotations_parquet"] = parquet_writer(active)
    writers["annotations_csv"] = CsvFile(active)

    out.parent.mkdir(parents=True, exist_ok=True)
    staging = make_staging(out, mode)
    try:
        entries: dict[str, dict[str, Any]] = {}
        for role in ("dataset", "train", "test", "split", "annotations_parquet", "annotations_csv"):
            if role in writers:
                written = write_atomic(inside(staging, names[role]), writers[role])
                entries[role] = {"path": names[role], "sha256": file_sha256(written)}

        output_gold = cleaned if not keep_excluded else apply_plan(gold, plan, drop_excluded=False)
        record = Manifest(
            kind="export",
            created_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            inputs={
                "dataset": {
                    "path": str(path),
                    "sha256": file_sha256(path),
                    "layout": gold.layout,
                    "benchmark": gold.benchmark,
                    "n_records": n_records_in,
                    "n_turns": gold.turns.height,
                },
                "annotations": {
                    "snapshot": None if snapshot is None else _json_safe(dict(snapshot)),
                    "n_active": plan.n_active,
                    "n_gold_level": plan.n_gold_level,
                    "n_system_level": plan.n_system_level,
                    "n_corrected": len(plan.corrections),
                    "n_excluded_records": len(plan.excluded),
                    "decided_by": None
                    if decided_by is None
                    else {"rule": DECISION_RULE, "turns": {str(k): int(v) for k, v in decided_by.items()}},
                },
            },
            parameters=_json_safe(own | dict(parameters or {})),
            outputs={
                "dataset": {
                    "n_records": output_gold.turns["record_id"].n_unique(),
                    "n_turns": output_gold.turns.height,
                    "excluded_records": sorted(plan.excluded),
                    "excluded_kept": keep_excluded,
                    "renumbered": gold.layout == "gsm8k-jsonl" and bool(plan.excluded) and not keep_excluded,
                    "quoted_cells": {role: w.quoted for role, w in writers.items() if isinstance(w, CsvFile)},
                },
                "split": None if split_table is None else split_summary(split_table, output_gold),
                "files": entries,
            },
        )
        manifest = record.to_dict()
        text = record.to_json()
        write_atomic(inside(staging, names["manifest"]), text_writer(text))
        fsync_tree(staging)
        swap_in(staging, out, _refusal(out, previous))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    files = {role: out / names[role] for role in (*entries, "manifest")}
    stale = sorted(set(previous or ()) - {names[role] for role in files})
    if stale:
        logger.info("removed %d file(s) of an earlier export in %s: %s", len(stale), out, ", ".join(stale))
    logger.info(
        "exported %s: %d of %d records, %d corrected turns, %d excluded records, into %s",
        path.name,
        manifest["output"]["n_records"],
        n_records_in,
        len(plan.corrections),
        len(plan.excluded),
        out,
    )
    return ExportResult(out_dir=out, files=files, manifest=manifest)
