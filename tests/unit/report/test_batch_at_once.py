"""``workbench report --config`` running two reports at once (issue 35, point 2).

Papermill is replaced by a stand-in (no kernel starts) that fails one template and holds the
first report back until a later one has run, so the reports finish out of the batch's order:
what is checked is what the batch prints, in which order, its exit code and the files.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import nbformat
import pytest

from workbench import cli
from workbench.report.batch import ReportJob, default_jobs, run_batch

REPO = Path(__file__).resolve().parents[3]
GOLD = REPO / "tests/fixtures/convfinqa/dev_small.json"
PREDS = REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl"
PREDS_B = REPO / "tests/fixtures/predictions/zarifaziz_dev_small_12-48-44Z.jsonl"


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Papermill's stand-in: 02-error-slices fails in its cell 3; the first 01-overview waits
    (at most 10 s) until 04-compare-systems has run, when two run at once."""
    import papermill

    state: dict[str, Any] = {"ran": [], "hold": False, "compared": threading.Event(), "threads": set()}

    def execute_notebook(source: str, target: str, *, parameters: dict[str, Any], **_: Any) -> None:
        template = Path(source).stem
        state["threads"].add(threading.current_thread().name)
        if template == "01-overview" and state["hold"] and not state["ran"]:
            state["ran"].append("01-overview (held)")
            state["compared"].wait(10)
        state["ran"].append(template)
        if template == "02-error-slices":
            raise papermill.PapermillExecutionError(2, 3, "x", "ValueError", "no slices today", [])
        nbformat.write(nbformat.read(source, as_version=4), target)
        if template == "04-compare-systems":
            state["compared"].set()

    monkeypatch.setattr(papermill, "execute_notebook", execute_notebook)
    return state


def _batch(tmp_path: Path, out: str = "out") -> Path:
    one = f"dataset: {GOLD}\n    predictions: [{PREDS}]\n"
    two = f"dataset: {GOLD}\n    predictions: [{PREDS}, {PREDS_B}]\n    systems: [a, b]\n"
    config = tmp_path / f"{out}.yaml"
    config.write_text(
        f"out: {tmp_path / out}\nreports:\n"
        f"  - template: 01-overview\n    {one}"
        f"  - template: 02-error-slices\n    {one}"
        f"  - template: 01-overview\n    {one}    parameters: {{max_failed_rows: 5, colour: red}}\n"
        f"  - template: 04-compare-systems\n    {two}",
        encoding="utf-8",
    )
    return config


def _lines(text: str, folder: Path) -> list[str]:
    return [line.replace(str(folder), "TMP") for line in text.splitlines()]


