"""Report templates: papermill smoke run, unknown parameters, failing cells, HTML safety."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import html
import json
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import plotly.graph_objects as go
import polars as pl
import pytest

from workbench.errors import ReportError, UsageError
from workbench.report.runner import render_html, run_template, template_parameters, template_path
from workbench.views import tables

REPO = Path(__file__).resolve().parents[3]
FIXTURE_PARAMS = {
    "dataset": str(REPO / "tests/fixtures/convfinqa/dev_small.json"),
    "predictions": str(REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl"),
    "systems": "claude-small",
}
HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'


def test_every_template_has_documented_parameters() -> None:
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        assert len(tagged) == 1, path
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), f"{path} has outputs"
        params = template_parameters(path)
        assert params, path
        assert all(p["help"] for p in params.values()), f"{path}: a parameter has no help text"
        assert not any("def " in c.source for c in nb.cells if c.cell_type == "code")


def test_papermill_smoke_run_writes_notebook_and_offline_html(tmp_path: Path) -> None:
    result = run_template(
        "01-overview", parameters={**FIXTURE_PARAMS, "graded_dir": str(tmp_path / "graded")}, out_dir=tmp_path
    )
    assert result.notebook.exists() and result.html.exists()
    page = result.html.read_text(encoding="utf-8")
    assert page.count('class="plotly-figure"') == 2
    assert "Headline metrics" in page and "Failed turns" in page and "claude-small" in page
    assert not re.search(r"<script[^>]+src=", page), "the report must not fetch scripts"
    assert "workbench.config.resolve" not in page, "code cells must not be in the HTML"
    assert (tmp_path / "graded/turns.parquet").exists() and (tmp_path / "graded/summary.json").exists()
    executed = nbformat.read(result.notebook, as_version=4)
    assert not [o for c in executed.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]


def test_unknown_parameter_is_refused_with_the_known_ones() -> None:
    with pytest.raises(UsageError, match=r"no parameter colour.*dataset, predictions"):
        run_template("01-overview", parameters={"colour": "red"})


def test_unknown_template_lists_templates() -> None:
    with pytest.raises(UsageError, match="01-overview"):
        template_path("99-nothing")


def test_failing_cell_names_cell_and_error_and_keeps_notebook(tmp_path: Path) -> None:
    params = {**FIXTURE_PARAMS, "dataset": str(tmp_path / "missing.json")}
    with pytest.raises(ReportError, match=r"cell \d+ failed with InputError: .*missing.json: file not found") as info:
        run_template("01-overview", parameters=params, out_dir=tmp_path)
    kept = Path(str(info.value).rsplit(" ", 1)[-1])
    assert kept.exists() and kept.parent == tmp_path


def _hostile_turns() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "system": ["s"],
            "record_id": ["r"],
            "turn": [0],
            "operation": ["lookup"],
            "question": [HOSTILE],
            "gold_answer": ["1"],
            "gold_executed": ["1"],
            "predicted_answer": [HOSTILE],
            "predicted_program": [None],
            "answer": [HOSTILE],
            "reason": ["wrong_value"],
            "detail": [HOSTILE],
            "correct": [False],
        }
    )


def test_model_output_is_escaped_in_tables() -> None:
    markup = tables.failed_turns(_hostile_turns()).markup
    assert "<script>" not in markup and "<img" not in markup
    # question, predicted answer, answer graded, detail: each a long cell, its beginning and its whole text
    assert markup.count("&lt;script&gt;window.__pwned=1&lt;/script&gt;") == 8


def test_figure_json_cannot_close_its_script_tag() -> None:
    fig = go.Figure(go.Bar(x=[HOSTILE], y=[1]), layout={"title": "</script><script>window.__pwned=3</script>"})
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("fig")
    cell.outputs = [
        nbformat.v4.new_output("display_data", data={"application/vnd.plotly.v1+json": fig.to_plotly_json()})
    ]
    nb.cells = [cell]
    page = render_html(nb, title="t")
    assert "window.__pwned=3</script>" not in page and HOSTILE not in page
    assert page.count('class="plotly-figure"') == 1 and "Plotly.newPlot" in page


def _page_with(*outputs: dict[str, Any]) -> str:
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.v4.new_output("display_data", data=data) for data in outputs]
    return render_html(nbformat.v4.new_notebook(cells=[cell]), title="t")


def _inline_scripts(page: str) -> list[str]:
    """The scripts the browser runs: ``<script>`` elements without a type (JSON blocks are data)."""
    return re.findall(r"<script>(.*?)</script>", page, flags=re.DOTALL)


def _policy(page: str) -> dict[str, str]:
    """The page's Content-Security-Policy, directive name to its sources."""
    found = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', page)
    assert found, "the page declares no Content-Security-Policy"
    assert "<script" not in page[: found.start()], "the policy must precede every script"
    return dict(d.strip().split(" ", 1) for d in html.unescape(found.group(1)).split(";"))


