"""The 02 report with an annotation store two analysts decided together (issue 33, point 5: "the 02
report shows agreement when annotations are given"), run through papermill as `workbench report`
runs it. The section's figures are those of `workbench annotations agreement`.

The section is the cell ``sections.annotator_agreement(annotations)`` right after the before/after
table of the template itself."""

from __future__ import annotations

import os
from html import unescape
from pathlib import Path

import nbformat
import polars as pl

from workbench.annotations import AnnotationStore
from workbench.annotations.agreement import agreement_at
from workbench.config import resolve
from workbench.pipeline.run import grade_run
from workbench.report.runner import run_template

REPO = Path(__file__).resolve().parents[3]
SMALL = REPO / "tests" / "fixtures" / "convfinqa" / "dev_small.json"
SMALL_PREDS = REPO / "tests" / "fixtures" / "predictions" / "zarifaziz_dev_small.jsonl"
TEMPLATE = REPO / "notebooks" / "02-error-slices.ipynb"
#: The cell that shows the section, and the cell it follows.
CELL = "sections.annotator_agreement(annotations)"
AFTER = "tables.cleaning_effect(effect, active)"


def _template_has_the_cell() -> bool:
    sources = [cell.source.strip() for cell in nbformat.read(TEMPLATE, as_version=4).cells]
    return CELL in sources and sources.index(CELL) == sources.index(AFTER) + 1


def _store(path: Path) -> Path:
    """Two analysts decide the same 10 turns (4 differently), a third rules on one of those; ana
    alone corrects a failed turn's gold answer."""
    run = grade_run(resolve(dataset=SMALL, predictions=[str(SMALL_PREDS)], systems="claude"))
    turns = run.turns.sort("record_id", "turn")
    failed = turns.filter(~pl.col("correct") & pl.col("answer").is_not_null())
    assert turns.height >= 11 and failed.height, "the fixture needs eleven turns, one failed"
    wrong = failed.row(-1, named=True)
    shared = turns.join(failed.tail(1), on=["record_id", "turn"], how="anti").head(10)
    with AnnotationStore(path) as store:
        for i, turn in enumerate(shared.iter_rows(named=True)):
            key = {"record_id": turn["record_id"], "turn": turn["turn"]}
            store.annotate(annotator="ana", category="mislabel" if i < 5 else "other", **key)
            store.annotate(annotator="bo", category="mislabel" if i < 3 or i in (6, 7) else "other", **key)
        store.annotate(
            annotator="ana",
            record_id=wrong["record_id"],
            turn=wrong["turn"],
            category="mislabel",
            corrected_answer=wrong["answer"],
        )
        third = shared.row(3, named=True)
        store.annotate(annotator="cy", record_id=third["record_id"], turn=third["turn"], category="mislabel")
    return path


def test_the_02_report_shows_agreement_when_annotations_are_given(tmp_path: Path) -> None:
    store = _store(tmp_path / "annotations.sqlite")
    assert _template_has_the_cell(), f"{TEMPLATE.name} should have the cell {CELL!r} right after {AFTER!r}"
    template = TEMPLATE
    params = {"dataset": str(SMALL), "predictions": str(SMALL_PREDS), "systems": "claude", "annotations": str(store)}
    result = run_template(str(template), parameters={**params, "n_boot": 100}, out_dir=tmp_path / "r")
    page = unescape(result.html.read_text(encoding="utf-8"))
    assert "Scores before and after cleaning" in page
    assert "Agreement between analysts: Cohen's kappa of 2 analysts (ana, bo) on the 10 turns both decided" in page
    for row in agreement_at(store).iter_rows(named=True):  # the CLI's figures, row by row
        cells = [row["category"], str(row["n"]), *(f"{row[k]:.3f}" for k in ("value", "low", "high"))]
        assert (row["statistic"], row["analysts"]) == ("Cohen's kappa", "ana, bo")  # in the caption
        assert all(f">{cell}</td>" in page for cell in cells), row
    # turns 3, 4, 6 and 7 differ; cy ruled on turn 3: three wait
    assert "3 turns await adjudication" in page
    assert page.index("Scores before and after cleaning") < page.index("Agreement between analysts")
    if os.environ.get("WORKBENCH_SHOTS"):
        shots = Path(os.environ["WORKBENCH_SHOTS"])
        shots.mkdir(parents=True, exist_ok=True)
        (shots / "agreement-02.html").write_text(result.html.read_text(encoding="utf-8"), encoding="utf-8")
