"""The offline page around a template's outputs: the opening under the title, the glossary once,
and the smaller plotly.js bundle when it draws every figure (the pages themselves, run, in
tests/system/report/)."""

from __future__ import annotations

import json

import nbformat
import plotly.graph_objects as go
from plotly.offline import get_plotlyjs_version

from workbench.analysis.glossary import glossary
from workbench.report.runner import CARTESIAN_TRACES, render_html


def _notebook(*figures: go.Figure) -> nbformat.NotebookNode:
    title = nbformat.v4.new_code_cell(metadata={"tags": ["title"]})
    title.outputs = [nbformat.v4.new_output("display_data", data={"text/markdown": "# GSM8K error report"})]
    cells = [nbformat.v4.new_markdown_cell("Intro"), title]
    for figure in figures:
        cell = nbformat.v4.new_code_cell()
        spec = json.loads(figure.to_json())
        cell.outputs = [nbformat.v4.new_output("display_data", data={"application/vnd.plotly.v1+json": spec})]
        cells.append(cell)
    return nbformat.v4.new_notebook(cells=cells)


def test_the_opening_follows_the_title_and_the_glossary_comes_before_the_manifest() -> None:
    terms = [(e.term, e.definition) for e in glossary("gsm8k")]
    page = render_html(
        _notebook(), title="t", opening="<p id='opening'>changes</p>", closing="<p id='m'>m</p>", terms=terms
    )
    assert page.index("Intro") < page.index("<h1>GSM8K error report</h1>") < page.index("id='opening'")
    assert page.index("id='opening'") < page.index("<h2>Glossary</h2>") < page.index("id='m'")
    assert (
        page.count("<dt>") == len(terms) and "<dt>BLEU and ROUGE</dt>" in page and "<dt>Conversation</dt>" not in page
    )


def test_a_page_of_cartesian_figures_inlines_the_cartesian_bundle_once() -> None:
    bars = go.Figure([go.Bar(x=["a"], y=[1], error_y={"array": [0.1]}), go.Scatter(x=[1], y=[2])])
    page = render_html(_notebook(bars, go.Figure(go.Heatmap(z=[[1, 2]]))), title="t")
    assert page.count(f"plotly.js (cartesian - minified) v{get_plotlyjs_version()}") == 1
    assert len(page.encode()) < 2_000_000, "the full bundle alone is 4.8 MB"
    assert {"bar", "scatter", "heatmap"} <= CARTESIAN_TRACES


def test_a_figure_outside_the_cartesian_bundle_gets_the_full_plotly_js() -> None:
    page = render_html(_notebook(go.Figure(go.Sankey(node={"label": ["a", "b"]}))), title="t")
    assert "plotly.js (cartesian - minified)" not in page and len(page.encode()) > 4_000_000
