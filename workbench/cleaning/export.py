"""Export a cleaned dataset: corrections applied, exclusions honoured, in the input's own layout.

:func:`export_cleaned` reads the original gold file, changes only what the active annotations
say, and writes one folder, as a whole: every file is written into a temporary folder beside
``out_dir``, which then takes the place of ``out_dir`` (an atomic exchange of the two where
the system offers one), so ``out_dir`` always holds either the complete previous export or the
complete new one, never a mix, even when the process is killed half-way. It holds:

* the cleaned dataset, under the input's file name and in its layout (ConvFinQA reformatted
  JSON, GSM8K JSON Lines, or a plain gold table in CSV, TSV, Parquet, JSON Lines or a JSON list);
* with ``split``: ``train.<ext>`` and ``test.<ext>`` in the same layout and ``split.csv``
  (:func:`stratified_split`);
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

:func:`apply_annotations` gives the same cleaned gold in memory, for re-grading without a file.

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

import contextlib
import copy
import ctypes
import dataclasses
import errno
import glob
import json
import logging
import math
import os
import random
import secrets
import shutil
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl

from workbench import __version__
from workbench.analysis.features import RARE_OPERATIONS, gold_features
from workbench.errors import InputError, UsageError
from workbench.grading import patterns
from workbench.grading.compare import answer_text
from workbench.io.csvsafe import count_formula_cells, write_csv
from workbench.io.gold import (
    GoldDataset,
    executed_text,
    gold_value,
    gsm8k_final_answer,
    load_gold,
    plain_number,
)
from workbench.io.jsonfiles import read_json, read_text
from workbench.io.paths import inside
from workbench.pipeline.graded import file_sha256, parquet_writer, write_atomic
from workbench.schema import ACTIVE_ANNOTATIONS

__all__ = [
    "SUPPORTED_LAYOUTS",
    "ExportResult",
    "apply_annotations",
    "executed_value",
    "export_cleaned",
    "stratified_split",
]

logger = logging.getLogger(__name__)

#: Layouts :func:`export_cleaned` can write back.
SUPPORTED_LAYOUTS = ("convfinqa-reformatted", "gsm8k-jsonl", "plain-table")

#: Columns of the active annotations: the events' columns without ``kind`` and ``retracts``.


#: Benchmarks whose gold has no program, so a program correction has nowhere to go.
_NO_PROGRAM = ("gsm8k", "math")

#: A turn count held by fewer records than this share (or than ``_RARE_MIN_RECORDS``) is rare.
_RARE_SHARE = 0.02
_RARE_MIN_RECORDS = 5

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


@dataclass(frozen=True)
class _Correction:
    answer: str | None
    program: str | None


@dataclass(frozen=True)
class _Plan:
    """What the active annotations ask of the gold, keyed as the gold is."""

    corrections: dict[tuple[str, int], _Correction]
    excluded: dict[str, tuple[int, ...]]  # record id -> the turns whose annotation excludes it
    n_active: int
    n_gold_level: int
    n_system_level: int


# --------------------------------------------------------------------------- values
def executed_value(answer: str) -> float | str:
    """The executed answer a corrected display answer stands for.

    A plain number is its value, a plain percentage its fraction (computed in decimal, so
    ``"14.1%"`` gives exactly ``0.141``); anything else is the text, stripped.

    Examples
    --------
    >>> executed_value("18,770"), executed_value("14.1%"), executed_value("-21.1 %"), executed_value(" yes ")
    (18770.0, 0.141, -0.211, 'yes')
    >>> executed_value("$ 5")
    '$ 5'
    """
    text = answer.strip()
    number = plain_number(text)
    if number is not None:
        return number
    if text.endswith("%"):
        body = text[:-1].strip()
        if plain_number(body) is not None:
            return float(Decimal(body.replace(",", "")) / 100)
    return text


def _rewrite_final_answer(solution: str, answer: str) -> str:
    """Replace the answer after a GSM8K solution's last ``####`` (the rest is kept as it was)."""
    matches = list(patterns.HASH_ANSWER.finditer(solution))
    if not matches:
        return f"{solution.rstrip()}\n#### {answer.strip()}"
    start, end = matches[-1].span("answer")
    return solution[:start] + answer.strip() + solution[end:]


