"""Figures carry the accuracies computed from the graded turns of a real run."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from workbench.config import resolve
from workbench.pipeline.run import grade_run
from workbench.schema import CHECKS
from workbench.views import plots

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def turns() -> pl.DataFrame:
    cfg = resolve(
        dataset=REPO / "tests/fixtures/convfinqa/dev_small.json",
        predictions=[str(REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl")],
        systems="claude",
    )
    return grade_run(cfg).turns


def test_accuracy_by_turn_matches_turns(turns: pl.DataFrame) -> None:
    fig = plots.accuracy_by_turn(turns)
    (trace,) = fig.data
    expected = turns.group_by("turn").agg(pl.col("correct").mean()).sort("turn")
    assert list(trace.x) == expected["turn"].to_list()
    assert list(trace.y) == pytest.approx(expected["correct"].to_list())
    assert trace.name == "claude"


def test_accuracy_by_operation_orders_by_frequency(turns: pl.DataFrame) -> None:
    fig = plots.accuracy_by_operation(turns)
    counts = turns.group_by("operation").len().sort("len", "operation", descending=[True, False])
    assert list(fig.layout.xaxis.categoryarray) == counts["operation"].to_list()
    (trace,) = fig.data
    by_op = dict(zip(trace.x, trace.y, strict=True))
    lookup = turns.filter(pl.col("operation") == "lookup")["correct"].mean()
    assert by_op["lookup"] == pytest.approx(lookup)


# --------------------------------------------------------------------------- hostile text
LINK = '<a href="http://evil.example/">x</a>'
SCRIPT = "<script>alert(1)</script>"
TEX = r"$\href{http://evil.example/}{tex}$"  # TeX where MathJax is loaded: \href is a link too
MARKUP = ("<a ", "<script", "<img", 'evil.example/">', "$\\href")


@pytest.fixture(scope="module")
def hostile(turns: pl.DataFrame) -> pl.DataFrame:
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


def _every_figure(hostile: pl.DataFrame) -> dict[str, object]:
    """Each figure :mod:`workbench.views.plots` offers, built from the hostile turns."""
    from workbench.analysis import comparison, slices
    from workbench.quality import checks

    by_slice = slices.slice_accuracy(hostile, ["operation", "turn_index", "error_type"], n_boot=20, seed=0)
    counts = checks.flag_counts(pl.DataFrame(schema=CHECKS))
    counts = pl.concat([counts, pl.DataFrame({"category": [LINK, SCRIPT], "n_flags": [2, 3], "n_turns": [2, 3]})])
    paired = comparison.compare_systems(hostile, LINK, SCRIPT, ["operation"], n_boot=20, seed=0)
    return {
        "accuracy_by_turn": plots.accuracy_by_turn(hostile),
        "accuracy_by_operation": plots.accuracy_by_operation(hostile),
        "slice_accuracy:operation": plots.slice_accuracy(by_slice, "operation"),
        "slice_accuracy:turn_index": plots.slice_accuracy(by_slice, "turn_index"),
        "slice_accuracy:titled": plots.slice_accuracy(by_slice, "error_type", title=f"errors of {LINK}"),
        "error_heatmap": plots.error_heatmap(hostile),
        "error_heatmap:one system": plots.error_heatmap(hostile, system=LINK),
        "flag_counts": plots.flag_counts(counts),
        "paired_differences": plots.paired_differences(paired),
        "paired_differences:titled": plots.paired_differences(paired, title=f"{LINK} vs {SCRIPT}"),
    }


def test_plots_offers_no_figure_this_test_misses() -> None:
    offered = {name for name in plots.__all__ if name != "plot_text"}
    assert offered == {
        "accuracy_by_turn",
        "accuracy_by_operation",
        "slice_accuracy",
        "error_heatmap",
        "flag_counts",
        "paired_differences",
    }


def test_no_figure_carries_live_markup_from_the_data(hostile: pl.DataFrame) -> None:
    """System names, operations, error types, categories and titles with ``<a href>``,
    ``<script>`` and TeX ``$\\href`` reach every figure as escaped text (entities plotly draws
    as the characters), in names, ticks, category orders, titles and hover text."""
    figures = _every_figure(hostile)
    for name, fig in figures.items():
        spec = fig.to_json()  # type: ignore[attr-defined]
        for bad in MARKUP:
            assert bad not in spec, (name, bad)
    names = {t.name for t in figures["accuracy_by_turn"].data}  # type: ignore[attr-defined]
    assert names == {plots.plot_text(LINK), plots.plot_text(SCRIPT), plots.plot_text(TEX)}
    assert plots.plot_text(LINK) == '&lt;a href="http://evil.example/"&gt;x&lt;/a&gt;'
    assert plots.plot_text(TEX) == r"&#36;\href{http://evil.example/}{tex}&#36;"
    op_axis = figures["accuracy_by_operation"].layout.xaxis.categoryarray  # type: ignore[attr-defined]
    assert plots.plot_text(f"{SCRIPT}{LINK}") in op_axis
    heat = figures["error_heatmap"].data[0]  # type: ignore[attr-defined]
    assert plots.plot_text(LINK) in heat.y
    print({name: len(fig.to_json()) for name, fig in figures.items()})  # type: ignore[attr-defined]


CHROMIUM = Path("/usr/bin/chromium")


def _links_to_evil(browser: object, html_file: Path) -> dict[str, object]:
    """Open a figure page offline; hover the first point of each trace; report the elements whose any
    ``*href`` attribute names evil.example, the legend's text and whether a script ran."""
    context = browser.new_context(offline=True)  # type: ignore[attr-defined]
    page = context.new_page()
    blocked: list[str] = []
    page.route(
        "**/*",
        lambda r: r.continue_() if r.request.url.startswith("file://") else (blocked.append(r.request.url), r.abort()),
    )
    page.goto(html_file.as_uri())
    page.wait_for_selector(".legend .traces", timeout=120_000)
    page.evaluate(
        "() => { const gd = document.querySelector('.js-plotly-plot');"
        " Plotly.Fx.hover(gd, gd.data.map((t, i) => ({curveNumber: i, pointNumber: 0}))); }"
    )
    result = page.evaluate(
        """() => ({
            links: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(
                a => a.name.endsWith('href') && a.value.includes('evil'))).map(e => e.outerHTML.slice(0, 120)),
            svgLinks: document.querySelectorAll('svg a').length,
            legend: [...document.querySelectorAll('.legend .legendtext')].map(e => e.textContent),
            hover: [...document.querySelectorAll('.hoverlayer text')].map(e => e.textContent),
            alerted: window.__alerted === true,
        })"""
    )
    context.close()
    result["blocked"] = blocked
    return result


