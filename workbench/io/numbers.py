"""Plain numbers in a text column, read in polars as
:func:`~workbench.grading.normalize.parse_number` reads them: the one fast number reader, used by
the fast path's matchers (:mod:`workbench.pipeline.fastmatch`) and by the agreement of several
systems' answers (:mod:`workbench.quality.agreement`).

:func:`read_numbers` writes, for a column of text, the pieces of a number of
:data:`~workbench.grading.patterns.FAST_NUMBER`'s shape (or :data:`~workbench.grading.patterns.FAST_ANSWER`'s,
which allows a percent or scale word and whitespace around it) and the number read from them, as
columns with a prefix; :func:`number_fields` names those columns. A number whose value could be
inexact in a float (more than :data:`MAX_DIGITS` digits, :data:`MAX_VALUE` or more) is not ``ok``:
callers leave it to the Python reader.
"""

from __future__ import annotations

from typing import Final

import polars as pl

from workbench.grading import patterns
from workbench.grading.normalize import SCALE_EXPONENTS

__all__ = ["MAX_DIGITS", "MAX_VALUE", "hundredth", "number_fields", "read_numbers"]

#: Most digits in a number read: its value is exact, ``round(x, 5)`` is decided.
MAX_DIGITS: Final = 20
#: Largest magnitude read: ``x * 1e5`` keeps its fraction to 1e-2, so rounding ties are seen.
MAX_VALUE: Final = 1e9


def _parts(text: pl.Expr, pattern: str) -> dict[str, pl.Expr]:
    """The pieces of a number of ``pattern``'s shape (computed once, as columns, before
    :func:`_number` reads them): ``shaped``, ``neg``, ``cur``, ``pct``, ``digits`` (no sign,
    currency or separators), ``scale``, ``sword`` (the word after the number), ``word``, ``e``."""
    shaped = text.str.contains(pattern)
    if pattern == patterns.FAST_ANSWER:
        body = text.str.strip_chars(" \t\n\r")
        # on a text of that shape, what follows the number is "", "%" or a word after a space or none
        suffix = body.str.strip_chars_start("-$0123456789,.")
        said = suffix.str.strip_chars_start(" ")
        number = body.str.strip_suffix(suffix)
        word = said.is_in(["percent", "pct"])
        scale = said.replace_strict(SCALE_EXPONENTS, default=0, return_dtype=pl.Int64).fill_null(0)
        pct = (said == "%") | word
    else:
        number = text.str.strip_suffix("%")
        said, word, scale, pct = pl.lit(None, pl.String), pl.lit(False), pl.lit(0, pl.Int64), text.str.ends_with("%")
    unsigned = number.str.strip_prefix("-")
    return {
        "shaped": shaped,
        "neg": number.str.starts_with("-"),
        "cur": unsigned.str.starts_with("$"),
        "pct": pct,
        "digits": unsigned.str.strip_prefix("$").str.replace_all(",", "", literal=True),
        "scale": scale,
        "sword": said,
        "word": (word | (scale != 0)).fill_null(False),
        "e": (said == "percent").fill_null(False),
    }


def _number(prefix: str, scaled: bool) -> dict[str, pl.Expr]:
    """A plain number (:data:`~workbench.grading.patterns.FAST_NUMBER`, or
    :data:`~workbench.grading.patterns.FAST_ANSWER` for an answer), from the pieces :func:`_parts`
    wrote as columns named ``prefix...``, read as :func:`~workbench.grading.normalize.parse_number`
    reads it: ``ok`` (null when it is not one), ``value`` (sign applied, percent not, scale
    applied), ``dec`` (decimals), ``sig`` (significant digits), ``tz`` (trailing zeros of an
    integer), ``zero``; with the pieces, ``pct`` (``%`` or a percent word), ``cur``, ``scale`` (the
    power of ten of a scale word, 0 without one), ``word`` (a word follows the number: no number to
    the official rule) and ``e`` (the text holds an ``e``, as "percent" does:
    ``compare._written_integer`` then does not hold)."""
    digits, scale, neg = pl.col(f"{prefix}digits"), pl.col(f"{prefix}scale"), pl.col(f"{prefix}neg")
    written = digits
    if scaled:  # "48.7 million" is read as float("48.7e6"), exactly (normalize._parse_amount)
        written = pl.when(scale != 0).then(pl.concat_str(digits, pl.lit("e"), scale.cast(pl.String))).otherwise(digits)
    magnitude = pl.when(pl.col(f"{prefix}shaped")).then(written.cast(pl.Float64, strict=False))
    point = digits.str.find(".", literal=True)
    length = digits.str.len_chars()
    mantissa = digits.str.replace(".", "", literal=True)
    ok = (
        pl.col(f"{prefix}shaped")
        & (mantissa.str.len_chars() <= MAX_DIGITS)
        & (magnitude < MAX_VALUE)
        & ~(neg & (magnitude == 0))  # "-0": Python's -0.0 prints "-0"
    )
    return {
        "ok": ok,
        "value": pl.when(neg).then(-magnitude).otherwise(magnitude),
        "dec": pl.when(point.is_null()).then(0).otherwise(length - point - 1).cast(pl.Int64),
        "sig": mantissa.str.strip_chars_start("0").str.len_chars().cast(pl.Int64),
        # str(abs(int(value))) of an integer ("0" has none)
        "tz": pl.when(magnitude == 0)
        .then(0)
        .otherwise(length - digits.str.strip_chars_end("0").str.len_chars())
        .cast(pl.Int64),
        "zero": magnitude == 0,
    }


def hundredth(x: pl.Expr) -> pl.Expr:
    """``x / 100.0`` as Python computes it: polars divides by a constant through its reciprocal,
    which can differ in the last bit (24819.8 / 100), so the divisor is made a column."""
    return x / (x * 0.0 + 100.0)


def number_fields(prefix: str) -> dict[str, pl.Expr]:
    """The columns :func:`read_numbers` wrote for ``prefix``."""
    names = ("ok", "value", "pct", "cur", "dec", "sig", "tz", "zero", "scale", "sword", "digits", "word", "e")
    return {k: pl.col(f"{prefix}{k}") for k in names}


def read_numbers(lf: pl.LazyFrame, text: str, prefix: str, pattern: str = patterns.FAST_NUMBER) -> pl.LazyFrame:
    """``lf`` with :func:`_number` of the column ``text`` (read with ``pattern``) as columns named
    ``prefix...``: the pieces first, then the number read from them (each piece is computed once)."""
    lf = lf.with_columns(**{f"{prefix}{k}": v for k, v in _parts(pl.col(text), pattern).items()})
    return lf.with_columns(**{f"{prefix}{k}": v for k, v in _number(prefix, pattern == patterns.FAST_ANSWER).items()})
