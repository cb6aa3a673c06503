"""An annotation session: a queue of turns, a cursor, skip and undo, over an
:class:`~workbench.annotations.store.AnnotationStore`.

The session holds no annotations of its own: everything it shows as done is read back from
the store, so two sessions (two analysts, two processes) on one file see each other's work.
Widgets are views over a session (``workbench.widgets.triage``); this module has no widget
code.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> import workbench
>>> from workbench.annotations import AnnotationStore
>>> from workbench.config import project_root
>>> fixtures = project_root() / "tests" / "fixtures"
>>> run = workbench.grade_run(workbench.config.resolve(
...     dataset=fixtures / "convfinqa" / "dev_small.json",
...     predictions=[fixtures / "predictions" / "zarifaziz_dev_small.jsonl"], systems="claude"))
>>> store = AnnotationStore(Path(tempfile.mkdtemp()) / "annotations.sqlite")
>>> session = AnnotationSession.from_checks(store, run, annotator="ana")
>>> session.total, session.position, session.n_done
(2, 0, 0)
>>> session.item().flags[0][:2]
('sign_inconsistency', 'display_vs_executed')
>>> event = session.submit(category="sign_inconsistency", corrected_answer="-10%")
>>> session.position, session.n_done
(1, 1)
>>> _ = session.undo()
>>> session.position, session.n_done
(0, 0)
>>> store.close()
"""

from __future__ import annotations

import atexit
import hashlib
import os
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from workbench.analysis.slices import SLICES, in_group
from workbench.annotations import leases
from workbench.annotations.agreement import decisions, disagreements
from workbench.annotations.backends import Store, open_store
from workbench.annotations.items import QueueItem, QueueTally, TraceView, TriageItem, _literals, _table, _text, _trace
from workbench.annotations.names import ASK_FIX, name_problem, resolve_name
from workbench.errors import UsageError
from workbench.schema import CATEGORY_DTYPE

if TYPE_CHECKING:
    from workbench.pipeline.run import Run

__all__ = ["QueueItem", "QueueTally", "TraceView", "TriageItem", "AnnotationSession"]


def _key(item: QueueItem) -> leases.Key:
    return (item.record_id, item.turn, item.system)


#: This process's lease owner per annotator: sessions of one analyst in one process (a template's
#: cells run again) share their leases, so a new session shows the item the old one showed.
_OWNERS: dict[str, str] = {}
#: (store file, owner) pairs whose leases are given back when the process exits.
_AT_EXIT: set[tuple[str, str]] = set()
_OWNERS_LOCK = threading.Lock()


def _release_at_exit() -> None:
    """Give back this process's leases (a kernel shut down as its page closes); a lease left
    behind by a killed process simply expires."""
    for path, owner in sorted(_AT_EXIT):
        try:
            with open_store(path, create=False) as store:
                leases.release_owner(store, owner=owner, now=time.time())
        except Exception:  # at exit the file may be gone or locked: the leases then expire
            continue


def _process_owner(annotator: str, store: Store) -> str:
    with _OWNERS_LOCK:
        if not _AT_EXIT:
            atexit.register(_release_at_exit)
        owner = _OWNERS.setdefault(annotator, f"{os.getpid()}-{secrets.token_hex(6)}")
        _AT_EXIT.add((store.location.url, owner))
        return owner


