"""The package's tables as JupyterLab shows them without the report page's style sheet and script:
a real JupyterLab 4 server (127.0.0.1, a token, its own settings folder: ``lab_harness``) and Debian's Chromium, on a
notebook holding the outputs ``tables`` writes (no kernel is needed to show stored outputs), opened
untrusted (HTML sanitized, as a notebook reopened later) and trusted.

Asserted:

- a ``$`` in the data is a dollar sign: the raw output "$821,000 ... $824,000 ... 2005 and 2006,
  respectively" keeps its signs and spaces, while the same markup without the package's wrapper is
  typeset by JupyterLab's MathJax (the control: MathJax runs on HTML outputs, and the wrapper's
  ``mathjax_ignore`` class is what stops it);
- text cells are left-aligned and numbers right-aligned (JupyterLab right-aligns every cell);
- no heading, caption or cell is cut ("Faile", "Unmatche"): each one's content fits its box;
- a table longer than a page shows its first 15 rows and one line saying where the others are.
"""

from __future__ import annotations

import nbformat
import polars as pl
import pytest
from lab_harness import RENDER_TIMEOUT_MS, Lab

from workbench.views import tables

RAW = (
    "The liability was $821,000 at the end of 2005 and $824,000 at the end of 2006, so the change "
    "between 2005 and 2006, respectively, is 3,000."
)


def _outputs() -> list[tuple[str, dict[str, str]]]:
    """The cells of the notebook: (name, output bundle)."""
    dollars = tables.html_table(
        pl.DataFrame({"record_id": ["Single_X/2006/page_1.pdf"], "raw_output": [RAW], "n_turns": [3]}),
        caption="Failed turns (1)",
    )
    headline = tables.headline(
        {
            "claude-sonnet-4-6": {
                "turn_execution_accuracy": 0.8309,
                "conversation_execution_accuracy": 0.8171,
                "all_turns_correct_rate": 0.7316,
                "turn_program_accuracy": 0.548,
                "conversation_program_accuracy": 0.135,
                "n_turns": 1490,
                "n_conversations": 421,
                "n_missing": 0,
                "n_unmatched": 0,
            }
        }
    )
    many = tables.html_table(
        pl.DataFrame({"record_id": [f"record {i}" for i in range(40)], "reason": ["wrong value"] * 40, "n": range(40)}),
        caption="Failed turns (40)",
        sortable=True,
    )
    return [
        ("dollars", dollars._repr_mimebundle_()),
        ("control", {"text/html": str(dollars.notebook)}),  # the same markup without the wrapper
        ("headline", headline._repr_mimebundle_()),
        ("many", many._repr_mimebundle_()),
    ]


def _notebook(lab: Lab, name: str) -> None:
    cells = []
    for label, bundle in _outputs():
        cell = nbformat.v4.new_code_cell(f"# {label}")
        cell.outputs = [nbformat.v4.new_output("display_data", data=bundle)]
        cells.append(cell)
    nbformat.write(nbformat.v4.new_notebook(cells=cells), str(lab.root / name))


#: What each output shows: its MathJax elements, its text, the alignment of its cells, what is cut.
_LOOK = """() => Array.from(document.querySelectorAll('.jp-Cell')).map(cell => {
  const output = cell.querySelector('.jp-OutputArea-output');
  const cut = [];
  for (const el of output.querySelectorAll('th, td, caption, p')) {
    if (el.scrollWidth > el.clientWidth + 1) { cut.push(el.textContent.trim().slice(0, 40)); }
  }
  const cells = Array.from(output.querySelectorAll('tbody td'));
  return {
    maths: output.querySelectorAll('mjx-container').length,
    text: output.innerText,
    rows: output.querySelectorAll('tbody tr').length,
    align: cells.map(td => [td.textContent.trim(), getComputedStyle(td).textAlign]),
    heads: Array.from(output.querySelectorAll('th')).map(th => [th.textContent.trim(), getComputedStyle(th).textAlign]),
    cut,
  };
})"""


@pytest.mark.parametrize("notebook", ["untrusted.ipynb", "trusted.ipynb"])
def test_notebook_tables_are_readable_and_keep_dollar_signs(lab: Lab, notebook: str) -> None:
    _notebook(lab, notebook)
    if notebook == "trusted.ipynb":
        lab.trust(notebook)
    with lab.session(notebook, f"tables-{notebook.split('.')[0]}") as page:
        page.locator(".jp-OutputArea-output table").nth(3).wait_for(timeout=RENDER_TIMEOUT_MS)
        control = page.locator(".jp-Cell").nth(1).locator(".jp-OutputArea-output")
        control.locator("mjx-container").first.wait_for(timeout=RENDER_TIMEOUT_MS)  # MathJax has run
        looks = page.evaluate(_LOOK)
        assert len(looks) == len(_outputs())
        dollars, control, headline, many = looks
        assert control["maths"] >= 1, "the control: JupyterLab typesets text between two $"
        assert dollars["maths"] == 0 and "$821,000 at the end of 2005 and $824,000" in dollars["text"]
        page.locator(".jp-Cell").first.locator("td details").evaluate("d => { d.open = true; }")
        assert RAW in page.locator(".jp-Cell").first.locator(".jp-OutputArea-output").inner_text()
        assert ["Single_X/2006/page_1.pdf", "left"] in dollars["align"] and ["3", "right"] in dollars["align"]
        assert all(align == "left" for _, align in headline["heads"] + many["heads"])
        assert ["1,490", "right"] in headline["align"] and ["claude-sonnet-4-6", "left"] in headline["align"]
        for (name, _), look in zip(_outputs(), looks, strict=True):
            assert look["cut"] == [], f"{name}: cut {look['cut']}"
        assert "Failed turns (40)" in many["text"] and "Unmatched predictions" in headline["text"]
        assert many["rows"] == tables.GRID_ROWS and "The first 15 of 40 rows." in many["text"]
