"""Answer pairs per second: the grading cascade over the real outputs bundled in data/.

Not a timed test: it prints figures, and ratios against a peer measured in the same run
(the exact-string baseline, the cheapest possible grader), because the machines are
shared and noisy. Run with ``make bench`` or ``python benchmarks/grading_throughput.py``.

Pairs:
* ConvFinQA: the claude-sonnet-4-6 dev run, 1,490 (answer, executed gold) pairs, with
  the question and the unit the output declares;
* GSM8K: every bundled system (ToRA x2, program-of-thoughts x2, OpenAI GPT-3 x4), the
  answer the flexible extraction finds in each raw output against the gold.
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.config import BUNDLED_DATASET, BUNDLED_PREDICTIONS  # noqa: E402
from workbench.grading.compare import answers_match  # noqa: E402
from workbench.grading.extract import extract_answer  # noqa: E402
from workbench.grading.policies import POLICIES, exact_string_match  # noqa: E402
from workbench.grading.turn import grade_turn  # noqa: E402
from workbench.io.gold import load_gold  # noqa: E402
from workbench.io.link import attach_record_ids  # noqa: E402
from workbench.io.predictions import load_predictions  # noqa: E402

ALL_POLICIES = tuple(POLICIES.values())
Pair = tuple[str | None, str | None, str | None, str | None]  # pred, gold, question, unit

GSM8K_FILES = [
    "data/predictions/gsm8k/tora/tora-70b.jsonl",
    "data/predictions/gsm8k/tora/tora-code-34b.jsonl",
    "data/predictions/gsm8k/program-of-thoughts/gsm8K_s0_e-1_11_17_10_20.jsonl",
    "data/predictions/gsm8k/program-of-thoughts/gsm8K_zs_s0_e-1_11_19_09_55.jsonl",
    "data/predictions/gsm8k/openai-gpt3/example_model_solutions.jsonl",
]


def convfinqa_pairs() -> list[Pair]:
    gold = load_gold(ROOT / BUNDLED_DATASET)
    preds = load_predictions(ROOT / BUNDLED_PREDICTIONS)
    joined = preds.join(gold.turns.select("record_id", "turn", "gold_executed"), on=["record_id", "turn"])
    return [
        (r["predicted_answer"], r["gold_executed"], r["question"], r["predicted_unit"])
        for r in joined.iter_rows(named=True)
    ]


def gsm8k_pairs() -> list[Pair]:
    gold = load_gold(ROOT / "data/gsm8k/test.jsonl")
    answers = dict(gold.turns.select("record_id", "gold_executed").iter_rows())
    pairs: list[Pair] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # program-of-thoughts prompt-only lines
        for name in GSM8K_FILES:
            preds = attach_record_ids(load_predictions(ROOT / name), gold)
            for row in preds.iter_rows(named=True):
                answer = row["predicted_answer"] or extract_answer(row["raw_output"]).answer
                pairs.append((answer, answers.get(row["record_id"]), row["question"], None))
    return pairs


def rate(label: str, pairs: Sequence[Pair], grade: Callable[[Pair], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for pair in pairs:
            grade(pair)
        best = min(best, time.perf_counter() - start)
    per_second = len(pairs) / best
    print(f"  {label:<44} {len(pairs):>6} pairs  {best * 1000:8.1f} ms  {per_second:>10,.0f} pairs/s")
    return per_second


def main() -> int:
    print("grading throughput (best of 3; one process)")
    for name, pairs in (("ConvFinQA dev, claude-sonnet-4-6", convfinqa_pairs()), ("GSM8K, 8 systems", gsm8k_pairs())):
        print(f"{name}:")
        peer = rate("peer: exact string match", pairs, lambda p: exact_string_match(p[0], p[1]))
        cascade = rate(
            "answers_match (cascade, cues)", pairs, lambda p: answers_match(p[0], p[1], question=p[2], unit=p[3])
        )
        every = rate(
            f"grade_turn under all {len(POLICIES)} policies",
            pairs,
            lambda p: grade_turn(
                predicted_answer=p[0],
                predicted_program=None,
                gold_executed=p[1],
                gold_program=None,
                question=p[2],
                unit=p[3],
                also=ALL_POLICIES,
            ),
        )
        print(f"  ratio to peer: cascade {peer / cascade:.1f}x slower, all policies {peer / every:.1f}x slower")
    return 0


if __name__ == "__main__":
    sys.exit(main())
