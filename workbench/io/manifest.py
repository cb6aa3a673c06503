"""The one manifest type: what a run of the workbench read, with which parameters and
library versions, and what it found.

Three files carry a manifest, each of one ``kind``:

- ``graded``: the graded folder's ``summary.json`` (written by
  :func:`workbench.pipeline.graded.write_graded`; no timestamp, so the same inputs give the
  same bytes);
- ``report``: a report's ``<name>.manifest.json`` (:func:`workbench.analysis.changes.build_manifest`);
- ``export``: an export's ``manifest.json`` (the cleaned dataset's).

All three are one :class:`Manifest` (the idea of inspect_ai's ``EvalLog``: one versioned
record of a run) with a ``schema_version``, written first. Apart from that key, each kind
keeps the JSON layout its files had before the version was recorded (:data:`LAYOUTS` maps the
file's keys to the record's fields), so a file written before reads the same: its version is
:data:`UNVERSIONED` (0).
"""

from __future__ import annotations

import json
import platform
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from workbench import __version__
from workbench.errors import InputError

__all__ = [
    "SCHEMA_VERSION",
    "SCHEMA_VERSIONS",
    "UNVERSIONED",
    "LAYOUTS",
    "ManifestKind",
    "Manifest",
    "library_versions",
    "read_manifest",
]

#: The version of the report and export manifests this workbench writes. Raise it when a layout changes.
SCHEMA_VERSION = 1
#: The version of a manifest written before ``schema_version`` was recorded (same layout as 1).
UNVERSIONED = 0

ManifestKind = Literal["graded", "report", "export"]

#: The newest version of each kind this workbench writes and reads. A graded folder's version
#: also says its tables' layout: 2 keeps the policy grades once per distinct grading input
#: (``policy_inputs.parquet``, and ``input_key`` in ``turns.parquet``); 1 and 0 kept them once per
#: turn and policy (``policy_grades.parquet``), still read (:func:`workbench.pipeline.graded.read_graded`).
SCHEMA_VERSIONS: Mapping[ManifestKind, int] = MappingProxyType(
    {"graded": 2, "report": SCHEMA_VERSION, "export": SCHEMA_VERSION}
)

#: Each kind's JSON layout, in the file's order: (key in the file, field of :class:`Manifest`,
#: key inside that field, or ``None`` when the file's key holds the whole field).
LAYOUTS: Mapping[ManifestKind, tuple[tuple[str, str, str | None], ...]] = MappingProxyType(
    {
        "graded": (
            ("workbench_version", "workbench_version", None),
            ("dataset", "inputs", "dataset"),
            ("predictions", "inputs", "predictions"),
            ("policy", "parameters", "policy"),
            ("policies", "parameters", "policies"),
            ("checks", "outputs", "checks"),
            ("systems", "metrics", None),
        ),
        "report": (
            ("workbench_version", "workbench_version", None),
            ("template", "name", None),
            ("created_at", "created_at", None),
            ("parameters", "parameters", None),
            ("inputs", "inputs", None),
            ("versions", "versions", None),
            ("metrics", "metrics", None),
            ("html", "outputs", "html"),
        ),
        "export": (
            ("workbench_version", "workbench_version", None),
            ("created_at", "created_at", None),
            ("input", "inputs", "dataset"),
            ("annotations", "inputs", "annotations"),
            ("parameters", "parameters", None),
            ("output", "outputs", "dataset"),
            ("split", "outputs", "split"),
            ("files", "outputs", "files"),
        ),
    }
)

#: How each kind is written as JSON (as before the version was recorded: an export keeps
#: non-ASCII text as it is, a report writes what JSON cannot hold as text).
_JSON_OPTIONS: Mapping[ManifestKind, Mapping[str, Any]] = MappingProxyType(
    {"graded": {}, "report": {"default": str}, "export": {"ensure_ascii": False}}
)

#: Libraries whose versions a report's manifest records, after Python's.
VERSIONED_LIBRARIES = ("polars", "pandas", "plotly", "papermill", "ipywidgets", "sympy", "math-verify", "nbformat")

_FIELDS = ("workbench_version", "name", "created_at", "inputs", "parameters", "versions", "metrics", "outputs")