# --------------------------------------------------------------------------- annotations
def _active_frame(annotations: pl.DataFrame) -> pl.DataFrame:
    """The annotations cast to the active columns; an empty frame may have no columns."""
    if annotations.height == 0 and not annotations.columns:
        return pl.DataFrame(schema=ACTIVE_ANNOTATIONS)
    if "kind" in annotations.columns and (annotations["kind"].cast(pl.String) != "annotation").any():
        raise UsageError(
            "expected the active annotations, got events that include retractions; "
            "pass AnnotationStore.active() (or active_annotations(events)) instead of the raw events"
        )
    missing = [c for c in ACTIVE_ANNOTATIONS if c not in annotations.columns]
    if missing:
        raise UsageError(
            f"the annotations frame lacks column(s) {', '.join(missing)} "
            f"(expected {', '.join(ACTIVE_ANNOTATIONS)}; got {', '.join(annotations.columns) or 'none'}); "
            "pass AnnotationStore.active()"
        )
    try:
        frame = annotations.select([pl.col(c).cast(t) for c, t in ACTIVE_ANNOTATIONS.items()])
    except (pl.exceptions.InvalidOperationError, pl.exceptions.ComputeError) as exc:
        raise UsageError(
            f"the annotations frame has a column of the wrong type ({str(exc).splitlines()[0]}); "
            "expected the types of workbench.schema.ANNOTATION_EVENTS; pass AnnotationStore.active()"
        ) from None
    keys = frame.select("record_id", "turn", "system")
    if keys.is_duplicated().any():
        record_id, turn, system = keys.filter(keys.is_duplicated()).row(0)
        raise UsageError(
            f"expected one active annotation per (record_id, turn, system), got several for "
            f"('{record_id}', {turn}, {system!r}); pass AnnotationStore.active(), which keeps the latest"
        )
    return frame


def _annotation_error(gold: GoldDataset, row: Mapping[str, Any], problem: str, field: str, fix: str) -> InputError:
    return InputError(
        str(gold.path),
        problem,
        location=f"annotation event {row['event_id']} (record '{row['record_id']}', turn {row['turn']})",
        field=field,
        fix=fix,
    )


def _plan(gold: GoldDataset, active: pl.DataFrame) -> _Plan:
    """Check every annotation against ``gold`` and say what the gold-level ones change."""
    n_turns = dict(gold.turns.group_by("record_id").agg(pl.len()).iter_rows())
    corrections: dict[tuple[str, int], _Correction] = {}
    excluded: dict[str, list[int]] = {}
    n_gold = 0
    retract = "retract that annotation (undo in the triage view, or AnnotationStore.retract(event_id, annotator=...)), or export the dataset it was made on"
    for row in active.sort("event_id").iter_rows(named=True):
        record_id, turn = row["record_id"], row["turn"]
        if record_id not in n_turns:
            raise _annotation_error(
                gold, row, f"the dataset has no record '{record_id}' ({len(n_turns)} records)", "record_id", retract
            )
        if turn is None or not 0 <= turn < n_turns[record_id]:
            raise _annotation_error(
                gold,
                row,
                f"record '{record_id}' has turns 0..{n_turns[record_id] - 1}, not turn {turn}",
                "turn",
                retract,
            )
        if row["system"] is not None:
            continue
        n_gold += 1
        answer, program = row["corrected_answer"], row["corrected_program"]
        if answer is not None and not answer.strip():
            raise _annotation_error(
                gold, row, "the corrected answer is blank", "corrected_answer", "give the answer, or leave it null"
            )
        if answer is not None and gold.benchmark == "gsm8k" and "\n" in answer.strip():
            raise _annotation_error(
                gold,
                row,
                "a GSM8K final answer is one line; the corrected answer has several",
                "corrected_answer",
                "give the final answer on one line",
            )
        if program is not None and gold.benchmark in _NO_PROGRAM:
            raise _annotation_error(
                gold,
                row,
                f"{gold.benchmark} gold ({gold.layout}) has no program to correct",
                "corrected_program",
                "leave corrected_program empty and give corrected_answer",
            )
        if answer is not None or program is not None:
            corrections[(record_id, turn)] = _Correction(answer, program)
        if row["exclude"]:
            excluded.setdefault(record_id, []).append(turn)
    return _Plan(
        corrections=corrections,
        excluded={k: tuple(sorted(v)) for k, v in excluded.items()},
        n_active=active.height,
        n_gold_level=n_gold,
        n_system_level=active.height - n_gold,
    )


def _corrected_row(gold: GoldDataset, row: dict[str, Any], correction: _Correction) -> dict[str, Any]:
    """A gold turn row with a correction applied, written as :func:`load_gold` reads the export."""
    out = dict(row)
    if correction.program is not None:
        out["gold_program"] = correction.program
    answer = correction.answer
    if answer is None:
        return out
    if gold.benchmark == "convfinqa":
        executed = executed_value(answer)
        out.update(
            gold_answer=answer_text(answer), gold_executed=answer_text(executed), gold_value=gold_value(executed)
        )
    elif gold.benchmark == "gsm8k":
        solution = row["gold_solution"]
        if solution is not None and gsm8k_final_answer(solution) is not None:
            out["gold_solution"] = solution = _rewrite_final_answer(solution, answer)
            final = gsm8k_final_answer(solution) or answer.strip()
        else:
            final = answer.strip()
        out.update(gold_answer=final, gold_executed=executed_text(final), gold_value=plain_number(final))
    elif gold.benchmark == "table":
        text = answer_text(answer)
        out.update(gold_answer=text, gold_executed=executed_text(text), gold_value=gold_value(answer))
    else:  # math: the boxed answer; the solution text is left as it was
        text = answer.strip()
        out.update(gold_answer=text, gold_executed=text, gold_value=plain_number(text))
    return out


