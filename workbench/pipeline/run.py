"""Load, grade and (optionally) write one run: the call behind ``workbench grade`` and the
templates; and open a graded folder as a run again without grading (:func:`open_run`)."""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import polars as pl

from workbench.analysis.metrics import Item, conversations, counted_item, is_multi_turn, summarize
from workbench.config import BENCHMARKS, RunConfig, locate, system_names
from workbench.errors import InputError, UsageError
from workbench.grading.compare import AnswerKind
from workbench.grading.limits import start_worker
from workbench.grading.policies import POLICIES, for_benchmark
from workbench.io.gold import GoldDataset, load_gold
from workbench.io.link import (
    NOT_IN_GOLD,
    REPEATED_QUESTION,
    attach_record_ids,
    detect_benchmark,
    gold_from_predictions,
)
from workbench.io.manifest import Manifest
from workbench.io.predictions import PredictionFile, default_system_name, read_predictions
from workbench.parallel import POOL_THRESHOLD, in_pool, pool_ahead
from workbench.pipeline.engines import grade_on_engine
from workbench.pipeline.grade import GradedRun, grade_predictions
from workbench.pipeline.graded import file_sha256, graded_paths, read_graded, write_graded
from workbench.pipeline.reuse import GradeReuse

__all__ = ["Run", "grade_run", "open_run", "open_or_grade"]


@dataclass(frozen=True)
class Run:
    """A graded run with its inputs, ready for tables, plots and export.

    ``graded_dir`` is the graded folder the run was opened from (:func:`open_run`), and
    ``recorded_summary`` that folder's metrics (``summary.json``); both ``None`` for a run
    graded here. ``notes`` are lines worth saying once about how the inputs were read (a
    prediction file without a turn column read as single-turn).
    """

    config: RunConfig
    gold: GoldDataset
    graded: GradedRun
    prediction_files: tuple[tuple[Path, str], ...]
    predictions: tuple[pl.DataFrame, ...] = ()
    kind: AnswerKind = "auto"
    graded_dir: Path | None = None
    recorded_summary: Mapping[str, dict[str, Any]] | None = None
    notes: tuple[str, ...] = ()

    @property
    def turns(self) -> pl.DataFrame:
        return self.graded.turns

    @property
    def conversations(self) -> pl.DataFrame:
        return conversations(self.graded.turns)

    @property
    def multi_turn(self) -> bool:
        """Whether some graded turn follows another in its conversation."""
        return is_multi_turn(self.graded.turns["turn"])

    @property
    def item(self) -> Item:
        """What the run counts: ``"turn"`` (ConvFinQA, or any conversation) or ``"problem"``
        (GSM8K, MATH: one question, one turn); see :func:`workbench.analysis.metrics.counted_item`."""
        return counted_item(self.gold.benchmark, self.graded.turns["turn"])

    @property
    def unmatched(self) -> pl.DataFrame:
        return self.graded.unmatched

    @cached_property
    def summary(self) -> dict[str, dict[str, Any]]:
        """Headline metrics per system (computed once: BLEU/ROUGE are not free; a run opened
        from a graded folder has them from its ``summary.json``)."""
        if self.recorded_summary is not None:
            return dict(self.recorded_summary)
        g = self.graded
        return summarize(g.turns, g.unmatched, g.policy.name, g.systems, g.policy_grades)

    @property
    def policy_grades(self) -> pl.DataFrame:
        """One row per turn and grading policy (see :data:`workbench.schema.POLICY_GRADES`), built
        from the grades of the distinct inputs on first use (:attr:`GradedRun.policy_grades`)."""
        return self.graded.policy_grades

    @property
    def checks(self) -> pl.DataFrame:
        """Data-quality flags on the gold turns (see :data:`workbench.schema.CHECKS`)."""
        return self.graded.checks

    def regrade(self, gold: GoldDataset) -> GradedRun:
        """Grade the same predictions against another gold set (a cleaned export of this one)."""
        g = self.graded
        return grade_predictions(
            gold,
            list(self.predictions),
            policy=g.policy,
            kind=self.kind,
            benchmark=self.gold.benchmark,
        )

    def write(self, out_dir: str | Path) -> dict[str, Path]:
        """Write ``turns.parquet``, ``conversations.parquet``, ``unmatched.parquet``,
        ``policy_inputs.parquet``, ``checks.parquet`` and ``summary.json`` into ``out_dir``;
        an empty ``out_dir`` writes nothing, and the folder the run was opened from holds its
        files already (their paths are returned, nothing is written)."""
        if not str(out_dir):
            return {}
        if self.graded_dir is not None and Path(out_dir).resolve() == self.graded_dir.resolve():
            return graded_paths(self.graded_dir)
        return write_graded(self.graded, self.gold, self.prediction_files, out_dir, summary=self.summary)

    def __repr__(self) -> str:
        systems = ", ".join(system for _, system in self.prediction_files)
        return (
            f"Run(dataset={str(self.gold.path)!r}, systems=[{systems}], turns={self.graded.turns.height}, "
            f"policy={self.graded.policy.name!r}); workbench.tables.run_overview(run) shows it as a page"
        )


