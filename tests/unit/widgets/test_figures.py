"""A linked plot's front end: plotly's own widget module with its default export wrapped, so that the
plot is drawn at its output's width once the output is in the page, and again when that width
changes (tests/system/jupyterlab/test_overview_lab.py watches it drawn in JupyterLab)."""

from __future__ import annotations

import logging
import re
from importlib import resources

import plotly.graph_objects as go
from plotly.basewidget import BaseFigureWidget

from workbench.widgets import figures
from workbench.widgets.figures import LinkedFigure, front_end


def _ignore(*_args: object) -> None:
    return None


def test_the_front_end_is_plotlys_module_with_its_default_export_wrapped() -> None:
    plotly_module = str(BaseFigureWidget._esm)
    *_, last = re.finditer(r"export\s*\{([^{}]*)\}\s*;?", plotly_module)
    specifiers = [s.strip() for s in last.group(1).split(",")]
    default = next(s.split(" as ")[0] for s in specifiers if s.endswith(" as default"))
    others = [s for s in specifiers if not s.endswith(" as default")]

    module = front_end()
    assert module.startswith(plotly_module[: last.start()])  # plotly's code as it is
    tail = module[last.start() :]
    assert (resources.files("workbench.widgets") / "static" / "figure.js").read_text(encoding="utf-8") in tail
    assert tail.rstrip().endswith(f"export {{{', '.join(others)}}};\nexport default workbenchFigure({default});")


def test_a_linked_figure_uses_it_and_follows_its_outputs_width() -> None:
    figure = LinkedFigure(go.Figure(go.Scatter(x=["a", "b"], y=[1, 2])), on_click=_ignore)
    assert figure._esm == front_end()
    assert figure._config.get("responsive") is True


def test_a_plotly_module_of_another_shape_is_used_as_it_is(monkeypatch, caplog) -> None:
    other = "export function render() {}\nconst later = 1;\n"
    monkeypatch.setattr(BaseFigureWidget, "_esm", other)
    front_end.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger=figures.__name__):
            assert front_end() == other
        assert "linked plots are drawn as plotly draws them" in caplog.text
    finally:
        front_end.cache_clear()
