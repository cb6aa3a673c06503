"""Views of a comparison of several systems: every pair as a table and as a matrix.

``pairs`` comes from :func:`workbench.analysis.comparison.all_pairs`: one row per pair of
systems, in the order the systems were given. The table lists each pair's paired difference
with its interval and McNemar p-values (Holm-adjusted for the number of pairs, then raw) and
the counts behind them (each system's own accuracy is in the systems table); the
matrix shows the same differences as a heatmap, row system minus column system, so a reader
finds any pair at the crossing of its two names. Numbers are written by
:mod:`workbench.analysis.formats`; system names go through :func:`workbench.views.plots.plot_text`
in figures and are escaped in tables.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
import polars as pl

from workbench.analysis import formats
from workbench.views.html import macro
from workbench.views.plots import _LAYOUT, plot_text, styled
from workbench.views.tables import HtmlBlock, difference_text, html_table

__all__ = ["difference_text", "short_names", "matrix_labels", "pairs_table", "pairs_matrix"]

#: A system name longer than this is shortened on the matrix's axes (the hover has it whole).
AXIS_NAME_CHARS = 24
#: The colour scale of the matrix reaches at least this many points either way, so that a
#: difference of a point or two is drawn pale, not as the darkest colour.
MIN_COLOUR_REACH = 5.0
_SEPARATORS = "-_@/ .:"


def short_names(names: Sequence[str], width: int = AXIS_NAME_CHARS) -> list[str]:
    """Names short enough for an axis: a name of at most ``width`` characters stays whole; a
    longer one loses the beginning all the names share (up to a separator such as ``-`` or
    ``@``: it becomes ``…``), and if still too long keeps its start and end around a ``…``. The
    names as they are when shortening would make two of them equal.

    Examples
    --------
    >>> short_names(["zarifaziz-claude-sonnet-4-6@2026-05-04T06-35-00Z", "zarifaziz-claude-sonnet-4-6@2026-05-04T12-48-44Z"])
    ['…04T06-35-00Z', '…04T12-48-44Z']
    >>> short_names(["tora-70b", "pot_fewshot_lines_1-12_1052-1056"])
    ['tora-70b', 'pot_fewshot_lin…052-1056']
    >>> short_names(["rho-math-7b", "rho-math-7b-interpreter"], width=20)
    ['rho-math-7b', '…7b-interpreter']
    """
    names = list(names)
    shared = os.path.commonprefix(names) if len(names) > 1 else ""
    cut = max((shared.rfind(c) for c in _SEPARATORS), default=-1) + 1
    shorter = [f"…{name[cut:]}" if cut and name[cut:] and len(name) > width else name for name in names]
    keep = max(width - 9, 1)
    shorter = [n if len(n) <= width else f"{n[:keep]}…{n[-8:]}" for n in shorter]
    return shorter if len(set(shorter)) == len(names) else names


def matrix_labels(systems: Sequence[str]) -> tuple[list[str], list[str]]:
    """The matrix's column and row labels: columns by number (narrow enough for a phone), rows
    by number and :func:`short_names`, as text for plotly (:func:`workbench.views.plots.plot_text`).

    Examples
    --------
    >>> matrix_labels(["tora-70b", "pot <fewshot>"])
    (['1', '2'], ['1  tora-70b', '2  pot &lt;fewshot&gt;'])
    """
    names = short_names(systems)
    return [str(i) for i in range(1, len(names) + 1)], [plot_text(f"{i}  {n}") for i, n in enumerate(names, start=1)]


def _pairs_caption(pairs: pl.DataFrame) -> str:
    n_systems = len(dict.fromkeys([*pairs["system_a"].to_list(), *pairs["system_b"].to_list()]))
    n_pairs = pairs.height
    many = "s" if n_pairs != 1 else ""
    return (
        f"Every pair of the {n_systems} systems, in the order given ({n_pairs} pair{many}); "
        f"p adjusted for {n_pairs} comparison{many} (Holm)"
    )


def pairs_table(pairs: pl.DataFrame, item: str = "turn") -> HtmlBlock:
    """Every pair of systems (``pairs`` from :func:`workbench.analysis.comparison.all_pairs`), one
    row each in the order given; ``item`` is what the counts count (``"turn"``, or
    ``"problem"`` for single questions: :attr:`workbench.pipeline.run.Run.item`).

    Examples
    --------
    >>> pairs = pl.DataFrame({"system_a": ["a"], "system_b": ["<b>"], "n_turns": [1486], "n_conversations": [421],
    ...     "accuracy_a": [0.83], "accuracy_b": [0.8213], "difference": [0.0087], "low": [0.002], "high": [0.0163],
    ...     "a_only": [18], "b_only": [5], "mcnemar_p": [0.0106], "p_holm": [0.0106], "n_unpaired": [4]})
    >>> markup = pairs_table(pairs).markup
    >>> "+0.9 points [+0.2, +1.6]" in markup and "&lt;b&gt;" in markup and "0.011" in markup
    True
    >>> ">paired problems</th>" in pairs_table(pairs, "problem").markup
    True
    """
    if not pairs.height:
        return HtmlBlock(str(macro("tables.html.j2", "note", "No pair of systems to compare.")))
    shown = pairs.select(
        pl.col("system_a").alias("system A"),
        pl.col("system_b").alias("system B"),
        pl.struct("difference", "low", "high")
        .map_elements(lambda r: difference_text(r["difference"], r["low"], r["high"]), return_dtype=pl.String)
        .alias("A minus B [95% interval]"),
        pl.col("p_holm").map_elements(formats.p_value, return_dtype=pl.String).alias("p, Holm-adjusted"),
        pl.col("mcnemar_p").map_elements(formats.p_value, return_dtype=pl.String).alias("McNemar p"),
        pl.format(
            "{} / {}", *(pl.col(c).map_elements(formats.count, return_dtype=pl.String) for c in ("a_only", "b_only"))
        ).alias("right: only A / only B"),
        pl.col("n_turns").map_elements(formats.count, return_dtype=pl.String).alias(f"paired {item}s"),
        pl.col("n_unpaired").map_elements(formats.count, return_dtype=pl.String).alias(f"unpaired {item}s"),
    )
    return html_table(shown, caption=_pairs_caption(pairs), css_class="wb-table wb-pairs")


def _cell_hover(row: dict[str, Any], flip: bool, item: str = "turn") -> str:
    """The hover text of one cell of the matrix (the pair seen from its row system)."""
    first, second = (row["system_b"], row["system_a"]) if flip else (row["system_a"], row["system_b"])
    sign = -1.0 if flip else 1.0
    low, high = (row["high"], row["low"]) if flip else (row["low"], row["high"])

    def scaled(value: float | None) -> float | None:
        return None if value is None else sign * value

    return "<br>".join(
        [
            f"<b>{plot_text(first)}</b> minus <b>{plot_text(second)}</b>",
            difference_text(scaled(row["difference"]), scaled(low), scaled(high)),
            f"{formats.count(row['n_turns'])} paired {item}s",
            f"McNemar p {formats.p_value(row['mcnemar_p'])}, Holm-adjusted {formats.p_value(row['p_holm'])}",
        ]
    )


def pairs_matrix(pairs: pl.DataFrame, order: Sequence[str], *, title: str = "", item: str = "turn") -> go.Figure:
    """The paired differences of every pair as a matrix: the cell in row r and column c is
    r's turn execution accuracy minus c's on the turns both answered, in points, coloured from
    red (r worse) to blue (r better, at least :data:`MIN_COLOUR_REACH` points either way); the
    text gives the difference and the Holm-adjusted McNemar p. Rows and columns in the order
    given (``order``): rows by number and name, columns by number (:func:`matrix_labels`; the
    hover names both systems whole and counts the paired items, ``item``, as :func:`pairs_table`).

    Examples
    --------
    >>> pairs = pl.DataFrame({"system_a": ["a"], "system_b": ["b"], "n_turns": [10], "difference": [0.1],
    ...     "low": [0.0], "high": [0.2], "mcnemar_p": [0.5], "p_holm": [0.5]})
    >>> fig = pairs_matrix(pairs, ["a", "b"])
    >>> fig.data[0].z
    ([None, 10.0], [-10.0, None])
    """
    systems = list(order)
    index = {name: i for i, name in enumerate(systems)}
    n = len(systems)
    z: list[list[float | None]] = [[None] * n for _ in range(n)]
    text = [[""] * n for _ in range(n)]
    hover = [[f"{plot_text(systems[i])}" for _ in range(n)] for i in range(n)]
    for row in pairs.iter_rows(named=True):
        i, j = index[row["system_a"]], index[row["system_b"]]
        for r, c, flip in ((i, j, False), (j, i, True)):
            value = row["difference"]
            z[r][c] = None if value is None else round((-value if flip else value) * 100, 6)
            shown = formats.points(None if value is None else (-value if flip else value)).removesuffix(" points")
            text[r][c] = f"{shown}<br>p {formats.p_value(row['p_holm'])}"
            hover[r][c] = _cell_hover(row, flip, item)
    reach = max([MIN_COLOUR_REACH, *(abs(v) for line in z for v in line if v is not None)])
    columns, rows = matrix_labels(systems)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=columns,
            y=rows,
            text=text,
            texttemplate="%{text}",
            hovertext=hover,
            hovertemplate="%{hovertext}<extra></extra>",
            colorscale="RdBu",
            zmin=-reach,
            zmax=reach,
            zmid=0,
            xgap=2,
            ygap=2,
            showscale=False,  # each cell writes its difference; a colour bar would only take width
        )
    )
    styled(
        fig,
        title=plot_text(title or "Paired difference in points, row minus column"),
        xaxis={"title": "minus system number", "type": "category", "showgrid": False, "automargin": True},
        yaxis={
            "title": "this system",
            "type": "category",
            "autorange": "reversed",
            "showgrid": False,
            "automargin": True,
        },
        **{**_LAYOUT, "height": max(320, 140 + 70 * n)},
    )
    return fig