def test_content_security_policy_allows_exactly_the_pages_own_scripts() -> None:
    fig = go.Figure(go.Bar(x=["a"], y=[1]))
    sortable = tables.html_table(pl.DataFrame({"n": [1]}), sortable=True).markup
    page = _page_with({"application/vnd.plotly.v1+json": fig.to_plotly_json()}, {"text/html": sortable})
    scripts = _inline_scripts(page)
    assert len(scripts) == 4  # plotly config, plotly.js, figure boot, table boot
    policy = _policy(page)
    hashes = [base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() for s in scripts]
    assert policy["script-src"] == " ".join(f"'sha256-{h}'" for h in hashes)  # no 'unsafe-inline', no eval
    assert policy["default-src"] == "'none'" and "connect-src" not in policy  # no fetch of any kind
    assert policy["img-src"] == "data:" and policy["base-uri"] == "'none'"


def test_table_script_comes_only_with_a_sortable_table_and_uses_no_eval_or_handler_attributes() -> None:
    plain = _page_with({"text/html": tables.html_table(pl.DataFrame({"n": [1]})).markup})
    assert "<script" not in plain and _policy(plain)["script-src"] == "'none'"
    page = _page_with({"text/html": tables.failed_turns(_hostile_turns()).markup})
    (script,) = _inline_scripts(page)
    assert "data-wb-sortable" in script and "addEventListener" in script
    for unsafe in (
        "eval(",
        "Function(",
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "setAttribute('on",
    ):
        assert unsafe not in script, unsafe
    assert page.index("<script>") > page.index("</main>"), "the table script runs after the tables exist"
    assert HOSTILE not in page


def test_markdown_outputs_are_escaped_but_template_markdown_keeps_its_markup() -> None:
    page = _page_with({"text/markdown": f"**bold** {HOSTILE}"})
    assert "<strong>bold</strong>" in page and HOSTILE not in page and "&lt;script&gt;" in page
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("| a |\n|---|\n| <code>x</code> |")])
    assert "<td><code>x</code></td>" in render_html(nb, title="t")


def test_hostile_fixtures_are_what_their_script_writes() -> None:
    script = runpy.run_path(str(REPO / "tests/fixtures/hostile/make_hostile.py"))
    assert script["HOSTILE"] == HOSTILE
    assert script["PREDICTIONS_OUT"].read_text(encoding="utf-8") == script["hostile_predictions"]()
    assert script["GOLD_OUT"].read_text(encoding="utf-8") == script["hostile_gold"]()
    assert script["GOLD_OUT"].parent == REPO / "tests/fixtures/hostile"


