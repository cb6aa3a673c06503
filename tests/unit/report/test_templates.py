"""The templates (issue 32): found by name or by path, listed, copied for editing, a parameters cell
the runner cannot read refused in one line; the project folder and the bundled data's fallback."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from workbench.config import PROJECT_VARIABLE, data_root, locate, project_root
from workbench.errors import InputError, UsageError
from workbench.report import templates
from workbench.report.templates import (
    check_parameters_cell,
    copy_templates,
    list_templates,
    template_parameters,
    template_path,
    voila_command,
)

REPO = Path(__file__).resolve().parents[3]
NOTEBOOKS = REPO / "notebooks"
SHIPPED = sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))


def _notebook(path: Path, *cells: tuple[str, list[str]]) -> Path:
    """A notebook of code cells, each ``(source, tags)``."""
    notebook = {
        "cells": [
            {
                "id": f"cell-{i}",
                "cell_type": "code",
                "metadata": {"tags": tags},
                "source": source,
                "outputs": [],
                "execution_count": None,
            }
            for i, (source, tags) in enumerate(cells)
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


def test_the_shipped_templates_are_the_notebooks_folder() -> None:
    assert (
        [t.name for t in list_templates()]
        == SHIPPED
        == ["01-overview", "02-error-slices", "03-triage", "04-compare-systems", "05-history"]
    )
    assert all(t.path == NOTEBOOKS / f"{t.name}.ipynb" and t.description for t in list_templates())
    assert [t.name for t in list_templates() if t.interactive] == ["03-triage"]


def test_a_template_is_found_by_name_from_any_folder_and_by_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert template_path("01-overview") == template_path("01-overview.ipynb") == NOTEBOOKS / "01-overview.ipynb"
    own = _notebook(tmp_path / "mine.ipynb", ("n: int = 1  # a number", ["parameters"]))
    assert template_path("mine.ipynb") == Path("mine.ipynb")
    assert template_path(str(own)) == own
    with pytest.raises(UsageError) as refused:
        template_path("missing.ipynb")
    assert str(refused.value) == (
        "no template 'missing.ipynb'. Fix: use one of 01-overview, 02-error-slices, 03-triage, 04-compare-systems, "
        "05-history, or the path of a notebook of your own (my/01-overview.ipynb)"
    )


def test_every_shipped_template_has_a_parameters_cell_the_runner_reads() -> None:
    for name in SHIPPED:
        check_parameters_cell(NOTEBOOKS / f"{name}.ipynb")
        assert template_parameters(NOTEBOOKS / f"{name}.ipynb")


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        ([("x = 1", [])], "mine.ipynb: no cell is tagged 'parameters'. Fix: tag the one cell"),
        ([("x = 1", ["parameters"]), ("y = 2", ["parameters"])], "mine.ipynb: 2 cells are tagged 'parameters'."),
        (
            [("# inputs\n\nfrom pathlib import Path\n", ["parameters"])],
            "mine.ipynb: parameters cell, line 3: 'from pathlib import Path': it is not one assignment "
            "'name: type = value'. Fix: write one parameter a line, 'name: type = value  # help', with a literal "
            "value and a type of str, int, float, bool, as the shipped templates do (derive other values in a "
            "later cell)",
        ),
        (
            [('root: str = str(Path("x"))', ["parameters"])],
            "line 1: 'root: str = str(Path(\"x\"))': its value is not a literal",
        ),
        ([("rows: list = [1, 2]", ["parameters"])], "it declares the type list, which the runner does not read"),
        (
            [('n: int = 1\noptions = {\n  "a": 1}\n', ["parameters"])],
            "line 2: 'options = {': it is not a whole assignment",
        ),
        ([("a = 1; b = 2", ["parameters"])], "it is not one assignment"),
    ],
)
def test_a_parameters_cell_the_runner_cannot_read_is_refused_in_one_line(
    tmp_path: Path, cells: list[tuple[str, list[str]]], message: str
) -> None:
    path = _notebook(tmp_path / "mine.ipynb", *cells)
    with pytest.raises(InputError) as refused:
        template_parameters(path)
    text = str(refused.value)
    assert message in text and "\n" not in text and text.startswith(str(path))


def test_a_file_that_is_not_a_notebook_is_refused_in_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match=r"broken\.ipynb: not a notebook \(.*\)\. Fix: give a notebook"):
        check_parameters_cell(broken)
    listed = tmp_path / "list.ipynb"
    listed.write_text("[]", encoding="utf-8")
    with pytest.raises(InputError, match=r"not a notebook \(no list of cells\)"):
        check_parameters_cell(listed)


def test_comments_blank_lines_and_untyped_literals_are_read(tmp_path: Path) -> None:
    path = _notebook(
        tmp_path / "mine.ipynb",
        (
            '# my inputs\n\ndataset: str = ""  # gold\nn_boot = 200\nflag: bool = True\nrate: float = 0.5\n',
            ["parameters"],
        ),
    )
    assert list(template_parameters(path)) == ["dataset", "n_boot", "flag", "rate"]


def test_copies_are_the_templates_and_the_batch_file_and_never_replace_another_file(tmp_path: Path) -> None:
    target = tmp_path / "project" / "templates"
    copies = copy_templates(target)
    names = [f"{name}.ipynb" for name in SHIPPED] + ["bundled.yaml"]
    assert [(path.name, new) for path, new in copies] == [(name, True) for name in names]
    assert all((target / n).read_bytes() == (NOTEBOOKS / n).read_bytes() for n in names)
    assert [new for _, new in copy_templates(target)] == [False] * len(names)  # the same bytes: left as they are
    (target / "02-error-slices.ipynb").write_text("mine", encoding="utf-8")
    (target / "01-overview.ipynb").unlink()
    with pytest.raises(
        UsageError, match=re.escape("02-error-slices.ipynb exists and is not the template; nothing was copied")
    ):
        copy_templates(target)
    assert not (target / "01-overview.ipynb").exists() and (target / "02-error-slices.ipynb").read_text() == "mine"
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(UsageError, match="is a file, not a folder"):
        copy_templates(tmp_path / "file")


def test_a_copy_reads_its_defaults_as_the_shipped_template(tmp_path: Path) -> None:
    (copy, _), *_ = copy_templates(tmp_path)
    assert template_parameters(copy) == template_parameters(NOTEBOOKS / copy.name)


def test_voila_serves_the_triage_on_this_machine_with_the_project_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    argv, env = voila_command()
    assert argv[3] == str(NOTEBOOKS / "03-triage.ipynb")
    settings = Path(argv[4].removeprefix("--Voila.config_file_paths=")) / "voila.json"
    voila = json.loads(settings.read_text(encoding="utf-8"))["Voila"]
    assert (
        voila["ip"] == "127.0.0.1"
        and "default-src 'self'" in voila["tornado_settings"]["headers"]["Content-Security-Policy"]
    )
    assert (REPO / "voila.json").resolve() == settings.resolve()  # the repository's voila.json is this file
    assert env == {PROJECT_VARIABLE: str(tmp_path)}
    copy = next(path for path, _ in copy_templates(tmp_path / "mine") if path.name == "03-triage.ipynb")
    argv, _ = voila_command(copy)
    assert argv[3] == str(copy.absolute())


def test_the_project_folder_is_named_by_the_environment_else_the_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(PROJECT_VARIABLE, raising=False)
    assert project_root() == REPO
    monkeypatch.setenv(PROJECT_VARIABLE, str(tmp_path))
    assert project_root() == tmp_path


def test_bundled_paths_fall_back_to_the_bundled_data_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(PROJECT_VARIABLE, str(tmp_path))  # a project without the data
    assert data_root() == REPO / "data"
    assert locate("data/convfinqa/dev.json") == REPO / "data" / "convfinqa" / "dev.json"
    assert locate("convfinqa/dev.json") == Path("convfinqa/dev.json")  # only data/... paths fall back
    (tmp_path / "data" / "convfinqa").mkdir(parents=True)
    (tmp_path / "data" / "convfinqa" / "dev.json").write_text("{}", encoding="utf-8")
    assert locate("data/convfinqa/dev.json") == Path("data/convfinqa/dev.json")  # the analyst's own comes first
    assert templates.template_folder() == NOTEBOOKS


def test_declared_parameters_follow_the_file_and_a_missing_one_is_one_line(tmp_path: Path) -> None:
    """Read once per file state (a batch plans a template several times), read again once edited;
    a file that is gone is the runner's one-line refusal, not a bare OSError."""
    notebook = tmp_path / "mine.ipynb"
    source = templates.template_path("01-overview").read_text(encoding="utf-8")
    notebook.write_text(source, encoding="utf-8")
    first = templates.template_parameters(notebook)
    first["max_failed_rows"]["default"] = "changed by a caller"  # a copy: the kept one is untouched
    assert templates.template_parameters(notebook)["max_failed_rows"]["default"] != "changed by a caller"
    notebook.write_text(source.replace("max_failed_rows: int = 2000", "max_failed_rows: int = 7"), encoding="utf-8")
    assert templates.template_parameters(notebook)["max_failed_rows"]["default"] == "7"
    notebook.unlink()
    with pytest.raises(InputError, match=r"mine\.ipynb: not a notebook .*Fix: "):
        templates.template_parameters(notebook)
