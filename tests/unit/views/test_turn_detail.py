"""The detail data of the failed-turn panel, on the small ConvFinQA fixture graded for real: each
document once per record, the numbers each program uses marked where the document shows them, the
conversation so far, the traces with their step labels, every policy's verdict, the flags with their
evidence; a bare turns table gives what it has; hostile text stays data (script-safe JSON)."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest

import workbench
from workbench.analysis.slices import plain_label
from workbench.config import project_root
from workbench.grading.normalize import parse_cell_number
from workbench.grading.program import literal_numbers, parse_program
from workbench.pipeline.run import Run
from workbench.views import tables
from workbench.views.turn_detail import (
    detail_data,
    detail_script,
    for_page,
    is_used,
    marked_pieces,
    number_pieces,
    once_per_page,
    turn_key,
)

FIXTURES = project_root() / "tests" / "fixtures"
RECORD = "Double_RSG/2016/page_144.pdf"


@pytest.fixture(scope="module")
def run() -> Run:
    return workbench.grade_run(
        workbench.config.resolve(
            dataset=FIXTURES / "convfinqa" / "dev_small.json",
            predictions=[FIXTURES / "predictions" / "zarifaziz_dev_small.jsonl"],
        )
    )


@pytest.fixture(scope="module")
def failed(run: Run) -> pl.DataFrame:
    return run.turns.filter(~pl.col("correct"))


def test_pieces_join_back_to_the_text_with_numbers_at_odd_places() -> None:
    text = "revenue of $ 1,080.5 million ( 13.4% ) in 2007"
    pieces = number_pieces(text)
    assert "".join(pieces) == text and pieces[1::2] == ["1,080.5", "13.4", "2007"]
    assert [p for p, marked in marked_pieces(text, (1080.5, 0.134)) if marked] == ["1,080.5", "13.4"]


def test_each_document_is_in_the_data_once_for_all_its_failed_turns(run: Run, failed: pl.DataFrame) -> None:
    assert failed.height == 3 and failed["record_id"].unique().to_list() == [RECORD]
    data = detail_data(run, failed)
    assert list(data["docs"]) == [RECORD] and len(data["turns"]) == 3
    document = run.gold.documents.filter(pl.col("doc_id") == RECORD).row(0, named=True)
    doc = data["docs"][RECORD]
    assert "".join(doc["pre"]) == document["pre_text"] and "".join(doc["post"]) == document["post_text"]
    assert doc["columns"] == [str(c) for c in json.loads(document["table_json"])["columns"]]
    markup = tables.failed_turns(run).markup
    assert markup.count(json.dumps(doc["pre"][0], ensure_ascii=False)[1:-1][:40]) == 1  # once in the page


def test_the_numbers_each_program_uses_are_marked_where_the_document_shows_them(run: Run, failed: pl.DataFrame) -> None:
    data = detail_data(run, failed)
    doc = data["docs"][RECORD]
    marked_any = 0
    for detail in data["turns"].values():
        for side, program in (("gold_marks", "gold_trace"), ("predicted_marks", "predicted_trace")):
            used = {n.value for n in literal_numbers(parse_program(detail[program]["program"]))}
            marks = detail[side]
            for part in ("pre", "post"):
                for i in marks[part]:
                    assert i % 2 == 1 and is_used(float(doc[part][i].replace(",", "")), used)
            for r, c in marks["cells"]:
                value = parse_cell_number(doc["rows"][r][c])
                assert value is not None and is_used(value, used)
            marked_any += len(marks["pre"]) + len(marks["post"]) + len(marks["cells"])
    assert marked_any >= 6
    first = data["turns"][turn_key("zarifaziz_dev_small", RECORD, 0)]
    assert first["gold_marks"]["cells"] == [[0, 1], [1, 1]]  # divide(12000000, 3000000): two cells of the table


def test_the_panel_has_the_conversation_traces_policies_and_reason(run: Run, failed: pl.DataFrame) -> None:
    data = detail_data(run, failed)["turns"]
    third = data[turn_key("zarifaziz_dev_small", RECORD, 3)]
    earlier = run.turns.filter((pl.col("record_id") == RECORD) & (pl.col("turn") < 3)).sort("turn")
    assert [h[0] for h in third["history"]] == [0, 1, 2]
    assert [h[1] for h in third["history"]] == earlier["question"].to_list()
    assert [h[4] for h in third["history"]] == earlier["correct"].to_list()
    assert third["gold_trace"]["steps"] == ["#0 divide(37.8, 2.7) = 14"]
    assert third["predicted_trace"]["steps"][0].startswith("#0 divide(2.7, 37.8)")
    policies = {p[0]: p for p in third["policies"]}
    assert set(policies) == set(run.policy_grades["policy"].unique().to_list())
    assert all(p[1] is False for p in policies.values())
    assert third["reason"] == plain_label(str(failed.filter(pl.col("turn") == 3)["reason"][0])) and third["detail"]


def test_flags_come_with_their_evidence(run: Run) -> None:
    flagged = run.turns.join(run.checks.select("record_id", "turn").unique(), on=["record_id", "turn"], how="semi")
    assert flagged.height >= 1
    data = detail_data(run, flagged)["turns"]
    flags = [f for detail in data.values() for f in detail["flags"]]
    assert len(flags) == run.checks.height
    assert {f[3] for f in flags} == set(run.checks["evidence"].to_list()) and all(0 < f[2] <= 1 for f in flags)


def test_a_bare_turns_table_gives_what_it_has(failed: pl.DataFrame) -> None:
    data = detail_data(failed, failed)
    assert data["docs"] == {} and all(d["doc"] is None and d["policies"] == [] for d in data["turns"].values())
    one = failed.head(1).with_columns(dq_category=pl.lit("mislabel"), dq_confidence=pl.lit(float("nan")))
    (detail,) = detail_data(one, one)["turns"].values()
    assert detail["flags"] == [["mislabel", None, None, None]]  # NaN is no JSON: missing


def test_hostile_text_stays_data() -> None:
    hostile = "</script><script>window.__pwned=1</script>\"'&"
    turns = pl.DataFrame(
        {
            "system": [hostile],
            "record_id": [hostile],
            "turn": [0],
            "correct": [False],
            "question": [hostile],
            "raw_output": [hostile],
        }
    )
    block = str(detail_script(turns, turns))
    body = block.removeprefix('<script type="application/json" class="wb-turn-data">').removesuffix("</script>")
    assert "<" not in body and ">" not in body and "&" not in body
    ((key, detail),) = json.loads(body)["turns"].items()
    assert detail["raw"] == hostile and json.loads(key) == [hostile, hostile, 0]  # the key names the turn
    assert json.loads(turn_key(hostile, hostile, 0)) == [hostile, hostile, 0]


def test_a_page_of_several_drilldowns_holds_each_turn_and_document_once(run: Run, failed: pl.DataFrame) -> None:
    """The error-slices page's three drill-downs of one run: each carries its turns, the page once."""
    blocks = [tables.drilldown(run, name).markup for name in ("operation", "turn_index", "error_type")]
    page = once_per_page("".join(blocks))
    pattern = r'<script type="application/json" class="wb-turn-data">([^<]*)</script>'
    before = [json.loads(b) for b in re.findall(pattern, "".join(blocks))]
    after = [json.loads(b) for b in re.findall(pattern, page)]
    assert len(before) == 3 and len(after) == 1, "the later drill-downs' data already in the page"
    expected = detail_data(run, failed)  # as the page holds it: without the fields the key names or without a value
    expected["turns"] = {key: for_page(turn) for key, turn in expected["turns"].items()}
    assert after[0] == before[0] == expected
    dropped = [m.group(0) for m in re.finditer(pattern, "".join(blocks))][1:]
    assert len("".join(blocks)) - len(page) == sum(map(len, dropped)), "nothing else of the page changed"
    assert page.count('data-wb-key="') == "".join(blocks).count('data-wb-key="') == 3 * failed.height
    # a later table with a turn no earlier one holds keeps that turn (and only its new document)
    extra = tables.failed_turns(run.turns.filter(pl.col("correct")).head(1).with_columns(correct=pl.lit(False)))
    merged = [json.loads(b) for b in re.findall(pattern, once_per_page(page + extra.markup))]
    assert len(merged) == 2 and len(merged[1]["turns"]) == 1 and not set(merged[1]["turns"]) & set(merged[0]["turns"])
