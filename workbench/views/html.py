"""The one HTML renderer: Jinja2 templates with autoescaping, CSS and JS as package files.

Every page, table and widget pane of the package is built from a template in
``workbench/views/templates/*.html.j2``, through one :class:`jinja2.Environment` that escapes
every value (``autoescape=True`` for every template) and refuses an undefined name
(:class:`jinja2.StrictUndefined`). A system name, an id or a model output is always text: it
reaches the markup escaped, whatever it holds. Markup that is already HTML (a table built here,
an object with ``__html__``, a notebook's HTML output) is passed as :class:`markupsafe.Markup`
or as the object itself and is inserted as it is.

The stylesheets and scripts live in ``workbench/views/static/`` and are read as package data
(:func:`static_text`), so the offline report can inline them and stay one self-contained file.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

__all__ = ["Markup", "PAGE_MIME", "environment", "macro", "render", "script_json", "static_text"]

#: The MIME type of an output's markup meant for the exported report page only: a live widget
#: (the failed-turns grid of :mod:`workbench.widgets.grid`) puts the page's own grid and panel
#: data there, beside the short ``text/html`` a notebook shows without a kernel. The report
#: (:func:`workbench.report.runner.render_html`) prefers it to ``text/html``; JupyterLab has no
#: renderer for it and ignores it.
PAGE_MIME = "application/vnd.workbench.page+html"


@functools.cache
def environment() -> jinja2.Environment:
    """The package's one Jinja2 environment (made on first use, then shared).

    Templates are loaded from ``workbench.views``'s ``templates`` folder; every template is
    autoescaped, an undefined name raises, and whitespace after a block tag is dropped
    (``trim_blocks``, ``lstrip_blocks``) so the markup has no stray blank lines.

    Examples
    --------
    >>> environment().autoescape, environment().undefined.__name__
    (True, 'StrictUndefined')
    """
    return jinja2.Environment(
        loader=jinja2.PackageLoader("workbench.views", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        auto_reload=False,
    )


def render(template: str, /, **context: Any) -> Markup:
    """Render the template ``template`` (a name under ``templates/``) with ``context``.

    Examples
    --------
    >>> page = render("page.html.j2", title="<b>", script_hashes=[], css="", head_scripts=[], tail_scripts=[],
    ...               opening="", content="", closing="", terms=[])
    >>> "<title>&lt;b&gt;</title>" in page, "script-src 'none';" in page
    (True, True)
    """
    return Markup(environment().get_template(template).render(**context))


def macro(template: str, name: str, /, *args: Any, **kwargs: Any) -> Markup:
    """Call the macro ``name`` of the template ``template`` and return its markup.

    Examples
    --------
    >>> str(macro("tables.html.j2", "note", "<script>"))
    '<p class="wb-note">&lt;script&gt;</p>'
    """
    function = getattr(environment().get_template(template).module, name)
    return Markup(function(*args, **kwargs))


@functools.cache
def static_text(name: str) -> str:
    """The text of the static file ``name`` (``report.css``, ``sortable.js``...) of the package.

    Examples
    --------
    >>> "wb-table" in static_text("report.css")
    True
    """
    return resources.files("workbench.views").joinpath("static", name).read_text(encoding="utf-8")


def script_json(text: str) -> Markup:
    """JSON text made safe inside a ``<script type="application/json">`` element: ``<``, ``>``
    and ``&`` become ``\\u`` escapes (the same JSON), so no value can close the element.

    Examples
    --------
    >>> str(script_json('{"a": "</script>&"}'))
    '{"a": "\\\\u003c/script\\\\u003e\\\\u0026"}'
    """
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))
