"""Figures: a graded ``turns`` frame (or a table computed from it) in, a plotly ``Figure`` out; no I/O.

Every accuracy by group is honest about its size: each group is drawn with its n (in the hover)
and its 95% interval clustered by conversation (error bars), in reading order
(:func:`workbench.analysis.slices.in_reading_order`: turn 10 after turn 9). A group of fewer
than :data:`~workbench.analysis.slices.MIN_GROUP_N` turns is drawn hollow with a grey interval,
named ``n < 20`` in the legend and the hover, and does not set the axis range: the range comes
from the groups large enough to read, and a small group beyond it is drawn at the axis's edge
(a triangle pointing out) with the part of its interval that fits. A figure with nothing to show
(no operations in GSM8K, no flag raised, one group only) is a figure with one sentence saying why
(:func:`no_data`), never a blank frame.

Numbers in hovers are written by :mod:`workbench.analysis.formats` (the tables' formats): rates
as ``83.1%``, differences in points, p-values with two digits.

Plotly draws trace names, tick labels, titles and hover text as a subset of HTML (``<a href>``
becomes a live link, ``<br>`` a line break) and, where MathJax is loaded, text between two
``$`` as TeX. Every string that comes from the data (system names, operations, slice groups,
error types, categories, titles built from them) goes through :func:`plot_text` before it
reaches a figure, so it shows as the characters it is.
"""

from __future__ import annotations

import functools
import math
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

import plotly.graph_objects as go
import polars as pl
from plotly.colors import qualitative

from workbench.analysis import formats, words
from workbench.analysis import slices as _slices
from workbench.analysis.slices import MIN_GROUP_N, SLICES, Slice, in_reading_order, slice_title

__all__ = [
    "accuracy_by_turn",
    "accuracy_by_operation",
    "slice_accuracy",
    "error_heatmap",
    "flag_counts",
    "paired_differences",
    "no_data",
    "plot_text",
    "styled",
]

_T = TypeVar("_T")

#: The characters plotly would read as markup (``&``, ``<``, ``>``) or TeX (``$``), as the
#: entities it shows as those characters. Quotes stay: plotly's text has no attributes to close.
#: Not the HTML renderer's escaping (:mod:`workbench.views.html`), which also spells quotes as
#: entities: a figure's text is plotly's own markup, not an HTML page.
_PLOT_ENTITIES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "$": "&#36;"})


def plot_text(value: _T) -> _T | str:
    """Text from the data as plotly must be given it to show it literally; anything that is
    not text (a turn number, ``None``) is returned as it is.

    ``&``, ``<`` and ``>`` become entities and ``$`` becomes ``&#36;`` (no tag, no TeX);
    plotly turns the entities back into the characters when it draws the text.

    Examples
    --------
    >>> plot_text('<a href="http://evil.example/">x</a> & $1')
    '&lt;a href="http://evil.example/"&gt;x&lt;/a&gt; &amp; &#36;1'
    >>> plot_text(3), plot_text(None)
    (3, None)
    """
    if not isinstance(value, str):
        return value
    return value.translate(_PLOT_ENTITIES)


def _texts(values: Iterable[Any]) -> list[Any]:
    """:func:`plot_text` of each value."""
    return [plot_text(v) for v in values]


_LAYOUT: dict[str, Any] = {"template": "plotly_white", "height": 400, "margin": {"l": 60, "r": 20, "t": 80, "b": 60}}


@functools.cache
def _template(name: str) -> Any:
    """The plotly template ``name`` as ``layout.template`` holds it once validated (built once)."""
    return go.Layout(template=name).template


def styled(fig: go.Figure, **layout: Any) -> go.Figure:
    """``fig.update_layout(**layout)``, its ``template`` (a name, as in :data:`_LAYOUT`) set as plotly
    sets its default template, without validating the template again: about 20 ms of CPU a figure
    otherwise (a deep copy and a validation of the whole template), and the figure's JSON is byte
    for byte the same.

    Examples
    --------
    >>> a, b = go.Figure(), go.Figure()
    >>> a.update_layout(**_LAYOUT).to_json() == styled(b, **_LAYOUT).to_json()
    True
    """
    name = layout.pop("template", None)
    if name is not None:
        validate = fig.layout._validate
        fig.layout._validate = False  # as plotly's own BaseFigure._initialize_layout_template
        try:
            fig.layout.template = _template(name)
        finally:
            fig.layout._validate = validate
    fig.update_layout(**layout)
    return fig


