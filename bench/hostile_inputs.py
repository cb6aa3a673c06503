"""What one hostile input costs, against the time limit: the budgets the tests used to assert.

The tests (tests/system/fuzz, tests/grading) check what such an input gets (a status and a reason); this
benchmark prints what it costs, in wall seconds and in CPU seconds of this process, and the ratio
of each to the grading time limit (``limits.DEFAULT_TIME_LIMIT``, 2 s of CPU). Each figure is the
best of ``repeat`` runs from cold caches (``memo.clear()``). Target: every ratio at most about 1.

* programs (issue 15, item 3): three predicted programs of 500 ``add(#n, 1)`` steps compared with
  a gold program (took about 60 s before the size caps), the same with 100,000 steps (83 s), the
  worst programs still inside the caps (a chain just under ``MAX_COMPARED_NODES``, a step nested
  ``MAX_PROGRAM_DEPTH`` deep, a ``MAX_PROGRAM_CHARS``-long program), each also executed and graded
  as a turn;
* extraction: a megabyte of unclosed ``\\boxed{``, 100,000 nested boxes (empty and with an
  answer), nested boxes filling ``MAX_OUTPUT_CHARS`` and an output just over it, under both
  extraction policies;
* ``collection_size`` of 10,000 nested parentheses and of a megabyte of them;
* the limits module: the median overhead of a warm ``call_with_limit`` (peer: calling the
  function in this process) and a timeout (limit 0.5 s of CPU), in wall and CPU seconds.

Run with ``python bench/hostile_inputs.py`` or ``python bench/run_all.py --only hostile_inputs``.
"""

from __future__ import annotations

import operator
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.grading import memo  # noqa: E402
from workbench.grading.equivalence import MAX_COMPARED_NODES, compare_programs  # noqa: E402
from workbench.grading.extract import MAX_OUTPUT_CHARS, extract_answer  # noqa: E402
from workbench.grading.limits import DEFAULT_TIME_LIMIT, call_with_limit  # noqa: E402
from workbench.grading.program import MAX_PROGRAM_CHARS, MAX_PROGRAM_DEPTH, execute_program  # noqa: E402
from workbench.grading.symbolic import collection_size  # noqa: E402
from workbench.grading.turn import grade_turn  # noqa: E402

GOLD = "subtract(206588, 181001), divide(#0, 181001)"
#: Nested boxes that fill MAX_OUTPUT_CHARS ("\\boxed{" is 7 characters, "}" one).
_AT_CAP = (MAX_OUTPUT_CHARS - 2) // 8


def chain(steps: int, start: int) -> str:
    """``add(start, 1), add(#0, 1), add(#1, 1), ...`` with ``steps`` steps."""
    return ", ".join([f"add({start}, 1)"] + [f"add(#{i}, 1)" for i in range(steps - 1)])


def _under_node_cap() -> str:
    steps = 1
    while sum(2 * i + 3 for i in range(steps + 1)) <= MAX_COMPARED_NODES:  # step i holds 2i + 3 nodes
        steps += 1
    return chain(steps, 1)


def _deepest() -> str:
    return "add(" * (MAX_PROGRAM_DEPTH - 1) + "1" + ", 1)" * (MAX_PROGRAM_DEPTH - 1)