@dataclass(frozen=True, kw_only=True)
class Manifest:
    """What one run of the workbench read, with which parameters and versions, and what it found.

    Attributes
    ----------
    kind
        Which file it is (``graded``, ``report``, ``export``); not written (the file's name
        says it), it decides the layout (:data:`LAYOUTS`).
    schema_version
        The layout's version (:data:`SCHEMA_VERSION`; a graded folder's is given when written,
        :data:`SCHEMA_VERSIONS`; :data:`UNVERSIONED` for a file written before it was recorded).
    workbench_version
        The workbench that wrote it.
    name
        What was run: a report's template.
    created_at
        When (UTC, ISO 8601); ``None`` in ``summary.json``, which holds no timestamp.
    inputs
        The files read, by role, each with its path and ``sha256`` (``dataset``,
        ``predictions``; an export's ``annotations`` snapshot).
    parameters
        How they were read and graded.
    versions
        Python's and the libraries' versions (:func:`library_versions`).
    metrics
        Headline metrics per system.
    outputs
        What was written, by role (a report's ``html``; an export's ``dataset``, ``split``
        and ``files``; the graded folder's data-quality ``checks`` counts).

    Examples
    --------
    >>> m = Manifest(kind="report", name="01-overview", created_at="2026-11-23T12:00:00Z",
    ...              inputs={"dataset": None, "predictions": []}, outputs={"html": "bundled.html"})
    >>> list(m.to_dict())[:3]
    ['schema_version', 'workbench_version', 'template']
    >>> Manifest.from_dict("report", m.to_dict()) == m
    True
    >>> Manifest(kind="graded", created_at="2026-11-23T12:00:00Z")
    Traceback (most recent call last):
    ...
    ValueError: a graded manifest has no created_at
    """

    kind: ManifestKind
    schema_version: int = SCHEMA_VERSION
    workbench_version: str = __version__
    name: str | None = None
    created_at: str | None = None
    inputs: Mapping[str, Any] = field(default_factory=dict)
    parameters: Mapping[str, Any] = field(default_factory=dict)
    versions: Mapping[str, str] = field(default_factory=dict)
    metrics: Mapping[str, Any] = field(default_factory=dict)
    outputs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in LAYOUTS:
            raise ValueError(f"no manifest kind {self.kind!r}; kinds: {', '.join(LAYOUTS)}")
        layout = LAYOUTS[self.kind]
        for name in _FIELDS:
            value = getattr(self, name)
            parts = [sub for _, field_name, sub in layout if field_name == name]
            if not parts:
                if value:
                    raise ValueError(f"a {self.kind} manifest has no {name}")
            elif None not in parts and not set(value) <= set(parts):
                unknown = ", ".join(sorted(set(value) - set(parts)))
                raise ValueError(f"a {self.kind} manifest's {name} are {', '.join(parts)} (not {unknown})")

    def to_dict(self) -> dict[str, Any]:
        """The manifest as its file holds it: ``schema_version`` first, then the kind's layout.

        A part of a field that was not given (an older file without it) is left out."""
        out: dict[str, Any] = {"schema_version": self.schema_version}
        for key, name, sub in LAYOUTS[self.kind]:
            value = getattr(self, name)
            if sub is None:
                out[key] = value
            elif sub in value:
                out[key] = value[sub]
        return out

    def to_json(self) -> str:
        """The text of the manifest's file (indented JSON, ending in a newline)."""
        return json.dumps(self.to_dict(), indent=2, **_JSON_OPTIONS[self.kind]) + "\n"

    @classmethod
    def from_dict(cls, kind: ManifestKind, data: Mapping[str, Any], *, source: str = "<manifest>") -> Manifest:
        """Read a manifest of ``kind`` from its file's content; one without ``schema_version``
        (written before it was recorded) is :data:`UNVERSIONED`.

        Raises
        ------
        InputError
            For a version newer than this workbench reads, or keys that are not the kind's.

        Examples
        --------
        >>> old = {"workbench_version": "0.1.0", "dataset": {"path": "dev.json", "sha256": "ab"},
        ...        "predictions": [], "policy": {}, "policies": [], "checks": {}, "systems": {}}
        >>> m = Manifest.from_dict("graded", old)
        >>> m.schema_version, m.inputs["dataset"]["sha256"], m.created_at
        (0, 'ab', None)
        """
        version = data.get("schema_version", UNVERSIONED)
        if not isinstance(version, int) or isinstance(version, bool) or version > SCHEMA_VERSIONS[kind]:
            raise InputError(
                source,
                f"manifest schema_version {version!r}; this workbench reads versions up to {SCHEMA_VERSIONS[kind]}",
                fix="use the workbench version that wrote it, or a newer one",
            )
        layout = LAYOUTS[kind]
        unknown = set(data) - {key for key, _, _ in layout} - {"schema_version"}
        if unknown:
            raise InputError(
                source,
                f"keys {', '.join(sorted(unknown))} are not those of a {kind} manifest "
                f"({', '.join(key for key, _, _ in layout)})",
                fix=f"give the {kind} manifest's file",
            )
        fields: dict[str, Any] = {"schema_version": version}
        for key, name, sub in layout:
            if key not in data:
                continue
            if sub is None:
                fields[name] = data[key]
            else:
                fields.setdefault(name, {})[sub] = data[key]
        return cls(kind=kind, **fields)


def read_manifest(path: str | Path, kind: ManifestKind) -> Manifest:
    """Read the manifest of ``kind`` in the file at ``path`` (versioned or not).

    Raises
    ------
    InputError
        When the file is not JSON, not an object, or not a manifest of ``kind`` this
        workbench reads.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(str(path), f"invalid JSON ({exc})", fix="give a manifest the workbench wrote") from None
    if not isinstance(data, dict):
        raise InputError(str(path), "not a JSON object", fix="give a manifest the workbench wrote")
    return Manifest.from_dict(kind, data, source=str(path))


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def library_versions(packages: tuple[str, ...] = VERSIONED_LIBRARIES) -> dict[str, str]:
    """Python's version, then each installed package's of ``packages`` (missing ones left out).

    Examples
    --------
    >>> versions = library_versions(("polars", "no-such-package"))
    >>> list(versions) == ["python", "polars"]
    True
    """
    return {"python": platform.python_version(), **{p: v for p in packages if (v := _version(p)) is not None}}
