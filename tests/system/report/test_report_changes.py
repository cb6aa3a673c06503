"""A report run twice opens with the changes since its previous run (of turns for ConvFinQA, of
problems for GSM8K); a failing cell keeps the partial notebook."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from workbench.config import resolve
from workbench.io.manifest import SCHEMA_VERSION
from workbench.pipeline.run import grade_run
from workbench.report.runner import run_template

REPO = Path(__file__).resolve().parents[3]
GOLD = REPO / "tests/fixtures/convfinqa/dev_small.json"
PREDS = REPO / "tests/fixtures/predictions/zarifaziz_dev_small.jsonl"


def _flip_two_turns(tmp_path: Path) -> tuple[Path, tuple[str, int], tuple[str, int]]:
    """A copy of the real fixture where one right turn is made wrong and one wrong turn right."""
    turns = grade_run(resolve(dataset=GOLD, predictions=[str(PREDS)], systems="claude")).turns
    right = turns.filter(pl.col("correct")).row(0, named=True)
    wrong = turns.filter(~pl.col("correct") & pl.col("gold_executed").is_not_null()).row(0, named=True)
    lines = []
    for line in PREDS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        key = (row["record_id"], row["turn_idx"])
        if key == (right["record_id"], right["turn"]):
            row["predicted_answer"], row["predicted_unit"] = "-987654", "raw"
        if key == (wrong["record_id"], wrong["turn"]):
            row["predicted_answer"], row["predicted_unit"] = wrong["gold_executed"], "raw"
        lines.append(json.dumps(row))
    changed = tmp_path / "changed.jsonl"
    changed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return changed, (right["record_id"], right["turn"]), (wrong["record_id"], wrong["turn"])


def test_second_run_opens_with_deltas_and_flipped_turns(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    params = {"dataset": str(GOLD), "predictions": str(PREDS), "systems": "claude"}
    first = run_template("01-overview", parameters=params, out_dir=out)
    assert first.changes is None
    page = first.html.read_text(encoding="utf-8")
    assert "no earlier run of this report in this folder" in page
    manifest = json.loads(first.manifest.read_text())
    assert list(manifest)[:3] == ["schema_version", "workbench_version", "template"]
    assert manifest["schema_version"] == SCHEMA_VERSION
    assert manifest["template"] == "01-overview" and manifest["parameters"] == params
    assert manifest["inputs"]["dataset"]["sha256"] and manifest["inputs"]["predictions"][0]["sha256"]
    assert {"python", "polars", "papermill"} <= set(manifest["versions"])
    before = manifest["metrics"]["claude"]["n_turns_correct"]
    assert 'id="wb-manifest"' in page and "Run manifest" in page

    changed, now_wrong, now_right = _flip_two_turns(tmp_path)
    second = run_template("01-overview", parameters={**params, "predictions": str(changed)}, out_dir=out)
    assert second.changes is not None and "1 turn newly failing, 1 newly passing" in second.changes
    page = second.html.read_text(encoding="utf-8")
    assert "Changes since the previous run" in page and "inputs changed: predictions of claude" in page
    assert "Newly failing turns (1)" in page and "Newly passing turns (1)" in page
    assert f"<code>{now_wrong[0]}</code> turn {now_wrong[1]}" in page
    assert f"<code>{now_right[0]}</code> turn {now_right[1]}" in page
    after = json.loads(second.manifest.read_text())["metrics"]["claude"]["n_turns_correct"]
    assert after == before  # one up, one down


TORA = REPO / "tests/fixtures/predictions/gsm8k/tora-70b_first_20.jsonl"


def test_a_second_gsm8k_run_names_its_flipped_problems(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    params = {"dataset": "none", "predictions": str(TORA), "systems": "tora"}
    first = run_template("01-overview", parameters=params, out_dir=out)
    # problem 0 answered right, 12 wrong (12 for 13) in the fixture: make 0 wrong and 12 right
    answers = {"0": "-987654", "12": "13"}
    lines = []
    for line in TORA.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if str(row["idx"]) in answers:
            row["pred"] = [answers[str(row["idx"])]]
        lines.append(json.dumps(row))
    changed = tmp_path / "changed.jsonl"
    changed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    second = run_template("01-overview", parameters={**params, "predictions": str(changed)}, out_dir=out)
    assert first.changes is None and second.changes is not None
    # the line the command prints speaks of problems too
    assert (
        second.changes.startswith("Accuracy tora ") and "; 1 problem newly failing, 1 newly passing" in second.changes
    )

    page = second.html.read_text(encoding="utf-8")
    section = page[page.index('<section class="wb-changes">') :]
    section = section[: section.index("</section>")]
    # one problem each way: no metric moved, and the sentence that says so names them for problems
    unchanged = re.search(r"<p>No metric changed \((.*?)\)\.</p>", section)
    assert unchanged is not None and {"Accuracy", "Problems correct"} <= set(unchanged.group(1).split(", "))
    assert "Conversation" not in section and "All turns correct" not in section and "Turn execution" not in section
    assert "<h3>Newly failing problems (1)</h3><ul><li><code>0</code></li></ul>" in section
    assert "<h3>Newly passing problems (1)</h3><ul><li><code>12</code></li></ul>" in section
    assert " turn " not in section


def test_failing_cell_keeps_the_partial_notebook_and_names_the_cell(tmp_path: Path) -> None:
    import pytest

    from workbench.errors import ReportError

    with pytest.raises(ReportError) as info:
        run_template("01-overview", parameters={"dataset": str(tmp_path / "missing.json")}, out_dir=tmp_path)
    message = str(info.value)
    assert "01-overview.ipynb: cell" in message and "failed with" in message
    partial = next(tmp_path.glob("*.ipynb"))
    assert partial.name in message and partial.exists()


BUNDLED_RUNS = REPO / "data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6"


def test_two_nightly_runs_without_system_names_show_the_first_runs_accuracy(tmp_path: Path) -> None:
    """The README's cron job: the bundled dev runs, one a night, into one folder, no --system."""
    out = tmp_path / "nightly"
    first = run_template(
        "01-overview",
        parameters={"predictions": str(BUNDLED_RUNS / "2026-05-04T06-35-00Z/predictions.jsonl")},
        out_dir=out,
    )
    second = run_template(
        "01-overview",
        parameters={"predictions": str(BUNDLED_RUNS / "2026-05-04T12-48-44Z/predictions.jsonl")},
        out_dir=out,
    )
    assert first.changes is None and second.changes is not None
    then = pl.read_parquet(first.manifest.with_name(first.manifest.name.replace(".manifest.json", ".verdicts.parquet")))
    now = pl.read_parquet(
        second.manifest.with_name(second.manifest.name.replace(".manifest.json", ".verdicts.parquet"))
    )
    keys = ["record_id", "turn"]
    both = then.select(*keys, "correct").join(now.select(*keys, "correct"), on=keys, suffix="_now")
    failing = both.filter(pl.col("correct") & ~pl.col("correct_now")).height
    passing = both.filter(~pl.col("correct") & pl.col("correct_now")).height
    assert f"{failing} turn{'' if failing == 1 else 's'} newly failing, {passing} newly passing" in second.changes
    assert second.changes.startswith("Turn execution accuracy ")

    page = second.html.read_text(encoding="utf-8")
    section = page[page.index('<section class="wb-changes">') :]
    section = section[: section.index("</section>")]
    accuracy = re.search(r"<td>Turn execution accuracy</td>(.*?)</tr>", section)
    assert accuracy is not None
    cells = re.findall(r'<td class="num">([^<]*)</td>', accuracy.group(1))
    assert cells[:2] == ["83.1%", f"{now['correct'].mean():.1%}"] and cells[2].endswith(" points")
    assert f"Newly failing turns ({failing})" in section and f"Newly passing turns ({passing})" in section
    assert "same name without the run-folder timestamp" in section
    assert "zarifaziz-claude-sonnet-4-6@2026-05-04T06-35-00Z" in section
    assert page.index("</h1>") < page.index('<section class="wb-changes">'), "the changes follow the title"
    for written in [first.html, second.html, out / "index.html"]:
        text = written.read_text(encoding="utf-8")
        assert str(REPO) not in text and str(tmp_path) not in text, written
    index = (out / "index.html").read_text(encoding="utf-8")
    assert index.count("<li><h2>") == 2 and f'<a href="{second.html.name}">' in index