_COLORS = qualitative.Plotly
_SMALL_COLOR = "#9ca3af"
_SMALL = f"n < {MIN_GROUP_N}"


def _small_note(item: str) -> str:
    return f"Hollow, grey bars: under {MIN_GROUP_N} {item}s, too few to read; not used for the axis range."


def _described(spec: Slice | None, item: str) -> str:
    """A slice's one sentence (its record's), in the words of what the figure counts: a slice of
    problems reads "the problem" where the record says "the turn".

    Examples
    --------
    >>> _described(SLICES["answer_format"], "problem")
    'What kind of answer the problem asks for: percent, ratio, yes/no or plain.'
    """
    if spec is None:
        return ""
    return spec.description.replace("the turn", f"the {item}")


def _interval_note(item: str) -> str:
    """What a bar is: the 95% interval, from resampling conversations (or problems, each its own)."""
    return f"Bars: 95% interval ({'conversations' if item == 'turn' else 'problems'} resampled)."


#: Plotly does not wrap text: subtitles are broken into lines of at most this many characters.
_LINE = 60


def _subtitle(*sentences: str) -> dict[str, Any]:
    """A title's subtitle from sentences (text from the data already through :func:`plot_text`),
    wrapped at spaces into short lines."""
    lines = textwrap.wrap(" ".join(s for s in sentences if s), _LINE, break_long_words=False, break_on_hyphens=False)
    return {"text": "<br>".join(lines)}


def _title(heading: str, subtitle: dict[str, Any]) -> dict[str, Any]:
    """A title with its subtitle, pinned to the top of the figure (not floating in the margin)."""
    return {"text": heading, "subtitle": subtitle, "yref": "container", "y": 1, "yanchor": "top", "pad": {"t": 18}}


def _margin(subtitle: dict[str, Any], **more: int) -> dict[str, int]:
    """The layout margin with room at the top for the title and its subtitle's lines."""
    return {**_LAYOUT["margin"], "t": 62 + 17 * (subtitle["text"].count("<br>") + 1), **more}


# --------------------------------------------------------------------------- a figure that says why


def no_data(title: str, sentence: str) -> go.Figure:
    """A figure with nothing to draw: its title and one sentence saying why, no empty axes.

    For a chart whose data has nothing to show (GSM8K has no operations, the checks raised no
    flag); the notebooks display it where the chart would be.

    Examples
    --------
    >>> fig = no_data("Accuracy by operation", "The gold answers carry no program, so there is no operation.")
    >>> fig.layout.annotations[0].text
    'The gold answers carry no program, so there is no operation.'
    >>> fig.data
    ()
    """
    fig = go.Figure()
    fig.add_annotation(
        text=plot_text(sentence),
        xref="paper",
        yref="paper",
        x=0.5,
        y=0.5,
        showarrow=False,
        font={"size": 15, "color": "#374151"},
    )
    styled(
        fig,
        title=plot_text(title),
        xaxis={"visible": False},
        yaxis={"visible": False},
        **{**_LAYOUT, "height": 200},
    )
    return fig


# --------------------------------------------------------------------------- intervals and axis ranges


def _fitted_range(values: Sequence[float], *, step: float, bounds: tuple[float, float]) -> list[float]:
    """An axis range covering ``values`` padded by half a ``step``, snapped to whole steps,
    within ``bounds`` (a little beyond a bound that is reached, so its markers show whole).

    Examples
    --------
    >>> _fitted_range([0.62, 0.91], step=0.05, bounds=(0.0, 1.0))
    [0.6, 0.95]
    >>> _fitted_range([0.8, 1.0], step=0.05, bounds=(0.0, 1.0))
    [0.75, 1.02]
    """
    low, high = bounds
    pad = 0.02 * (high - low)
    if not values:
        return [low - pad, high + pad]
    lo = math.floor(round((min(values) - step / 4) / step, 9)) * step
    hi = math.ceil(round((max(values) + step / 4) / step, 9)) * step
    lo, hi = round(max(lo, low), 9), round(min(hi, high), 9)
    if hi - lo < 2 * step:
        lo, hi = max(low, lo - step), min(high, hi + step)
    return [lo - pad if lo <= low else lo, hi + pad if hi >= high else hi]


