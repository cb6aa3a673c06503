"""A figure with hostile system names, drawn by Chromium: the names show as text, never as links."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hostile_figures import LINK, SCRIPT, TEX, hostile_turns

from workbench.config import resolve
from workbench.pipeline.run import grade_run
from workbench.views import plots

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def hostile() -> pl.DataFrame:
    cfg = resolve(
        dataset=REPO / "tests/fixtures/convfinqa/dev_small.json",
        predictions=[str(REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl")],
        systems="claude",
    )
    return hostile_turns(grade_run(cfg).turns)


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
    # each system's legend entry, or its "n < 20" entry for groups too small to read
    assert sorted(name.removesuffix(": n < 20") for name in escaped["legend"]) == sorted([LINK, SCRIPT, TEX])
    for name in (LINK, SCRIPT, TEX):  # the hover labels show each name's characters too
        assert any(name in text for text in escaped["hover"]), (name, escaped["hover"])
    assert not escaped["alerted"]
