"""`workbench report --template 04-compare-systems` end to end: the two bundled ConvFinQA runs keep
their figures, one system is refused in one line (exit 1), and -p chooses the pair shown per slice.

Every pair of three files and of OpenAI's four systems in one file is checked in a browser by
``tests/system/browser/test_compare_browser.py``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
import pytest

from workbench import cli
from workbench.views.html import PAGE_MIME

REPO = Path(__file__).resolve().parents[3]
GSM8K = REPO / "tests/fixtures/predictions/gsm8k"
TEMPLATE = ["report", "--quiet", "--template", "04-compare-systems"]


def _outputs(folder: Path) -> list[str]:
    """The HTML outputs of the executed notebook in ``folder`` as the page shows them (an output's
    PAGE_MIME form, else its text/html), in cell order."""
    (notebook,) = folder.glob("*.ipynb")
    executed = nbformat.read(notebook, as_version=4)
    return [
        output["data"].get(PAGE_MIME) or output["data"]["text/html"]
        for cell in executed.cells
        for output in cell.get("outputs", [])
        if "text/html" in output.get("data", {})
    ]


def _page(folder: Path) -> Path:
    """The report page in ``folder`` (beside the index of the folder's reports)."""
    (page,) = [p for p in folder.glob("*.html") if p.name != "index.html"]
    return page


def _figures(folder: Path) -> list[dict[str, Any]]:
    """The plotly figures of the executed notebook in ``folder``, in cell order."""
    (notebook,) = folder.glob("*.ipynb")
    executed = nbformat.read(notebook, as_version=4)
    return [
        output["data"]["application/vnd.plotly.v1+json"]
        for cell in executed.cells
        for output in cell.get("outputs", [])
        if "application/vnd.plotly.v1+json" in output.get("data", {})
    ]


def _table(outputs: list[str], css: str) -> str:
    (markup,) = [m for m in outputs if f'class="wb-table {css}"' in m]
    return markup


def _rows(markup: str) -> list[list[str]]:
    """The text of each body cell, row by row (the cells hold text without markup)."""
    body = markup[markup.index("<tbody>") :]
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in body.split("<tr")[1:]]


def test_the_bundled_convfinqa_runs_keep_their_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The template's defaults: the two claude-sonnet-4-6 dev runs, named after their files."""
    assert cli.main([*TEMPLATE, "-p", "n_boot=200", "--out", str(tmp_path)]) == 0
    outputs = _outputs(tmp_path)
    (pair,) = _rows(_table(outputs, "wb-pairs"))
    assert pair[0].endswith("06-35-00Z") and pair[1].endswith("12-48-44Z")
    assert pair[2].startswith("+0.9 points [")  # +0.87 points: 13 of 1,486 turns
    assert pair[3:5] == ["0.011", "0.011"]  # one pair: Holm leaves p as it is
    assert pair[5:] == ["18 / 5", "1,486", "4"]  # the turns only one got right, the shared turns, the 4 turns of
    # the conversation the second run lacks
    systems = _rows(_table(outputs, "wb-headline"))
    assert [row[0] for row in systems] == [pair[0], pair[1]]
    assert systems[0][3].startswith("83.1% [")
    # the page names its benchmark and says its words plainly (defined in the glossary)
    html = _page(tmp_path).read_text(encoding="utf-8")
    assert "<h1>ConvFinQA error report: systems compared</h1>" in html
    assert "seed report" not in html and "Holm adjustment</dt>" in html and "McNemar test (p)</dt>" in html
    # accuracy by turn index: a line per system, in the order given
    by_turn = [f for f in _figures(tmp_path) if "turn index" in str(f["layout"]["title"]["text"]).lower()]
    names = [trace["name"] for trace in by_turn[0]["data"] if trace.get("name") in (pair[0], pair[1])]
    assert list(dict.fromkeys(names)) == [pair[0], pair[1]]


def test_one_system_is_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*TEMPLATE, "--dataset", "none", "--predictions", str(GSM8K / "tora-70b_first_20.jsonl")]
    assert cli.main([*argv, "--out", str(tmp_path)]) == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    assert lines[0].startswith("workbench: report failed: 04-compare-systems.ipynb: cell ")
    assert "comparing systems needs two or more, but only 'tora-70b_first_20' was graded. Fix:" in lines[0]


def test_the_pair_per_slice_is_chosen_with_p(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        *TEMPLATE,
        "--dataset",
        "none",
        "--predictions",
        str(GSM8K / "openai_example_model_solutions_first_20.jsonl"),
    ]
    pair = ["-p", "system_a=175b_verification", "-p", "system_b=6b_finetuning", "-p", "n_boot=50"]
    assert cli.main([*argv, *pair, "--out", str(tmp_path)]) == 0
    outputs = _outputs(tmp_path)
    assert "Paired comparison: 175b_verification minus 6b_finetuning" in _table(outputs, "wb-paired")
    assert len(_rows(_table(outputs, "wb-pairs"))) == 6  # every pair still
    # a GSM8K page: named so, counted in problems, no conversation-level figure, a sentence for each chart it lacks
    html = _page(tmp_path).read_text(encoding="utf-8")
    assert "<h1>GSM8K error report: systems compared</h1>" in html and "ConvFinQA error report" not in html
    headline = _table(outputs, "wb-headline")
    assert ">Accuracy</th>" in headline and "Turn execution accuracy" not in headline and "Conversation" not in headline
    assert "problems resampled" in headline and "clustered by conversation" not in headline
    assert ">paired problems</th>" in _table(outputs, "wb-pairs")
    assert "GSM8K problems are single questions, so there is no turn index to follow." in html
    assert "GSM8K gold answers come without programs, so there is no operation to group problems by." in html
    titles = [str(f["layout"]["title"]["text"]).lower() for f in _figures(tmp_path)]
    assert not [t for t in titles if "turn index" in t or "operation" in t], titles