#: How answers are compared for each benchmark (see :func:`workbench.grading.compare.answers_match`).
_KIND_BY_BENCHMARK: dict[str, AnswerKind] = {"math": "latex"}

#: The gold layout of a run graded without a dataset file (gold taken from the prediction files).
_CARRIED_LAYOUT = "carried-in-predictions"

#: Gold layouts that fix no benchmark (a plain table; gold carried in the outputs, whose benchmark
#: is guessed from its answers): ``--benchmark`` decides their grading rules.
_OPEN_LAYOUTS = ("plain-table", _CARRIED_LAYOUT)


def _check_benchmark(config: RunConfig, gold: GoldDataset, found: str) -> GoldDataset:
    """The gold set under the benchmark whose rules grade it: ``found`` (from the data) unless
    ``--benchmark`` names another; that applies to a layout of :data:`_OPEN_LAYOUTS` (the layout is
    the file's, the rules the benchmark's) and contradicts a ConvFinQA, GSM8K or MATH dataset."""
    if config.benchmark in ("auto", found):
        return gold if gold.benchmark == found else dataclasses.replace(gold, benchmark=found)  # type: ignore[arg-type]
    if gold.layout in _OPEN_LAYOUTS:
        return dataclasses.replace(gold, benchmark=config.benchmark)  # type: ignore[arg-type]
    raise UsageError(
        f"--benchmark {config.benchmark} was given, but the gold data is {found}. "
        f"Fix: drop --benchmark, or give a {config.benchmark} dataset"
    )


def _check_single_turn(files: list[PredictionFile], gold: GoldDataset) -> None:
    """Refuse a prediction file read as single-turn (no turn column) when the gold has turns: a
    ConvFinQA dataset, or any record of several turns."""
    turnless = next((f for f in files if f.single_turn), None)
    if turnless is None:
        return
    several = gold.turns.filter(pl.col("n_turns") > 1).select("record_id", "n_turns").head(1).rows()
    if gold.benchmark != "convfinqa" and not several:
        return
    example = f" (record '{several[0][0]}' has {several[0][1]} turns)" if several else ""
    raise InputError(
        str(turnless.path),
        f"the file has no turn column, but the gold {gold.path} has conversations of several turns{example}",
        field="turn",
        fix="name the turn column and its base in --map: turn=COLUMN:0 or turn=COLUMN:1",
    )


def grade_run(
    config: RunConfig,
    *,
    engine: str = "local",
    scheduler: str | None = None,
    host: str | None = None,
    reuse: GradeReuse | None = None,
) -> Run:
    """Load the gold set and every prediction file of ``config`` and grade them.

    Without a dataset (``config.dataset is None``) the gold is read from the prediction
    files themselves; prediction rows without a record id are linked to the gold by their
    question text.

    ``engine="dask"`` grades on a Dask cluster (the scheduler at ``scheduler``, or a local
    cluster started for the run, listening on ``host``, 127.0.0.1 unless given); the result
    equals the local engine's. See
    :mod:`workbench.pipeline.engines`.

    ``reuse`` keeps the grades of the inputs graded by the runs of a batch of reports, by their
    content (:class:`~workbench.pipeline.reuse.GradeReuse`): an input graded before is taken from
    there, with the same grades (the local engine; the Dask engine grades every input).

    Raises
    ------
    InputError
        For any unusable input (the message names file, line or record, field, fix).
    UsageError
        When two prediction files would be the same system, or ``--benchmark`` contradicts
        the data.
    """
    with _pool_ahead(config) if engine == "local" and (reuse is None or reuse.kept == 0) else nullcontext():
        inputs = _load_inputs(config)
        config = inputs.config
        graded = grade_on_engine(
            inputs.gold,
            list(inputs.frames),
            engine=engine,
            scheduler=scheduler,
            host=host,
            policy=config.policy,
            kind=inputs.kind,
            benchmark=inputs.benchmark,
            **({"reuse": reuse} if reuse is not None and engine == "local" else {}),
        )
    return Run(
        config=config,
        gold=inputs.gold,
        graded=graded,
        prediction_files=inputs.files,
        predictions=inputs.frames,
        kind=inputs.kind,
        notes=inputs.notes,
    )