def _apply_plan(gold: GoldDataset, plan: _Plan, *, drop_excluded: bool = True) -> GoldDataset:
    turns = gold.turns
    if plan.corrections:
        rows = [
            _corrected_row(gold, row, plan.corrections[(row["record_id"], row["turn"])])
            if (row["record_id"], row["turn"]) in plan.corrections
            else row
            for row in turns.iter_rows(named=True)
        ]
        turns = pl.DataFrame(rows, schema=turns.schema)
    documents = gold.documents
    if drop_excluded and plan.excluded:
        dropped = turns.filter(pl.col("record_id").is_in(list(plan.excluded)))
        turns = turns.filter(~pl.col("record_id").is_in(list(plan.excluded)))
        orphans = set(dropped["doc_id"].drop_nulls()) - set(turns["doc_id"].drop_nulls())
        documents = documents.filter(~pl.col("doc_id").is_in(sorted(orphans)))
    return dataclasses.replace(gold, turns=turns, documents=documents)


def apply_annotations(gold: GoldDataset, annotations: pl.DataFrame) -> GoldDataset:
    """The cleaned gold for re-grading: gold-level corrections applied, excluded records removed.

    Gives the same ``turns`` as :func:`workbench.io.gold.load_gold` on the file
    :func:`export_cleaned` writes (for GSM8K with exclusions, up to the renumbered ids: here the
    records keep their original ids).

    Parameters
    ----------
    gold
        From :func:`workbench.io.gold.load_gold`.
    annotations
        The active annotations (``AnnotationStore.active()``): one row per
        ``(record_id, turn, system)`` with the columns of ``ANNOTATION_EVENTS`` but ``kind`` and
        ``retracts``. A corrected answer sets ``gold_answer``, ``gold_executed`` and
        ``gold_value`` (and the ``####`` line of a GSM8K ``gold_solution``); a corrected program
        sets ``gold_program``; ``exclude`` removes the record's turns and its document.
        Annotations with a ``system`` change nothing.

    Returns
    -------
    GoldDataset
        A new dataset; ``gold`` is not changed.

    Raises
    ------
    InputError
        An annotation names a record or turn ``gold`` does not have, has a blank corrected
        answer, or corrects a program of a dataset without programs.
    UsageError
        ``annotations`` is not a frame of active annotations.

    Examples
    --------
    >>> from workbench.config import project_root
    >>> gold = load_gold(project_root() / "tests/fixtures/convfinqa/dev_small.json")
    >>> notes = pl.DataFrame([  # gold "10%" where the program gives -0.09709; and one conversation left out
    ...     {"event_id": 1, "record_id": "Single_UNP/2008/page_77.pdf-2", "turn": 4, "corrected_answer": "-9.7%"},
    ...     {"event_id": 2, "record_id": "Double_RSG/2016/page_144.pdf", "turn": 0, "exclude": True},
    ... ], schema=ACTIVE_ANNOTATIONS)
    >>> cleaned = apply_annotations(gold, notes)
    >>> cleaned.turns.filter(record_id="Single_UNP/2008/page_77.pdf-2", turn=4).select("gold_answer", "gold_value").row(0)
    ('-9.7%', -0.097)
    >>> gold.turns.height - cleaned.turns.height, gold.documents.height - cleaned.documents.height
    (4, 1)
    """
    active = _active_frame(annotations)
    return _apply_plan(gold, _plan(gold, active))


# --------------------------------------------------------------------------- split
def _allocate(
    sizes: Mapping[str, int], fraction: float, target: int, tie_break: Mapping[str, float], *, both_sides: bool
) -> dict[str, int]:
    """How many records of each group go to train: floor or ceil of ``size * fraction`` each,
    summing to ``target`` as nearly as the bounds allow (largest remainders get the ceilings).

    With ``both_sides`` a group of two or more keeps at least one record on each side.
    """
    low: dict[str, int] = {}
    high: dict[str, int] = {}
    for group, size in sizes.items():
        lo, hi = math.floor(size * fraction), math.ceil(size * fraction)
        if both_sides and size >= 2:
            lo, hi = min(max(lo, 1), size - 1), min(max(hi, 1), size - 1)
        low[group], high[group] = lo, hi
    extra = min(max(target, sum(low.values())), sum(high.values())) - sum(low.values())
    order = sorted(
        (g for g in sizes if high[g] > low[g]),
        key=lambda g: (-(sizes[g] * fraction - low[g]), tie_break[g], g),
    )
    counts = dict(low)
    for group in order[:extra]:
        counts[group] += 1
    return counts


