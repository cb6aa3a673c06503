"""Write graded outputs: ``turns.parquet``, ``conversations.parquet``, ``unmatched.parquet``,
``policy_grades.parquet``, ``checks.parquet`` (data-quality flags) and ``summary.json``,
written as a set: every file into a temporary file first, and only when all are complete
renamed into place (``summary.json`` last), so a failure while writing leaves the previous
outputs whole.

The same inputs give byte-identical files, whatever the engine (local or Dask) and the
number of worker processes: rows come out in the gold's order and the Parquet writer's
options are fixed. ``summary.json`` holds no timestamp (only input paths and hashes)."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from workbench.analysis.metrics import conversations, summarize
from workbench.grading.policies import POLICIES
from workbench.io.gold import GoldDataset
from workbench.io.manifest import Manifest
from workbench.io.paths import inside
from workbench.pipeline.grade import GradedRun

__all__ = ["file_sha256", "parquet_writer", "write_atomic", "write_atomic_set", "write_graded"]


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


#: How Rust libraries (polars' Parquet writer) report an operating-system error: "No space left
#: on device (os error 28)".
_OS_ERROR_IN_TEXT = re.compile(r"\(os error (\d+)\)")


def _write(write: Callable[[Path], None], tmp: Path, path: Path) -> None:
    """``write(tmp)``, with an operating-system error that a library reported as its own
    exception (polars' ``ComputeError``) raised as the :class:`OSError` it is, naming ``path``.

    Examples
    --------
    >>> def full_disk(tmp):  # what polars raises when the disk is full
    ...     raise pl.exceptions.ComputeError("parquet: underlying IO error: No space left on device (os error 28)")
    >>> _write(full_disk, Path("t.tmp"), Path("out/a.parquet"))
    Traceback (most recent call last):
    ...
    OSError: [Errno 28] No space left on device: 'out/a.parquet'
    """
    try:
        write(tmp)
    except OSError:
        raise
    except Exception as exc:
        found = _OS_ERROR_IN_TEXT.search(str(exc))
        if found is None:
            raise
        code = int(found.group(1))
        raise OSError(code, os.strerror(code), str(path)) from exc


def parquet_writer(frame: pl.DataFrame, **options: Any) -> Callable[[Path], None]:
    """A ``write(path)`` for :func:`write_atomic` and :func:`write_atomic_set`: the frame is
    encoded in memory, then written with Python's file API, so a full disk is the
    :class:`OSError` it is (polars' own writer says "Invalid thrift: transport error").
    The bytes are those ``frame.write_parquet(path, **options)`` writes."""

    def write(path: Path) -> None:
        buffer = io.BytesIO()
        frame.write_parquet(buffer, **options)
        path.write_bytes(buffer.getvalue())

    return write


def write_atomic(path: Path, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it over ``path``.

    Raises
    ------
    OSError
        When the file cannot be written (a full disk...); ``path`` is left as it was.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        _write(write, tmp, path)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def _in_stable_order(systems: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The per-system metrics with each ``reasons`` count table ordered by count (descending),
    then by reason, so that ties do not come out in a different order in each run."""
    out = {}
    for system, metrics in systems.items():
        reasons = metrics.get("reasons") if isinstance(metrics, dict) else None
        if isinstance(reasons, dict):
            ordered = dict(sorted(reasons.items(), key=lambda item: (-item[1], str(item[0]))))
            metrics = {**metrics, "reasons": ordered}
        out[system] = metrics
    return out


def write_atomic_set(items: Sequence[tuple[Path, Callable[[Path], None]]]) -> list[Path]:
    """Write several files as a set, or none of them.

    Each ``write(tmp)`` goes into a temporary file beside its path first; only when all of
    them are complete (and flushed to disk) are they renamed into place, in order. The file
    each rename replaces is kept as a hard link (a copy where links are not allowed) until
    the last rename is done, so a rename that fails half-way through the set puts the earlier
    ones back: the folder holds the previous set byte for byte, never part of a new one (and a
    folder this call had to create is removed again).

    Raises
    ------
    OSError
        The error that stopped the set (a full disk, a read-only folder...), with
        ``filename`` naming the file being written; no temporary file is left behind.
    """
    temps: list[Path] = []
    kept: list[tuple[Path, Path | None]] = []  # (target, its previous content) for each rename done
    current = items[0][0] if items else Path()
    new_folders = _missing_folders([path.parent for path, _ in items])
    try:
        for path, write in items:
            current = path
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            os.close(fd)
            temps.append(Path(tmp_name))
            _write(write, temps[-1], path)
            os.chmod(temps[-1], 0o644)
        for tmp, (path, _) in zip(temps, items, strict=True):
            current = path
            with tmp.open("rb") as handle:
                os.fsync(handle.fileno())
        for tmp, (path, _) in zip(temps, items, strict=True):
            current = path
            previous = _keep_previous(path)
            kept.append((path, previous))
            os.replace(tmp, path)
    except BaseException as exc:
        _put_back(kept)
        for tmp in temps:
            tmp.unlink(missing_ok=True)
        for folder in new_folders:  # deepest first; only the empty folders this call made
            try:
                folder.rmdir()
            except OSError:
                break
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(current)
        raise
    finally:
        for tmp in temps:
            tmp.unlink(missing_ok=True)
        for _, previous in kept:
            if previous is not None:
                previous.unlink(missing_ok=True)
    return [path for path, _ in items]


def _missing_folders(folders: list[Path]) -> list[Path]:
    """The folders among ``folders`` and their parents that do not exist yet, deepest first."""
    missing: set[Path] = set()
    for folder in folders:
        while not folder.exists() and folder != folder.parent:
            missing.add(folder)
            folder = folder.parent
    return sorted(missing, key=lambda p: len(p.parts), reverse=True)


def _keep_previous(path: Path) -> Path | None:
    """A second name for the file at ``path`` (a hard link, else a copy), or ``None`` when
    there is no such file; :func:`_put_back` renames it back."""
    if not path.is_file():
        return None
    backup = path.with_name(f".{path.name}.{os.getpid()}.previous")
    backup.unlink(missing_ok=True)
    try:
        os.link(path, backup)
    except OSError:
        shutil.copy2(path, backup)
    return backup


def _put_back(kept: list[tuple[Path, Path | None]]) -> None:
    """Undo the renames done so far, last first: each target gets its previous file back, or
    is removed when it had none."""
    for path, previous in reversed(kept):
        try:
            if previous is None:
                path.unlink(missing_ok=True)
            else:
                os.replace(previous, path)
        except OSError:  # pragma: no cover - the folder broke between two renames
            continue


def write_graded(
    run: GradedRun,
    gold: GoldDataset,
    prediction_files: Sequence[tuple[Path, str]],
    out_dir: str | Path,
    *,
    summary: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Path]:
    """Write a graded run into ``out_dir`` and return the paths written.

    ``prediction_files`` pairs each input file with the system it was read as, for the
    manifest in ``summary.json`` (a :class:`~workbench.io.manifest.Manifest` of kind ``graded``);
    ``summary`` is the per-system metrics when already computed.
    """
    out = Path(out_dir)

    manifest = Manifest(
        kind="graded",
        inputs={
            "dataset": {
                "path": str(gold.path),
                "sha256": file_sha256(gold.path),
                "layout": gold.layout,
                "n_turns": gold.turns.height,
                "n_conversations": gold.turns["record_id"].n_unique(),
                "benchmark": gold.benchmark,
            },
            "predictions": [{"path": str(p), "sha256": file_sha256(p), "system": s} for p, s in prediction_files],
        },
        parameters={
            "policy": dataclasses.asdict(run.policy),
            "policies": [dataclasses.asdict(p) for p in POLICIES.values()],
        },
        # sorted: a hash group_by gives its groups in a different order from one run to the next
        outputs={
            "checks": {str(k): int(v) for k, v in run.checks.group_by("category").len().sort("category").iter_rows()}
        },
        metrics=_in_stable_order(
            summary
            if summary is not None
            else summarize(run.turns, run.unmatched, run.policy.name, run.systems, run.policy_grades)
        ),
    )
    paths = {
        "turns": inside(out, "turns.parquet"),
        "conversations": inside(out, "conversations.parquet"),
        "unmatched": inside(out, "unmatched.parquet"),
        "policy_grades": inside(out, "policy_grades.parquet"),
        "checks": inside(out, "checks.parquet"),
        "summary": inside(out, "summary.json"),
    }
    frames: dict[str, pl.DataFrame] = {
        "turns": run.turns,
        "conversations": conversations(run.turns),
        "unmatched": run.unmatched,
        "policy_grades": run.policy_grades,
        "checks": run.checks,
    }
    text = manifest.to_json()
    # fixed writer options: the same run gives the same bytes (see tests/reliability);
    # written as a set, summary.json last: a failure half-way leaves the previous set whole
    write_atomic_set(
        [
            *(
                (paths[name], parquet_writer(frame, compression="zstd", statistics=True))
                for name, frame in frames.items()
            ),
            (paths["summary"], lambda p: p.write_text(text, encoding="utf-8")),
        ]
    )
    return paths
