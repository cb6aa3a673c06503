"""The triage's queues: which turns a session opens (the triage template's call).

``checks``: the gold turns the data-quality checks flag; ``failed``: the failed turns of each
system (of a slice group); ``adjudicate``: the turns two analysts decided differently that no
third analyst has adjudicated yet (:func:`workbench.annotations.agreement.disagreements`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.annotations.agreement import disagreements
from workbench.annotations.backends import Store
from workbench.annotations.session import AnnotationSession, QueueItem
from workbench.errors import UsageError

if TYPE_CHECKING:
    from workbench.pipeline.run import Run

__all__ = ["QUEUES", "session_for"]


#: The queues a triage session can be opened on.
QUEUES = ("checks", "failed", "adjudicate")


def session_for(
    store: Store,
    run: Run,
    *,
    annotator: str | None,
    queue: str = "checks",
    slice_name: str = "",
    group: str = "",
    min_confidence: float = 0.0,
    system: str = "",
    overlap: float = 0.0,
) -> AnnotationSession:
    """Open a triage session on ``run`` for one of the :data:`QUEUES` (the triage template's call).

    ``checks``: the gold turns the data-quality checks flag with at least ``min_confidence``,
    most confident first. ``failed``: the failed turns of each system (or of ``system``),
    restricted to the group ``group`` of slice ``slice_name`` when those are given. Empty strings
    mean "not given", as in the templates' parameters. ``overlap``: the share of items shown to two
    analysts (see :class:`AnnotationSession`).

    Raises
    ------
    UsageError
        For an unknown queue, or slice options given with the ``checks`` queue.

    Examples
    --------
    >>> session_for(None, None, annotator="a", queue="flagged")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    workbench.errors.UsageError: queue 'flagged' is not one of checks, failed, adjudicate. Fix: ...
    """
    if queue not in QUEUES:
        raise UsageError(
            f"queue {queue!r} is not one of {', '.join(QUEUES)}. Fix: use queue='checks' for the turns "
            "the data-quality checks flag, queue='failed' for failed turns (of a slice group), or "
            "queue='adjudicate' for the turns two analysts decided differently"
        )
    if queue == "adjudicate":
        if slice_name or group or system or overlap:
            raise UsageError(
                f"slice_name={slice_name!r}, group={group!r}, system={system!r}, overlap={overlap!r} were given "
                "with queue='adjudicate', which takes every turn two analysts decided differently. "
                "Fix: leave them empty (0 for overlap)"
            )
        gold = set(run.gold.turns.select("record_id", "turn").iter_rows())
        disputed = disagreements(store).select("record_id", "turn").iter_rows()
        keys = [QueueItem(r, t, None) for r, t in disputed if (r, t) in gold]
        return AnnotationSession(store, run, keys, annotator=annotator, adjudicate=True)
    if queue == "checks":
        if slice_name or group or system:
            raise UsageError(
                f"slice_name={slice_name!r}, group={group!r}, system={system!r} were given with queue='checks', "
                "which takes every flagged gold turn. Fix: use queue='failed' to triage the failed turns of a "
                "slice group, or leave slice_name, group and system empty"
            )
        return AnnotationSession.from_checks(
            store, run, annotator=annotator, min_confidence=min_confidence, overlap=overlap
        )
    return AnnotationSession.from_slice(
        store,
        run,
        annotator=annotator,
        slice_name=slice_name or None,
        group=group or None,
        failed_only=True,
        system=system or None,
        overlap=overlap,
    )
