"""``workbench report`` reads its inputs as ``workbench grade`` does (issue 34, point 5), end to end
through the command line: the same gold, the same accuracy, the same system names; three GSM8K files
without a dataset count each problem once; ``--benchmark`` reaches the template; a note of grading
reaches the page as well as the terminal."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from workbench.cli import main

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests/fixtures"
TORA = FIXTURES / "predictions/gsm8k/tora-70b_first_20.jsonl"
POT = FIXTURES / "predictions/gsm8k/pot_zeroshot_first_20.jsonl"
LM_EVAL = FIXTURES / "predictions/lm_eval/tora-70b-rendered/samples_gsm8k_2026-11-21T19-50-41.jsonl"
GSM8K_GOLD = FIXTURES / "gsm8k/test_first_20.jsonl"
INSPECT_LOG = FIXTURES / "inspect/epochs2.eval"


def _grade(capsys: pytest.CaptureFixture[str], out: Path, *argv: str) -> tuple[dict[str, Any], str]:
    """``workbench grade ARGV --out OUT``: the systems' metrics its summary.json records, and its standard error."""
    code = main(["grade", *argv, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))["systems"], err


def _report(capsys: pytest.CaptureFixture[str], out: Path, *argv: str) -> tuple[dict[str, Any], str, str]:
    """``workbench report ARGV --out OUT``: the systems' metrics of the graded folder the report read,
    its standard error, and the page."""
    code = main(["report", "--quiet", *argv, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    (graded,) = out.glob("*.graded")
    (page,) = [p for p in out.glob("*.html") if p.name != "index.html"]
    systems = json.loads((graded / "summary.json").read_text(encoding="utf-8"))["systems"]
    return systems, err, page.read_text(encoding="utf-8")


def _accuracy(systems: dict[str, Any]) -> dict[str, tuple[int, int]]:
    return {name: (m["n_turns_correct"], m["n_turns"]) for name, m in systems.items()}


def _text(page: str) -> str:
    body = re.sub(r"<(script|style).*?</\1>", " ", page.split('<details class="wb-manifest">')[0], flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body)))


def test_an_inspect_log_needs_no_dataset_and_grades_as_grade_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("inspect_ai")
    graded, _ = _grade(capsys, tmp_path / "grade", str(INSPECT_LOG))
    reported, err, page = _report(capsys, tmp_path / "report", "--predictions", str(INSPECT_LOG))
    assert _accuracy(reported) == _accuracy(graded) == {"mockllm/model": (4, 6)}
    assert "dev.json" not in _text(page)
    # the note of grading: on the terminal, and on the page after the run's overview
    note = "no dataset was given: graded against the gold answers carried in epochs2.eval, which are not on the bundled"
    assert f"workbench: note: {note}" in err
    assert f'<p class="wb-note">Note on grading: {note}' in page
    body = page[page.index("<body") :]
    assert body.index('class="wb-overview"') < body.index("Note on grading") < body.index("wb-headline")
    print(f"Inspect log: grade {_accuracy(graded)}, report {_accuracy(reported)}; {err.strip()}")


def test_a_gsm8k_file_with_its_gold_grades_the_same_in_both(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The gold named (grade's first FILE, report's --dataset), and the gold the file carries (no dataset)."""
    named, _ = _grade(capsys, tmp_path / "grade", str(GSM8K_GOLD), str(TORA))
    reported, _, page = _report(capsys, tmp_path / "report", "--dataset", str(GSM8K_GOLD), "--predictions", str(TORA))
    carried, _ = _grade(capsys, tmp_path / "grade-carried", str(TORA))
    assert _accuracy(reported) == _accuracy(named) == _accuracy(carried) == {"tora-70b_first_20": (16, 20)}
    assert "<h1>GSM8K error report: overview</h1>" in page and "Note on grading" not in page  # nothing to note


def test_three_gsm8k_files_without_a_dataset_count_each_problem_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """ToRA's file (ids), program-of-thoughts' (no ids: linked by question) and an lm-eval log
    (doc_id), given from inside the log's folder as a user in that folder would: the problems were
    counted twice (40) and each accuracy halved; the log's system was named after its file's stem
    by grade and after its folder by report."""
    folder = tmp_path / "wbtest"
    folder.mkdir()
    shutil.copy(LM_EVAL, folder / LM_EVAL.name)
    monkeypatch.chdir(folder)
    files = [str(TORA), str(POT), LM_EVAL.name]
    alone = {}
    for i, path in enumerate(files):
        alone |= _accuracy(_grade(capsys, tmp_path / f"alone-{i}", path)[0])
    together, _ = _grade(capsys, tmp_path / "grade", "--dataset", "none", *files)
    reported, err, page = _report(
        capsys, tmp_path / "report", "--dataset", "none", *[a for f in files for a in ("--predictions", f)]
    )
    expected = {"tora-70b_first_20": (16, 20), "pot_zeroshot_first_20": (10, 20), "wbtest": (15, 20)}
    assert _accuracy(reported) == _accuracy(together) == alone == expected
    assert "20 problems" in _text(page) and "40 problems" not in _text(page)
    assert "workbench: note:" not in err  # the gold was named (none): nothing to note


def test_the_benchmark_reaches_the_template_as_grade_benchmark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plain table of questions and answers graded under MATH's rules: ``report --benchmark math``
    passes it to the template's ``benchmark`` parameter, and the page and figures are MATH's, as grade's."""
    gold, preds = tmp_path / "gold.csv", tmp_path / "preds.csv"
    gold.write_text(
        "record_id,question,gold_answer\na,What share is it?,0.42\nb,What is half of one?,\\frac{1}{2}\n"
        "c,Simplify 2*k.,2k\nd,How many apples?,18\n",
        encoding="utf-8",
    )
    preds.write_text("record_id,predicted_answer\na,42\nb,1/2\nc,2k\nd,18.0\n", encoding="utf-8")
    graded, _ = _grade(capsys, tmp_path / "grade", str(gold), str(preds), "--benchmark", "math")
    reported, err, page = _report(
        capsys, tmp_path / "report", "--dataset", str(gold), "--predictions", str(preds), "--benchmark", "math"
    )
    assert _accuracy(reported) == _accuracy(graded) == {"preds": (3, 4)}  # MATH reads no bare 42 as 42%
    assert "<h1>MATH error report: overview</h1>" in page and "ConvFinQA" not in _text(page)
    # the file has no turn column: said on the terminal and on the page, its path as the page shows paths
    assert f"workbench: note: no turn column in {preds}: every row is turn 0 (single-turn)" in err
    single = "no turn column in preds.csv: every row is turn 0 (single-turn)"
    assert f'<p class="wb-note">Note on grading: {single}</p>' in page
    assert str(tmp_path) not in _text(page)
    notebook = json.loads(next((tmp_path / "report").glob("*.ipynb")).read_text(encoding="utf-8"))
    injected = next(c for c in notebook["cells"] if "injected-parameters" in c["metadata"].get("tags", []))
    assert 'benchmark = "math"' in "".join(injected["source"])