def stratified_split(records: pl.DataFrame, train_fraction: float, seed: int = 0) -> pl.DataFrame:
    """Split records into train and test, stratified, with rare records spread over both sides.

    Rare records (``rare`` true) are placed first: the rare ones as a whole get
    ``round(n * train_fraction)`` train records, kept to at least one on each side when there
    are two or more, and each rare group (the optional ``rare_group`` column, say ``"greater"``
    or ``"turns=7"``; ``"rare"`` without it) is split the same way within itself. The other
    records are stratified by ``(n_turns, has_type2_question)``: each stratum gets the floor or
    the ceiling of ``size * train_fraction`` train records (so it is off by less than one
    record), the ceilings going to the largest remainders so that the whole split comes as
    close to the fraction as it can. Which records of a stratum go to train is a shuffle seeded
    by ``seed`` and the stratum, so the split is the same for the same records and seed, in
    any row order.

    Parameters
    ----------
    records
        One row per record: ``record_id``, ``n_turns``, ``has_type2_question`` (null reads as
        false), ``rare``; optionally ``rare_group``.
    train_fraction
        The share of records in train, strictly between 0 and 1.
    seed
        Seeds the shuffles and the tie-breaks.

    Returns
    -------
    polars.DataFrame
        ``record_id``, ``split`` (``"train"`` or ``"test"``), ``stratum`` (``"turns=4,type2=true"``
        or ``"rare:<group>"``), in the order of ``records``.

    Raises
    ------
    UsageError
        A fraction outside (0, 1), a missing column, a duplicate record id, or fewer than two records.

    Examples
    --------
    >>> records = pl.DataFrame({"record_id": [f"r{i}" for i in range(10)], "n_turns": [2] * 8 + [7, 7],
    ...     "has_type2_question": [False] * 10, "rare": [False] * 8 + [True, True]})
    >>> out = stratified_split(records, 0.75, seed=0)
    >>> out.group_by("stratum", "split").len().sort("stratum", "split").rows()
    [('rare', 'test', 1), ('rare', 'train', 1), ('turns=2,type2=false', 'test', 2), ('turns=2,type2=false', 'train', 6)]
    """
    if not isinstance(train_fraction, int | float) or not 0 < train_fraction < 1:
        raise UsageError(
            f"split must be a fraction strictly between 0 and 1 (the share of records in train), "
            f"got {train_fraction!r}; give e.g. 0.8"
        )
    required = ("record_id", "n_turns", "has_type2_question", "rare")
    missing = [c for c in required if c not in records.columns]
    if missing:
        raise UsageError(
            f"stratified_split needs columns {', '.join(required)} (optional rare_group); "
            f"missing {', '.join(missing)}; add them"
        )
    if records.height < 2:
        raise UsageError(f"a split needs at least two records, got {records.height}; export without split")
    if records["record_id"].is_duplicated().any():
        duplicate = records.filter(pl.col("record_id").is_duplicated())["record_id"][0]
        raise UsageError(f"record id '{duplicate}' appears twice in the records to split; give each record once")
    group = pl.col("rare_group") if "rare_group" in records.columns else pl.lit(None, pl.String)
    frame = records.select(
        pl.col("record_id").cast(pl.String),
        pl.col("rare").fill_null(False).cast(pl.Boolean),
        pl.when(pl.col("rare").fill_null(False))
        .then(pl.concat_str(pl.lit("rare:"), group.cast(pl.String)).fill_null(pl.lit("rare")))
        .otherwise(
            pl.format(
                "turns={},type2={}",
                pl.col("n_turns"),
                pl.col("has_type2_question").fill_null(False).cast(pl.String).str.to_lowercase(),
            )
        )
        .alias("stratum"),
    )
    members: dict[str, list[str]] = {}
    rare_strata: set[str] = set()
    for record_id, rare, stratum in frame.iter_rows():
        members.setdefault(stratum, []).append(record_id)
        if rare:
            rare_strata.add(stratum)
    rng = random.Random(seed)
    tie_break = {stratum: rng.random() for stratum in sorted(members)}
    sizes = {s: len(ids) for s, ids in members.items()}
    rare_sizes = {s: n for s, n in sizes.items() if s in rare_strata}
    rest_sizes = {s: n for s, n in sizes.items() if s not in rare_strata}
    n_rare = sum(rare_sizes.values())
    rare_target = math.floor(n_rare * train_fraction + 0.5)
    if n_rare >= 2:
        rare_target = min(max(rare_target, 1), n_rare - 1)
    counts = _allocate(rare_sizes, train_fraction, rare_target, tie_break, both_sides=True)
    total_target = math.floor(records.height * train_fraction + 0.5)
    counts |= _allocate(rest_sizes, train_fraction, total_target - sum(counts.values()), tie_break, both_sides=False)
    split_of: dict[str, str] = {}
    for stratum, ids in members.items():
        shuffled = sorted(ids)
        random.Random(f"{seed}:{stratum}").shuffle(shuffled)
        for position, record_id in enumerate(shuffled):
            split_of[record_id] = "train" if position < counts[stratum] else "test"
    return frame.select(
        "record_id",
        pl.col("record_id").replace_strict(split_of, return_dtype=pl.String).alias("split"),
        "stratum",
    )


