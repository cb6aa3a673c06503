"""``workbench templates list|copy`` and a template of your own on the command line (issue 32): the
listing, editable copies, ``report --help`` naming both kinds of template, and a notebook whose
parameters cell the runner cannot read refused in one line before a kernel starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main

REPO = Path(__file__).resolve().parents[3]
SHIPPED = sorted(p.stem for p in (REPO / "notebooks").glob("*.ipynb"))


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_templates_list_names_each_template_and_the_batch_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "templates", "list")
    lines = out.splitlines()
    assert code == 0 and err == ""
    assert [line.split()[0] for line in lines[:-1]] == [*SHIPPED, "bundled.yaml"]
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines[:-1])  # a description after each name
    assert "(interactive: workbench triage, or a copy in JupyterLab)" in lines[SHIPPED.index("03-triage")]
    assert lines[-1] == f"in {REPO / 'notebooks'}; 'workbench templates copy DIR' writes editable copies"


def test_templates_copy_then_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(capsys, "templates", "copy", "mine")
    assert code == 0
    assert out.splitlines() == [
        *(f"copied: mine/{name}.ipynb" for name in SHIPPED),
        "copied: mine/bundled.yaml",
        "run a copy as it is: workbench report --template mine/01-overview.ipynb",
    ]
    code, out, _ = _run(capsys, "templates", "copy", "mine")
    assert code == 0 and out.splitlines()[0] == "already there: mine/01-overview.ipynb"
    (tmp_path / "mine" / "bundled.yaml").write_text("reports: []\n", encoding="utf-8")
    code, out, err = _run(capsys, "templates", "copy", "mine")
    assert (code, out) == (2, "")
    assert err == (
        "workbench: error: mine/bundled.yaml exists and is not the template; nothing was copied. "
        "Fix: copy into another folder, or move those files away\n"
    )


def test_report_help_says_how_to_name_your_own_template(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "the path of a notebook of your own (my/01-overview.ipynb)" in text
    assert "your own templates (--template PATH): any notebook with one cell tagged 'parameters'" in text
    assert text.index("your own templates (--template PATH)") < text.index("templates (--template NAME):")


def test_an_unreadable_parameters_cell_is_refused_before_a_kernel_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _run(capsys, "templates", "copy", "mine")
    copy = tmp_path / "mine" / "01-overview.ipynb"
    notebook = json.loads(copy.read_text(encoding="utf-8"))
    cell = next(c for c in notebook["cells"] if "parameters" in c["metadata"].get("tags", []))
    cell["source"] = ["import os\n", 'dataset: str = os.environ["GOLD"]  # where the gold is\n']
    copy.write_text(json.dumps(notebook), encoding="utf-8")
    code, out, err = _run(capsys, "report", "--template", "mine/01-overview.ipynb", "--out", "out")
    assert (code, out) == (2, "")
    assert err.startswith(
        "workbench: error: mine/01-overview.ipynb: parameters cell, line 1: 'import os': it is not one assignment "
        "'name: type = value'. Fix: write one parameter a line"
    )
    assert err.count("\n") == 1 and not (tmp_path / "out").exists()
