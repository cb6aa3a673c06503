"""Open an annotation store by where it is: the one place the backend is chosen.

A path or ``sqlite:///path`` opens the SQLite :class:`~workbench.annotations.store.AnnotationStore`
(the embedded default, unchanged); ``postgresql://user@host:port/database`` opens the server
:class:`~workbench.annotations.postgres.PostgresStore`. Both have the same interface and the same
guarantees; callers never ask which one they hold.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> with open_store(Path(tempfile.mkdtemp()) / "a.sqlite") as store:
...     store.annotate(annotator="ana", record_id="r1", turn=0, category="other")
1
>>> open_store("postgres-ql://db/x")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
workbench.errors.UsageError: the annotation store 'postgres-ql://db/x' is a URL of an unknown kind (postgres-ql). ...
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeAlias

from workbench.annotations.postgres import PostgresStore
from workbench.annotations.store import AnnotationStore
from workbench.annotations.url import StoreLocation, parse_location
from workbench.config import annotation_store_path

__all__ = ["Store", "open_store", "store_location"]

#: Any annotation store (the interface every caller uses).
Store: TypeAlias = "AnnotationStore | PostgresStore"


def open_store(location: str | Path | StoreLocation, *, create: bool = True) -> Store:
    """Open the annotation store at ``location`` (a path, ``sqlite:///...`` or ``postgresql://...``).

    Parameters
    ----------
    location
        Where the store is; see :func:`workbench.annotations.url.parse_location`.
    create
        Create the store (file or schema) when there is none.

    Raises
    ------
    UsageError
        For a URL of an unknown kind (never taken as a folder name), and as each backend raises.
    InputError
        As each backend raises (the message names the path, or the URL with its password hidden).
    """
    found = location if isinstance(location, StoreLocation) else parse_location(location)
    if found.path is not None:
        return AnnotationStore(found.path, create=create)
    return PostgresStore(found, create=create)


def store_location(value: str | Path = "") -> StoreLocation:
    """The store a user named (a parameter, ``--store``, ``--annotations``): ``value`` parsed, or
    the default file :func:`workbench.config.annotation_store_path` when it is empty.

    Examples
    --------
    >>> store_location("postgresql://ana:pw@db/triage").display, store_location().path.name
    ('postgresql://ana:***@db/triage', 'annotations.sqlite')
    """
    return parse_location(value) if str(value).strip() else parse_location(annotation_store_path())