def _split_records(gold: GoldDataset) -> pl.DataFrame:
    """The records of ``gold`` with what :func:`stratified_split` stratifies on.

    A record is rare when one of its gold programs uses a rare operation
    (:data:`workbench.analysis.features.RARE_OPERATIONS`; its group is the rarest such operation), or
    when its number of turns is held by fewer than 2% of the records or fewer than 5
    (group ``turns=<n>``).
    """
    rare_ops: dict[str, set[str]] = {}
    for record_id, ops in gold_features(gold.turns).select("record_id", "gold_operations").iter_rows():
        rare_ops.setdefault(record_id, set()).update(op for op in ops if op in RARE_OPERATIONS)
    per_record = gold.turns.group_by("record_id", maintain_order=True).agg(
        pl.col("n_turns").first(), pl.col("has_type2_question").first().fill_null(False)
    )
    op_count: dict[str, int] = {}
    for ops in rare_ops.values():
        for op in ops:
            op_count[op] = op_count.get(op, 0) + 1
    turn_count = dict(per_record.group_by("n_turns").len().iter_rows())
    threshold = max(_RARE_SHARE * per_record.height, _RARE_MIN_RECORDS)
    groups: list[str | None] = []
    for record_id, n_turns in per_record.select("record_id", "n_turns").iter_rows():
        ops = rare_ops.get(record_id)
        if ops:
            groups.append(min(ops, key=lambda op: (op_count[op], op)))
        elif turn_count[n_turns] < threshold:
            groups.append(f"turns={n_turns}")
        else:
            groups.append(None)
    return per_record.select(
        "record_id",
        "n_turns",
        "has_type2_question",
        pl.Series("rare", [g is not None for g in groups], dtype=pl.Boolean),
        pl.Series("rare_group", groups, dtype=pl.String),
    )


# --------------------------------------------------------------------------- layouts
Writer = Callable[[Path], None]


@dataclass(frozen=True)
class _Unit:
    """One item of the input file in file order: a record, a line, or a table row (one turn)."""

    record_id: str
    payload: Any


@dataclass(frozen=True)
class _CsvFile:
    """Writes ``frame`` as CSV (TSV with ``separator="\\t"``), formula-looking cells quoted
    (:func:`workbench.io.csvsafe.write_csv`)."""

    frame: pl.DataFrame
    separator: str = ","

    def __call__(self, tmp: Path) -> None:
        write_csv(self.frame, tmp, separator=self.separator)

    @property
    def quoted(self) -> int:
        """How many cells (and column names) the file has quoted."""
        return count_formula_cells(self.frame)


