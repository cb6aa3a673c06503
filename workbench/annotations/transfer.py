"""Copy one annotation store into another (``workbench annotations copy SRC DST``): SQLite to
PostgreSQL and back, or one team's store merged into another.

An event's identity is its content: kind, time stamp, annotator, turn key and fields (for a
retraction, the identity of the annotation it takes back). An event of the source whose identity
the target already holds is not copied again, so a second copy adds nothing, and nothing is lost.
The events added keep their event ids when the target has none of those ids yet (a copy into an
empty store is event for event the same, and its snapshot equals the source's); otherwise they
are numbered after the target's last event, in the source's order, with each retraction pointing
at its annotation's new id. All events are added in one transaction, or none.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> from workbench.annotations.store import AnnotationStore
>>> folder = Path(tempfile.mkdtemp())
>>> with AnnotationStore(folder / "a.sqlite") as a, AnnotationStore(folder / "b.sqlite") as b:
...     undone = a.retract(a.annotate(annotator="ana", record_id="r", turn=0, category="other"), annotator="ana")
...     first, again = copy_events(a, b), copy_events(a, b)
...     (first.added, again.added, again.present), a.snapshot() == b.snapshot()
((2, 0, 2), True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol

from workbench.schema import ANNOTATION_EVENTS

__all__ = ["Copied", "copy_events"]

_COLUMNS = tuple(ANNOTATION_EVENTS)
_ID, _KIND, _RETRACTS = _COLUMNS.index("event_id"), _COLUMNS.index("kind"), _COLUMNS.index("retracts")


class _EventLog(Protocol):
    def _rows(self) -> list[tuple[Any, ...]]: ...
    def append_events(self, rows: Sequence[Sequence[Any]]) -> None: ...


class Copied(NamedTuple):
    """What :func:`copy_events` did."""

    #: Events in the source.
    read: int
    #: Events added to the target.
    added: int
    #: Source events the target already held (same identity).
    present: int
    #: Retractions left out: the target already has another retraction of that annotation.
    conflicting: int
    #: Whether the added events kept their source event ids.
    kept_ids: bool


def _identities(rows: Sequence[Sequence[Any]]) -> dict[int, tuple[Any, ...]]:
    """Each event's identity by its event id (rows in event-id order)."""
    found: dict[int, tuple[Any, ...]] = {}
    for row in rows:
        body = tuple(v for i, v in enumerate(row) if i not in (_ID, _RETRACTS))
        if row[_KIND] == "retraction":
            body = (*body, found.get(int(row[_RETRACTS])))
        found[int(row[_ID])] = body
    return found


def copy_events(source: _EventLog, target: _EventLog) -> Copied:
    """Add to ``target`` every event of ``source`` it does not hold (see the module).

    Parameters
    ----------
    source, target
        Open stores of any backend (:func:`workbench.annotations.open_store`).

    Returns
    -------
    Copied
        How many events were read, added and already present.
    """
    rows = source._rows()
    held = target._rows()
    theirs = {identity: event_id for event_id, identity in _identities(held).items()}
    retracted = {int(row[_RETRACTS]) for row in held if row[_KIND] == "retraction"}
    ours = _identities(rows)
    new = [row for row in rows if ours[int(row[_ID])] not in theirs]
    top = max((int(row[_ID]) for row in held), default=0)
    keep = all(int(row[_ID]) > top for row in new)
    mapping = {event_id: theirs[identity] for event_id, identity in ours.items() if identity in theirs}
    added: list[tuple[Any, ...]] = []
    conflicting = 0
    for row in new:
        values = list(row)
        if row[_KIND] == "retraction":
            target_id = mapping[int(row[_RETRACTS])]
            if target_id in retracted:
                conflicting += 1
                continue
            retracted.add(target_id)
            values[_RETRACTS] = target_id
        new_id = int(row[_ID]) if keep else top + len(added) + 1
        mapping[int(row[_ID])] = new_id
        values[_ID] = new_id
        added.append(tuple(values))
    target.append_events(added)
    return Copied(len(rows), len(added), len(rows) - len(new), conflicting, keep)
