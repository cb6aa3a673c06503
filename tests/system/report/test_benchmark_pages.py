"""Pages that know their benchmark: a GSM8K report is titled and laid out for single questions
(no conversations, no empty charts, BLEU and ROUGE shown), no page holds a machine path, and the
reports folder's index.html lists every report."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from workbench.analysis import words
from workbench.report.runner import run_template

REPO = Path(__file__).resolve().parents[3]
TORA = REPO / "tests/fixtures/predictions/gsm8k/tora-70b_first_20.jsonl"


def _text(page: str) -> str:
    """The words a reader sees before the run manifest (scripts, styles and tags removed, entities read)."""
    body = re.sub(r"<(script|style).*?</\1>", " ", page.split('<details class="wb-manifest">')[0], flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body)))


@pytest.fixture(scope="module")
def gsm8k_reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    root = tmp_path_factory.mktemp("gsm8k") / "reports"
    params = {"dataset": "none", "predictions": str(TORA)}
    graded: dict[str, Path] = {}
    pages = {
        template: run_template(template, parameters=params, out_dir=root / template, graded_sets=graded).html
        for template in ("01-overview", "02-error-slices")
    }
    return root, pages


def test_gsm8k_overview_is_titled_and_laid_out_for_single_questions(
    gsm8k_reports: tuple[Path, dict[str, Path]],
) -> None:
    root, pages = gsm8k_reports
    page = pages["01-overview"].read_text(encoding="utf-8")
    text = _text(page)
    assert "<title>GSM8K error report: overview</title>" in page and "ConvFinQA error report" not in page
    assert text.lstrip().startswith("GSM8K error report: overview")
    assert "20 problems" in text and " conversations, " not in text and "Conversations" not in text
    assert "Conversation execution accuracy" not in text and "All turns correct" not in text
    assert "GSM8K problems are single questions, so there is no turn index to follow." in text
    assert "GSM8K gold answers come without programs, so there is no operation to group problems by." in text
    assert 'class="plotly-figure"' not in page, "no empty chart"
    summary = json.loads(next(root.glob("01-overview/*.graded/summary.json")).read_text(encoding="utf-8"))
    scores = next(iter(summary["systems"].values()))["text"]
    row = re.search(r"BLEU and ROUGE \(0 to 100\).*?<tbody>(.*?)</tbody>", page, flags=re.S)
    assert row is not None
    shown = re.findall(r'<td class="num"[^>]*>([^<]*)</td>', row.group(1))
    assert shown == [f"{scores[k]:.1f}" for k in ("bleu", "rouge1", "rouge2", "rougeL")] + [str(scores["n"])]
    assert "Glossary" in text and "BLEU and ROUGE Word overlap" in text and "Type-2" not in text


def test_gsm8k_slices_page_says_why_sections_are_empty(gsm8k_reports: tuple[Path, dict[str, Path]]) -> None:
    _, pages = gsm8k_reports
    page = pages["02-error-slices"].read_text(encoding="utf-8")
    text = _text(page)
    assert "<title>GSM8K error report: error slices, error types and data-quality flags</title>" in page
    assert "GSM8K has no gold programs to cross them with" in text
    assert "which GSM8K problems do not have" in text  # the data-quality section, replaced by its reason
    assert "Error propagation GSM8K problems are single questions" in text
    assert "Accuracy by operation" not in text
    assert page.count('class="plotly-figure"') == 1  # accuracy by answer format, the one slice GSM8K has


def test_no_page_holds_a_machine_path_and_the_index_lists_every_report(
    gsm8k_reports: tuple[Path, dict[str, Path]],
) -> None:
    root, pages = gsm8k_reports
    written = sorted(root.rglob("*.html"))
    assert {p.name for p in written} >= {"index.html", pages["01-overview"].name}
    for path in written:
        page = path.read_text(encoding="utf-8")
        assert str(REPO) not in page and str(root.parent) not in page and "/tmp/" not in page, path
    index = (root / "index.html").read_text(encoding="utf-8")
    for template, page in pages.items():
        assert f'<a href="{template}/{page.name}">' in index
    assert (
        index.count("GSM8K error report") == 2 and "tests/fixtures/predictions/gsm8k/tora-70b_first_20.jsonl" in index
    )
    assert re.search(r"tora-70b_first_20: \d+\.\d% correct, \d+ of 20", index)


MATH_RUN = REPO / "data/predictions/math/microsoft-rho-math-7b/test_cot_-1_seed0_t0.0_s0_e-1.jsonl"
#: Problems of the Rho-Math CoT run: the first ten, and four where our verdict and the upstream one differ.
MATH_PROBLEMS = {str(i) for i in range(10)} | {"97", "120", "255", "257"}


def test_a_math_report_lists_every_verdict_that_differs_from_the_upstream_one(tmp_path: Path) -> None:
    import polars as pl

    from workbench.analysis.metrics import upstream_disagreements

    lines = [
        line
        for line in MATH_RUN.read_text(encoding="utf-8").splitlines()
        if str(json.loads(line)["idx"]) in MATH_PROBLEMS
    ]
    subset = tmp_path / "rho-math-7b.jsonl"
    subset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    params = {"dataset": "none", "predictions": str(subset), "systems": "rho-math-7b"}
    result = run_template("01-overview", parameters=params, out_dir=tmp_path / "reports")
    page = result.html.read_text(encoding="utf-8")
    text = _text(page)
    assert "<title>MATH error report: overview</title>" in page and "14 problems" in text
    turns = pl.read_parquet(next((tmp_path / "reports").glob("*.graded/turns.parquet")))
    differ = upstream_disagreements(turns).sort("record_id")
    assert differ.height >= 3  # the subset holds disagreements: the table has rows to check
    table = re.search(r"verdicts differ from the upstream grader.*?<tbody>(.*?)</tbody>", page, flags=re.S)
    assert table is not None and f"{differ.height} verdicts differ from the upstream grader" in text
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(1), flags=re.S)
    assert len(rows) == differ.height
    for row, expected in zip(rows, differ.iter_rows(named=True), strict=True):
        cells = [
            html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
            for c in re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)
        ]
        reason = str(expected["reason"])  # in words (the one mapping), never the snake_case name
        assert cells[1] == expected["record_id"] and words.plain(reason) in cells
        assert "_" not in reason or reason not in cells
        assert ("right" if expected["upstream_correct"] else "wrong") in cells
    assert "BLEU and ROUGE (0 to 100)" in text and "Glossary" in text
    assert str(REPO) not in page and str(tmp_path) not in page


def test_a_report_of_outputs_carrying_their_gold_needs_no_dataset(tmp_path: Path) -> None:
    """`workbench report --predictions gsm8k.jsonl` without --dataset grades against the gold the
    file carries, as `workbench grade FILE` does, not against the bundled ConvFinQA dev set."""
    result = run_template("01-overview", parameters={"predictions": str(TORA)}, out_dir=tmp_path / "reports")
    page = result.html.read_text(encoding="utf-8")
    assert "<h1>GSM8K error report: overview</h1>" in page and "dev.json" not in page
    assert "gold answers carried in the predictions file (20 problems)" in page
    assert "match no gold turn" not in page
    # the analyst is told why (workbench report prints the notes, as workbench grade does)
    assert result.notes == (
        "no dataset was given: graded against the gold answers carried in tora-70b_first_20.jsonl, which are not "
        "on the bundled ConvFinQA dev set (--dataset FILE names another gold set)",
    )
