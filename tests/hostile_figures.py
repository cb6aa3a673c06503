"""Hostile text for the figure tests (tests/unit/views/test_plots.py and the browser check in
tests/system/browser/test_plots_browser.py): graded turns renamed as systems whose names are a
link, a script and TeX, with hostile operations and error types in some rows."""

from __future__ import annotations

import polars as pl

LINK = '<a href="http://evil.example/">x</a>'
SCRIPT = "<script>alert(1)</script>"
TEX = r"$\href{http://evil.example/}{tex}$"  # TeX where MathJax is loaded: \href is a link too
MARKUP = ("<a ", "<script", "<img", 'evil.example/">', "$\\href")


def hostile_turns(turns: pl.DataFrame) -> pl.DataFrame:
    """The graded turns three times, as systems named :data:`LINK`, :data:`SCRIPT` and
    :data:`TEX`, with hostile operations and error types in some rows."""
    frames = []
    for i, name in enumerate((LINK, SCRIPT, TEX)):
        frames.append(
            turns.with_columns(
                pl.lit(name).alias("system"),
                pl.when(pl.int_range(pl.len()) % 3 == i)
                .then(pl.lit(f"{SCRIPT}{LINK}"))
                .otherwise(pl.col("operation"))
                .alias("operation"),
                pl.when(pl.col("error_type").is_not_null() & (pl.int_range(pl.len()) % 2 == 0))
                .then(pl.lit(LINK))
                .otherwise(pl.col("error_type").cast(pl.String))
                .alias("error_type"),
                (pl.col("correct") if i == 0 else pl.col("correct") & (pl.int_range(pl.len()) % 4 != 0)).alias(
                    "correct"
                ),
            )
        )
    return pl.concat(frames)
