"""The one HTML renderer: every template autoescapes, none turns escaping off, an undefined name
raises, the static files ship as package data, and hostile text from the data stays inert in
every page, table and pane built through it."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from types import SimpleNamespace

import jinja2
import nbformat
import polars as pl
import pytest
from markupsafe import escape

from workbench.analysis.changes import Changes
from workbench.annotations.session import QueueItem, TraceView, TriageItem
from workbench.report.runner import render_html
from workbench.views import html, plots, tables
from workbench.views.changes import changes_html, manifest_html
from workbench.widgets import triage

#: A system name, an id or a model output that would be a live link, a script or an event
#: handler if it reached the markup unescaped.
HOSTILE = '<a href=x>s</a><script>window.__pwned=1</script>"\'><img src=x onerror="window.__pwned=2">'
ESCAPED = str(escape(HOSTILE))

TEMPLATES = sorted(p.name for p in resources.files("workbench.views").joinpath("templates").iterdir())
STATIC = sorted(p.name for p in resources.files("workbench.views").joinpath("static").iterdir())


def _inert(markup: str) -> None:
    """No tag from HOSTILE made it into ``markup``, and its text is there, escaped."""
    assert "<a href" not in markup and "<script>window" not in markup and "<img" not in markup
    assert 'onerror="' not in markup
    assert ESCAPED in markup


# --------------------------------------------------------------------------- the environment
def test_the_environment_autoescapes_every_template_and_refuses_undefined_names() -> None:
    env = html.environment()
    assert env is html.environment()  # one environment
    assert env.undefined is jinja2.StrictUndefined
    assert set(env.list_templates()) == set(TEMPLATES) and TEMPLATES
    for name in TEMPLATES:
        assert name.endswith(".html.j2")
        template = env.get_template(name)
        assert template.environment.autoescape is True
        assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"


@pytest.mark.parametrize("name", TEMPLATES)
def test_no_template_turns_escaping_off(name: str) -> None:
    source = resources.files("workbench.views").joinpath("templates", name).read_text(encoding="utf-8")
    assert not re.search(r"\|\s*safe\b", source)
    assert "autoescape" not in source
    assert "Markup" not in source


def test_an_undefined_name_raises() -> None:
    with pytest.raises(jinja2.UndefinedError):
        html.render("page.html.j2", title="t")
    with pytest.raises(jinja2.UndefinedError):
        html.environment().from_string("{{ missing }}").render()


def test_static_files_are_package_data_and_the_page_inlines_them() -> None:
    assert {"report.css", "sortable.js", "plots.js", "plotly_config.js", "triage.css"} <= set(STATIC)
    for name in STATIC:
        assert html.static_text(name).strip()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell()])
    nb.cells[0].outputs = [
        nbformat.v4.new_output(
            "display_data", data={"text/html": tables.html_table(pl.DataFrame({"a": [1]}), sortable=True).markup}
        )
    ]
    page = render_html(nb, title="t")
    assert f"<style>{html.static_text('report.css')}</style>" in page
    assert f"<script>{html.static_text('sortable.js')}</script>" in page
    pyproject = (Path(__file__).resolve().parents[3] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"views/templates/*.html.j2"' in pyproject and '"views/static/*.css"' in pyproject


def test_script_json_cannot_close_its_element() -> None:
    assert "</script>" not in html.script_json('{"a": "</script><!--&"}')


# --------------------------------------------------------------------------- hostile text is inert
def test_tables_keep_hostile_text_inert() -> None:
    frame = pl.DataFrame({HOSTILE: [HOSTILE], "n": [1]})
    markup = tables.html_table(frame, caption=HOSTILE, css_class=HOSTILE, sortable=True).markup
    assert "<a href" not in markup and "<script" not in markup and "<img" not in markup
    assert markup.count(ESCAPED) == 4  # header, caption, cell and the class attribute
    _inert(tables.files_written({HOSTILE: HOSTILE}).markup)
    turns = pl.DataFrame(
        {
            **{c: [HOSTILE] for c in ("system", "record_id", "question", "gold_answer", "gold_executed")},
            **{c: [HOSTILE] for c in ("predicted_answer", "predicted_program", "answer", "reason", "detail")},
            "operation": [HOSTILE],
            "turn": [0],
            "correct": [False],
        }
    )
    _inert(tables.failed_turns(turns).markup)
    _inert(tables.drilldown(turns, "operation").markup)
    run = SimpleNamespace(
        gold=SimpleNamespace(path=HOSTILE, layout=HOSTILE, documents=pl.DataFrame({"a": [1]}), turns=turns),
        prediction_files=[(HOSTILE, HOSTILE)],
        graded=SimpleNamespace(policy=SimpleNamespace(name=HOSTILE)),
        unmatched=pl.DataFrame(
            {c: [HOSTILE] for c in ("system", "source_file", "source_location", "record_id", "why")}
        ).with_columns(pl.lit(0).alias("turn")),
    )
    _inert(tables.run_overview(run).markup)


def test_changes_and_manifest_keep_hostile_text_inert() -> None:
    metrics = pl.DataFrame(
        {"system": [HOSTILE], "metric": [HOSTILE], "previous": [0.5], "current": [0.75], "delta": [0.25]}
    )
    turns = pl.DataFrame({"system": [HOSTILE], "record_id": [HOSTILE], "turn": [1]})
    markup = changes_html(Changes(HOSTILE, metrics, turns, turns.clear(), (HOSTILE,)))
    _inert(markup)
    manifest = manifest_html({"parameters": {"dataset": HOSTILE}})
    assert "<a href" not in manifest and "<img" not in manifest and manifest.count("</script>") == 1
    assert "\\u003cscript\\u003e" in manifest and str(escape(json.dumps(HOSTILE))) in manifest


def test_the_report_page_keeps_hostile_text_inert() -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell()])
    nb.cells[0].outputs = [
        nbformat.v4.new_output("stream", name="stdout", text=HOSTILE),
        nbformat.v4.new_output("error", ename="E", evalue=HOSTILE, traceback=[]),
        nbformat.v4.new_output("display_data", data={"text/plain": HOSTILE}),
        nbformat.v4.new_output("display_data", data={"text/markdown": HOSTILE}),
        nbformat.v4.new_output("display_data", data={"application/vnd.plotly.v1+json": {"data": [{"name": HOSTILE}]}}),
    ]
    page = render_html(nb, title=HOSTILE)
    main = page[page.index("<main>") : page.index("</main>")]  # plotly.js, in the head, has links of its own
    assert "<a href" not in main and "<script>window" not in main and "<img" not in main
    assert f"<title>{ESCAPED}</title>" in page and main.count(ESCAPED) == 3  # stdout, error, plain text
    assert "&lt;a href=x&gt;" in main  # the markdown output, escaped by mistune
    assert re.search(r"content=\"default-src 'none'; script-src 'sha256-[^\"]+\"", page)  # quotes kept as they are


def test_triage_panes_keep_hostile_text_inert() -> None:
    trace = TraceView(program=HOSTILE, status=HOSTILE, value=HOSTILE, steps=(HOSTILE,), message=HOSTILE)
    item = TriageItem(
        key=QueueItem(HOSTILE, 0, HOSTILE),
        question=HOSTILE,
        gold_answer=HOSTILE,
        gold_executed="3",
        predicted_answer=HOSTILE,
        answer_graded=None,
        correct=False,
        reason=HOSTILE,
        detail=HOSTILE,
        error_type=HOSTILE,
        conversation=((0, HOSTILE, HOSTILE, HOSTILE),),
        gold_trace=trace,
        predicted_trace=trace,
        flags=(("mislabel", HOSTILE, 0.5, HOSTILE),),
        pre_text=HOSTILE + " 60.94",
        post_text=HOSTILE,
        table_columns=(HOSTILE,),
        table_rows=((HOSTILE, "60.94"),),
        numbers_used=frozenset({60.94}),
        annotation={"category": HOSTILE, "annotator": HOSTILE, "event_id": 1},
    )
    _inert(triage.item_html(item))
    document = triage.document_html(item)
    _inert(document)
    assert "<mark>60.94</mark>" in document
    _inert(triage.highlight_numbers(HOSTILE, {7.0}))


def test_plot_text_keeps_markup_and_tex_inert() -> None:
    shown = plots.plot_text(HOSTILE + "$x$")
    assert "<" not in shown and ">" not in shown and "$" not in shown
