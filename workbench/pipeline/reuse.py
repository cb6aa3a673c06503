"""Grades kept across the runs of one batch, so an input graded for one report is not graded again.

A batch of reports (``workbench report --config``) grades several input sets, and sets share
prediction files: the bundled batch grades each Rho-Math run for its own pages, then both again
for their comparison (SymPy and Math-Verify, ~20 s of CPU on two cores). :class:`GradeReuse`
keeps what the cascade (:func:`workbench.pipeline.grade._grade_chunk`) gave for each distinct
grading input, and a later run of the batch takes it from there instead of grading it again.

What a grade is kept under is its content, never a file's name: every value of the input (the
output, the gold, the question, the programs, ...), the content of its table, the answer kind and
the policies, in full. Grading is pure (:mod:`workbench.grading`: the same input gives the same
grade), so a grade taken from here is the one grading afresh gives, and an input whose file
changed between two runs is a new input, graded. The kept grades live as long as the object (a
batch's), in this process, and stop growing at :data:`MAX_INPUTS` inputs or :data:`MAX_CHARS`
characters of input text (then the rest is graded as without it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

__all__ = ["GradeReuse", "MAX_INPUTS", "MAX_CHARS"]

#: The most distinct inputs a :class:`GradeReuse` keeps the grades of (a report batch grades a
#: few thousand; a 105,520-turn run graded alone keeps none: only a batch makes one).
MAX_INPUTS = 200_000
#: The most characters of input text it keeps (the texts are held as keys, beside their grades).
MAX_CHARS = 64_000_000

Item = tuple[Mapping[str, Any], Mapping[str, Any] | None]
R = TypeVar("R")
It = TypeVar("It", bound=Item)


def _table_key(table: Mapping[str, Sequence[Any]] | None) -> Hashable:
    """A table's content as a key (:data:`workbench.grading.program.TableRows`: rows of numbers)."""
    return None if table is None else tuple((name, tuple(row)) for name, row in table.items())


def _text_chars(values: Sequence[Any]) -> int:
    return sum(len(v) for v in values if isinstance(v, str))


class GradeReuse:
    """The grades of distinct inputs, kept for the later runs of a batch (see the module's text).

    One object serves the runs of a batch, graded one after another or in threads at once (its
    table is guarded by a lock; an input two runs grade at the same moment is graded by both,
    with the same result).

    Examples
    --------
    >>> reuse = GradeReuse()
    >>> graded = []
    >>> def grade(items):
    ...     graded.extend(row["answer"] for row, _ in items)
    ...     return [row["answer"].upper() for row, _ in items]
    >>> reuse.grade([({"answer": "a"}, None), ({"answer": "b"}, None)], ("policy",), grade)
    ['A', 'B']
    >>> reuse.grade([({"answer": "b"}, None), ({"answer": "c"}, None)], ("policy",), grade)
    ['B', 'C']
    >>> graded, reuse.reused
    (['a', 'b', 'c'], 1)
    >>> reuse.grade([({"answer": "b"}, None)], ("another policy",), grade), graded[-1]
    (['B'], 'b')
    """

    def __init__(self, *, max_inputs: int = MAX_INPUTS, max_chars: int = MAX_CHARS) -> None:
        self._grades: dict[Hashable, Any] = {}
        self._lock = threading.Lock()
        self._chars = 0
        self._max_inputs = max_inputs
        self._max_chars = max_chars
        #: How many inputs were taken from here rather than graded (for tests and benchmarks).
        self.reused = 0

    @property
    def kept(self) -> int:
        """How many distinct inputs' grades are kept here."""
        with self._lock:
            return len(self._grades)

    def grade(self, items: Sequence[Item], context: Hashable, grade: Callable[[list[Item]], list[R]]) -> list[R]:
        """``grade(items)``, one result per item in order, with each item graded before under the
        same ``context`` (the policies and the answer kind: what else the grade depends on) taken
        from here: ``grade`` is called once, on the others only (not at all when there are none).

        ``items`` are a distinct input's values by column name and its table (or ``None``), as
        :func:`workbench.pipeline.grade._grade_chunk` takes them; ``grade`` must be pure."""
        (found,) = self.grade_jobs([(items, context)], lambda pending: [grade(pending[0])])
        return found

    def grade_jobs(
        self,
        jobs: Sequence[tuple[Sequence[It], Hashable]],
        grade: Callable[[list[list[It]]], list[list[R]]],
    ) -> list[list[R]]:
        """:meth:`grade` for several jobs at once, each its items and its context: ``grade`` is
        called once with each job's items not graded before (an empty list for a job that has
        none; not at all when no job has any) and gives one result per item of each, in order."""
        keys: list[list[Hashable]] = []
        tables: dict[int, Hashable] = {}
        for items, context in jobs:
            keys.append([])
            for row, table in items:
                if id(table) not in tables:
                    tables[id(table)] = _table_key(table)
                keys[-1].append((context, tuple(row.items()), tables[id(table)]))
        with self._lock:
            found = [[self._grades.get(key, _MISSING) for key in job] for job in keys]
        missing = [[i for i, value in enumerate(job) if value is _MISSING] for job in found]
        if any(missing):
            graded = grade([[items[i] for i in job] for (items, _), job in zip(jobs, missing, strict=True)])
            with self._lock:
                for (items, _), job_keys, job_found, job, values in zip(
                    jobs, keys, found, missing, graded, strict=True
                ):
                    for i, value in zip(job, values, strict=True):
                        job_found[i] = value
                        chars = _text_chars(list(items[i][0].values()))
                        if len(self._grades) < self._max_inputs and self._chars + chars <= self._max_chars:
                            self._grades.setdefault(job_keys[i], value)
                            self._chars += chars
        with self._lock:
            self.reused += sum(len(job) for job in found) - sum(map(len, missing))
        return found  # every _MISSING was replaced


_MISSING = object()