class AnnotationSession:
    """A queue of turns to annotate, a cursor over it, skip and undo, shared with other sessions.

    The cursor starts at the first item without an annotation in force (read from the store, so
    a new session after a restart resumes where the last one stopped), and moves forward (save,
    skip) to the next such item. The item under the cursor is *leased* to this session for
    :data:`~workbench.annotations.leases.LEASE_SECONDS` (an event in the store, see
    :mod:`workbench.annotations.leases`): another session, in this process or another, skips it
    until the lease is released (save, skip, close) or expires. Back goes to the previous item not
    leased by someone else, done or not.

    The first lease is taken when the session is first asked where it is (:meth:`current`,
    :meth:`item`, :attr:`position`, a move) or told to :meth:`start`, not when it is built: a
    template run before anyone looks (a kernel Voila starts ahead of its page) holds no item.

    Parameters
    ----------
    store
        Where annotations go (and where "done" is read from).
    run
        The graded run the queue's turns come from.
    queue
        The turns to annotate, in order (see :meth:`from_slice` and :meth:`from_checks`).
    annotator
        Who is annotating; every event of this session carries the name. ``JUPYTERHUB_USER``
        when set; an empty or shared default name (:mod:`workbench.annotations.names`) or None
        leaves the session unnamed: it shows items, and refuses to save until
        :meth:`set_annotator` names the analyst.
    clock
        Seconds now (``time.time``); leases are taken and judged by it. Tests inject one.
    overlap
        The share of items (0 to 1) shown to two analysts: an item chosen by its key's digest
        (the same items in every analyst's session) stays open until two analysts decided it,
        each once; the others are done at the first annotation. Their decisions feed
        ``workbench annotations agreement``.
    owner
        Who holds this session's leases; by default one token per annotator and process, so a
        template's cells run again keep the item on screen (two analysts are two processes).

    Raises
    ------
    UsageError
        For a queue item that is not a turn of ``run``.
    """

    def __init__(
        self,
        store: Store,
        run: Run,
        queue: Sequence[QueueItem],
        *,
        annotator: str | None,
        clock: Callable[[], float] = time.time,
        owner: str = "",
        overlap: float = 0.0,
        adjudicate: bool = False,
    ) -> None:
        self.store = store
        self.run = run
        self.annotator: str | None = resolve_name(annotator)
        self._queue = tuple(queue)
        gold_keys = set(run.gold.turns.select("record_id", "turn").iter_rows())
        system_keys = set(run.turns.select("record_id", "turn", "system").iter_rows())
        for item in self._queue:
            known = (
                (item.record_id, item.turn) in gold_keys
                if item.system is None
                else (item.record_id, item.turn, item.system) in system_keys
            )
            if not known:
                raise UsageError(
                    f"queue item {item} is not a turn of this run. "
                    "Fix: build the queue from the run's turns (from_slice / from_checks)"
                )
        self._clock = clock
        if isinstance(overlap, bool) or not isinstance(overlap, int | float) or not 0.0 <= overlap <= 1.0:
            raise UsageError(
                f"overlap is the share of items shown to two analysts, from 0 to 1, got {overlap!r}. "
                "Fix: give e.g. overlap=0.1 (one item in ten decided by two analysts)"
            )
        self.overlap = float(overlap)
        #: An adjudication session: its items are open while their first two analysts disagree.
        self.adjudicate = adjudicate
        #: This session's leases carry it (two analysts with one name, in two processes, still differ).
        self.owner = owner or _process_owner(self.annotator or "", store)
        self._position = len(self._queue)
        self._started = False
        self._leased: QueueItem | None = None
        self._undo: list[tuple[int, int]] = []  # (event_id, position) of this session's submissions

    # ----------------------------------------------------------------- building
    @classmethod
    def from_slice(
        cls,
        store: Store,
        run: Run,
        *,
        annotator: str | None,
        slice_name: str | None = None,
        group: str | None = None,
        failed_only: bool = True,
        system: str | None = None,
        clock: Callable[[], float] = time.time,
        owner: str = "",
        overlap: float = 0.0,
    ) -> AnnotationSession:
        """Queue the graded turns (one per system) of one slice group, ordered by record, turn, system.

        Parameters
        ----------
        slice_name, group
            A slice of :data:`workbench.analysis.slices.SLICES` and one of its groups; both or neither
            (neither: every turn).
        failed_only
            Only turns graded wrong (``correct`` false).
        system
            Only this system's turns.
        """
        turns = run.turns
        if (slice_name is None) != (group is None):
            raise UsageError(
                f"slice_name and group go together, got slice_name={slice_name!r}, group={group!r}. "
                "Fix: give both (e.g. slice_name='operation', group='divide') or neither"
            )
        if slice_name is not None and group is not None:
            chosen = turns.filter(in_group(slice_name, group))
            if chosen.is_empty():
                labels = sorted(set(turns.select(SLICES[slice_name].expr.alias("g")).get_column("g").to_list()))
                if group not in labels:
                    raise UsageError(
                        f"slice {slice_name!r} has no group {group!r}; its groups are {', '.join(labels)}. "
                        "Fix: use one of them"
                    )
            turns = chosen
        if system is not None:
            systems = run.graded.systems
            if system not in systems:
                raise UsageError(
                    f"the run has no system {system!r}; its systems are {', '.join(systems)}. Fix: use one of them"
                )
            turns = turns.filter(pl.col("system") == system)
        if failed_only:
            turns = turns.filter(~pl.col("correct"))
        keys = turns.select("record_id", "turn", "system").sort("record_id", "turn", "system").iter_rows()
        return cls(
            store,
            run,
            [QueueItem(r, t, s) for r, t, s in keys],
            annotator=annotator,
            clock=clock,
            owner=owner,
            overlap=overlap,
        )

    @classmethod
    def from_checks(
        cls,
        store: Store,
        run: Run,
        *,
        annotator: str | None,
        categories: Sequence[str] | None = None,
        min_confidence: float = 0.0,
        clock: Callable[[], float] = time.time,
        owner: str = "",
        overlap: float = 0.0,
    ) -> AnnotationSession:
        """Queue the gold turns the data-quality checks flagged (system None), most confident first.

        Parameters
        ----------
        categories
            Only flags of these categories (default: all).
        min_confidence
            Only flags at least this confident (a turn's confidence is its most confident flag's).
        """
        checks = run.checks
        if categories is not None:
            known = CATEGORY_DTYPE.categories.to_list()
            unknown = [c for c in categories if c not in known]
            if unknown:
                raise UsageError(
                    f"unknown check category {unknown[0]!r}; known: {', '.join(known)}. Fix: use one of them"
                )
            checks = checks.filter(pl.col("category").cast(pl.String).is_in(list(categories)))
        keys = (
            checks.filter(pl.col("confidence") >= min_confidence)
            .group_by("record_id", "turn")
            .agg(pl.col("confidence").max())
            .sort(["confidence", "record_id", "turn"], descending=[True, False, False])
            .select("record_id", "turn")
            .iter_rows()
        )
        return cls(
            store,
            run,
            [QueueItem(r, t, None) for r, t in keys],
            annotator=annotator,
            clock=clock,
            owner=owner,
            overlap=overlap,
        )

    # ----------------------------------------------------------------- state
    @property
    def queue(self) -> tuple[QueueItem, ...]:
        """Every queued key, in order."""
        return self._queue

    @property
    def total(self) -> int:
        """Length of the queue."""
        return len(self._queue)

    @property
    def position(self) -> int:
        """The cursor, 0-based; equal to :attr:`total` when the queue is exhausted (the session starts, see :meth:`start`)."""
        self.start()
        return self._position

    @property
    def started(self) -> bool:
        """Whether the cursor is placed (and its item leased): see :meth:`start`."""
        return self._started

    def start(self) -> None:
        """Place the cursor on the first open item no other session leases, and lease it; once
        (later calls do nothing). Every method that reads or moves the cursor calls it: a session
        built and never looked at takes no lease."""
        if not self._started:
            self._started = True
            self._land(0)

    def _active(self) -> dict[tuple[str, int, str | None], dict[str, Any]]:
        """The annotations in force by queue key (a model error recorded with its system also
        counts for the gold turn's key, as the checks queue names it)."""
        found: dict[tuple[str, int, str | None], dict[str, Any]] = {}
        one_system = self._system_of(QueueItem("", 0, None))
        for row in self.store.active().iter_rows(named=True):
            found[(row["record_id"], row["turn"], row["system"])] = row
            if row["category"] == "model_error" and row["system"] == one_system:
                found.setdefault((row["record_id"], row["turn"], None), row)
        return found

    # ----------------------------------------------------------------- the analyst
    def set_annotator(self, name: str) -> str:
        """Name the analyst of this session (the triage's name box calls it); return the name.

        Raises
        ------
        UsageError
            For an empty or shared default name (``analyst``).
        """
        problem = name_problem(name)
        if problem is not None:
            raise UsageError(f"{problem}. Fix: {ASK_FIX}")
        self.annotator = name.strip()
        return self.annotator

    def _signed(self) -> str:
        if self.annotator is None:
            raise UsageError(f"nothing saved: who is annotating? Fix: {ASK_FIX}")
        return self.annotator

    @property
    def n_done(self) -> int:
        """Queue items done (read from the store): with an annotation in force, or, for an item
        shown to two analysts (:attr:`overlap`), decided by two."""
        active, deciders = self._active(), self._deciders()
        return sum(self._done(k, active, deciders) for k in self._queue)

    def is_done(self, key: QueueItem) -> bool:
        """Whether ``key`` is done (see :attr:`n_done`)."""
        return self._done(key, self._active(), self._deciders())

    def doubled(self, key: QueueItem) -> bool:
        """Whether ``key`` is one of the :attr:`overlap` share shown to two analysts."""
        if self.overlap <= 0.0:
            return False
        digest = hashlib.sha256(f"{key.record_id}\x1f{key.turn}\x1f{key.system}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < self.overlap

    def _deciders(self) -> dict[tuple[str, int, str | None], set[str]]:
        """Who decided each key (their latest annotation in force), only when some items are doubled."""
        found: dict[tuple[str, int, str | None], set[str]] = {}
        if self.overlap <= 0.0:
            return found
        for row in decisions(self.store).iter_rows(named=True):
            for system in {row["system"], None}:
                found.setdefault((row["record_id"], row["turn"], system), set()).add(row["annotator"])
        return found

    def disputes(self) -> dict[tuple[str, int, str | None], list[tuple[str, str]]]:
        """The turns to adjudicate (keyed as the gold turn): the first two analysts and their categories."""
        if not self.adjudicate:
            return {}
        table = disagreements(self.store).iter_rows()
        return {(r, t, None): list(zip(names, categories, strict=True)) for r, t, names, categories in table}

    def _done(self, key: QueueItem, active: dict[Any, Any], deciders: dict[Any, set[str]]) -> bool:
        if self.adjudicate:
            return _key(key) not in self.disputes()
        return len(deciders.get(_key(key), ())) >= 2 if self.doubled(key) else _key(key) in active

    def _blind(self, key: QueueItem) -> bool:
        """A doubled item this analyst has not decided: another analyst's decision is not shown."""
        return self.doubled(key) and self.annotator not in self._deciders().get(_key(key), set())

    def _open(self, key: QueueItem, active: dict[Any, Any], deciders: dict[Any, set[str]]) -> bool:
        """Whether this session still has to decide ``key``."""
        if self.adjudicate:
            raters = dict(self.disputes().get(_key(key), []))
            return bool(raters) and self.annotator not in raters
        if not self.doubled(key):
            return _key(key) not in active
        decided = deciders.get(_key(key), set())
        return len(decided) < 2 and self.annotator not in decided

    def current(self) -> QueueItem | None:
        """The key under the cursor; None when the queue is exhausted."""
        self.start()
        return self._queue[self._position] if self._position < len(self._queue) else None

    @property
    def n_held(self) -> int:
        """Queue items leased to other sessions now (another analyst has them on screen)."""
        return len(leases.held_by_others(self.store, owner=self.owner, now=self._clock(), keys=map(_key, self._queue)))

    def tally(self) -> QueueTally:
        """Where the queue stands for this session (read from the store): :class:`QueueTally`."""
        active, deciders = self._active(), self._deciders()
        held = leases.held_by_others(self.store, owner=self.owner, now=self._clock(), keys=map(_key, self._queue))
        counts = dict.fromkeys(("done", "mine", "held", "skipped", "waiting"), 0)
        for item in self._queue:
            key = _key(item)
            if self._done(item, active, deciders):
                counts["done"] += 1
                by = deciders.get(key, set()) if self.doubled(item) else {active.get(key, {}).get("annotator")}
                counts["mine"] += self.annotator in by
            else:
                state = "held" if key in held else "skipped" if self._open(item, active, deciders) else "waiting"
                counts[state] += 1
        return QueueTally(total=len(self._queue), **counts)

    # ----------------------------------------------------------------- leases
    def _lease(self, item: QueueItem) -> bool:
        """Lease ``item`` to this session (giving back the one it held); False when another holds it."""
        if self._leased is not None and self._leased != item:
            self._release()
        got = leases.acquire(
            self.store, _key(item), owner=self.owner, annotator=self.annotator or "(not named yet)", now=self._clock()
        )
        self._leased = item if got else None
        return got

    def _release(self) -> None:
        if self._leased is not None:
            leases.release(self.store, _key(self._leased), owner=self.owner, now=self._clock())
            self._leased = None

    def _land(self, start: int, *, step: int = 1, open_only: bool = True) -> None:
        """Move the cursor to the first item from ``start`` (going by ``step``) that no other session
        leases and, with ``open_only``, that has no annotation in force; lease it. Going forward past
        the last item ends the queue; going back past the first leaves the cursor where it is."""
        active, deciders = self._active(), self._deciders()
        others = leases.held_by_others(self.store, owner=self.owner, now=self._clock())
        index = start
        while 0 <= index < len(self._queue):
            item = self._queue[index]
            free = _key(item) not in others and not (open_only and not self._open(item, active, deciders))
            if free and self._lease(item):
                self._position = index
                return
            index += step
        if step > 0:
            self._release()
            self._position = len(self._queue)

    def touch(self) -> bool:
        """Renew the lease on the current item (the analyst is still on it); False when another
        session took it meanwhile (this one's lease had expired)."""
        item = self.current()
        return item is not None and self._lease(item)

    def close(self) -> None:
        """Give back the lease on the item shown (the process's leases are also given back when it exits)."""
        self._release()

    # ----------------------------------------------------------------- moving
    def skip(self) -> None:
        """Leave the current item unannotated (its lease given back) and move to the next item
        without an annotation in force that no one else has leased (no effect at the end)."""
        self.start()
        if self._position < len(self._queue):
            self._land(self._position + 1)

    def previous(self) -> None:
        """Move back to the previous item no one else has leased, done or not (no effect at the start)."""
        self.start()
        if self._position > 0:
            self._land(self._position - 1, step=-1, open_only=False)

    def goto(self, position: int) -> None:
        """Move the cursor to ``position`` (``0`` .. :attr:`total`; :attr:`total` is the end) and lease it.

        Raises
        ------
        UsageError
            For a position outside the queue, or an item another session has leased.
        """
        if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position <= len(self._queue):
            raise UsageError(
                f"position must be a whole number from 0 to {len(self._queue)}, got {position!r}. "
                "Fix: give a position inside the queue"
            )
        if position == len(self._queue):
            self._release()
        elif not self._lease(self._queue[position]):
            held = leases.holder(self.store, _key(self._queue[position]), now=self._clock())
            raise UsageError(
                f"item {position + 1} is on {held or 'another analyst'}'s screen (leased for up to "
                f"{leases.LEASE_SECONDS / 60:.0f} minutes). Fix: take another item, or wait until it is saved or skipped"
            )
        self._started = True  # placed here, not first on the first open item
        self._position = position

    # ----------------------------------------------------------------- writing
    def submit(
        self,
        *,
        category: str,
        corrected_answer: str | None = None,
        corrected_program: str | None = None,
        note: str | None = None,
        exclude: bool = False,
    ) -> int:
        """Annotate the current item (durably), give back its lease, move to the next open item,
        and return the event id.

        Raises
        ------
        UsageError
            When the queue is exhausted.
        InputError
            When a field is not valid (nothing is written, the cursor stays).
        """
        key = self.current()
        if key is None:
            raise UsageError(
                "the queue is exhausted; there is no item to annotate. Fix: goto() an earlier position, or undo()"
            )
        annotator = self._signed()
        if self.adjudicate and annotator in dict(self.disputes().get(_key(key), [])):
            raise UsageError(
                f"nothing saved: {annotator} rated this turn, and an adjudication is a third analyst's ruling. "
                "Fix: leave it to another analyst, or change your own rating in the triage queue"
            )
        system = key.system
        if category == "model_error":  # only where a system's answer was graded wrong, always with the system
            system = self._system_of(key)
            found = self.run.turns.filter(
                (pl.col("record_id") == key.record_id) & (pl.col("turn") == key.turn) & (pl.col("system") == system)
            )
            if system is None or not found.height or found["correct"][0] is not False:
                raise UsageError(
                    "nothing saved: 'Model error' is for a system's answer graded wrong, and this turn's "
                    + ("answer was graded right" if found.height else "has no single system's answer")
                    + ". Fix: pick the data-problem category that fits the gold turn"
                )
        event_id = self.store.annotate(
            annotator=annotator,
            record_id=key.record_id,
            turn=key.turn,
            system=system,
            category=category,
            corrected_answer=corrected_answer,
            corrected_program=corrected_program,
            note=note,
            exclude=exclude,
        )
        self._undo.append((event_id, self._position))
        self._release()
        self._land(self._position + 1)
        return event_id

    def undo(self) -> int | None:
        """Retract this session's last submitted (not yet undone) annotation and move the
        cursor back to its item (leased again when no one else took it); return the retraction's
        event id, or None when there is nothing to undo."""
        if not self._undo:
            return None
        event_id, position = self._undo[-1]
        retraction = self.store.retract(event_id, annotator=self._signed())
        self._undo.pop()
        self._lease(self._queue[position])
        self._position = position
        return retraction

    # ----------------------------------------------------------------- the item
    def item(self) -> TriageItem | None:
        """Everything about the current item (None when the queue is exhausted)."""
        key = self.current()
        return None if key is None else self.build_item(key)

    def _system_of(self, key: QueueItem) -> str | None:
        if key.system is not None:
            return key.system
        systems = self.run.graded.systems
        return systems[0] if len(systems) == 1 else None

    def build_item(self, key: QueueItem) -> TriageItem:
        """The :class:`TriageItem` of any key of this run (not only the current one)."""
        run = self.run
        gold_turns = run.gold.turns.filter(pl.col("record_id") == key.record_id)
        gold = gold_turns.filter(pl.col("turn") == key.turn).row(0, named=True)
        system = self._system_of(key)
        predictions = (
            run.turns.filter((pl.col("record_id") == key.record_id) & (pl.col("system") == system))
            if system is not None
            else run.turns.clear()
        )
        answers = dict(predictions.select("turn", "predicted_answer").iter_rows())
        found = predictions.filter(pl.col("turn") == key.turn)
        predicted = found.row(0, named=True) if found.height else None

        doc_id = gold.get("doc_id")
        documents = run.gold.documents.filter(pl.col("doc_id") == doc_id) if doc_id is not None else None
        document = documents.row(0, named=True) if documents is not None and documents.height else {}
        table = run.gold.tables([doc_id]).get(doc_id) if doc_id is not None else None
        columns, rows = _table(document.get("table_json"))

        earlier = gold_turns.filter(pl.col("turn") < key.turn).sort("turn")
        conversation = tuple(
            (turn, question, gold_answer, answers.get(turn))
            for turn, question, gold_answer in earlier.select("turn", "question", "gold_answer").iter_rows()
        )
        flags = tuple(
            (str(category), rule, float(confidence), evidence)
            for category, rule, confidence, evidence in run.checks.filter(
                (pl.col("record_id") == key.record_id) & (pl.col("turn") == key.turn)
            )
            .sort("confidence", descending=True, maintain_order=True)
            .select("category", "rule", "confidence", "evidence")
            .iter_rows()
        )
        predicted_program = predicted.get("predicted_program") if predicted else None
        return TriageItem(
            key=key,
            question=gold["question"],
            gold_answer=gold.get("gold_answer"),
            gold_executed=gold.get("gold_executed"),
            predicted_answer=predicted.get("predicted_answer") if predicted else None,
            answer_graded=predicted.get("answer") if predicted else None,
            correct=predicted.get("correct") if predicted else None,
            reason=_text(predicted.get("reason")) if predicted else None,
            detail=predicted.get("detail") if predicted else None,
            error_type=_text(predicted.get("error_type")) if predicted else None,
            conversation=conversation,
            gold_trace=_trace(gold.get("gold_program"), table),
            predicted_trace=_trace(predicted_program, table) if predicted_program else None,
            flags=flags,
            pre_text=document.get("pre_text") or "",
            post_text=document.get("post_text") or "",
            table_columns=columns,
            table_rows=rows,
            numbers_used=_literals(gold.get("gold_program"), predicted_program),
            annotation=None if self._blind(key) else self._active().get(_key(key)),
        )

    def __repr__(self) -> str:
        where = f"position {self._position}" if self._started else "not started"
        return f"AnnotationSession({self.annotator!r}, {self.total} items, {where}, {self.store!r})"
