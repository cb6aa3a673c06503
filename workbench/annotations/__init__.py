"""Annotation: an append-only store of annotation events, and sessions (queue, cursor,
undo) over it. Nothing here imports ipywidgets; the views are in ``workbench.widgets``.

Modules, each importing only those before it: ``names`` (who annotates: never a shared default
name), ``items`` (what the triage shows about a turn), ``events`` (what a valid annotation is, which
ones are in force), ``connections`` (one SQLite connection per store file per process),
``url`` (a store's location: a path, ``sqlite:///`` or ``postgresql://``, shown redacted),
``rows`` (the events table as every backend stores it), ``integrity`` (a store file's header
checked, SQLite errors in one line, backup names), ``store`` (the SQLite log:
:class:`AnnotationStore`), ``postgres`` (the same log on a PostgreSQL server), ``backends``
(:func:`open_store`: the backend chosen by the location), then ``leases`` (an item shown to one
analyst held for a few minutes, in the store), ``recovery`` (rescue a damaged SQLite store),
``transfer`` (copy a store into another), ``agreement`` (each analyst's decisions, Cohen's kappa
or Krippendorff's alpha, the turns they decided differently), ``csv_import``, ``session`` and ``queues`` (the triage's queues: checks, failed, adjudicate).
"""

from __future__ import annotations

from workbench.annotations.backends import Store, open_store
from workbench.annotations.csv_import import import_csv, read_annotation_csv
from workbench.annotations.events import active_annotations, validate_annotation
from workbench.annotations.session import AnnotationSession, QueueItem, TraceView, TriageItem
from workbench.annotations.store import DEFAULT_STORE_NAME, AnnotationStore, default_store_path

__all__ = [
    "DEFAULT_STORE_NAME",
    "AnnotationStore",
    "Store",
    "open_store",
    "AnnotationSession",
    "QueueItem",
    "TraceView",
    "TriageItem",
    "active_annotations",
    "default_store_path",
    "import_csv",
    "read_annotation_csv",
    "validate_annotation",
]