def _clipped(value: float, low: float, high: float, axis: Sequence[float]) -> tuple[float, float, float, str]:
    """Where to draw a small group within ``axis``: (drawn value, bar above, bar below, marker)."""
    lo, hi = axis
    drawn = min(max(value, lo), hi)
    symbol = "triangle-down-open" if value < lo else "triangle-up-open" if value > hi else "circle-open"
    return drawn, max(0.0, min(high, hi) - drawn), max(0.0, drawn - max(low, lo)), symbol


def _interval_trace(
    rows: pl.DataFrame,
    *,
    value: str,
    positions: list[Any],
    hovers: list[str],
    name: str,
    color: str,
    small: bool,
    axis: Sequence[float],
    horizontal: bool = False,
    legendgroup: str | None = None,
    **kwargs: Any,
) -> go.Scatter:
    """One scatter trace of ``rows`` (``value``, ``low``, ``high``) with its interval bars.

    A missing interval (a group of one conversation) is drawn across the whole axis and said
    so in the hover: nothing is known. Small groups are drawn hollow, grey-barred and clipped
    to ``axis`` (see :func:`_clipped`); the others as they are.
    """
    drawn, plus, minus, symbols = [], [], [], []
    hovers = list(hovers)
    for v, low, high in rows.select(value, "low", "high").iter_rows():
        low = axis[0] if low is None else low
        high = axis[1] if high is None else high
        if small:
            d, p, m, s = _clipped(v, low, high, axis)
        else:
            d, p, m, s = v, max(0.0, high - v), max(0.0, v - low), "circle"
        if s.startswith("triangle"):
            hovers[len(drawn)] += "<br>beyond the axis: drawn at its edge"
        drawn.append(d)
        plus.append(p)
        minus.append(m)
        symbols.append(s)
    bars = {
        "type": "data",
        "symmetric": False,
        "array": plus,
        "arrayminus": minus,
        "thickness": 1.4,
        "width": 5,
        "color": _SMALL_COLOR if small else color,
    }
    coords = (
        {"x": drawn, "y": positions, "error_x": bars} if horizontal else {"x": positions, "y": drawn, "error_y": bars}
    )
    return go.Scatter(
        **coords,
        name=name,
        legendgroup=legendgroup or name,
        marker={"symbol": symbols, "size": 10 if small else 9, "color": color, "line": {"width": 1.6, "color": color}},
        customdata=rows.select(value, "low", "high", "n_turns").rows(),
        hovertext=hovers,
        hovertemplate="%{hovertext}<extra></extra>",
        cliponaxis=not small,
        **kwargs,
    )


def _accuracy_hover(row: dict[str, Any], system: str, slice_name: str, item: str = "turn") -> str:
    """The hover text of one group: system, group, accuracy with interval, n, and the small mark."""
    group = plot_text(words.plain(str(row["group"])))
    interval = formats.interval(row["accuracy"], row["low"], row["high"])
    if row["low"] is None:
        interval += f" (no interval from a single {'conversation' if item == 'turn' else 'problem'})"
    counts = f"{formats.count(row['n_correct'])} of {words.counted(row['n_turns'], item)} correct"
    if item == "turn":
        counts += f", {words.counted(row['n_conversations'], 'conversation')}"
    lines = [
        f"<b>{plot_text(system)}</b>",
        f"{plot_text(slice_title(slice_name))}: {group}",
        f"accuracy {interval}",
        counts,
    ]
    if row["too_small"]:
        lines.append(f"{plot_text(_SMALL)}: too few {item}s to read as a finding")
    return "<br>".join(lines)


def _one_group_sentence(part: pl.DataFrame, slice_name: str, item: str = "turn") -> str | None:
    """Why a slice with a single group (or none) is not drawn; None when there is something to compare."""
    groups = part["group"].unique().to_list()
    title = slice_title(slice_name).lower()
    if not groups:
        return f"No {item}s to show by {title}."
    if len(groups) > 1:
        return None
    (group,) = groups
    n = formats.count(int(part.filter(pl.col("system") == part["system"][0])["n_turns"].sum()))
    if group in ("none", "n/a"):
        return f"There is no {title} in this data (all {n} {item}s: {group}), so there is nothing to compare."
    if slice_name == "turn_index":
        return f"Every question here stands alone (all {n} {item}s are turn {group}), so there is no turn index to compare."
    return f"All {n} {item}s fall in one group ({words.plain(str(group))}), so there is nothing to compare by {title}."