def test_cli_report_takes_paths_from_the_callers_folder_and_keeps_semicolons_in_names(tmp_path: Path) -> None:
    """System test (a kernel is a process): ``workbench report`` run from another folder with
    relative ``--dataset``/``--predictions``/``--out``, a file and a system named ``a;b``;
    the kernel's TCP warning never shows (it talks over IPC)."""
    here = tmp_path / "elsewhere"
    here.mkdir()
    shutil.copy(FIXTURE_PARAMS["dataset"], here / "gold.json")
    shutil.copy(FIXTURE_PARAMS["predictions"], here / "a;b.jsonl")
    command = [sys.executable, "-m", "workbench.cli", "report", "--quiet", "--dataset", "gold.json"]
    command += ["--predictions", "a;b.jsonl", "--system", "a;b", "--out", "out"]
    done = subprocess.run(command, cwd=here, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "without encryption" not in done.stderr and "IPKernelApp" not in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    (graded,) = (here / "out").glob("*.graded")
    summary = json.loads((graded / "summary.json").read_text(encoding="utf-8"))
    assert list(summary["systems"]) == ["a;b"]
    assert [p["path"] for p in summary["predictions"]] == [str(here / "a;b.jsonl")]
    assert summary["dataset"]["path"] == str(here / "gold.json")
    name = graded.name.removesuffix(".graded")
    assert re.fullmatch(r"a-b-[0-9a-f]{8}", name), name  # readable: the system's name, then a hash of the inputs
    assert done.stdout.splitlines()[0] == f"notebook: {here / 'out' / name}.ipynb"
    assert done.stdout.splitlines()[-1] == f"index: {here / 'out' / 'index.html'}"  # the index page, said last
    assert not (REPO / "out").exists()
    print(f"report from another folder: stderr {done.stderr!r}; {summary['systems']['a;b']['n_turns']} turns graded")


def test_cli_report_on_the_bundled_gold_from_another_folder(tmp_path: Path) -> None:
    """System test: ``workbench report`` from a folder other than the project, without ``--dataset`` on
    outputs of the bundled dev set: the gold is the project's ``data/convfinqa/dev.json``, a path of the
    project root, where the inputs are graded; writing the graded folder hashed it from the caller's
    folder, and the report stopped with "data/convfinqa/dev.json: no such file or directory"."""
    command = [sys.executable, "-m", "workbench", "report", "--quiet", "--predictions", FIXTURE_PARAMS["predictions"]]
    done = subprocess.run([*command, "--out", "out"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (summary,) = (tmp_path / "out").glob("*.graded/summary.json")
    dataset = json.loads(summary.read_text(encoding="utf-8"))["dataset"]
    assert dataset["path"] == "data/convfinqa/dev.json" and len(dataset["sha256"]) == 64, dataset


def test_relative_paths_are_the_callers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inputs from the caller's folder (else the project root, where the bundled data is);
    output folders always in the caller's folder; list items never split at ';'."""
    from workbench.report.runner import _from_caller

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a;b.jsonl").write_text("{}\n", encoding="utf-8")
    given = {"predictions": ["a;b.jsonl"], "systems": ["a;b"], "dataset": "data/convfinqa/dev.json"}
    assert _from_caller({**given, "graded_dir": "reports"}) == {
        "predictions": [str(tmp_path / "a;b.jsonl")],
        "systems": ["a;b"],
        "dataset": str(REPO / "data/convfinqa/dev.json"),
        "graded_dir": str(tmp_path / "reports"),
    }


def test_the_template_opens_the_graded_folder_the_runner_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner grades; the template's kernel reads the run from the folder it names (a
    figure put into that folder's summary.json shows in the page) and grades nothing."""
    from workbench.pipeline import run as run_module
    from workbench.report import runner

    def marked(config: Any, **options: Any) -> Any:
        run = run_module.grade_run(config, **options)
        summary = json.loads(json.dumps(run.summary))
        summary["claude-small"]["policies"]["exact-string"]["n_correct"] = 424242
        return dataclasses.replace(run, recorded_summary=summary)

    monkeypatch.setattr(runner, "grade_run", marked)
    result = run_template("01-overview", parameters=FIXTURE_PARAMS, out_dir=tmp_path)
    (graded,) = tmp_path.glob("*.graded")
    assert "424242" in (graded / "summary.json").read_text(encoding="utf-8")
    assert "(424,242/" in result.html.read_text(encoding="utf-8")  # counts with separators
    executed = nbformat.read(result.notebook, as_version=4)
    (injected,) = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert f"graded_dir = {str(graded)!r}" in injected.source or f'graded_dir = "{graded}"' in injected.source
