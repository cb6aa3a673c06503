"""Helpers of the reliability tests (issue 8): a count of the faults injected, file hashes,
and a way to run code as an unprivileged user (read-only files mean nothing to root)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

#: Every fault a test injected, by name ("store: header garbage", ...); printed at the end.
FAULTS: list[str] = []
#: Lines the tests want shown in the terminal summary (sha256 of outputs, counts).
NOTES: list[str] = []


def fault(name: str) -> None:
    """Record that the fault ``name`` was injected."""
    FAULTS.append(name)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative path -> sha256)."""
    return {p.relative_to(root).as_posix(): sha256(p) for p in sorted(root.rglob("*")) if p.is_file()}


#: Run as ``python -c UNPRIVILEGED script args...``: imports the workbench (and the codecs it
#: may need: the interpreter's own files may be unreadable to ``nobody``), then (as root)
#: becomes ``nobody`` and runs ``script`` (Python text) with ``sys.argv[1:]`` = args.
UNPRIVILEGED = """
import os, sys
import csv, io, json, sqlite3
import encodings.utf_8_sig, encodings.utf_16, encodings.utf_16_le, encodings.utf_16_be, encodings.ascii, encodings.latin_1
import polars
import importlib.metadata, email.parser, email.feedparser  # workbench --version reads the package metadata
import workbench.io.jsonfiles
import workbench.annotations.store, workbench.cli, workbench.config, workbench.cleaning.before_after, workbench.io.paths
# the modules `workbench` imports when a subcommand runs (workbench.cli imports them lazily)
import workbench.annotations.csv_import, workbench.annotations.recovery, workbench.cleaning.export
if os.geteuid() == 0:
    os.setgid(65534)
    os.setuid(65534)
script = sys.argv[1]
sys.argv = sys.argv[1:]
exec(script)
"""


def run_unprivileged(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a fresh Python process as an unprivileged user."""
    return subprocess.run(
        [sys.executable, "-c", UNPRIVILEGED, script, *args], capture_output=True, text=True, timeout=120
    )