def slice_accuracy(table: pl.DataFrame, slice_name: str, *, title: str | None = None) -> go.Figure:
    """Accuracy by the groups of one slice: a marker per system and group with its 95%
    interval clustered by conversation, n in the hover, groups in reading order.

    ``table`` comes from :func:`workbench.analysis.slices.slice_accuracy`. Numeric slices (turn
    index, dependency distance) are joined by lines, so a falling line shows errors carried from
    earlier turns. Groups of fewer than :data:`MIN_GROUP_N` turns are a separate hollow trace per
    system (legend ``<system>: n < 20``), never joined by the line, and out of the axis range.
    A slice with one group (or none) is :func:`no_data` with the reason.
    """
    part_all = table.filter(pl.col("slice") == slice_name)
    if "too_small" not in part_all.columns:
        part_all = part_all.with_columns((pl.col("n_turns") < MIN_GROUP_N).alias("too_small"))
    part_all = in_reading_order(part_all)
    item = words.slice_item(table)
    label = slice_title(slice_name)
    heading = plot_text(title or f"Accuracy by {label.lower()}")
    why = _one_group_sentence(part_all, slice_name, item)
    if why is not None:
        return no_data(heading, why)
    spec = SLICES.get(slice_name)
    numeric = spec is not None and spec.numeric
    order = list(dict.fromkeys(part_all["group"].to_list()))
    big = part_all.filter(~pl.col("too_small"))
    reach = [v for col in ("low", "high", "accuracy") for v in big[col].drop_nulls().to_list()]
    axis = _fitted_range(reach, step=0.1, bounds=(0.0, 1.0))
    fig = go.Figure()
    for i, system in enumerate(dict.fromkeys(part_all["system"].to_list())):
        color = _COLORS[i % len(_COLORS)]
        rows = part_all.filter(pl.col("system") == system)
        for small in (False, True):
            shown = rows.filter(pl.col("too_small") == small)
            if not shown.height:
                continue
            fig.add_trace(
                _interval_trace(
                    shown,
                    value="accuracy",
                    positions=_texts(words.plain(g) for g in shown["group"].to_list()),
                    hovers=[_accuracy_hover(r, system, slice_name, item) for r in shown.iter_rows(named=True)],
                    name=plot_text(f"{system}: {_SMALL}" if small else system),
                    legendgroup=plot_text(system),
                    color=color,
                    small=small,
                    axis=axis,
                    mode="lines+markers" if numeric and not small else "markers",
                )
            )
    has_small = bool(part_all["too_small"].any())
    subtitle = _subtitle(_described(spec, item), _interval_note(item), _small_note(item) if has_small else "")
    styled(
        fig,
        title=_title(heading, subtitle),
        scattermode="group",
        scattergap=0.6,
        xaxis={
            "title": plot_text(label + (" (0 = first question)" if slice_name == "turn_index" else "")),
            "categoryorder": "array",
            "categoryarray": _texts(words.plain(g) for g in order),
            "type": "category",
        },
        yaxis={
            "title": f"{item}s answered correctly",
            "tickformat": ".0%",
            "range": axis,
            "hoverformat": formats.PLOTLY_PERCENT,
        },
        legend={"orientation": "h", "yanchor": "top", "y": -0.28, "x": 0},
        **{**_LAYOUT, "height": 460, "margin": _margin(subtitle, b=110)},
    )
    return fig


