"""Annotation: an append-only store of annotation events, and sessions (queue, cursor,
undo) over it. Nothing here imports ipywidgets; the views are in ``workbench.widgets``.

Modules, each importing only those before it: ``events`` (what a valid annotation is, which
ones are in force), ``connections`` (one SQLite connection per store file per process),
``integrity`` (a store file's header checked, SQLite errors in one line, backup names),
``store`` (the log itself: :class:`AnnotationStore`), then ``leases`` (an item shown to one
analyst held for a few minutes, in the store's file), ``recovery`` (rescue a damaged store),
``csv_import`` and ``session``.
"""

from __future__ import annotations

from workbench.annotations.csv_import import import_csv, read_annotation_csv
from workbench.annotations.events import active_annotations, validate_annotation
from workbench.annotations.session import AnnotationSession, QueueItem, TraceView, TriageItem
from workbench.annotations.store import DEFAULT_STORE_NAME, AnnotationStore, default_store_path

__all__ = [
    "DEFAULT_STORE_NAME",
    "AnnotationStore",
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
