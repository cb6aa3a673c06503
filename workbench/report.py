"""Run notebook templates with papermill and render them to offline HTML without code.

The HTML renderer is our own rather than nbconvert's templates: those load require.js,
MathJax and mermaid from CDNs and drop plotly's output type. Here plotly.js is embedded
once in the page, figures are drawn from their JSON (kept in ``application/json`` script
tags, so no output can close a script), text outputs are escaped, and code cells are left
out.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.config import project_root
from workbench.errors import ReportError, UsageError
from workbench.io.outputs import write_atomic

__all__ = ["ReportResult", "template_path", "template_parameters", "run_template", "render_html"]

DEFAULT_TEMPLATE = "01-overview"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#fafafa;color:#222}
main{max-width:1200px;margin:0 auto;padding:24px 32px;background:#fff}
h1,h2,h3{font-weight:600} h1{border-bottom:2px solid #eee;padding-bottom:8px}
.wb-scroll{max-height:560px;overflow:auto;border:1px solid #e5e5e5;margin:8px 0 16px}
table.wb-table{border-collapse:collapse;font-size:13px;width:100%}
table.wb-table th{position:sticky;top:0;background:#f3f4f6;text-align:left;padding:6px 8px;border-bottom:1px solid #ddd}
table.wb-table td{padding:4px 8px;border-bottom:1px solid #f0f0f0;vertical-align:top;max-width:420px;overflow-wrap:anywhere}
table.wb-table td.num{text-align:right;font-variant-numeric:tabular-nums}
table.wb-table td.null{color:#aaa}
caption{caption-side:top;text-align:left;font-weight:600;padding:6px 0}
.wb-note{color:#666;font-size:12px} .wb-warning{color:#8a4b00}
details.wb-drill{border:1px solid #e5e5e5;border-radius:4px;margin:4px 0;padding:2px 8px}
details.wb-drill summary{cursor:pointer;padding:4px 0}
pre.wb-text{background:#f6f8fa;padding:8px;overflow:auto;font-size:12px}
pre.wb-error{background:#fff0f0;color:#900;padding:8px;overflow:auto}
.plotly-figure{width:100%;min-height:380px}
"""


@dataclass(frozen=True)
class ReportResult:
    """Where a report run wrote its files."""

    notebook: Path
    html: Path


def template_path(template: str) -> Path:
    """Find a template by name (``01-overview``) or path.

    Raises
    ------
    UsageError
        When there is no such template; the message lists the templates there are.
    """
    candidate = Path(template)
    if candidate.suffix == ".ipynb" and candidate.exists():
        return candidate
    folder = project_root() / "notebooks"
    path = folder / f"{template.removesuffix('.ipynb')}.ipynb"
    if not path.exists():
        known = sorted(p.stem for p in folder.glob("*.ipynb"))
        raise UsageError(f"no template '{template}'. Fix: use one of {', '.join(known) or '(none found)'}")
    return path


def template_parameters(path: Path) -> dict[str, dict[str, Any]]:
    """The parameters a template declares, as papermill reads them."""
    import papermill

    return dict(papermill.inspect_notebook(str(path)))


def _slug(parameters: dict[str, Any]) -> str:
    given = {k: v for k, v in sorted(parameters.items()) if v not in ("", None)}
    if not given:
        return "bundled"
    return "run-" + hashlib.sha256(json.dumps(given, sort_keys=True, default=str).encode()).hexdigest()[:10]


