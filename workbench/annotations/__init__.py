"""Annotation: an append-only store of annotation events, and sessions (queue, cursor,
undo) over it. Nothing here imports ipywidgets; the views are in ``workbench.widgets``."""

from __future__ import annotations

from workbench.annotations.session import AnnotationSession, QueueItem, TraceView, TriageItem
from workbench.annotations.store import (
    DEFAULT_STORE_NAME,
    AnnotationStore,
    active_annotations,
    default_store_path,
    import_csv,
    read_annotation_csv,
    validate_annotation,
)

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
