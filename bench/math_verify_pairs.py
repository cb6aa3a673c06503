"""GSM8K pairs graded by workbench and by math-verify in the same run: speed and agreement.

Pairs: every bundled GSM8K output (ToRA x2, program-of-thoughts x2, OpenAI GPT-3 x4 systems a
line; 10,549 outputs), each against the gold answer of data/gsm8k/test.jsonl. Both graders get
the same input, the model's output: the raw output, or, where the file carries an answer the
system produced itself (program-of-thoughts: the executed program's result), that answer.

* workbench: what ``workbench grade`` does for GSM8K (``select_answer``: the system's own answer,
  else flexible extraction; then ``grade_answer``: the cascade, SymPy for expressions), end to
  end from the raw outputs through the vectorised fast path (issue 21,
  :func:`workbench.pipeline.fastpath.decide`: the pairs it decides in polars, the rest pair by
  pair in Python; the outputs are one polars table, as ``workbench grade`` holds them); also
  pair by pair without the fast path (the figure before issue 21), and on pre-extracted answers
  (best of 3, each from empty caches: :mod:`workbench.grading.memo` reuses only what repeats
  within one pass, as a run of eight systems over the same questions does);
* math-verify (the package, ``from math_verify import parse, verify``), the standard call
  ``verify(parse(gold), parse(output))`` with its signal timeouts switched off
  (``parsing_timeout=None``, ``timeout_seconds=None``): the run is single-threaded and the
  outputs are short, and alarms would add per-call system calls to its time. Timed once.

Agreement with a reference verdict, where one exists:

* OpenAI GPT-3 (4 systems): the upstream ``is_correct`` (``upstream_correct``);
* ToRA (2 systems): derived, ToRA's own extracted answer (``pred``, ``upstream_answer``)
  numerically equal to the gold (what ToRA's evaluation script checks); the file carries no
  verdict;
* program-of-thoughts: none.

Floor (issue 35, which dropped issue 21's 200x: no compiled extension for that ratio): workbench end
to end at least 50x the pairs per second of math-verify (``floor_ratio``; the ratio itself is reported,
with no target), at equal or better agreement with the reference verdicts; the fast path's verdicts equal
the pair-by-pair ones (counted: ``fast_path_verdicts_differ``, 0).
Run with ``make bench`` or ``python bench/math_verify_pairs.py [--limit N]``.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

from bench.grading_throughput import gsm8k_records  # noqa: E402
from workbench.grading.memo import clear as clear_caches  # noqa: E402
from workbench.grading.policies import DEFAULT_GRADING_POLICY, for_benchmark, grade_answer, select_answer  # noqa: E402
from workbench.pipeline.fastpath import decide  # noqa: E402

FLOOR_RATIO = 50.0


def _number(text: Any) -> float | None:
    try:
        return float(str(text).replace(",", "").replace("$", "").strip())
    except (TypeError, ValueError):
        return None


def reference(record: dict[str, Any]) -> tuple[str, bool] | None:
    """(which reference, verdict) for a record, or None where there is none."""
    if record["upstream_correct"] is not None:
        return "openai_upstream_is_correct", bool(record["upstream_correct"])
    if record["upstream_answer"] is not None:
        a, b = _number(record["upstream_answer"]), _number(record["gold"])
        return "tora_derived_pred_equals_gold", a is not None and b is not None and abs(a - b) < 1e-4
    return None


#: What ``workbench grade`` applies to GSM8K: the default policy, no x100 reading of a bare number.
GSM8K_POLICY = for_benchmark(DEFAULT_GRADING_POLICY, "gsm8k")


def _answer(record: dict[str, Any]) -> str | None:
    """The answer the product compares: the system's own answer, else flexible extraction."""
    answer, _, _ = select_answer(
        GSM8K_POLICY, predicted_answer=record["predicted_answer"], raw_output=record["raw_output"]
    )
    return answer


