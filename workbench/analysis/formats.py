"""One number format per kind, for every page, table, plot hover and CLI line.

A rate is a percent with one decimal (``83.1%``); a difference of two rates is in points with a
sign and one decimal (``+0.9 points``); a count has thousands separators (``1,490``); a p-value
has two significant digits, and below 0.001 is written ``< 0.001``. A missing figure is an em dash.
Plotly hover templates use :data:`PLOTLY_PERCENT` so that charts agree with the tables.

Examples
--------
>>> percent(0.83043), points(0.0087), count(1490), p_value(9.094e-26), p_value(0.01104)
('83.0%', '+0.9 points', '1,490', '< 0.001', '0.011')
>>> interval(0.8304, 0.812, 0.85)
'83.0% [81.2%, 85.0%]'
>>> percent(None), points(float("nan"))
('—', '—')
"""

from __future__ import annotations

import math

#: What a missing figure shows.
MISSING = "—"

#: The d3-format of a rate in plotly hover templates and axes (same as :func:`percent`).
PLOTLY_PERCENT = ".1%"


def _missing(value: float | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def percent(value: float | None) -> str:
    """A rate in [0, 1] as a percent with one decimal."""
    return MISSING if _missing(value) else f"{value:.1%}"


def points(difference: float | None) -> str:
    """A difference of two rates (in [-1, 1]) in percentage points, signed, one decimal."""
    if _missing(difference):
        return MISSING
    assert difference is not None
    shown = difference * 100
    if round(shown, 1) == 0:
        shown = 0.0
    return f"{shown:+.1f} points"


def count(value: int | None) -> str:
    """A count with thousands separators."""
    return MISSING if value is None else f"{value:,}"


def p_value(value: float | None) -> str:
    """A p-value: two significant digits, or ``< 0.001``."""
    if _missing(value):
        return MISSING
    assert value is not None
    return "< 0.001" if value < 0.001 else f"{value:.2g}" if value < 0.01 else f"{value:.3f}".rstrip("0").rstrip(".")


def interval(value: float | None, low: float | None, high: float | None) -> str:
    """A rate with its interval: ``83.0% [81.2%, 85.0%]`` (the rate alone when a bound is missing)."""
    if _missing(low) or _missing(high):
        return percent(value)
    return f"{percent(value)} [{percent(low)}, {percent(high)}]"