def accuracy_by_turn(turns: pl.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> go.Figure:
    """Turn execution accuracy by turn index, a line per system (error propagation), each turn
    with its n and 95% interval clustered by conversation (``n_boot`` replicates, ``seed``)."""
    return _accuracy_by(turns, "turn_index", "Accuracy by turn index", n_boot=n_boot, seed=seed)


def accuracy_by_operation(turns: pl.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> go.Figure:
    """Turn execution accuracy by the gold program's final operation, a marker per system,
    each with its n and 95% interval clustered by conversation; largest operation first."""
    return _accuracy_by(turns, "operation", "Accuracy by operation", n_boot=n_boot, seed=seed)


def _accuracy_by(turns: pl.DataFrame, slice_name: str, title: str, *, n_boot: int, seed: int) -> go.Figure:
    """:func:`slice_accuracy` of one slice of ``turns``, its intervals bootstrapped only when it
    draws them: a slice of one group (GSM8K's turn index; the operation without gold programs) is
    :func:`no_data`, told from the counts alone (2.5 s of bootstrap for 105,520 turns, not drawn)."""
    counts = _slices.slice_accuracy(turns, [slice_name], intervals=False)
    if _one_group_sentence(counts.filter(pl.col("slice") == slice_name), slice_name) is not None:
        return slice_accuracy(counts, slice_name, title=title)
    table = _slices.slice_accuracy(turns, [slice_name], n_boot=n_boot, seed=seed)
    return slice_accuracy(table, slice_name, title=title)


# --------------------------------------------------------------------------- counts


def error_heatmap(turns: pl.DataFrame, *, system: str | None = None) -> go.Figure:
    """Wrong turns counted by error type (rows) and gold operation (columns), for one
    system or all systems together; turns without a gold program count under ``no gold
    program``. Ties in either order are broken by name, so the same run gives the same figure.
    With no wrong turn, :func:`no_data` says so."""
    wrong = turns.filter(~pl.col("correct"))
    item = "turn" if turns.height and int(turns["turn"].max() or 0) > 0 else "problem"
    if system is not None:
        wrong = wrong.filter(pl.col("system") == system)
    who = f" ({system})" if system else (" (all systems)" if turns["system"].n_unique() > 1 else "")
    title = f"Error type by operation{who}"
    if not wrong.height:
        return no_data(title, f"No {item} is wrong, so there is no error to count.")
    counts = wrong.group_by(
        pl.col("error_type").cast(pl.String).fill_null("unknown"),
        pl.col("operation").cast(pl.String).fill_null("no gold program"),
    ).len()
    types = (
        counts.group_by("error_type")
        .agg(pl.col("len").sum())
        .sort("len", "error_type", descending=[True, False])["error_type"]
        .to_list()
    )
    ops = counts.group_by("operation").agg(pl.col("len").sum()).sort("len", "operation", descending=[True, False])
    ops = ops["operation"].to_list()
    lookup = {(t, o): n for t, o, n in counts.iter_rows()}
    z = [[lookup.get((t, o), 0) for o in ops] for t in types]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=_texts(words.plain(o) for o in ops),
            y=_texts(words.plain(t) for t in types),
            colorscale="Reds",
            zmin=0,
            text=z,
            texttemplate="%{text}",
            hovertemplate=f"%{{y}} on %{{x}}: %{{z:,}} wrong {item}s<extra></extra>",
            colorbar={"title": f"wrong {item}s"},
        )
    )
    styled(
        fig,
        title=plot_text(title),
        xaxis_title="operation (final step of the gold program)"
        if ops != ["no gold program"]
        else "operation: none, the gold answers come without a program",
        yaxis={"title": "error type", "autorange": "reversed"},
        **{**_LAYOUT, "height": max(320, 60 + 34 * len(types))},
    )
    return fig


def flag_counts(counts: pl.DataFrame) -> go.Figure:
    """Gold turns flagged per data-quality category (``counts`` from
    :func:`workbench.quality.checks.flag_counts`); :func:`no_data` when no turn is flagged."""
    title = "Gold turns flagged per data-quality category"
    if not counts.height or not int(counts["n_turns"].sum()):
        return no_data(title, "The data-quality checks flagged no gold turn in this data.")
    fig = go.Figure(
        go.Bar(
            x=_texts(words.plain(c) for c in counts["category"].cast(pl.String).to_list()),
            y=counts["n_turns"].to_list(),
            text=counts["n_turns"].to_list(),
            hovertemplate="%{x}: %{y:,} flagged turns<extra></extra>",
            marker_color="#b45309",
        )
    )
    styled(fig, title=title, xaxis_title="data-quality category", yaxis_title="flagged gold turns", **_LAYOUT)
    return fig


# --------------------------------------------------------------------------- paired differences


