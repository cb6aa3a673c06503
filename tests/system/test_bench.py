"""The benchmark modules import and expose ``run``; the heavy ones are not run here."""

from __future__ import annotations

import importlib

import pytest

from bench.run_all import BENCHMARKS


@pytest.mark.parametrize("name", BENCHMARKS)
def test_bench_module_exposes_run(name: str) -> None:
    module = importlib.import_module(f"bench.{name}")
    assert callable(module.run)
    assert callable(module.main)


def test_math_verify_pairs_on_a_few_pairs() -> None:
    pytest.importorskip("math_verify")
    from bench.math_verify_pairs import run

    figures = run(limit=20)
    assert figures["pairs"] == 20
    for key in (
        "workbench_pairs_per_s",
        "math_verify_pairs_per_s",
        "ratio_workbench_over_math_verify",
        "graders_agree",
    ):
        assert key in figures
    assert 0 <= figures["graders_agree"] <= 20


def test_million_distinct_turns_on_a_small_set() -> None:
    """The benchmark's whole path on 20,000 turns: built, written, graded in a fresh process that
    reads them back, its figures returned (no time or memory is asserted: CI machines are busy)."""
    from bench.million_distinct_turns import run

    figures = run(turns=20_000, policy_set="main")
    assert figures["turns"] >= 20_000
    assert figures["gsm8k"]["turns"] + figures["convfinqa"]["turns"] == figures["turns"]
    # the seeded perturbations keep most turns distinct, as at a million
    assert figures["distinct_inputs"] >= 0.8 * figures["turns"]
    assert 0 < figures["fast_path_rows"] <= figures["distinct_inputs"]
    assert figures["peak_rss_mb"] >= figures["rss_mb_inputs_read"] > 0
    for key in ("grade_s", "slices_s", "grade_plus_slices_s", "peak_rss_mb_build", "peak_rss_mb_freed_at_once"):
        assert figures[key] > 0


def test_report_speed_runs_the_batch_as_separate_reports_too() -> None:
    from bench.report_speed import independent_commands

    commands = independent_commands()
    assert len(commands) == 9  # notebooks/bundled.yaml's reports
    assert all(c[1:4] == ["report", "--template", c[3]] and c[-2] == "--out" for c in commands)
    assert all(c[-1].startswith("{out}/") for c in commands)  # a temporary folder, never reports/
    compare = commands[2]
    assert compare[3] == "04-compare-systems"
    assert compare.count("--predictions") == 2  # the template's two default files, as the batch runs it
    assert [compare[i + 1] for i, part in enumerate(compare) if part == "--system"] == [
        "claude-sonnet-4-6 06-35",
        "claude-sonnet-4-6 12-48",
    ]
    tora = commands[3]
    assert tora[tora.index("--dataset") + 1] == "none" and tora.count("--predictions") == 1