#: Prediction files of at least this many bytes together are graded in a process pool started
#: before they are read (:func:`_pool_ahead`): about 20,000 GSM8K rows that carry their question and
#: gold, :data:`workbench.parallel.POOL_THRESHOLD` distinct inputs if they are distinct.
POOL_AHEAD_BYTES = 16 << 20


def _pool_ahead(config: RunConfig) -> AbstractContextManager[None]:
    """The process pool that will grade the run, started while this process reads its inputs
    (:func:`workbench.parallel.pool_ahead`), each worker starting the grader's worker process that
    Math-Verify (always among the policies :func:`grade_run` grades) needs; when the prediction files
    are large (:data:`POOL_AHEAD_BYTES`). Their size guesses the number of distinct inputs; a pool
    started for a run of few distinct inputs (long outputs) costs the CPU of starting it, never a
    different grade. On a 105,520-turn GSM8K run, the pool's start (about 5 s of CPU) overlaps the
    reading, instead of following it."""
    size = sum(path.stat().st_size for path in map(Path, config.predictions) if path.is_file())
    if size < POOL_AHEAD_BYTES or not in_pool(POOL_THRESHOLD):
        return nullcontext()
    return pool_ahead(initializer=start_worker)


@dataclass(frozen=True)
class _Inputs:
    """A run's inputs, loaded and linked: what grading (or opening a graded folder) needs."""

    gold: GoldDataset
    frames: tuple[pl.DataFrame, ...]
    files: tuple[tuple[Path, str], ...]
    benchmark: str
    kind: AnswerKind
    config: RunConfig  # as graded: without its dataset when no dataset was given and the outputs carry the gold
    notes: tuple[str, ...] = ()


def _on_gold(frames: list[pl.DataFrame], gold: GoldDataset) -> bool:
    """Whether some row of the prediction tables is on ``gold`` (by record id or question, as
    :func:`~workbench.io.link.attach_record_ids` links them); true when there are no rows."""
    if not any(f.height for f in frames):
        return True
    ids = gold.turns.get_column("record_id").unique().implode()
    return any(attach_record_ids(f, gold).get_column("record_id").is_in(ids).any() for f in frames if f.height)


def _carried_gold(frames: list[pl.DataFrame], source: str) -> GoldDataset:
    """The gold the prediction rows carry, each problem once: a row without a record id whose
    question a row of another file answers under an id is that problem (linked by its question,
    as :func:`~workbench.io.link.attach_record_ids` links), not a new problem keyed by its
    question. (Before: ToRA's file with ids and program-of-thoughts' without made every GSM8K
    problem twice, and halved each system's accuracy.)"""
    table = pl.concat(frames, how="vertical_relaxed")
    with_ids = table.filter(pl.col("record_id").is_not_null())
    if with_ids.height in (0, table.height):
        return gold_from_predictions(table, source=source)
    rid = pl.col("record_id").cast(pl.String)  # a key (a category) read as text
    linked = attach_record_ids(table, gold_from_predictions(with_ids, source=source)).with_columns(
        pl.when(rid.str.starts_with(NOT_IN_GOLD) | rid.str.starts_with(REPEATED_QUESTION))
        .then(None)
        .otherwise(pl.col("record_id"))
        .alias("record_id")
    )
    return gold_from_predictions(linked, source=source)


def _default_gold(
    config: RunConfig, dataset: Path, frames: list[pl.DataFrame]
) -> tuple[GoldDataset | None, RunConfig, str | None]:
    """Rule 3 of :func:`workbench.config.resolve` (no dataset named for prediction files given):
    the bundled ConvFinQA dev set standing in (``dataset``) when some row is on it, else ``None``
    and the config without a dataset (the rows' own gold, every row one) and the note that says so.

    Raises
    ------
    InputError
        When no row is on the dev set and some row carries no gold answer.
    """
    gold = load_gold(dataset)
    if _on_gold(frames, gold):
        return gold, config, None
    for path, frame in zip(config.predictions, frames, strict=True):
        if (missing := frame.get_column("gold_answer").null_count()) > 0:
            raise InputError(
                str(path),
                f"no dataset was given, none of its {frame.height:,} rows is on the bundled ConvFinQA dev set, "
                f"and {missing:,} of them {'carries' if missing == 1 else 'carry'} no gold answer",
                field="gold_answer",
                fix="name the gold set with --dataset FILE, or give every row its gold answer",
            )
    note = (
        f"no dataset was given: graded against the gold answers carried in "
        f"{', '.join(p.name for p in config.predictions)}, which are not on the bundled ConvFinQA dev set "
        "(--dataset FILE names another gold set)"
    )
    return None, dataclasses.replace(config, dataset=None, dataset_default=False), note