def run_template(
    template: str = DEFAULT_TEMPLATE,
    *,
    parameters: dict[str, Any] | None = None,
    out_dir: str | Path | None = None,
) -> ReportResult:
    """Execute a template with papermill and write the executed notebook and its HTML.

    Parameters
    ----------
    template
        A template name under ``notebooks/`` or a path to a notebook.
    parameters
        Values for the template's ``parameters`` cell; unknown names are refused.
    out_dir
        Where to write; default ``reports/<template>/``.

    Raises
    ------
    UsageError
        For an unknown template or parameter (the message lists the known ones).
    ReportError
        When a cell fails: the message names the cell and the error, and the partly
        executed notebook is kept.
    """
    import papermill

    path = template_path(template)
    params = dict(parameters or {})
    known = template_parameters(path)
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise UsageError(
            f"template {path.stem} has no parameter {', '.join(unknown)}. Fix: use one of {', '.join(known)}"
        )
    out = Path(out_dir) if out_dir else project_root() / "reports" / path.stem
    out.mkdir(parents=True, exist_ok=True)
    slug = _slug(params)
    notebook_out = out / f"{slug}.ipynb"
    html_out = out / f"{slug}.html"
    try:
        papermill.execute_notebook(
            str(path),
            str(notebook_out),
            parameters=params,
            kernel_name="python3",
            progress_bar=False,
            cwd=str(project_root()),
        )
    except papermill.PapermillExecutionError as exc:
        raise ReportError(
            f"{path.name}: cell {exc.exec_count} failed with {exc.ename}: {_ANSI.sub('', exc.evalue)}. "
            f"The partly executed notebook is {notebook_out}"
        ) from None
    import nbformat

    executed = nbformat.read(str(notebook_out), as_version=4)
    page = render_html(executed, title=f"{path.stem} report")
    write_atomic(html_out, lambda p: p.write_text(page, encoding="utf-8"))
    return ReportResult(notebook=notebook_out, html=html_out)


# --------------------------------------------------------------------------- HTML
def _json_script(value: Any, element_id: str) -> str:
    text = json.dumps(value, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def _markdown(source: str) -> str:
    import mistune

    return str(mistune.html(source))


def _output_html(output: Any, counter: list[int]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        if output.get("name") == "stderr":
            return ""
        return f'<pre class="wb-text">{html.escape(_ANSI.sub("", output.get("text", "")))}</pre>'
    if kind == "error":
        text = f"{output.get('ename', '')}: {output.get('evalue', '')}"
        return f'<pre class="wb-error">{html.escape(_ANSI.sub("", text))}</pre>'
    data = output.get("data", {})
    if "application/vnd.plotly.v1+json" in data:
        counter[0] += 1
        fig_id = f"wb-fig-{counter[0]}"
        spec = data["application/vnd.plotly.v1+json"]
        return f'<div class="plotly-figure" id="{fig_id}"></div>' + _json_script(
            {"data": spec.get("data", []), "layout": spec.get("layout", {})}, f"{fig_id}-spec"
        )
    if "text/html" in data:
        return f'<div class="wb-output">{data["text/html"]}</div>'
    if "text/markdown" in data:
        return _markdown(data["text/markdown"])
    if "text/plain" in data:
        return f'<pre class="wb-text">{html.escape(data["text/plain"])}</pre>'
    return ""


_PLOT_BOOT = """
document.querySelectorAll('.plotly-figure').forEach(function (div) {
  var spec = JSON.parse(document.getElementById(div.id + '-spec').textContent);
  Plotly.newPlot(div, spec.data, spec.layout, {responsive: true, displaylogo: false});
});
"""


def render_html(notebook: Any, *, title: str) -> str:
    """Render an executed notebook as one self-contained HTML page without code cells."""
    counter = [0]
    parts: list[str] = []
    for cell in notebook.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if "parameters" in tags or "injected-parameters" in tags:
            continue
        if cell.cell_type == "markdown":
            parts.append(f'<section class="wb-md">{_markdown(cell.source)}</section>')
        elif cell.cell_type == "code":
            parts.extend(_output_html(o, counter) for o in cell.get("outputs", []))
    head_js = ""
    tail_js = ""
    if counter[0]:
        from plotly.offline import get_plotlyjs

        head_js = (
            f"<script>window.PlotlyConfig = {{MathJaxConfig: 'local'}};</script>\n<script>{get_plotlyjs()}</script>"
        )
        tail_js = f"<script>{_PLOT_BOOT}</script>"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{html.escape(title)}</title>'
        f"<style>{_CSS}</style>{head_js}</head><body><main>{''.join(parts)}</main>{tail_js}</body></html>\n"
    )