def _json_text(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _dump_like(line: str, original: Any, obj: Any) -> str:
    """Write ``obj`` as one JSON line in the style ``line`` wrote ``original`` (compact or spaced,
    escaped or raw non-ASCII)."""
    ascii_only = line.isascii()
    compact = json.dumps(original, ensure_ascii=ascii_only, separators=(",", ":")) == line.strip()
    return json.dumps(obj, ensure_ascii=ascii_only, separators=(",", ":") if compact else None)


def _text_writer(text: str) -> Writer:
    return lambda tmp: tmp.write_text(text, encoding="utf-8", newline="")


class _Reformatted:
    """ConvFinQA reformatted: ``{"dev": [records]}``; a unit is a record (a conversation)."""

    def __init__(self, path: Path) -> None:
        self.data: dict[str, list[dict[str, Any]]] = read_json(path)
        self.units: list[_Unit] = []
        self.keys: list[str] = []
        for key, records in self.data.items():
            for record in records:
                self.units.append(_Unit(str(record.get("id", f"#{len(self.units)}")), record))
                self.keys.append(key)

    def edit(self, unit: _Unit, corrections: Mapping[int, _Correction], marker: Sequence[int] | None) -> _Unit:
        """Apply the record's corrections; ``marker``: the excluded turns, for a kept record."""
        record = copy.deepcopy(unit.payload)
        dialogue = record["dialogue"]
        for turn, correction in corrections.items():
            if correction.answer is not None:
                dialogue["conv_answers"][turn] = correction.answer
                dialogue["executed_answers"][turn] = executed_value(correction.answer)
            if correction.program is not None:
                dialogue["turn_program"][turn] = correction.program
        if marker is not None:
            record["workbench"] = {"excluded": True, "excluded_turns": list(marker)}
        return _Unit(unit.record_id, record)

    def render(self, kept: Sequence[int], units: Sequence[_Unit], name: str | None) -> Writer:
        if name is not None:
            return _text_writer(_json_text({name: [units[i].payload for i in kept]}))
        out: dict[str, list[Any]] = {key: [] for key in self.data}
        for i in kept:
            out[self.keys[i]].append(units[i].payload)
        return _text_writer(_json_text(out))


class _Objects:
    """One JSON object a turn, as JSON Lines (blank lines and untouched lines kept byte for byte)
    or as a JSON list: GSM8K ``{question, answer}`` or a plain gold table."""

    def __init__(self, path: Path, gold: GoldDataset) -> None:
        self.gold = gold
        self.lines: list[str] | None = None
        self.newline = "\n"
        self.trailing = True
        if path.suffix.lower() in (".jsonl", ".ndjson"):
            objects = None
        else:
            try:
                objects = read_json(path)
            except InputError:  # a .json file that holds JSON Lines, as load_gold allows
                objects = None
        items: list[tuple[str | None, dict[str, Any]]]
        if isinstance(objects, list):
            items = [(None, obj) for obj in objects]
        else:
            text = read_text(path)
            self.newline = "\r\n" if "\r\n" in text else "\n"
            self.trailing = text.endswith(("\n", "\r"))
            self.lines = text.splitlines()
            items = [(line, json.loads(line)) for line in self.lines if line.strip()]
        ids = gold.turns["record_id"].to_list()
        self.units = [_Unit(ids[i], item) for i, item in enumerate(items)]

    def edit(self, unit: _Unit, corrections: Mapping[int, _Correction], marker: Sequence[int] | None) -> _Unit:
        """Apply the unit's own correction; ``marker``: the excluded turns, for a kept record."""
        line, obj = unit.payload
        obj = copy.deepcopy(obj)
        gsm8k = self.gold.benchmark == "gsm8k"
        for correction in corrections.values():
            if correction.answer is not None:
                if gsm8k:
                    obj["answer"] = _rewrite_final_answer(obj["answer"], correction.answer)
                else:
                    obj["gold_answer"] = correction.answer
            if correction.program is not None:  # never for GSM8K: _plan refuses it
                obj["gold_program"] = correction.program
        if marker is not None:
            if gsm8k:
                obj["workbench"] = {"excluded": True, "excluded_turns": list(marker)}
            else:
                obj["excluded"] = bool(marker)
        if line is not None:
            line = _dump_like(line, unit.payload[1], obj)
        return _Unit(unit.record_id, (line, obj))

    def render(self, kept: Sequence[int], units: Sequence[_Unit], name: str | None) -> Writer:
        if self.lines is None:
            return _text_writer(_json_text([units[i].payload[1] for i in kept]))
        if name is not None:
            lines = [units[i].payload[0] for i in kept]
        else:
            keep = set(kept)
            lines, index = [], 0
            for line in self.lines:
                if not line.strip():
                    lines.append(line)
                    continue
                if index in keep:
                    lines.append(units[index].payload[0])
                index += 1
        text = self.newline.join(lines) + (self.newline if self.trailing or name is not None else "")
        return _text_writer(text)


def _read_frame(path: Path) -> pl.DataFrame:
    """A plain gold table read exactly as :func:`workbench.io.gold.load_gold` reads it."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return pl.read_parquet(path)
    return pl.read_csv(path, infer_schema=False, separator="\t" if suffix == ".tsv" else ",")


def _scatter_text(frame: pl.DataFrame, column: str, rows: Sequence[int], values: Sequence[str]) -> pl.DataFrame:
    """Set text cells; a missing column is added, a non-text one is written as text first."""
    if column not in frame.columns:
        series = pl.Series(column, [None] * frame.height, dtype=pl.String)
    elif frame[column].dtype in (pl.String, pl.Null):
        series = frame[column].cast(pl.String).clone()
    else:
        series = pl.Series(
            column, [None if v is None else answer_text(v) for v in frame[column].to_list()], dtype=pl.String
        )
    return frame.with_columns(series.scatter(list(rows), list(values)))


def _table_frame(
    path: Path, gold: GoldDataset, plan: _Plan, *, keep_excluded: bool
) -> tuple[pl.DataFrame, pl.Series, Callable[[pl.DataFrame], Writer]]:
    """The cleaned table (all rows, corrections applied, ``excluded`` column when kept),
    the record id of each row, and the writer of a frame in the input's format."""
    frame = _read_frame(path)
    keys = gold.turns.select("record_id", "turn").with_row_index("row")
    index = {(r, t): i for i, r, t in keys.iter_rows()}
    for column, attribute in (("gold_answer", "answer"), ("gold_program", "program")):
        cells = [
            (index[key], getattr(c, attribute))
            for key, c in plan.corrections.items()
            if getattr(c, attribute) is not None
        ]
        if cells:
            frame = _scatter_text(frame, column, [r for r, _ in cells], [v for _, v in cells])
    record_ids = gold.turns["record_id"]
    if keep_excluded:
        frame = frame.with_columns(record_ids.is_in(list(plan.excluded)).alias("excluded"))
    suffix = path.suffix.lower()

    def writer(out: pl.DataFrame) -> Writer:
        if suffix == ".parquet":  # Parquet keeps every value verbatim
            return parquet_writer(out)
        return _CsvFile(out, "\t" if suffix == ".tsv" else ",")

    return frame, record_ids, writer


# --------------------------------------------------------------------------- export
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
    _recover_interrupted(out)
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


def _make_staging(out: Path, mode: int | None) -> Path:
    """A new empty folder beside ``out`` to write the export into, named as
    :func:`_recover_interrupted` expects, with the mode of the folder it replaces (``mode``) or,
    for a new folder, the usual mode of a new folder (``0o777`` less the umask)."""
    for _ in range(100):
        staging = out.with_name(f".{out.name}.export-{os.getpid()}-{secrets.token_hex(6)}")
        try:
            os.mkdir(staging, 0o777)  # the system applies the umask (and a default ACL)
        except FileExistsError:
            continue
        if mode is not None:
            os.chmod(staging, mode)
        return staging
    raise FileExistsError(errno.EEXIST, "no free name for a temporary export folder", str(out.parent))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _recover_interrupted(out: Path) -> None:
    """Undo what a killed export left beside ``out``: put back a previous export it had moved
    aside (when ``out`` itself is missing), and remove its temporary folders."""
    parent = out.parent
    if not parent.is_dir():
        return

    def leftovers(kind: str) -> list[Path]:
        found = []
        for folder in sorted(parent.glob(f".{glob.escape(out.name)}.{kind}-*")):
            pid = folder.name[len(f".{out.name}.{kind}-") :].split("-")[0]
            if folder.is_dir() and pid.isdigit() and not _pid_alive(int(pid)):
                found.append(folder)
        return sorted(found, key=lambda folder: folder.name.rsplit("-", 1)[-1])

    moved = leftovers("previous")
    if moved and not os.path.lexists(out):
        os.rename(moved.pop(), out)
        logger.warning("put back the previous export %s, which an interrupted export had moved aside", out)
    for folder in [*moved, *leftovers("export")]:
        shutil.rmtree(folder, ignore_errors=True)


def _fsync_tree(folder: Path) -> None:
    """Flush the files of ``folder`` and the folder itself to disk."""
    for item in folder.iterdir():
        if item.is_file():
            with item.open("rb") as handle:
                os.fsync(handle.fileno())
    _fsync_dir(folder)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directory entries atomically (Linux ``renameat2(RENAME_EXCHANGE)``); ``False``
    where the system or file system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _swap_in(new: Path, out: Path, previous: Mapping[str, str] | None) -> None:
    """Make the complete folder ``new`` be ``out``; an earlier ``out`` is removed only after.

    What was at ``out`` is checked again once it is out of the way (it must still hold only the
    earlier export ``previous`` lists, or nothing): if a file appeared there meanwhile it is put
    back and the export refused, so nothing but an earlier export is ever removed.
    """
    if not os.path.lexists(out):
        os.rename(new, out)
    elif _exchange(new, out):  # ``new`` now holds the earlier export
        foreign = ["(not a folder)"] if new.is_symlink() or not new.is_dir() else _foreign_entries(new, previous)
        if foreign:
            _exchange(new, out)
            raise _refuse_foreign(out, foreign)
        shutil.rmtree(new, ignore_errors=True)
    else:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        old = out.with_name(f".{out.name}.previous-{os.getpid()}-{stamp}")
        os.rename(out, old)
        foreign = ["(not a folder)"] if old.is_symlink() or not old.is_dir() else _foreign_entries(old, previous)
        if foreign:
            os.rename(old, out)
            raise _refuse_foreign(out, foreign)
        try:
            os.rename(new, out)
        except BaseException:
            os.rename(old, out)
            raise
        shutil.rmtree(old, ignore_errors=True)
    _fsync_dir(out.parent)


def _split_summary(split_table: pl.DataFrame, gold: GoldDataset) -> dict[str, Any]:
    turns = gold.turns.group_by("record_id").agg(pl.len().alias("n_turns"))
    sides = (
        split_table.join(turns, on="record_id", how="left")
        .group_by("split")
        .agg(pl.len().alias("n_records"), pl.col("n_turns").sum(), pl.col("stratum").n_unique().alias("n_strata"))
        .sort("split")
    )
    return {
        side: {"n_records": n_records, "n_turns": n_turns, "n_strata": n_strata}
        for side, n_records, n_turns, n_strata in sides.iter_rows()
    }


def _dataset_writers(
    path: Path, gold: GoldDataset, plan: _Plan, *, keep_excluded: bool, assignment: pl.DataFrame | None
) -> dict[str, Writer]:
    """Writers of the cleaned dataset and, with an assignment, of its train and test parts."""
    split_of = dict(assignment.select("record_id", "split").iter_rows()) if assignment is not None else {}
    sides = ("train", "test") if assignment is not None else ()
    writers: dict[str, Writer] = {}
    if gold.layout == "plain-table" and path.suffix.lower() in (".csv", ".tsv", ".parquet"):
        frame, record_ids, writer = _table_frame(path, gold, plan, keep_excluded=keep_excluded)
        keep = pl.Series([keep_excluded or r not in plan.excluded for r in record_ids], dtype=pl.Boolean)
        writers["dataset"] = writer(frame.filter(keep))
        for side in sides:
            chosen = pl.Series([split_of.get(r) == side for r in record_ids], dtype=pl.Boolean)
            writers[side] = writer(frame.filter(chosen))
        return writers
    source: _Reformatted | _Objects = (
        _Reformatted(path) if gold.layout == "convfinqa-reformatted" else _Objects(path, gold)
    )
    by_record: dict[str, dict[int, _Correction]] = {}
    for (record_id, turn), correction in plan.corrections.items():
        by_record.setdefault(record_id, {})[turn] = correction
    turn_of = gold.turns["turn"].to_list()
    table = gold.layout == "plain-table"
    units = list(source.units)
    for i, unit in enumerate(units):
        corrections = by_record.get(unit.record_id, {})
        if isinstance(source, _Objects):  # one object a turn: only that turn's correction
            corrections = {t: c for t, c in corrections.items() if t == turn_of[i]}
        marker = None
        if keep_excluded and (table or unit.record_id in plan.excluded):
            marker = plan.excluded.get(unit.record_id, ())
        if corrections or marker is not None:
            units[i] = source.edit(unit, corrections, marker)
    kept = [i for i, u in enumerate(units) if keep_excluded or u.record_id not in plan.excluded]
    writers["dataset"] = source.render(kept, units, None)
    for side in sides:
        writers[side] = source.render(
            [i for i, u in enumerate(units) if split_of.get(u.record_id) == side], units, side
        )
    return writers


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
        The active annotations (``AnnotationStore.active()``); see :func:`apply_annotations`.
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
        :func:`stratified_split`), or ``None`` for no split.
    seed
        Seeds the split.
    snapshot
        What the annotation store looked like (``AnnotationStore.snapshot()``), for the manifest.
    parameters
        More parameters to record in the manifest (say, the command line's).
    inputs
        Other files the export reads (the annotation store), which ``out_dir`` may neither be
        nor hold.

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
        of :func:`apply_annotations`).

    Examples
    --------
    >>> import tempfile
    >>> from workbench.config import project_root
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
    active = _active_frame(annotations)
    plan = _plan(gold, active)
    cleaned = _apply_plan(gold, plan)
    n_records_in = gold.turns["record_id"].n_unique()
    if cleaned.turns.height == 0 and not keep_excluded:
        raise UsageError(
            f"every record of {path} is excluded ({len(plan.excluded)} records); nothing to export; "
            "retract some exclusions or pass keep_excluded=True"
        )

    assignment: pl.DataFrame | None = None
    if split is not None:
        assignment = stratified_split(_split_records(cleaned), split, seed)

    writers = _dataset_writers(path, gold, plan, keep_excluded=keep_excluded, assignment=assignment)
    split_table: pl.DataFrame | None = None
    if assignment is not None:
        # excluded records kept with keep_excluded stay out of train and test, and split.csv says so
        marked = pl.DataFrame(
            {"record_id": sorted(plan.excluded) if keep_excluded else []}, schema={"record_id": pl.String}
        )
        split_table = pl.concat(
            [assignment, marked.with_columns(split=pl.lit("excluded"), stratum=pl.lit(None, pl.String))]
        )
        writers["split"] = _CsvFile(split_table)
    writers["annotations_parquet"] = parquet_writer(active)
    writers["annotations_csv"] = _CsvFile(active)

    out.parent.mkdir(parents=True, exist_ok=True)
    staging = _make_staging(out, mode)
    try:
        entries: dict[str, dict[str, Any]] = {}
        for role in ("dataset", "train", "test", "split", "annotations_parquet", "annotations_csv"):
            if role in writers:
                written = write_atomic(inside(staging, names[role]), writers[role])
                entries[role] = {"path": names[role], "sha256": file_sha256(written)}

        output_gold = cleaned if not keep_excluded else _apply_plan(gold, plan, drop_excluded=False)
        manifest: dict[str, Any] = {
            "workbench_version": __version__,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            "input": {
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
            },
            "parameters": _json_safe(own | dict(parameters or {})),
            "output": {
                "n_records": output_gold.turns["record_id"].n_unique(),
                "n_turns": output_gold.turns.height,
                "excluded_records": sorted(plan.excluded),
                "excluded_kept": keep_excluded,
                "renumbered": gold.layout == "gsm8k-jsonl" and bool(plan.excluded) and not keep_excluded,
                "quoted_cells": {role: w.quoted for role, w in writers.items() if isinstance(w, _CsvFile)},
            },
            "split": None if split_table is None else _split_summary(split_table, output_gold),
            "files": entries,
        }
        text = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
        write_atomic(inside(staging, names["manifest"]), _text_writer(text))
        _fsync_tree(staging)
        _swap_in(staging, out, previous)
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