def test_figure_in_a_real_browser_shows_the_link_as_text(tmp_path: Path, hostile: pl.DataFrame) -> None:
    """Chromium draws the escaped figure: no ``<a>`` in the plot's SVG, the legend shows the
    name's characters. The same figure with the raw name (a control) does get a live link, so
    the check can fail."""
    if not CHROMIUM.exists():
        pytest.skip(f"the browser check needs Debian's Chromium at {CHROMIUM}; install it: apt-get install -y chromium")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the browser check needs Playwright: pip install -e '.[dev]'"
    )
    import plotly.graph_objects as go

    fig = plots.accuracy_by_turn(hostile)
    raw = go.Figure(fig)
    for trace, name in zip(raw.data, (LINK, SCRIPT, TEX), strict=True):
        trace.name = name
    guard = "<script>window.alert = () => { window.__alerted = true; };</script>"
    pages = {}
    for label, figure in (("escaped", fig), ("raw", raw)):
        path = tmp_path / f"{label}.html"
        figure.write_html(path, include_plotlyjs=True, full_html=True)
        path.write_text(path.read_text(encoding="utf-8").replace("<head>", "<head>" + guard, 1), encoding="utf-8")
        pages[label] = path
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            escaped = _links_to_evil(browser, pages["escaped"])
            control = _links_to_evil(browser, pages["raw"])
        finally:
            browser.close()
    print("escaped:", escaped)
    print("raw (control):", {k: control[k] for k in ("links", "svgLinks", "legend")})
    assert escaped["blocked"] == [] and control["blocked"] == []
    assert control["links"], "the control page should have a live link: the check would miss one"
    assert escaped["links"] == [] and escaped["svgLinks"] == 0
    assert sorted(escaped["legend"]) == sorted([LINK, SCRIPT, TEX])
    for name in (LINK, SCRIPT, TEX):  # the hover labels show each name's characters too
        assert any(name in text for text in escaped["hover"]), (name, escaped["hover"])
    assert not escaped["alerted"]