def _ours(record: dict[str, Any]) -> bool:
    return grade_answer(GSM8K_POLICY, _answer(record), record["gold"], question=record["question"]).correct


def _table(records: list[dict[str, Any]]) -> pl.DataFrame:
    """The outputs as ``workbench grade`` holds them: one polars table."""
    return pl.DataFrame(
        {
            "predicted_answer": [r["predicted_answer"] for r in records],
            "raw_output": [r["raw_output"] for r in records],
            "gold_executed": [r["gold"] for r in records],
            "question": [r["question"] for r in records],
        },
        schema={c: pl.String() for c in ("predicted_answer", "raw_output", "gold_executed", "question")},
    )


def _ours_fast(records: list[dict[str, Any]], table: pl.DataFrame) -> tuple[list[bool], int]:
    """Every pair's verdict, the fast path's where it decides and the cascade's elsewhere; and how
    many pairs the fast path decided."""
    rows, grades = decide(table, [GSM8K_POLICY])
    verdicts: list[bool | None] = [None] * len(records)
    for row, correct in zip(rows.to_list(), grades["correct"].to_list(), strict=True):
        verdicts[row] = correct
    out = [v if v is not None else _ours(r) for v, r in zip(verdicts, records, strict=True)]
    return out, rows.len()


def run(limit: int | None = None) -> dict[str, Any]:
    from math_verify import parse, verify

    logging.getLogger("math_verify").setLevel(logging.ERROR)  # "timeout is disabled" warnings
    records = gsm8k_records()
    if limit is not None:
        records = records[:limit]
    n = len(records)

    table = _table(records)
    best_e2e = float("inf")
    ours: list[bool] = []
    decided = 0
    for _ in range(3):
        clear_caches()  # every repetition starts cold: only repeats within one pass are reused
        start = time.perf_counter()
        ours, decided = _ours_fast(records, table)
        best_e2e = min(best_e2e, time.perf_counter() - start)
    best_pairs = float("inf")
    per_pair: list[bool] = []
    for _ in range(3):
        clear_caches()
        start = time.perf_counter()
        per_pair = [_ours(r) for r in records]
        best_pairs = min(best_pairs, time.perf_counter() - start)
    answers = [_answer(r) for r in records]
    best_match = float("inf")
    for _ in range(3):
        clear_caches()
        start = time.perf_counter()
        for r, answer in zip(records, answers, strict=True):
            grade_answer(GSM8K_POLICY, answer, r["gold"], question=r["question"])
        best_match = min(best_match, time.perf_counter() - start)

    theirs: list[bool] = []
    errors = 0
    start = time.perf_counter()
    for r in records:
        try:
            gold = parse(r["gold"] or "", parsing_timeout=None)
            pred = parse(r["predicted_answer"] or r["raw_output"] or "", parsing_timeout=None)
            theirs.append(bool(verify(gold, pred, timeout_seconds=None)))
        except Exception:  # noqa: BLE001 - counted, graded wrong
            errors += 1
            theirs.append(False)
    t_mv = time.perf_counter() - start

    # like for like with grade_answer alone: math-verify on the answers the workbench extracted
    start = time.perf_counter()
    for r, answer in zip(records, answers, strict=True):
        try:
            verify(
                parse(r["gold"] or "", parsing_timeout=None),
                parse(answer or "", parsing_timeout=None),
                timeout_seconds=None,
            )
        except Exception:  # noqa: BLE001, S112 - timed only
            continue
    t_mv_answers = time.perf_counter() - start

    agreement: dict[str, dict[str, int]] = {}
    for r, o, t in zip(records, ours, theirs, strict=True):
        ref = reference(r)
        if ref is None:
            continue
        name, verdict = ref
        a = agreement.setdefault(
            name, {"pairs": 0, "reference_correct": 0, "workbench_agrees": 0, "math_verify_agrees": 0}
        )
        a["pairs"] += 1
        a["reference_correct"] += verdict
        a["workbench_agrees"] += o == verdict
        a["math_verify_agrees"] += t == verdict

    ours_rate, match_rate, mv_rate = n / best_e2e, n / best_match, n / t_mv
    return {
        "pairs": n,
        "fast_path_decided": decided,
        "fast_path_fraction": round(decided / n, 4) if n else 0.0,
        "fast_path_verdicts_differ": sum(a != b for a, b in zip(ours, per_pair, strict=True)),
        "workbench_pairs_per_s": round(ours_rate),
        "workbench_per_pair_pairs_per_s": round(n / best_pairs),
        "ratio_per_pair_over_math_verify": round(n / best_pairs / mv_rate, 1),
        "workbench_match_only_pairs_per_s": round(match_rate),
        "math_verify_pairs_per_s": round(mv_rate, 1),
        "ratio_workbench_over_math_verify": round(ours_rate / mv_rate, 1),
        "ratio_match_only_over_math_verify": round(match_rate / mv_rate, 1),
        "math_verify_on_answers_pairs_per_s": round(n / t_mv_answers, 1),
        "ratio_match_only_over_math_verify_on_answers": round(match_rate / (n / t_mv_answers), 1),
        "floor_ratio": FLOOR_RATIO,
        "workbench_seconds": round(best_e2e, 3),
        "math_verify_seconds": round(t_mv, 2),
        "math_verify_errors": errors,
        "workbench_correct": sum(ours),
        "math_verify_correct": sum(theirs),
        "graders_agree": sum(o == t for o, t in zip(ours, theirs, strict=True)),
        "workbench_only_correct": sum(o and not t for o, t in zip(ours, theirs, strict=True)),
        "math_verify_only_correct": sum(t and not o for o, t in zip(ours, theirs, strict=True)),
        "agreement_with_reference": agreement,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N pairs")
    f = run(parser.parse_args(argv).limit)
    n = f["pairs"]
    print(f"GSM8K: {n:,} (output, gold) pairs")
    print(
        f"  workbench select + grade (GSM8K)  {f['workbench_pairs_per_s']:>10,} pairs/s end to end, fast path "
        f"({f['fast_path_decided']:,} pairs decided in polars, {f['fast_path_fraction']:.1%}; verdicts that differ "
        f"from pair by pair: {f['fast_path_verdicts_differ']})"
    )
    print(
        f"  workbench pair by pair            {f['workbench_per_pair_pairs_per_s']:>10,} pairs/s "
        f"(grade_answer alone {f['workbench_match_only_pairs_per_s']:,})"
    )
    print(
        f"  math-verify parse + verify        {f['math_verify_pairs_per_s']:>10,.0f} pairs/s ({f['math_verify_errors']} errors)"
    )
    print(
        f"  ratio {f['ratio_workbench_over_math_verify']:.1f}x [floor >= {FLOOR_RATIO:.0f}x]; "
        f"pair by pair {f['ratio_per_pair_over_math_verify']:.1f}x"
    )
    print(
        f"  on the extracted answers: grade_answer {f['workbench_match_only_pairs_per_s']:,} pairs/s, math-verify "
        f"{f['math_verify_on_answers_pairs_per_s']:,.0f} pairs/s: {f['ratio_match_only_over_math_verify_on_answers']:.1f}x"
    )
    print(
        f"  marked correct: workbench {f['workbench_correct']:,}, math-verify {f['math_verify_correct']:,}; "
        f"the two agree on {f['graders_agree']:,}/{n:,} ({f['workbench_only_correct']} only workbench, "
        f"{f['math_verify_only_correct']} only math-verify)"
    )
    for name, a in f["agreement_with_reference"].items():
        print(
            f"  vs {name} ({a['pairs']:,} pairs, {a['reference_correct']:,} correct): "
            f"workbench agrees {a['workbench_agrees']:,}, math-verify agrees {a['math_verify_agrees']:,}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