def test_two_at_once_print_each_report_in_the_batch_order(
    tmp_path: Path, stand_in: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """The first report finishes after the fourth, yet its lines come first; a failing report
    (a cell's error, an unknown parameter) is one line in its place and the others still run;
    the exit code is 1."""
    stand_in["hold"] = True
    assert cli.main(["report", "--quiet", "--jobs", "2", "--config", str(_batch(tmp_path))]) == 1
    # the stand-in ran 04 before the held 01 ended: the reports really ran at once
    assert stand_in["ran"][0] == "01-overview (held)" and stand_in["ran"].index("04-compare-systems") < (
        stand_in["ran"].index("01-overview")
    )
    assert len(stand_in["threads"]) == 2
    captured = capsys.readouterr()
    err = _lines(captured.err, tmp_path)
    assert [line.split(": ")[0] for line in err] == [
        "[1/4] 01-overview",
        "[2/4] 02-error-slices",
        "workbench",
        "[3/4] 01-overview",
        "workbench",
        "[4/4] 04-compare-systems",
    ]
    assert err[2].startswith(
        "workbench: report failed: 02-error-slices: 02-error-slices.ipynb: cell 3 failed with ValueError: "
        "no slices today. The partly executed notebook is TMP/out/02-error-slices/"
    )
    assert err[4].startswith("workbench: error: 01-overview: template 01-overview has no parameter colour. Fix: ")
    out = _lines(captured.out, tmp_path)
    assert [line.split(": ")[0] for line in out] == ["notebook", "html", "notebook", "html", "index"]
    assert out[0].startswith("notebook: TMP/out/01-overview/") and out[2].startswith("notebook: TMP/out/04-compare")
    assert out[-1] == "index: TMP/out/index.html"
    # the good reports' files are written, the index lists both, the failed one left its notebook only
    index = (tmp_path / "out/index.html").read_text(encoding="utf-8")
    for line in (out[1], out[3]):
        page = Path(line.removeprefix("html: ").replace("TMP", str(tmp_path)))
        assert page.is_file() and page.with_suffix(".manifest.json").is_file() and page.name in index
    assert not list((tmp_path / "out/02-error-slices").glob("*.html"))


def test_one_at_a_time_prints_the_same_lines(
    tmp_path: Path, stand_in: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """``--jobs 1`` (the serial run the benchmark compares with) prints what two at once print."""
    assert cli.main(["report", "--quiet", "--jobs", "1", "--config", str(_batch(tmp_path, "serial"))]) == 1
    serial = capsys.readouterr()
    assert stand_in["ran"] == ["01-overview", "02-error-slices", "04-compare-systems"]
    assert len(stand_in["threads"]) == 1
    assert cli.main(["report", "--quiet", "--jobs", "2", "--config", str(_batch(tmp_path, "both"))]) == 1
    both = capsys.readouterr()
    assert len(_lines(serial.out, tmp_path)) == 5 and len(_lines(serial.err, tmp_path)) == 6
    assert _lines(both.out, tmp_path / "both") == _lines(serial.out, tmp_path / "serial")
    assert _lines(both.err, tmp_path / "both") == _lines(serial.err, tmp_path / "serial")


def test_a_batch_without_failures_exits_0_and_jobs_must_be_positive(
    tmp_path: Path, stand_in: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    jobs = [
        ReportJob("01-overview", {"dataset": str(GOLD), "predictions": [str(PREDS)]}, tmp_path / "a"),
        ReportJob("04-compare-systems", {"dataset": str(GOLD), "predictions": [str(PREDS), str(PREDS_B)]}, tmp_path),
    ]
    outcomes = list(run_batch(jobs, workers=2))
    assert [o.index for o in outcomes] == [1, 2] and all(o.error is None and o.result for o in outcomes)
    assert outcomes[0].result is not None and outcomes[0].result.index == tmp_path / "a" / "index.html"
    assert (tmp_path / "a" / "index.html").is_file() and (tmp_path / "index.html").is_file()
    assert 1 <= default_jobs() <= 2
    config = _batch(tmp_path)
    assert cli.main(["report", "--quiet", "--jobs", "0", "--config", str(config)]) == 2
    assert capsys.readouterr().err.splitlines()[-1].startswith("workbench: error: --jobs 0: expected 1 or more")


@pytest.mark.parametrize("workers", [1, 2])
def test_an_earlier_run_is_one_written_before_the_batch_never_a_batch_mate(
    tmp_path: Path, stand_in: dict[str, Any], workers: int
) -> None:
    """Two reports of one template on one dataset in one folder: neither is the other's earlier
    run, whichever finishes first and however many run at once; the next batch compares each with
    this one's. (Two at once, which one wrote first is a matter of timing, so no page may depend on it.)"""
    jobs = [
        ReportJob("01-overview", {"dataset": str(GOLD), "predictions": [str(preds)]}, tmp_path / "nightly")
        for preds in (PREDS, PREDS_B)
    ]
    first = list(run_batch(jobs, workers=workers))
    assert [o.error for o in first] == [None, None]
    assert [o.result.changes for o in first if o.result is not None] == [None, None]
    again = list(run_batch(jobs, workers=workers))
    assert all(o.result is not None and o.result.changes for o in again), [o.error for o in again]
