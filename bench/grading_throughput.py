"""Answer pairs per second: the grading cascade over the real outputs bundled in data/.

Not a timed test: it prints figures, and ratios against a peer measured in the same run
(the exact-string baseline, the cheapest possible grader), because the machines are
shared and noisy. Run with ``make bench`` or ``python bench/grading_throughput.py``.

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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.config import BUNDLED_DATASET, BUNDLED_PREDICTIONS  # noqa: E402
from workbench.grading.compare import answers_match  # noqa: E402
from workbench.grading.extract import extract_answer  # noqa: E402
from workbench.grading.memo import clear as clear_caches  # noqa: E402
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


def gsm8k_records() -> list[dict[str, Any]]:
    """One dict per GSM8K output: system, answer (flexible extraction), gold, question,
    raw_output, upstream_correct (OpenAI's verdict, else None) and upstream_answer (ToRA's)."""
    gold = load_gold(ROOT / "data/gsm8k/test.jsonl")
    answers = dict(gold.turns.select("record_id", "gold_executed").iter_rows())
    records: list[dict[str, Any]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # program-of-thoughts prompt-only lines
        for name in GSM8K_FILES:
            preds = attach_record_ids(load_predictions(ROOT / name), gold)
            for row in preds.iter_rows(named=True):
                records.append(
                    {
                        "file": name,
                        "system": row["system"],
                        "predicted_answer": row["predicted_answer"],
                        "answer": row["predicted_answer"] or extract_answer(row["raw_output"]).answer,
                        "gold": answers.get(row["record_id"]),
                        "question": row["question"],
                        "raw_output": row["raw_output"],
                        "upstream_correct": row["upstream_correct"],
                        "upstream_answer": row["upstream_answer"],
                    }
                )
    return records


def gsm8k_pairs() -> list[Pair]:
    return [(r["answer"], r["gold"], r["question"], None) for r in gsm8k_records()]


def rate(label: str, pairs: Sequence[Pair], grade: Callable[[Pair], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        clear_caches()  # each repetition from empty caches: only repeats within one pass are reused
        start = time.perf_counter()
        for pair in pairs:
            grade(pair)
        best = min(best, time.perf_counter() - start)
    return len(pairs) / best


def run() -> dict[str, Any]:
    """Pairs per second (best of 3, one process) for each pair set and grader."""
    out: dict[str, Any] = {}
    for key, pairs in (("convfinqa", convfinqa_pairs()), ("gsm8k", gsm8k_pairs())):
        peer = rate("peer", pairs, lambda p: exact_string_match(p[0], p[1]))
        cascade = rate("cascade", pairs, lambda p: answers_match(p[0], p[1], question=p[2], unit=p[3]))
        every = rate(
            "all",
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
        out[key] = {
            "pairs": len(pairs),
            "exact_string_pairs_per_s": round(peer),
            "answers_match_pairs_per_s": round(cascade),
            "all_policies_pairs_per_s": round(every),
            "policies": len(POLICIES),
            "answers_match_slowdown_vs_exact": round(peer / cascade, 2),
            "all_policies_slowdown_vs_exact": round(peer / every, 2),
        }
    return out


def main() -> int:
    figures = run()
    print("grading throughput (best of 3; one process)")
    names = {"convfinqa": "ConvFinQA dev, claude-sonnet-4-6", "gsm8k": "GSM8K, 8 systems"}
    for key, f in figures.items():
        print(f"{names[key]} ({f['pairs']:,} pairs):")
        print(f"  peer: exact string match                  {f['exact_string_pairs_per_s']:>10,} pairs/s")
        print(f"  answers_match (cascade, cues)             {f['answers_match_pairs_per_s']:>10,} pairs/s")
        print(f"  grade_turn under all {f['policies']} policies           {f['all_policies_pairs_per_s']:>10,} pairs/s")
        print(
            f"  ratio to peer: cascade {f['answers_match_slowdown_vs_exact']:.1f}x slower, "
            f"all policies {f['all_policies_slowdown_vs_exact']:.1f}x slower"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