def _read_files(config: RunConfig) -> tuple[list[PredictionFile], list[pl.DataFrame], list[tuple[Path, str]]]:
    """Read every prediction file of ``config``; a system no one named (``--system``, a
    ``system`` column) is named by :func:`workbench.config.system_names`.

    Raises
    ------
    UsageError
        When two prediction files would be the same system.
    """
    read: list[PredictionFile] = []
    frames: list[pl.DataFrame] = []
    files: list[tuple[Path, str]] = []
    names = system_names(config.predictions)
    for path, system, cmap, name in zip(config.predictions, config.systems, config.column_maps, names, strict=True):
        read.append(read_predictions(path, system=system, column_map=cmap))
        frame = read[-1].frame
        if not system:  # the reader's own default name, from the path as given, becomes the rule's
            frame = frame.with_columns(pl.col("system").replace(default_system_name(Path(path)), name))
        for shown in dict.fromkeys(frame["system"].to_list()):
            if any(shown == other for _, other in files):
                raise UsageError(
                    f"two prediction files are both named system '{shown}'. "
                    "Fix: name each with --system (one per file, in order)"
                )
            files.append((path, shown))
        frames.append(frame)
    return read, frames, files


def _load_inputs(config: RunConfig) -> _Inputs:
    """Load the gold set and every prediction file of ``config`` and link them (see :func:`grade_run`)."""
    read, frames, files = _read_files(config)
    notes: tuple[str, ...] = ()
    if config.dataset is not None and config.dataset_default:
        gold, config, note = _default_gold(config, config.dataset, frames)
        notes += (note,) if note else ()
    else:
        gold = None if config.dataset is None else load_gold(config.dataset)
    if gold is None:
        gold = _carried_gold(frames, source=str(config.predictions[0]))
    _check_single_turn(read, gold)
    frames = [attach_record_ids(frame, gold) for frame in frames]
    gold = _check_benchmark(config, gold, detect_benchmark(gold, pl.concat(frames, how="vertical_relaxed")))
    notes += tuple(f.note for f in read if f.note)
    kind = _KIND_BY_BENCHMARK.get(gold.benchmark, "auto")
    return _Inputs(gold, tuple(frames), tuple(files), gold.benchmark, kind, config, notes)


# --------------------------------------------------------------------------- opening a graded folder


def _same_file(a: str | Path, b: str | Path) -> bool:
    return locate(a).resolve() == locate(b).resolve()


def _check_unchanged(folder: Path, manifest: Manifest) -> None:
    """Refuse when an input the folder was graded from is gone or no longer the same bytes."""
    recorded = [manifest.inputs.get("dataset") or {}, *manifest.inputs.get("predictions", [])]
    for entry in recorded:
        path = locate(str(entry.get("path", "")))
        if not path.is_file():
            raise InputError(
                str(path),
                f"file not found (the graded folder {folder} was graded from it)",
                fix="put the file back, or grade the run again",
            )
        if file_sha256(path) != entry.get("sha256"):
            raise InputError(
                str(path),
                f"the file changed since {folder} was graded from it (its sha256 differs)",
                fix="grade the run again (leave graded_dir empty, or give a folder of its own)",
            )


def _config_from(manifest: Manifest) -> RunConfig:
    """The run config a graded folder was graded with, as its manifest records it: one
    prediction file per run of entries with the same path (named by the system when the file
    gave one; a file of several systems keeps their names); the benchmark it was graded as
    (``--benchmark`` on a plain table); no column maps (not recorded)."""
    dataset = manifest.inputs.get("dataset") or {}
    groups = [
        (path, [entry["system"] for entry in entries])
        for path, entries in itertools.groupby(manifest.inputs.get("predictions", []), key=lambda e: e["path"])
    ]
    name = (manifest.parameters.get("policy") or {}).get("name")
    if name not in POLICIES:
        raise InputError(
            "summary.json",
            f"graded with the policy {name!r}, which this workbench does not know",
            field="policy",
            fix=f"grade the run again (policies: {', '.join(POLICIES)})",
        )
    return RunConfig(
        dataset=None if dataset.get("layout") == _CARRIED_LAYOUT else locate(dataset["path"]),
        predictions=tuple(locate(path) for path, _ in groups),
        systems=tuple(names[0] if len(names) == 1 else None for _, names in groups),
        column_maps=(None,) * len(groups),
        policy=POLICIES[name],
        benchmark=str(dataset["benchmark"]) if dataset.get("benchmark") in BENCHMARKS else "auto",
    )


