"""The ``workbench_gsm8k`` task run by lm-evaluation-harness itself.

A small ``LM`` registered here replays real model outputs (ToRA-70B's first solution for
GSM8K test problems 0..19, ``tests/fixtures/predictions/gsm8k/tora-70b_first_20.jsonl``)
for each request; ``simple_evaluate`` runs the task from :func:`task_dir` with
``log_samples=True`` and the samples file is written as the CLI writes it. The harness's
figures must equal the workbench's on the same outputs, graded through the grading API and
through the workbench's own pipeline on the samples file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("lm_eval")

import lm_eval  # noqa: E402
from lm_eval.api.model import LM  # noqa: E402
from lm_eval.loggers import EvaluationTracker  # noqa: E402
from lm_eval.tasks import TaskManager  # noqa: E402

from workbench.analysis.metrics import policy_accuracy, summarize  # noqa: E402
from workbench.analysis.textmetrics import text_scores  # noqa: E402
from workbench.grading.compare import answers_match  # noqa: E402
from workbench.grading.extract import extract_answer  # noqa: E402
from workbench.grading.policies import POLICIES, exact_string_match, for_benchmark  # noqa: E402
from workbench.integrations.lm_eval import TASK_NAME, default_data_file, task_dir  # noqa: E402
from workbench.io.gold import gsm8k_final_answer  # noqa: E402
from workbench.io.link import gold_from_predictions  # noqa: E402
from workbench.io.predictions import load_predictions  # noqa: E402
from workbench.pipeline.grade import grade_predictions  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
FILTERS = {"strict-match": "strict", "flexible-extract": "flex"}


def _tora_outputs() -> dict[str, str]:
    lines = (FIXTURES / "predictions" / "gsm8k" / "tora-70b_first_20.jsonl").read_text(encoding="utf-8").splitlines()
    return {o["question"]: o["code"][0] for o in map(json.loads, lines)}


OUTPUTS = _tora_outputs()
DOCS = [json.loads(line) for line in default_data_file().read_text(encoding="utf-8").splitlines()]


class ReplayLM(LM):
    """Answers each request with the saved output for its question."""

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        return [OUTPUTS[r.doc["question"]] for r in requests]

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
        raise NotImplementedError("workbench_gsm8k only generates")

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
        raise NotImplementedError("workbench_gsm8k only generates")


def _evaluate(out_dir: Path, metadata: dict[str, Any] | None = None) -> tuple[dict[str, Any], Path]:
    """Run the task under lm-eval; return its results and the samples file it wrote."""
    tracker = EvaluationTracker(output_path=str(out_dir))
    manager = TaskManager(include_path=str(task_dir()), include_defaults=False, metadata=metadata)
    results = lm_eval.simple_evaluate(
        model=ReplayLM(),
        tasks=[TASK_NAME],
        task_manager=manager,
        log_samples=True,
        evaluation_tracker=tracker,
        bootstrap_iters=0,
    )
    assert results is not None
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    tracker.save_results_samples(task_name=TASK_NAME, samples=samples[TASK_NAME])
    [samples_file] = out_dir.glob(f"*/samples_{TASK_NAME}_*.jsonl")
    return results, samples_file


@pytest.fixture(scope="module")
def harness_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    saved = {k: os.environ.get(k) for k in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE")}
    os.environ.update(HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1")  # nothing is downloaded
    try:
        return _evaluate(tmp_path_factory.mktemp("lm_eval_out"))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_task_reports_the_metrics_with_the_right_aggregations(harness_run: tuple[dict[str, Any], Path]) -> None:
    results, _ = harness_run
    figures = results["results"][TASK_NAME]
    assert figures["sample_len"] == 20
    for metric in ("exact_match", "workbench_numeric", "bleu", "rouge1", "rouge2", "rougeL"):
        for filter_name in FILTERS:
            assert isinstance(figures[f"{metric},{filter_name}"], float)
        assert results["higher_is_better"][TASK_NAME][metric] is True
    # the figures on these 20 ToRA-70B outputs
    assert figures["exact_match,strict-match"] == pytest.approx(0.65, abs=1e-12)
    assert figures["workbench_numeric,strict-match"] == pytest.approx(0.75, abs=1e-12)
    assert figures["exact_match,flexible-extract"] == pytest.approx(0.65, abs=1e-12)
    assert figures["workbench_numeric,flexible-extract"] == pytest.approx(0.8, abs=1e-12)
    assert figures["bleu,strict-match"] == pytest.approx(4.52298792481342, abs=1e-9)
    assert figures["rouge1,strict-match"] == pytest.approx(37.06117006461848, abs=1e-9)
    assert figures["rouge2,strict-match"] == pytest.approx(12.33644698387584, abs=1e-9)
    assert figures["rougeL,strict-match"] == pytest.approx(32.20936829330104, abs=1e-9)


def test_figures_equal_the_grading_api(harness_run: tuple[dict[str, Any], Path]) -> None:
    figures = harness_run[0]["results"][TASK_NAME]
    outputs = [OUTPUTS[d["question"]] for d in DOCS]
    solutions = [d["answer"] for d in DOCS]
    golds = [gsm8k_final_answer(s) for s in solutions]
    n = len(DOCS)
    for filter_name, policy in FILTERS.items():
        numbers = for_benchmark(POLICIES[policy], "gsm8k").numbers
        answers = [extract_answer(o, policy=policy).answer for o in outputs]  # type: ignore[arg-type]
        exact = sum(exact_string_match(a, g).correct for a, g in zip(answers, golds, strict=True)) / n
        numeric = (
            sum(
                answers_match(a, g, question=d["question"], policy=numbers).correct
                for a, g, d in zip(answers, golds, DOCS, strict=True)
            )
            / n
        )
        assert figures[f"exact_match,{filter_name}"] == pytest.approx(exact, abs=1e-12)
        assert figures[f"workbench_numeric,{filter_name}"] == pytest.approx(numeric, abs=1e-12)
        text = text_scores(outputs, solutions)
        for metric in ("bleu", "rouge1", "rouge2", "rougeL"):
            assert figures[f"{metric},{filter_name}"] == pytest.approx(getattr(text, metric), abs=1e-9)


def test_samples_file_loads_and_the_workbench_agrees(harness_run: tuple[dict[str, Any], Path]) -> None:
    figures, samples_file = harness_run[0]["results"][TASK_NAME], harness_run[1]
    lines = [json.loads(line) for line in samples_file.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 40 and {ln["filter"] for ln in lines} == set(FILTERS)
    first_strict = next(ln for ln in lines if ln["filter"] == "strict-match" and ln["doc_id"] == 0)
    assert first_strict["filtered_resps"] == ["18"]  # the extracted answer, logged as text

    preds = load_predictions(samples_file, system="tora-70b")
    assert preds.height == 20
    assert preds["record_id"].to_list() == [str(i) for i in range(20)]
    assert preds["raw_output"].to_list() == [OUTPUTS[d["question"]] for d in DOCS]
    assert preds["gold_answer"].to_list() == [gsm8k_final_answer(d["answer"]) for d in DOCS]

    gold = gold_from_predictions(preds, source=str(samples_file))
    assert gold.benchmark == "gsm8k"
    run = grade_predictions(
        gold, preds, policy="strict", also=["strict", "flex", "exact-string"], checks=False, workers=1
    )
    accuracy = {row[1]: row[4] for row in policy_accuracy(run.policy_grades).rows()}
    assert accuracy["strict"] == pytest.approx(figures["workbench_numeric,strict-match"], abs=1e-12)
    assert accuracy["flex"] == pytest.approx(figures["workbench_numeric,flexible-extract"], abs=1e-12)
    # exact-string takes the answer the harness extracted (the flexible-extract filter's)
    assert accuracy["exact-string"] == pytest.approx(figures["exact_match,flexible-extract"], abs=1e-12)
    text = summarize(run.turns, run.unmatched, "strict")["tora-70b"]["text"]
    for metric in ("bleu", "rouge1", "rouge2", "rougeL"):
        assert text[metric] == pytest.approx(figures[f"{metric},strict-match"], abs=1e-9)
    # the harness's verdict travels as upstream_correct (flexible-extract's exact_match)
    assert preds["upstream_correct"].sum() / 20 == pytest.approx(figures["exact_match,flexible-extract"])


def test_data_file_is_overridable(tmp_path: Path) -> None:
    subset = tmp_path / "gsm8k_three.jsonl"
    subset.write_text("".join(json.dumps(d) + "\n" for d in DOCS[:3]), encoding="utf-8")
    results, samples_file = _evaluate(tmp_path / "out", metadata={"data_files": str(subset)})
    figures = results["results"][TASK_NAME]
    assert figures["sample_len"] == 3
    assert load_predictions(samples_file).height == 3