def _paired_hover(row: dict[str, Any], label: str, item: str = "turn") -> str:
    lines = [
        f"<b>{label}</b>",
        f"difference {formats.points(row['difference'])} [{formats.points(row['low'])}, {formats.points(row['high'])}]"
        if row["low"] is not None
        else f"difference {formats.points(row['difference'])} (no interval from a single "
        f"{'conversation' if item == 'turn' else 'problem'})",
        f"{words.counted(row['n_turns'], f'paired {item}')}, McNemar p {formats.p_value(row['mcnemar_p'])}",
    ]
    if row["too_small"]:
        lines.append(f"{plot_text(_SMALL)}: too few paired {item}s to read as a finding")
    return "<br>".join(lines)


def paired_differences(comparison: pl.DataFrame, *, title: str = "") -> go.Figure:
    """A forest plot of paired accuracy differences (first system minus second, in points)
    per slice group, with paired bootstrap intervals; ``comparison`` from
    :func:`workbench.analysis.comparison.compare_systems`.

    Rows in reading order. Groups of fewer than :data:`MIN_GROUP_N` paired turns are hollow,
    grey-barred, and clipped to the axis set by the others (so four turns at +100 points do not
    squeeze every real interval into a sliver). Groups without a paired turn are not drawn.
    """
    heading = plot_text(title or "Paired difference in accuracy")
    item = words.slice_item(comparison)
    rows = comparison.filter(pl.col("difference").is_not_null())
    if not rows.height:
        return no_data(heading, f"The two systems answered no {item} in common, so there is no difference to draw.")
    if "too_small" not in rows.columns:
        rows = rows.with_columns((pl.col("n_turns") < MIN_GROUP_N).alias("too_small"))
    rows = in_reading_order(rows)
    labels = [f"{slice_title(s)}: {words.plain(str(g))}" for s, g in rows.select("slice", "group").iter_rows()]
    rows = rows.with_columns(
        pl.Series("_label", _texts(labels), dtype=pl.String),
        pl.Series(
            "_hover",
            [_paired_hover(r, plot_text(lab), item) for r, lab in zip(rows.iter_rows(named=True), labels, strict=True)],
            dtype=pl.String,
        ),
    ).with_columns((pl.col("difference", "low", "high") * 100).name.keep())
    big = rows.filter(~pl.col("too_small"))
    reach = [0.0, *(v for col in ("low", "high", "difference") for v in big[col].drop_nulls().to_list())]
    axis = _fitted_range(reach, step=5.0, bounds=(-100.0, 100.0))
    fig = go.Figure()
    for small in (False, True):
        shown = rows.filter(pl.col("too_small") == small)
        if not shown.height:
            continue
        fig.add_trace(
            _interval_trace(
                shown,
                value="difference",
                positions=shown["_label"].to_list(),
                hovers=shown["_hover"].to_list(),
                name=plot_text(_SMALL) if small else "paired difference",
                color=_SMALL_COLOR if small else _COLORS[0],
                small=small,
                axis=axis,
                horizontal=True,
                mode="markers",
            )
        )
    a, b = (comparison[c][0] if c in comparison.columns and comparison.height else "" for c in ("system_a", "system_b"))
    who = f"{plot_text(a)} minus {plot_text(b)}" if a and b else "the first system minus the second"
    fig.add_vline(x=0, line_dash="dot", line_color="#888")
    has_small = bool(rows["too_small"].any())
    subtitle = _subtitle(
        f"Accuracy of {who}, on the {item}s both answered, in percentage points.",
        f"Bars: 95% paired interval ({'conversations' if item == 'turn' else 'problems'} resampled).",
        _small_note(f"paired {item}") if has_small else "",
    )
    styled(
        fig,
        title=_title(heading, subtitle),
        xaxis={"title": "difference (points)", "tickformat": "+d", "range": axis, "zeroline": False, "side": "top"},
        yaxis={
            "autorange": "reversed",
            "type": "category",
            "categoryorder": "array",
            "categoryarray": rows["_label"].to_list(),
        },
        showlegend=False,
        **{
            **_LAYOUT,
            "height": max(380, 160 + 22 * rows.height),
            "margin": _margin(subtitle, l=200, t=_margin(subtitle)["t"] + 60),
        },
    )
    return fig
