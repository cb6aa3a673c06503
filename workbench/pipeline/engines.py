"""Where grading runs: in this process (``local``) or on a Dask cluster (``dask``).

The dask engine splits the gold set by conversation (``crc32(record_id) % n_partitions``,
so every system and every turn of a conversation grade together: carried errors look at
earlier turns, the agreement checks compare systems on the same turn), grades each part
with :func:`workbench.pipeline.grade.grade_predictions` on a worker, and puts the parts back
together in the local engine's order. The result equals the local engine's.

``--scheduler ADDRESS`` connects to a running scheduler (its workers need ``workbench``
installed); without it a ``LocalCluster`` of two worker processes is started for the run
and closed afterwards (:func:`local_cluster`). That cluster's scheduler, workers and
dashboard listen on 127.0.0.1 only, unless ``host`` says otherwise: the dashboard shows the
data being graded, so it is not offered to the network by default. To watch a run from
another machine, start a scheduler there as you choose and pass ``--scheduler``.
"""

from __future__ import annotations

import inspect
import zlib
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import polars as pl

from workbench.errors import UsageError
from workbench.io.gold import GoldDataset
from workbench.pipeline.grade import GradedRun, grade_predictions, unmatched_rows
from workbench.pipeline.policy_inputs import canonical, join_inputs
from workbench.quality.checks import shows_display_answers
from workbench.schema import CHECK_KEYS, PREDICTIONS, keys_as_keys

__all__ = ["ENGINES", "LISTEN_HOST", "grade_on_engine", "grade_dask", "local_cluster", "partition_of"]

#: Engines ``workbench grade --engine`` accepts.
ENGINES = ("local", "dask")
#: How long to wait for a scheduler given with ``--scheduler``.
CONNECT_TIMEOUT = "5s"
#: The interface a local cluster started for a run listens on (scheduler, workers, dashboard).
LISTEN_HOST = "127.0.0.1"
#: The record id of the placeholder prediction rows that keep a system in a part where it
#: has no prediction (they match no gold turn, and the part's ``unmatched`` is not used).
_PLACEHOLDER = "\x00workbench-engine-placeholder"
_KEYS = ["record_id", "turn"]


def grade_on_engine(
    gold: GoldDataset,
    predictions: Sequence[pl.DataFrame],
    *,
    engine: str = "local",
    scheduler: str | None = None,
    host: str | None = None,
    **options: Any,
) -> GradedRun:
    """:func:`workbench.pipeline.grade.grade_predictions` on ``engine`` (``local`` or ``dask``).

    ``host`` is the interface a local Dask cluster started for the run listens on
    (:data:`LISTEN_HOST` when ``None``)."""
    if engine == "local":
        if scheduler is not None:
            raise UsageError("--scheduler was given with the local engine. Fix: add --engine dask, or drop --scheduler")
        if host is not None:
            raise UsageError("--dask-host was given with the local engine. Fix: add --engine dask, or drop --dask-host")
        return grade_predictions(gold, list(predictions), **options)
    if engine == "dask":
        if host is not None and scheduler is not None:
            raise UsageError(
                "--dask-host sets where a cluster started for the run listens, but --scheduler names a running one. "
                "Fix: drop one of them"
            )
        return grade_dask(gold, predictions, scheduler=scheduler, host=host or LISTEN_HOST, **options)
    raise UsageError(f"unknown engine '{engine}'. Fix: use one of {', '.join(ENGINES)}")


def partition_of(record_id: str, n_partitions: int) -> int:
    """The part a conversation is graded in (stable across processes and runs).

    Examples
    --------
    >>> partition_of("Single_JKHY/2009/page_28.pdf-3", 4) == partition_of("Single_JKHY/2009/page_28.pdf-3", 4)
    True
    """
    return zlib.crc32(record_id.encode("utf-8")) % n_partitions


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise UsageError(
            "the dask engine needs dask and distributed, which are not installed. "
            "Fix: pip install 'dask[distributed]', or use --engine local"
        ) from exc
    return distributed


def local_cluster(host: str = LISTEN_HOST, *, n_workers: int = 2) -> Any:
    """Start the ``distributed.LocalCluster`` a run grades on when no scheduler is given.

    Its scheduler, worker processes and dashboard (on a free port) listen on ``host`` only:
    ``127.0.0.1`` unless the caller asks otherwise (``"0.0.0.0"`` offers all of them, the
    dashboard included, to the network). The caller closes it.
    """
    distributed = _distributed()
    return distributed.LocalCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        processes=True,
        host=host,
        dashboard_address=f"{host}:0",
    )


def _client(scheduler: str | None, host: str = LISTEN_HOST) -> tuple[Any, Any]:
    """``(client, cluster)``: connected to ``scheduler``, or to a new local cluster listening on
    ``host`` (then ``cluster`` is not ``None`` and is the caller's to close)."""
    distributed = _distributed()
    if scheduler is not None:
        try:
            return distributed.Client(scheduler, timeout=CONNECT_TIMEOUT), None
        except (OSError, TimeoutError, ValueError) as exc:
            raise UsageError(
                f"cannot reach the Dask scheduler at '{scheduler}' ({type(exc).__name__}: {exc}). "
                "Fix: check the address (e.g. tcp://HOST:8786) and that the scheduler is running, "
                "or drop --scheduler to start a local cluster"
            ) from exc
    cluster = local_cluster(host)
    return distributed.Client(cluster), cluster


