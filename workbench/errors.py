"""Errors raised by the workbench.

Every error a user can cause says *where* (file, line or record, field), *what* was
expected and received, and *how to fix it*, on one line.
"""

from __future__ import annotations

__all__ = ["WorkbenchError", "InputError", "UsageError", "ReportError"]


class WorkbenchError(Exception):
    """Root of every error the workbench raises on purpose."""


class InputError(WorkbenchError):
    """A file given to the workbench cannot be used as it is.

    Parameters
    ----------
    file
        The file (or ``"<argument>"``) the problem is in.
    problem
        What is wrong, in a few words ("missing column", "invalid JSON").
    location
        The line or record (``"line 12"``, ``"record 'Single_X/2010/page_1.pdf-2'"``).
    field
        The column or key concerned, when there is one.
    fix
        What the user can do about it.

    Examples
    --------
    >>> str(InputError("p.jsonl", "invalid JSON", location="line 3", fix="repair that line"))
    'p.jsonl: line 3: invalid JSON. Fix: repair that line'
    """

    def __init__(
        self,
        file: str,
        problem: str,
        *,
        location: str = "",
        field: str = "",
        fix: str = "",
    ) -> None:
        self.file = str(file)
        self.problem = problem
        self.location = location
        self.field = field
        self.fix = fix
        super().__init__(self.message)

    @property
    def message(self) -> str:
        parts = [self.file]
        if self.location:
            parts.append(self.location)
        if self.field:
            parts.append(f"field '{self.field}'")
        text = ": ".join(parts) + f": {self.problem}."
        if self.fix:
            text += f" Fix: {self.fix}"
        return text


class UsageError(WorkbenchError):
    """A command-line argument or parameter is not valid."""


class ReportError(WorkbenchError):
    """A report template failed to run."""
