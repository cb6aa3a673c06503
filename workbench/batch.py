"""A batch of reports from one YAML file (``workbench report --config FILE.yaml``).

The file lists the reports to run; each entry names a template and its inputs, and may set
any other template parameter::

    out: reports/nightly            # default folder (each report gets <out>/<template>/)
    reports:
      - template: 01-overview
      - template: 04-compare-systems
        predictions:
          - data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6/2026-05-04T06-35-00Z/predictions.jsonl
          - data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6/2026-05-04T12-48-44Z/predictions.jsonl
        systems: [claude 06-35, claude 12-48]
        parameters: {n_boot: 500}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.errors import InputError

__all__ = ["ReportJob", "load_batch"]

_ENTRY_KEYS = {"template", "dataset", "predictions", "systems", "column_map", "out", "parameters"}
_LIST_KEYS = ("predictions", "systems", "column_map")


@dataclass(frozen=True)
class ReportJob:
    """One report of a batch: a template, its parameters and where to write."""

    template: str
    parameters: dict[str, Any] = field(default_factory=dict)
    out_dir: Path | None = None


def _as_list(value: Any, file: str, where: str, key: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ";".join(value)
    raise InputError(
        file, f"expected a string or a list of strings, got {value!r}", location=where, field=key, fix="write a list"
    )


def load_batch(path: str | Path) -> list[ReportJob]:
    """Read and check a batch file.

    Raises
    ------
    InputError
        When the file is not YAML, has no ``reports`` list, or an entry has an unknown key, no
        template, or a value of the wrong type; the message names the file, the entry and the
        field.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "b.yaml"
    >>> _ = f.write_text("out: r\\nreports:\\n  - template: 01-overview\\n    parameters: {max_failed_rows: 5}\\n")
    >>> [(j.template, j.parameters, j.out_dir.as_posix()) for j in load_batch(f)]
    [('01-overview', {'max_failed_rows': 5}, 'r/01-overview')]
    """
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(str(path), f"cannot read the batch file ({exc.strerror})", fix="check the path") from None
    except yaml.YAMLError as exc:
        raise InputError(str(path), f"not valid YAML ({exc})", fix="check the indentation and quoting") from None
    if not isinstance(data, Mapping) or not isinstance(data.get("reports"), list) or not data["reports"]:
        raise InputError(
            str(path),
            "expected a mapping with a non-empty 'reports' list",
            fix="write 'reports:' followed by entries such as '- template: 01-overview'",
        )
    unknown_top = sorted(set(data) - {"out", "reports"})
    if unknown_top:
        raise InputError(str(path), f"unknown key {', '.join(unknown_top)}", fix="use 'out' and 'reports' only")
    base = Path(data["out"]) if data.get("out") else None
    jobs = []
    for index, entry in enumerate(data["reports"], start=1):
        where = f"report {index}"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("template"), str):
            raise InputError(
                str(path),
                "expected a mapping with a 'template' name",
                location=where,
                fix="write '- template: 01-overview'",
            )
        unknown = sorted(set(entry) - _ENTRY_KEYS)
        if unknown:
            raise InputError(
                str(path),
                f"unknown key {', '.join(unknown)}",
                location=where,
                fix=f"use {', '.join(sorted(_ENTRY_KEYS))}; other template parameters go under 'parameters'",
            )
        if not isinstance(entry.get("parameters") or {}, Mapping):
            raise InputError(
                str(path),
                "expected a mapping",
                location=where,
                field="parameters",
                fix="write 'parameters: {name: value}'",
            )
        params = dict(entry.get("parameters") or {})
        if entry.get("dataset"):
            params["dataset"] = str(entry["dataset"])
        for key in _LIST_KEYS:
            if entry.get(key):
                params[key] = _as_list(entry[key], str(path), where, key)
        out = Path(entry["out"]) if entry.get("out") else (base / entry["template"] if base else None)
        jobs.append(ReportJob(template=entry["template"], parameters=params, out_dir=out))
    return jobs
