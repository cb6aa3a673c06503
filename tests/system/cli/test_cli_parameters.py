"""`workbench report -p NAME=VALUE`: any parameter a template declares, read as its declared type
and checked like the other options; `workbench report --help` lists the templates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from workbench import cli
from workbench.report import runner
from workbench.report.batch import load_batch
from workbench.report.runner import ReportResult
from workbench.report.sections import report_title

REPO = Path(__file__).resolve().parents[3]
TEMPLATES = sorted((REPO / "notebooks").glob("*.ipynb"))


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[dict[str, Any]]:
    """The reports the command would run (template and parameters), without running them."""
    calls: list[dict[str, Any]] = []

    def run_template(template: str, *, parameters: dict[str, Any], **_: Any) -> ReportResult:
        calls.append({"template": template, "parameters": parameters})
        return ReportResult(notebook=tmp_path / "r.ipynb", html=tmp_path / "r.html")

    monkeypatch.setattr(runner, "run_template", run_template)  # workbench report calls runner.run_template
    return calls


def _one_line(capsys: pytest.CaptureFixture[str], argv: list[str], code: int) -> str:
    assert cli.main(argv) == code
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in lines[0] and "Fix:" in lines[0], lines
    return lines[0]


def test_values_take_the_type_the_template_declares(runs: list[dict[str, Any]]) -> None:
    argv = ["report", "--quiet", "--template", "04-compare-systems", "-p", "n_boot=200", "-p", "system_a=tora-70b"]
    assert cli.main([*argv, "--parameters", "seed=3", "-p", "system_b=007"]) == 0
    assert runs[-1]["parameters"] == {"n_boot": 200, "system_a": "tora-70b", "seed": 3, "system_b": "007"}
    assert cli.main(["report", "--quiet", "--template", "02-error-slices", "-p", "max_rows=50"]) == 0
    assert runs[-1] == {"template": "02-error-slices", "parameters": {"max_rows": 50}}
    # -p goes with the input options, each once
    assert cli.main(["report", "--quiet", "--template", "04-compare-systems", "--system", "a", "--system", "b",
                     "--predictions", "x.jsonl", "--predictions", "y.jsonl", "-p", "n_boot=5"]) == 0  # fmt: skip
    assert runs[-1]["parameters"] == {
        "predictions": ["x.jsonl", "y.jsonl"],
        "systems": ["a", "b"],
        "n_boot": 5,
    }


def test_bool_float_and_untyped_values(runs: list[dict[str, Any]], tmp_path: Path) -> None:
    nb = new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    params = 'flag: bool = False  # a switch\nratio: float = 0.5  # a share\nplain = 3  # no type\nword: str = "x"'
    nb.cells = [new_markdown_cell("# A template"), new_code_cell(params, metadata={"tags": ["parameters"]})]
    template = tmp_path / "t.ipynb"
    nbformat.write(nb, template)
    argv = ["report", "--quiet", "--template", str(template)]
    values = ["flag=yes", "ratio=1e-3", "plain=4.5", "word=12"]
    assert cli.main([*argv, *(x for v in values for x in ("-p", v))]) == 0
    assert runs[-1]["parameters"] == {"flag": True, "ratio": 0.001, "plain": 4.5, "word": "12"}
    assert cli.main([*argv, "-p", "flag=False", "-p", "plain=True", "-p", "word=a=b"]) == 0
    assert runs[-1]["parameters"] == {"flag": False, "plain": True, "word": "a=b"}


def test_bad_parameters_get_one_line_and_exit_2(runs: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]) -> None:
    base = ["report", "--template", "04-compare-systems"]
    line = _one_line(capsys, [*base, "-p", "max_rows=50"], 2)
    assert "template 04-compare-systems has no parameter 'max_rows'" in line
    assert "dataset, predictions, systems, column_map, benchmark, system_a, system_b, graded_dir, n_boot, seed" in line
    assert "a whole number (int), got 'many'" in _one_line(capsys, [*base, "-p", "n_boot=many"], 2)
    assert "-p n_boot=1000" in _one_line(capsys, [*base, "-p", "n_boot=2.5"], 2)
    assert "is not NAME=VALUE" in _one_line(capsys, [*base, "-p", "n_boot"], 2)
    assert "given twice" in _one_line(capsys, [*base, "-p", "seed=1", "-p", "seed=2"], 2)
    assert "with --predictions and with -p" in _one_line(
        capsys, [*base, "--predictions", "a.jsonl", "-p", "predictions=b.jsonl"], 2
    )
    assert "--config was given with -p" in _one_line(
        capsys, ["report", "--config", str(REPO / "notebooks/bundled.yaml"), "-p", "n_boot=5"], 2
    )
    assert not runs


def test_batch_parameters_keep_working(runs: list[dict[str, Any]], tmp_path: Path) -> None:
    config = tmp_path / "batch.yaml"
    config.write_text(
        "reports:\n  - template: 04-compare-systems\n    parameters: {n_boot: 50, system_a: x, system_b: y}\n",
        encoding="utf-8",
    )
    assert [job.parameters for job in load_batch(config)] == [{"n_boot": 50, "system_a": "x", "system_b": "y"}]
    assert cli.main(["report", "--quiet", "--config", str(config)]) == 0
    assert runs == [{"template": "04-compare-systems", "parameters": {"n_boot": 50, "system_a": "x", "system_b": "y"}}]


def test_help_lists_every_template_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["report", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    listing = text[text.index("templates (--template NAME):") :].splitlines()[1:]
    assert [line.split()[0] for line in listing] == [p.stem for p in TEMPLATES]
    for line in listing:
        name, description = line.split(maxsplit=1)  # a description after each name, never the fallback
        assert description and "a notebook template" not in description, line
    assert "-p NAME=VALUE" in text
    # 04's page title comes from report.sections (it names the benchmark): help gives its subtitle
    compare = next(line for line in listing if line.split()[0] == "04-compare-systems")
    subtitle = report_title("", "04-compare-systems").partition(": ")[2]
    assert compare.split(maxsplit=1)[1].lower() == subtitle == "systems compared"
    assert "interactive" in next(line for line in listing if line.split()[0] == "03-triage")


def test_the_readme_example_is_accepted_as_written(runs: list[dict[str, Any]], tmp_path: Path) -> None:
    """The README's `-p` example (three GSM8K files, the pair and n_boot set) passes every check and
    reaches the template with its values typed; its files exist."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index(".venv/bin/workbench report --template 04-compare-systems")
    command = readme[start : readme.index("\n```", start)].replace("\\\n", " ")
    argv = command.split()[1:]
    assert argv[0] == "report" and argv.count("-p") == 3
    argv[argv.index("--out") + 1] = str(tmp_path / "out")  # not the project's reports/
    assert cli.main(argv) == 0
    ((run,),) = [runs]
    parameters = run["parameters"]
    assert run["template"] == "04-compare-systems"
    assert (parameters["system_a"], parameters["system_b"], parameters["n_boot"]) == (
        "pot-fewshot",
        "pot-zeroshot",
        2000,
    )
    files = [argv[i + 1] for i, arg in enumerate(argv) if arg in ("--predictions", "--dataset")]
    assert len(files) == 4 and all((REPO / f).is_file() for f in files)


def test_the_parser_reads_the_templates_only_for_report_help(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building the parser reads no file (a user who may not read the checkout, as in the read-only
    store test run as 'nobody', still gets one-line errors); ``report --help`` lists the templates."""

    def unreadable() -> str:
        raise PermissionError("data/SOURCES.md")

    monkeypatch.setattr(cli, "_templates_epilog", unreadable)
    parser = cli.build_parser()
    assert parser.parse_args(["annotations", "list", "--store", "s.sqlite"]).command == "annotations"
    monkeypatch.undo()
    helped = cli.build_parser()._subparsers._group_actions[0].choices["report"].format_help()  # type: ignore[union-attr]
    assert "templates (--template NAME):" in helped and "04-compare-systems" in helped
