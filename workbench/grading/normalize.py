"""Normalise answer strings and read numbers out of them.

Everything here is pure and idempotent: ``normalize_answer(normalize_answer(s)) ==
normalize_answer(s)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workbench.grading import patterns
from workbench.grading.memo import memoize

__all__ = [
    "ParsedNumber", "normalize_answer", "parse_number", "parse_decimal_comma", "parse_cell_number", "is_no_answer"
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class ParsedNumber:
    """A number read from text.

    Attributes
    ----------
    value
        The number as written, with a percent sign *not* applied (``"14.1%"`` gives 14.1) and a
        scale word applied (``"48.7 million"`` gives 48700000).
    is_percent
        Whether the text carried ``%``, ``percent`` or ``pct``.
    decimals
        Digits after the decimal point as written (precision the writer reported), before any
        scale word: ``"48.7 million"`` has 1.
    text
        The normalised text the number was read from.
    scale
        The power of ten a scale word applied (``"48.7 million"``: 6), 0 without one.
    scale_word
        The scale word as written (``"million"``, ``"m"``, ``"bn"``), empty without one.
    """

    value: float
    is_percent: bool
    decimals: int
    text: str
    scale: int = 0
    scale_word: str = ""

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


#: The longest text :data:`~workbench.grading.patterns.NO_ANSWER_TEXT` accepts besides its one
#: open-ended form, ``n/a`` and what follows a separator (``N/A - not disclosed``): ``cannot be
#: determined``. (tests/unit/grading/test_normalize.py checks it against the pattern.)
_LONGEST_CLOSED_NO_ANSWER = 20
#: How many leading characters of a text :func:`is_no_answer` reads before it normalises the text.
_NO_ANSWER_LOOK = 256


def _states_an_answer(text: str) -> bool:
    """Whether ``text`` is surely not a no-answer statement, told from its first
    :data:`_NO_ANSWER_LOOK` characters; ``False`` when that is not enough to tell.

    :func:`normalize_answer` only ever removes whitespace, zero-width characters, ``*``, ``_`` and a
    trailing ``.``: it keeps every other character (a minus becomes ``-``, lower case is never
    shorter). So a text with more than :data:`_LONGEST_CLOSED_NO_ANSWER` other characters normalises
    to a text too long for any form of :data:`~workbench.grading.patterns.NO_ANSWER_TEXT` but the
    open-ended ``n/a ...``, which begins with ``n``: the normalised text's first character is a
    kept ``*`` or ``_`` or the text's first character that is none of those removable ones,
    lower-cased. When that is not ``n``, the text states an answer, whatever follows (an output of
    several kilobytes is not normalised for this: 80 us each, and read twice per turn)."""
    head = "".join(patterns.ZERO_WIDTH.sub("", text[:_NO_ANSWER_LOOK]).split())
    if len(head) - head.count("*") - head.count("_") - head.count(".") <= _LONGEST_CLOSED_NO_ANSWER:
        return False
    first = next(ch for ch in head if ch not in "*_")  # there is one: more than 20 are neither
    return first.lower()[:1] != "n"


def is_no_answer(text: str | None) -> bool:
    """Tell whether an output states no answer (empty, ``N/A``, ``<UNKNOWN>``...): whether its
    normalised text (:func:`normalize_answer`) is a form of
    :data:`~workbench.grading.patterns.NO_ANSWER_TEXT`. A long output that surely is not one is
    told from its first characters (:func:`_states_an_answer`), with the same answer.

    Examples
    --------
    >>> is_no_answer("<UNKNOWN>"), is_no_answer("0")
    (True, False)
    >>> is_no_answer("N/A - the filing gives no 2015 figure, so the change cannot be computed")
    True
    """
    if text is None:
        return True
    if _states_an_answer(text):
        return False
    return bool(patterns.NO_ANSWER_TEXT.match(normalize_answer(text)))


def _decimals(literal: str) -> int:
    mantissa = literal.lower().split("e")[0]
    return len(mantissa.split(".")[1]) if "." in mantissa else 0


#: The power of ten of each scale word or abbreviation (lower case, as normalised text has it).
SCALE_EXPONENTS: dict[str, int] = {
    "thousand": 3, "thousands": 3, "k": 3,
    "million": 6, "millions": 6, "m": 6, "mm": 6, "mn": 6,
    "billion": 9, "billions": 9, "b": 9, "bn": 9,
    "trillion": 12, "trillions": 12,
}  # fmt: skip
#: Abbreviations that are a scale only beside a currency or written in capitals (``$48.7m``,
#: ``48.7M``): alone and in lower case, ``5 m`` or ``5 mm`` may be a length, ``5 k`` a unit
#: (``bn`` and ``mn`` are nothing else).
_SCALE_ABBREVIATIONS = frozenset({"k", "m", "mm", "b"})


@memoize(max_chars=256)
def parse_number(text: str) -> ParsedNumber | None:
    """Read an answer that is a single number; ``None`` when the text is not one.

    Accepts thousands separators, currency symbols and codes before or after (``$``, ``€``,
    ``£``, ``¥``, ``USD``, ``EUR 12``), percent signs (``%``, ``percent``, ``pct``), unicode minus,
    accounting negatives in parentheses (``(245)``, ``$(245)``, ``($ 245)``, ``(245) thousand``),
    scale words (``48.7 million``; ``k``, ``m``, ``mm``, ``bn``, ``b`` beside a currency or in
    capitals: ``$48.7m``, ``48.7M``), an ``approx.``/``~`` prefix, and a decimal comma where it is
    unambiguous (``12,75 €``, ``1.234,56``: see :func:`parse_decimal_comma`).

    Examples
    --------
    >>> parse_number("(1,234.50)")
    ParsedNumber(value=-1234.5, is_percent=False, decimals=2, text='(1,234.50)', scale=0, scale_word='')
    >>> parse_number("14.1%").fraction
    0.141
    >>> parse_number("$48.7m").value, parse_number("48,700 thousand").value, parse_number("$(245)").value
    (48700000.0, 48700000.0, -245.0)
    >>> parse_number("about 3") is None, parse_number("5 m") is None
    (True, True)
    """
    norm = normalize_answer(text)
    body, negate = norm, False
    if len(body) >= 2 and body[0] == "(" and body[-1] == ")":
        body, negate = body[1:-1].strip(), True
    match = patterns.WHOLE_NUMBER_ANSWER.match(body)
    if match is None:  # plain numbers stop above; the rest is read as a finance amount
        return _parse_amount(text, norm)
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


def _parse_amount(text: str, norm: str) -> ParsedNumber | None:
    """The finance reading of :func:`parse_number`: scale words, currency codes, parentheses
    anywhere around the amount, ``approx.``/``~``."""
    body = patterns.APPROX_PREFIX.sub("", norm, count=1)
    match = patterns.FINANCE_AMOUNT.match(body)
    if match is None:
        return _decimal_comma(body, norm, bare=False)
    opens = (match.group("open") is not None) + (match.group("open2") is not None)
    closes = (match.group("close") is not None) + (match.group("close2") is not None)
    if opens != closes or opens > 1:
        return None
    word = match.group("scale") or ""
    pct = match.group("pct") is not None
    currency = match.group("cur") is not None or match.group("cur2") is not None
    if word in _SCALE_ABBREVIATIONS and not currency and word.upper() not in text:
        return None  # "5 m" is five metres for all we know
    if word and pct:
        return None  # "5 million %" is not an amount
    literal = match.group("num")
    exponent = SCALE_EXPONENTS.get(word, 0)
    digits = literal.replace(",", "")
    if not exponent:
        value = float(digits)
    elif "e" in digits:
        value = float(digits) * 10.0**exponent
    else:  # "48.7e6" is read exactly; 48.7 * 1e6 is not
        value = float(f"{digits}e{exponent}")
    if not math.isfinite(value):
        return None
    signs = "".join(match.group(name) or "" for name in ("sign", "sign2", "sign3"))
    if (signs.count("-") + opens) % 2 == 1:
        value = -value
    return ParsedNumber(
        value=value, is_percent=pct, decimals=_decimals(literal), text=norm, scale=exponent, scale_word=word
    )


def parse_decimal_comma(text: str, *, bare: bool = False) -> ParsedNumber | None:
    """Read a single number written with a decimal comma; ``None`` when the text is not one.

    The comma is a decimal comma only where that is unambiguous: followed by 1, 2 or 4+ digits
    (``12,75``; ``1,234`` is a thousands separator), or after dot groups of three (``1.234,56``).
    Without ``bare``, it must also come with a currency (``12,75 €``, ``€12,75``, ``EUR 12,75``), a
    percent sign or dot groups, as :func:`parse_number` reads it; with ``bare``, a lone ``12,75``
    also reads 12.75 (the comparison asks for that only when the gold is one number: ``1,2`` stays
    a list beside a MATH list answer).

    Examples
    --------
    >>> parse_decimal_comma("12,75 \u20ac").value, parse_decimal_comma("1.234,56").value
    (12.75, 1234.56)
    >>> parse_decimal_comma("12,75") is None, parse_decimal_comma("12,75", bare=True).value
    (True, 12.75)
    >>> parse_decimal_comma("1,234", bare=True) is None, parse_decimal_comma("(1,2)", bare=True) is None
    (True, True)
    """
    norm = normalize_answer(text)
    return _decimal_comma(patterns.APPROX_PREFIX.sub("", norm, count=1), norm, bare=bare)


def _decimal_comma(body: str, norm: str, *, bare: bool) -> ParsedNumber | None:
    match = patterns.DECIMAL_COMMA_AMOUNT.match(body)
    if match is None:
        return None
    literal = match.group("num")
    pct = match.group("pct") is not None
    currency = match.group("cur") is not None or match.group("cur2") is not None
    if not (bare or currency or pct or "." in literal):
        return None  # "1,2" alone may be a list of two numbers
    whole, fraction = literal.replace(".", "").split(",")
    value = float(f"{whole}.{fraction}")
    if not math.isfinite(value):
        return None
    signs = (match.group("sign") or "") + (match.group("sign2") or "")
    if signs.count("-") % 2 == 1:
        value = -value
    return ParsedNumber(value=value, is_percent=pct, decimals=len(fraction), text=norm)


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
