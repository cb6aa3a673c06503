"""Normalise answer strings and read numbers out of them.

Everything here is pure and idempotent: ``normalize_answer(normalize_answer(s)) ==
normalize_answer(s)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workbench.grading import patterns
from workbench.grading.memo import memoize

__all__ = ["ParsedNumber", "normalize_answer", "parse_number", "parse_cell_number", "is_no_answer"]


@dataclass(frozen=True, slots=True)
class ParsedNumber:
    """A number read from text.

    Attributes
    ----------
    value
        The number as written, with a percent sign *not* applied (``"14.1%"`` gives 14.1).
    is_percent
        Whether the text carried ``%`` or ``percent``.
    decimals
        Digits after the decimal point as written (precision the writer reported).
    text
        The normalised text the number was read from.
    """

    value: float
    is_percent: bool
    decimals: int
    text: str

    @property
    def fraction(self) -> float:
        """The value with a percent sign applied (``14.1%`` gives 0.141)."""
        return self.value / 100.0 if self.is_percent else self.value


@memoize(max_chars=256)
def normalize_answer(text: str) -> str:
    """Normalise an answer string for comparison.

    Removes bold markers, unicode minus signs, zero-width characters, surrounding
    whitespace, a trailing period and lower-cases the text. Idempotent.

    Examples
    --------
    >>> normalize_answer("  **\u221214.1%**. ")
    '-14.1%'
    """
    out = patterns.ZERO_WIDTH.sub("", text)  # first: "2*\u200b3" keeps its operator
    if "*" in out or "_" in out:  # a substring test spares a megabyte-long answer the regex
        previous = ""
        while out != previous:  # removing "**" from "_**_" leaves "__": repeat until stable
            out, previous = patterns.BOLD_MARKERS.sub("", out), out
    out = patterns.UNICODE_MINUS.sub("-", out)
    out = patterns.WHITESPACE.sub(" ", out).strip()
    if out.endswith("."):
        out = out.rstrip(". ")
    return out.lower()


def is_no_answer(text: str | None) -> bool:
    """Tell whether an output states no answer (empty, ``N/A``, ``<UNKNOWN>``...).

    Examples
    --------
    >>> is_no_answer("<UNKNOWN>"), is_no_answer("0")
    (True, False)
    """
    if text is None:
        return True
    return bool(patterns.NO_ANSWER_TEXT.match(normalize_answer(text)))


def _decimals(literal: str) -> int:
    mantissa = literal.lower().split("e")[0]
    return len(mantissa.split(".")[1]) if "." in mantissa else 0


@memoize(max_chars=256)
def parse_number(text: str) -> ParsedNumber | None:
    """Read an answer that is a single number; ``None`` when the text is not one.

    Accepts thousands separators, currency symbols, percent signs, unicode minus and
    accounting negatives in parentheses.

    Examples
    --------
    >>> parse_number("(1,234.50)")
    ParsedNumber(value=-1234.5, is_percent=False, decimals=2, text='(1,234.50)')
    >>> parse_number("14.1%").fraction
    0.141
    >>> parse_number("about 3") is None
    True
    """
    norm = normalize_answer(text)
    body, negate = norm, False
    if len(body) >= 2 and body[0] == "(" and body[-1] == ")":
        body, negate = body[1:-1].strip(), True
    match = patterns.WHOLE_NUMBER_ANSWER.match(body)
    if match is None:
        return None
    literal = match.group("num")
    value = float(literal.replace(",", ""))
    if not math.isfinite(value):
        return None
    signs = (match.group("sign") or "") + (match.group("sign2") or "")
    if signs.count("-") % 2 == 1:
        value = -value
    if negate:
        value = -value
    return ParsedNumber(
        value=value,
        is_percent=match.group("pct") is not None,
        decimals=_decimals(literal),
        text=norm,
    )


def parse_cell_number(text: str) -> float | None:
    """Read the number a table cell shows (``"$ 78.25"``, ``"-1299 ( 1299 )"``, ``"5%"``).

    The percent sign is kept as written, not applied, as FinQA's table operations do.

    Examples
    --------
    >>> parse_cell_number("-1299 ( 1299 )"), parse_cell_number("$ 78.25"), parse_cell_number("n/a")
    (-1299.0, 78.25, None)
    >>> parse_cell_number("(4)")
    -4.0
    """
    whole = parse_number(text)
    if whole is not None:
        return whole.value
    norm = patterns.UNICODE_MINUS.sub("-", text)
    match = patterns.FIRST_NUMBER.search(norm)
    if match is None:
        return None
    value = float(match.group("num").replace(",", ""))
    if match.group("sign") == "-":
        value = -value
    return value if math.isfinite(value) else None