def _longest() -> str:
    step = "divide(subtract(206588, 181001), 181001)"
    return ", ".join([step] * (MAX_PROGRAM_CHARS // (len(step) + 2)))


def _cost(func: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """Best wall and CPU seconds of ``func()`` over ``repeat`` runs from cold caches, and its result."""
    best_wall = best_cpu = float("inf")
    result = None
    for _ in range(repeat):
        memo.clear()
        wall, cpu = time.perf_counter(), time.process_time()
        result = func()
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best_wall, best_cpu, result


def _figure(func: Callable[[], Any], repeat: int, describe: Callable[[Any], str]) -> dict[str, Any]:
    wall, cpu, result = _cost(func, repeat)
    return {
        "wall_s": round(wall, 4),
        "cpu_s": round(cpu, 4),
        "wall_over_limit": round(wall / DEFAULT_TIME_LIMIT, 4),
        "cpu_over_limit": round(cpu / DEFAULT_TIME_LIMIT, 4),
        "outcome": describe(result),
    }


def _programs(repeat: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    cases = {
        "three_500_step_chains": [chain(500, start) for start in (1, 2, 3)],
        "three_100000_step_chains": [chain(100_000, start) for start in (1, 2, 3)],
        "chain_under_node_cap": [_under_node_cap()],
        "nested_to_depth_cap": [_deepest()],
        "longest_program": [_longest()],
    }
    for name, programs in cases.items():
        out[f"compare.{name}"] = _figure(
            lambda programs=programs: [compare_programs(p, GOLD) for p in programs],
            repeat,
            lambda matches: ", ".join(sorted({m.status for m in matches})),
        )
        out[f"execute.{name}"] = _figure(
            lambda programs=programs: [execute_program(p) for p in programs],
            repeat,
            lambda results: ", ".join(sorted({r.status.value for r in results})),
        )
        out[f"grade_turn.{name}"] = _figure(
            lambda programs=programs: [
                grade_turn(predicted_answer=None, predicted_program=p, gold_executed="0.14136", gold_program=GOLD)
                for p in programs
            ],
            repeat,
            lambda grades: ", ".join(sorted({g.verdict.status.value for g in grades})),
        )
    return out


def _extraction(repeat: int) -> dict[str, Any]:
    texts = {
        "unclosed_boxes_1mb": "\\boxed{" * (1 << 17),
        "nested_empty_boxes": "\\boxed{" * 100_000 + "}" * 100_000,
        "nested_boxes_with_answer": "\\boxed{" * 100_000 + "18" + "}" * 100_000,
        "nested_boxes_at_the_cap": "\\boxed{" * _AT_CAP + "18" + "}" * _AT_CAP,
        "over_the_cap": "#### 18 " * (MAX_OUTPUT_CHARS // 8 + 1),
    }
    out: dict[str, Any] = {}
    for name, text in texts.items():
        for policy in ("strict", "flex"):
            out[f"extract.{name}.{policy}"] = _figure(
                lambda text=text, policy=policy: extract_answer(text, policy=policy),
                repeat,
                lambda found: str(found.answer),
            )
    for name, text in {
        "parentheses_10000_deep": "(" * 10_000 + "1+1" + ")" * 10_000,
        "parentheses_1mb": "(" * (1 << 19) + ")" * (1 << 19),
    }.items():
        out[f"collection_size.{name}"] = _figure(lambda text=text: collection_size(text), repeat, str)
    return out


def _limits(calls: int) -> dict[str, Any]:
    call_with_limit(operator.add, 0, 0)  # a warm worker
    limited, local = [], []
    for i in range(calls):
        start = time.perf_counter()
        call_with_limit(operator.add, i, 1)
        limited.append(time.perf_counter() - start)
        start = time.perf_counter()
        operator.add(i, 1)
        local.append(time.perf_counter() - start)
    wall = time.perf_counter()
    timeout = call_with_limit(sum, range(10**12), time_limit=0.5)  # runs far past the limit
    wall = time.perf_counter() - wall
    overhead = statistics.median(limited)
    return {
        "warm_call_median_s": round(overhead, 6),
        "local_call_median_s": round(statistics.median(local), 9),
        "warm_call_target_s": 0.005,
        "timeout_limit_cpu_s": 0.5,
        "timeout_status": timeout.status.value,
        "timeout_message": timeout.message,
        "timeout_worker_cpu_s": timeout.cpu_seconds,
        "timeout_wall_s": round(wall, 3),
        "timeout_wall_over_limit": round(wall / 0.5, 3),
    }


def run(repeat: int = 3, calls: int = 200) -> dict[str, Any]:
    return {
        "time_limit_cpu_s": DEFAULT_TIME_LIMIT,
        "caps": {
            "MAX_PROGRAM_CHARS": MAX_PROGRAM_CHARS,
            "MAX_PROGRAM_DEPTH": MAX_PROGRAM_DEPTH,
            "MAX_COMPARED_NODES": MAX_COMPARED_NODES,
            "MAX_OUTPUT_CHARS": MAX_OUTPUT_CHARS,
        },
        "programs": _programs(repeat),
        "text": _extraction(repeat),
        "limits": _limits(calls),
    }


def main() -> None:
    f = run()
    limit = f["time_limit_cpu_s"]
    print(f"hostile inputs against the time limit ({limit} s of CPU); best of 3 from cold caches [target: ratio <= ~1]")
    for group in ("programs", "text"):
        for name, row in f[group].items():
            print(
                f"  {name:48} {row['wall_s']:8.3f} s wall ({row['wall_over_limit']:6.3f} x limit), "
                f"{row['cpu_s']:8.3f} s CPU ({row['cpu_over_limit']:6.3f} x limit)  -> {row['outcome'][:40]}"
            )
    lim = f["limits"]
    print(
        f"  call_with_limit warm call: median {lim['warm_call_median_s'] * 1000:.2f} ms "
        f"(in-process call {lim['local_call_median_s'] * 1e6:.2f} us; target < 5 ms)"
    )
    print(
        f"  a call past a 0.5 s CPU limit: {lim['timeout_status']} ({lim['timeout_message']}), worker CPU "
        f"{lim['timeout_worker_cpu_s']} s, {lim['timeout_wall_s']} s wall ({lim['timeout_wall_over_limit']} x limit)"
    )


if __name__ == "__main__":
    main()
