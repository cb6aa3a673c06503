"""Pages on a plain gold table (``record_id, question, gold_answer``), graded without ``--benchmark``:
such a table names no benchmark, so no sentence of its pages may call it ConvFinQA (they did: "ConvFinQA
problems are single questions", "which ConvFinQA does not have"), nor GSM8K or MATH. Built from the
real bundled data: the whole GSM8K test set (1,319 problems, against ToRA-70B's outputs) and MATH-500
(the problems and answers Rho-Math's lines carry, against both Rho-Math runs)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import polars as pl
import pytest

from workbench.report.runner import run_template

REPO = Path(__file__).resolve().parents[3]
TORA = REPO / "data/predictions/gsm8k/tora/tora-70b.jsonl"
RHO = REPO / "data/predictions/math/microsoft-rho-math-7b/test_cot_-1_seed0_t0.0_s0_e-1.jsonl"
RHO_CODE = REPO / "data/predictions/math/microsoft-rho-math-7b-interpreter/test_tora_-1_seed0_t0.0_s0_e-1.jsonl"
#: A grading policy's name, the same on every page: the official ConvFinQA rule is the rule's name.
POLICY_NAME = "official ConvFinQA rule"


def _text(page: str) -> str:
    """The words a reader sees before the run manifest (scripts, styles and tags removed, entities read)."""
    body = re.sub(r"<(script|style).*?</\1>", " ", page.split('<details class="wb-manifest">')[0], flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body)))


def _gsm8k_table(folder: Path) -> Path:
    rows = []
    with (REPO / "data/gsm8k/test.jsonl").open(encoding="utf-8") as lines:
        for index, line in enumerate(lines):
            problem = json.loads(line)
            answer = problem["answer"].split("####")[-1].strip()
            rows.append({"record_id": str(index), "question": problem["question"], "gold_answer": answer})
    path = folder / "gsm8k_test.csv"
    pl.DataFrame(rows).write_csv(path)
    return path


def _math_table(folder: Path) -> Path:
    rows = []
    with RHO.open(encoding="utf-8") as lines:
        for line in lines:
            problem = json.loads(line)
            rows.append(
                {"record_id": str(problem["idx"]), "question": problem["question"], "gold_answer": problem["gt"]}
            )
    path = folder / "math500.csv"
    pl.DataFrame(rows).write_csv(path)
    return path


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("plain-tables")
    gsm8k, math = _gsm8k_table(folder), _math_table(folder)
    graded: dict[str, Path] = {}
    runs = {
        "gsm8k 01-overview": ("01-overview", {"dataset": str(gsm8k), "predictions": str(TORA)}),
        "gsm8k 02-error-slices": ("02-error-slices", {"dataset": str(gsm8k), "predictions": str(TORA), "n_boot": 200}),
        "math 04-compare-systems": (
            "04-compare-systems",
            {"dataset": str(math), "predictions": f"{RHO};{RHO_CODE}", "systems": "cot;interpreter", "n_boot": 200},
        ),
    }
    return {
        name: run_template(
            template, parameters=params, out_dir=folder / name.replace(" ", "-"), graded_sets=graded
        ).html.read_text(encoding="utf-8")
        for name, (template, params) in runs.items()
    }


def test_no_page_of_a_plain_table_names_a_benchmark(pages: dict[str, str]) -> None:
    for name, page in pages.items():
        text = _text(page).replace(POLICY_NAME, " ")
        assert re.search(r"<title>Error report: ", page), name
        for benchmark in ("ConvFinQA", "GSM8K", "MATH "):
            found = [m.group(0) for m in re.finditer(rf"[^.]{{0,80}}{benchmark}[^.]{{0,80}}", text)]
            assert found == [], f"{name}: {found}"
        assert "Glossary Problem One question of the gold table and its answer." in text, name
    overview, slices = _text(pages["gsm8k 01-overview"]), _text(pages["gsm8k 02-error-slices"])
    assert "1,319 problems" in overview
    assert "The gold table's problems are single questions, so there is no turn index to follow." in overview
    assert "The gold table has no programs, so there is no operation to group problems by." in overview
    assert "A slice the gold table cannot give is left out" in slices
    assert "this table and these outputs gave them nothing to flag." in slices
    compared = _text(pages["math 04-compare-systems"])
    assert "2 systems graded on the same problems, listed and paired" in compared