def _as_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def open_run(graded_dir: str | Path, config: RunConfig | None = None) -> Run:
    """Open a graded folder (written by :meth:`Run.write`, ``workbench grade`` or
    ``workbench report``) as a :class:`Run`, without grading again.

    The tables are the folder's Parquet files and :attr:`Run.summary` its ``summary.json``
    metrics; the gold set and the predictions are loaded again from the paths the folder
    records (for the overview, drill-downs and regrading against a cleaned gold set).

    Parameters
    ----------
    graded_dir
        The graded folder.
    config
        The run config the folder is expected to hold (a template's parameters, resolved):
        its files are checked against the recorded ones and its column maps used to load the
        predictions (maps are not recorded). By default the config the folder records.

    Raises
    ------
    InputError
        In one line: when a file of the folder is missing, an input file it records is gone
        or changed since (its sha256 differs), or the folder was graded from other inputs
        (files, system names or policy) than ``config``.
    """
    folder = Path(graded_dir)
    manifest, tables, input_keys = read_graded(folder)
    _check_unchanged(folder, manifest)
    config = config if config is not None else _config_from(manifest)
    summary_file = str(graded_paths(folder)["summary"])
    recorded = [(e["path"], e["system"]) for e in manifest.inputs.get("predictions", [])]
    dataset = manifest.inputs.get("dataset") or {}
    inputs = _load_inputs(config)
    config = inputs.config  # as it grades: the gold the outputs carry when no dataset was given
    same_dataset = (
        dataset.get("layout") == _CARRIED_LAYOUT
        if config.dataset is None
        else dataset.get("layout") != _CARRIED_LAYOUT and _same_file(config.dataset, dataset["path"])
    )
    recorded_files = [path for path, _ in itertools.groupby(p for p, _ in recorded)]
    same_files = len(recorded_files) == len(config.predictions) and all(
        _same_file(a, b) for a, b in zip(config.predictions, recorded_files, strict=False)
    )
    if not (same_dataset and same_files):
        raise InputError(
            summary_file,
            "graded from other input files than these",
            fix="leave graded_dir empty to grade these inputs, or give a folder of their own",
        )
    policy = for_benchmark(config.policy, inputs.benchmark)
    if [name for _, name in inputs.files] != [name for _, name in recorded]:
        raise InputError(
            summary_file,
            f"graded as systems {', '.join(n for _, n in recorded)}, not {', '.join(n for _, n in inputs.files)}",
            fix="use the system names it was graded with, or leave graded_dir empty to grade again",
        )
    if _as_json(dataclasses.asdict(policy)) != manifest.parameters.get("policy"):
        raise InputError(
            summary_file,
            f"graded with another policy than {policy.name}",
            field="policy",
            fix="leave graded_dir empty to grade with this one, or give a folder of its own",
        )
    graded = GradedRun(
        turns=tables["turns"],
        unmatched=tables["unmatched"],
        systems=tuple(name for _, name in inputs.files),
        policy=policy,
        policy_inputs=tables["policy_inputs"],
        input_keys=input_keys,
        checks=tables["checks"],
    )
    return Run(
        config=config,
        gold=inputs.gold,
        graded=graded,
        prediction_files=inputs.files,
        predictions=inputs.frames,
        kind=inputs.kind,
        graded_dir=folder,
        recorded_summary=dict(manifest.metrics),
        notes=inputs.notes,
    )


def open_or_grade(config: RunConfig, graded_dir: str | Path = "") -> Run:
    """The run of ``config``: opened from ``graded_dir`` when that holds a graded folder
    (:func:`open_run`, checked against ``config``), else graded (:func:`grade_run`).

    The templates' switch: ``workbench report`` grades each input set once and names the
    folder in the template's ``graded_dir``; a template run by hand with ``graded_dir`` empty
    (or naming a folder not written yet) grades itself, as before.

    Raises
    ------
    InputError
        As :func:`open_run` and :func:`grade_run` do.
    """
    if str(graded_dir).strip() and graded_paths(graded_dir)["summary"].is_file():
        return open_run(graded_dir, config)
    return grade_run(config)
