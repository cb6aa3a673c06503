"""The ``workbench`` command's entry point (``[project.scripts]`` in pyproject.toml) and ``python -m workbench``.

It imports the standard library only, and :mod:`workbench.cli` inside the ``try``, so that a stop
(Ctrl-C) while the command is still importing (most of a second: polars, the readers) or while it
runs is one line on standard error, :data:`STOPPED`, and exit code :data:`STOPPED_CODE` (128 +
SIGINT, the code a shell gives a command stopped by Ctrl-C), never Python's KeyboardInterrupt
traceback. A second Ctrl-C, while the first one's clean-up runs, ends the process at once, silently.
(``workbench triage`` stopped once Voila runs says its own line, :data:`workbench.report.serve.STOPPED`.)

A stop before Python runs this module, during its own start-up (its ``site`` module and the
environment's ``.pth`` files: tens of milliseconds), is Python's own: nothing of the package runs
yet. ``python -m workbench.cli`` imports the command outside this ``try``.
"""

from __future__ import annotations

import signal
import sys

__all__ = ["STOPPED", "STOPPED_CODE", "main"]

#: The one line said when the command is stopped by Ctrl-C.
STOPPED = "workbench: stopped."
#: The exit code then: 128 + SIGINT.
STOPPED_CODE = 128 + signal.SIGINT


def main() -> int:
    """Run the ``workbench`` command (:func:`workbench.cli.main` on ``sys.argv``); its exit code,
    :data:`STOPPED_CODE` after a Ctrl-C."""
    try:
        from workbench.cli import main as run_command

        return run_command()
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        sys.stderr.write(f"{STOPPED}\n")
        return STOPPED_CODE


if __name__ == "__main__":
    sys.exit(main())
