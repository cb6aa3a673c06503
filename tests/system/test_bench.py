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
