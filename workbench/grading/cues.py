"""What unit an answer should be in, read from the question or from the unit the output declares.

:func:`percent_cue` says whether a percentage, a ratio or a raw number is asked for, and
:func:`scale_cue` the power of ten amounts are stated in ("in millions");
:class:`CueOf` reads them lazily for one comparison of :mod:`workbench.grading.compare`.
"""

from __future__ import annotations

from typing import Literal

from workbench.grading import patterns
from workbench.grading.memo import memoize

__all__ = ["UnitCue", "percent_cue", "scale_cue", "SCALE_EXPONENTS", "SCALE_WORDS", "CueOf"]

#: Units an output can declare for its answer, as the zarifaziz runs do.
_PERCENT_UNITS = frozenset({"percent", "percentage", "%", "pct"})
_RATIO_UNITS = frozenset({"ratio", "decimal", "fraction"})
_PLAIN_UNITS = frozenset({"raw", "none", "number", "absolute", "amount"})

#: The unit an answer should be in (see :func:`percent_cue`).
UnitCue = Literal["percent", "ratio", "plain"]


@memoize(max_chars=4096, maxsize=1 << 14)
def percent_cue(question: str | None, unit: str | None) -> UnitCue | None:
    """What unit the answer should be in: ``percent``, ``ratio``, ``plain`` (the output
    declares a raw number: no unit reading at all), or ``None`` when nothing says. A unit
    the output declares wins over the question's wording.

    Examples
    --------
    >>> percent_cue("what percentage of revenue was that?", None)
    'percent'
    >>> percent_cue("what is the ratio of debt to equity?", None), percent_cue("and in 2011?", "percent")
    ('ratio', 'percent')
    >>> percent_cue("and in 2011?", "raw"), percent_cue("and in 2011?", None) is None
    ('plain', True)
    """
    declared = (unit or "").strip().lower()
    if declared in _PERCENT_UNITS:
        return "percent"
    if declared in _RATIO_UNITS:
        return "ratio"
    if declared in _PLAIN_UNITS:
        return "plain"
    if question:
        if patterns.PERCENT_CUE.search(question):
            return "percent"
        if patterns.RATIO_CUE.search(question):
            return "ratio"
    return None


#: The power of ten of each unit a question or an output can state (``in millions``).
SCALE_EXPONENTS = {"thousands": 3, "millions": 6, "billions": 9, "trillions": 12}
SCALE_WORDS = {exponent: word for word, exponent in SCALE_EXPONENTS.items()}


@memoize(max_chars=4096, maxsize=1 << 14)
def scale_cue(question: str | None, unit: str | None) -> int | None:
    """The power of ten the amounts are stated in, when the output declares it (``millions``)
    or the question says so ("(in millions)", "in $ thousands"); ``None`` when nothing says.

    Examples
    --------
    >>> scale_cue("what was the change in revenue (in millions)?", None), scale_cue("and in 2011?", "thousands")
    (6, 3)
    >>> scale_cue("what were the net sales in 2009?", None) is None
    True
    """
    declared = SCALE_EXPONENTS.get((unit or "").strip().lower())
    if declared is not None:
        return declared
    if question and "in " in question.lower():
        match = patterns.SCALE_CUE.search(question)
        if match is not None:
            return SCALE_EXPONENTS[match.group("word").lower()]
    return None


class CueOf:
    """The unit cue of a comparison, read from the question only when a rule needs it: most
    pairs are decided before any unit reading, and a regex over a long question is not free."""

    __slots__ = ("_args", "_cue", "_read")

    def __init__(self, question: str | None = None, unit: str | None = None, use: bool = True) -> None:
        self._args = (question, unit) if use else None
        self._read = False
        self._cue: UnitCue | None = None

    def __call__(self) -> UnitCue | None:
        if not self._read:
            self._cue = percent_cue(*self._args) if self._args is not None else None
            self._read = True
        return self._cue

    def scale(self) -> int | None:
        """The power of ten the question or the output states amounts in (``in millions``: 6)."""
        return scale_cue(*self._args) if self._args is not None else None
