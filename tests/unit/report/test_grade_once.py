"""``workbench report`` grades each input set once and the templates open its graded folder.

Papermill is replaced by a stand-in that records the parameters each template would get
(no kernel starts): what is checked is the runner's side, in this process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from workbench import cli
from workbench.pipeline import run as run_module
from workbench.pipeline.graded import GRADED_TABLES
from workbench.report import runner
from workbench.report.batch import load_batch

REPO = Path(__file__).resolve().parents[3]
GOLD = REPO / "tests/fixtures/convfinqa/dev_small.json"
PREDS = REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl"
PREDS_B = REPO / "tests/fixtures/predictions/zarifaziz_dev_small_12-48-44Z.jsonl"


class _Written:
    """A stand-in graded run that writes the files of a graded folder (empty tables)."""

    notes: tuple[str, ...] = ()

    def write(self, out_dir: Path) -> None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        for name in GRADED_TABLES:
            pl.DataFrame({"system": ["s"], "record_id": ["r"], "turn": [0], "correct": [True]}).write_parquet(
                Path(out_dir) / f"{name}.parquet"
            )
        (Path(out_dir) / "summary.json").write_text('{"systems": {}}', encoding="utf-8")


@pytest.fixture
def grades(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every call of ``grade_run`` the runner makes (each is still graded)."""
    calls: list[Any] = []

    def counted(config: Any, **options: Any) -> Any:
        calls.append(config)
        return run_module.grade_run(config, **options)

    monkeypatch.setattr(runner, "grade_run", counted)
    return calls


def test_a_batch_grades_each_input_set_once(tmp_path: Path, executed: list[dict[str, Any]], grades: list[Any]) -> None:
    one = f"dataset: {GOLD}\n    predictions: [{PREDS}]\n"
    two = f"dataset: {GOLD}\n    predictions: [{PREDS}, {PREDS_B}]\n    systems: [a, b]\n"
    config = tmp_path / "batch.yaml"
    config.write_text(
        f"out: {tmp_path / 'out'}\nreports:\n"
        f"  - template: 01-overview\n    {one}"
        f"  - template: 02-error-slices\n    {one}"
        f"  - template: 04-compare-systems\n    {two}"
        f"  - template: 01-overview\n    out: {tmp_path / 'again'}\n    {one}",
        encoding="utf-8",
    )
    # one at a time: the order the templates ran in is then the batch's (two at once, it is timing's)
    assert cli.main(["report", "--quiet", "--jobs", "1", "--config", str(config)]) == 0
    assert len(grades) == 2, "two input sets, each graded once"
    assert [c["template"] for c in executed] == ["01-overview", "02-error-slices", "04-compare-systems", "01-overview"]
    folders = [Path(c["graded_dir"]) for c in executed]
    assert folders[0].parent == tmp_path / "out/01-overview" and folders[3].parent == tmp_path / "again"
    for folder in folders:  # each report's graded folder beside it, named in its parameters
        assert (folder / "summary.json").is_file() and (folder / "turns.parquet").is_file()
    first = {p.name: p.read_bytes() for p in folders[0].iterdir()}
    assert {p.name: p.read_bytes() for p in folders[1].iterdir()} == first
    assert {p.name: p.read_bytes() for p in folders[3].iterdir()} == first
    assert json.loads((folders[2] / "summary.json").read_text(encoding="utf-8"))["systems"].keys() == {"a", "b"}
    # the manifest's figures and the verdicts come from the folder the runner wrote
    (manifest,) = (tmp_path / "out/04-compare-systems").glob("*.manifest.json")
    assert set(json.loads(manifest.read_text(encoding="utf-8"))["metrics"]) == {"a", "b"}
    assert len(list((tmp_path / "out/02-error-slices").glob("*.verdicts.parquet"))) == 1


def test_the_bundled_batch_grades_the_bundled_runs_once_each(
    tmp_path: Path, executed: list[dict[str, Any]], grades: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``make report``: 01 and 02 share the bundled run, 04 compares the two bundled runs, the
    GSM8K overview grades ToRA-70B's outputs against the gold they carry, each Rho-Math run is
    graded once for its 01 and 02, and their comparison once more."""
    monkeypatch.setattr(runner, "grade_run", lambda config, **_: grades.append(config) or _Written())
    jobs = load_batch(REPO / "notebooks/bundled.yaml")
    done: dict[str, Path] = {}
    for job in jobs:
        runner.run_template(job.template, parameters=job.parameters, out_dir=tmp_path / job.template, graded_sets=done)
    assert [len(c.predictions) for c in grades] == [1, 2, 1, 1, 1, 2]
    assert grades[2].dataset is None and grades[2].predictions[0].name == "tora-70b.jsonl"
    assert (
        all(c.dataset is None for c in grades[2:])
        and grades[5].predictions == grades[3].predictions + grades[4].predictions
    )
    assert [Path(c["graded_dir"]).parent.name for c in executed] == [job.template for job in jobs]


def test_a_template_of_unreadable_inputs_grades_itself_and_names_the_error(
    tmp_path: Path, executed: list[dict[str, Any]], grades: list[Any]
) -> None:
    runner.run_template("01-overview", parameters={"dataset": str(tmp_path / "missing.json")}, out_dir=tmp_path)
    assert len(grades) == 1 and executed[0]["graded_dir"] == ""
    assert not list(tmp_path.glob("*.graded")) and not list(tmp_path.glob("*.verdicts.parquet"))


def test_report_prints_the_notes_of_grading_once_per_input_set(
    tmp_path: Path, executed: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    """As ``workbench grade`` does: outputs without a dataset that carry their gold say so; a
    second report of the same outputs (graded once, copied) does not say it again."""
    tora = REPO / "tests/fixtures/predictions/gsm8k/tora-70b_first_20.jsonl"
    config = tmp_path / "batch.yaml"
    config.write_text(
        f"out: {tmp_path / 'out'}\nreports:\n"
        f"  - template: 01-overview\n    predictions: [{tora}]\n"
        f"  - template: 02-error-slices\n    predictions: [{tora}]\n",
        encoding="utf-8",
    )
    assert cli.main(["report", "--quiet", "--config", str(config)]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("workbench: note: ")]
    assert notes == [
        "workbench: note: no dataset was given: graded against the gold answers carried in tora-70b_first_20.jsonl, "
        "which are not on the bundled ConvFinQA dev set (--dataset FILE names another gold set)",
    ]