def _grade_part(gold: GoldDataset, preds: pl.DataFrame, own: list[str], options: dict[str, Any]) -> GradedRun:
    """Grade one part on a worker, keeping the rows of its own records."""
    graded = grade_predictions(gold, preds, **options)
    mine = pl.col("record_id").is_in(own)
    rows = graded.turns.select(mine.alias("_mine")).get_column("_mine")
    return replace(
        graded,
        turns=graded.turns.filter(rows),
        input_keys=graded.input_keys.filter(rows),
        checks=graded.checks.filter(mine),
    )


def grade_dask(
    gold: GoldDataset,
    predictions: Sequence[pl.DataFrame],
    *,
    scheduler: str | None = None,
    client: Any = None,
    n_partitions: int | None = None,
    host: str = LISTEN_HOST,
    **options: Any,
) -> GradedRun:
    """Grade ``predictions`` against ``gold`` on a Dask cluster; equal to
    :func:`workbench.pipeline.grade.grade_predictions` with the same ``options``.

    Parameters
    ----------
    scheduler
        A scheduler address (``tcp://HOST:8786``); ``None`` starts a local cluster.
    client
        A ``distributed.Client`` to use instead (``scheduler`` is then ignored).
    n_partitions
        How many parts to split the conversations into; twice the number of workers by default.
    host
        The interface the local cluster started without ``scheduler`` listens on (scheduler,
        workers, dashboard): 127.0.0.1 by default; see :func:`local_cluster`.

    Raises
    ------
    UsageError
        When dask is not installed or the scheduler cannot be reached.
    """
    frames = list(predictions)
    preds = (
        pl.concat([keys_as_keys(f.select(list(PREDICTIONS))) for f in frames])
        if frames
        else pl.DataFrame(schema=PREDICTIONS)
    )
    systems = tuple(dict.fromkeys(preds["system"].to_list()))
    record_ids = gold.turns["record_id"].unique(maintain_order=True).to_list()
    if not systems or not record_ids:
        return grade_predictions(gold, frames, **options)

    # what matches no gold turn is decided once, here, in the order the rows were given
    gold_turns = gold.turns
    unmatched = unmatched_rows(gold, preds)
    matched = preds.join(gold_turns.select(_KEYS), on=_KEYS, how="semi", maintain_order="left")

    if "workers" in inspect.signature(grade_predictions).parameters:
        # the cluster is the parallelism: no process pool inside a (daemonic) worker process
        options = {"workers": 1, **options}
    own_client = client is None
    cluster = None
    if own_client:
        client, cluster = _client(scheduler, host)
    try:
        if n_partitions is None:
            n_partitions = max(1, 2 * len(client.scheduler_info().get("workers", {})))
        parts: dict[int, list[str]] = {}
        for record_id in record_ids:
            parts.setdefault(partition_of(record_id, n_partitions), []).append(record_id)
        # a record whose display answer differs from its executed value, lent to parts that
        # have none so their checks run as they do on the whole set
        lend = gold_turns.filter(pl.col("gold_answer") != pl.col("gold_executed"))["record_id"][:1].to_list()
        tasks = []
        for part in sorted(parts):
            own = parts[part]
            turns = gold_turns.filter(pl.col("record_id").is_in(own))
            if lend and not shows_display_answers(turns):
                turns = gold_turns.filter(pl.col("record_id").is_in([*own, *lend]))
            doc_ids = turns["doc_id"].drop_nulls().unique().to_list() if "doc_id" in turns.columns else []
            part_gold = replace(gold, turns=turns, documents=gold.documents.filter(pl.col("doc_id").is_in(doc_ids)))
            part_preds = matched.filter(pl.col("record_id").is_in(own))
            missing = [s for s in systems if s not in set(part_preds["system"].to_list())]
            if missing:
                # the part's systems order does not matter: the parts are sorted when joined
                extra = pl.DataFrame(
                    {c: [None] * len(missing) for c in preds.columns}
                    | {"system": missing, "record_id": [_PLACEHOLDER] * len(missing)},
                    schema=preds.schema,
                )
                part_preds = pl.concat([part_preds, extra])
            tasks.append(client.submit(_grade_part, part_gold, part_preds, own, options, pure=False))
        results: list[GradedRun] = client.gather(tasks)
    finally:
        if own_client:
            client.close()
            if cluster is not None:
                cluster.close()

    first = results[0]
    turns = pl.concat([r.turns for r in results])
    order = turns.select(pl.arg_sort_by("system", "record_id", "turn", maintain_order=True)).to_series()
    inputs, input_keys = join_inputs([(r.policy_inputs, r.input_keys) for r in results])
    # numbered as the sorted turns meet them, equal inputs of two parts made one: as grade_predictions gives them
    inputs, input_keys = canonical(inputs, input_keys.gather(order))
    return GradedRun(
        turns=turns[order],
        unmatched=unmatched,
        systems=systems,
        policy=first.policy,
        policy_inputs=inputs,
        input_keys=input_keys,
        checks=pl.concat([r.checks for r in results]).sort(list(CHECK_KEYS)),
    )
