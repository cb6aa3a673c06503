"""The regression gate (issue 34, point 3): ``workbench check FOLDER --points 3`` on a ledger of
12 nightly runs built from the bundled runs fails on the night with a planted 6-point drop on
``divide`` only, with one line naming it; on two nights that differ only by seeded noise it
passes in at least 95 of 100 seeds."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.system.history.conftest import nightly
from workbench.cli import main
from workbench.pipeline.ledger import LedgerRow, append
from workbench.report.gate import REGRESSION_EXIT, check_ledger

POINTS = "3"


def test_the_gate_fails_on_the_night_of_the_planted_drop_only(
    bundled_rows: list[LedgerRow], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    codes = []
    lines_of_night_9: list[str] = []
    for index, tonight in enumerate(nightly(bundled_rows, 12, drop_night=9), start=1):
        append(tmp_path / "ledger.sqlite", tonight)
        codes.append(main(["check", str(tmp_path), "--points", POINTS]))
        out = capsys.readouterr().out
        if index == 9:
            lines_of_night_9 = out.splitlines()
    assert codes == [0] * 8 + [REGRESSION_EXIT] + [0] * 3
    assert len(lines_of_night_9) == 1, lines_of_night_9
    (line,) = lines_of_night_9
    system = bundled_rows[0].system
    assert line.startswith(f"regression: {system}: operation divide: ") and " -> " in line and "p = " in line


def test_the_first_night_has_nothing_to_compare_with(
    bundled_rows: list[LedgerRow], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    append(tmp_path / "ledger.sqlite", next(nightly(bundled_rows, 1)))
    assert main(["check", str(tmp_path)]) == 0
    assert "no previous run in the ledger" in capsys.readouterr().err
    assert main(["check", str(tmp_path / "elsewhere")]) == 2
    assert "no run ledger here" in capsys.readouterr().err


def test_the_gate_passes_nights_that_differ_only_by_noise(bundled_rows: list[LedgerRow], tmp_path: Path) -> None:
    passed = 0
    for seed in range(100):
        ledger = tmp_path / f"ledger-{seed}.sqlite"
        for tonight in nightly(bundled_rows, 2, seed=seed + 1):
            append(ledger, tonight)
        passed += check_ledger(ledger, float(POINTS)).exit_code == 0
    assert passed >= 95, passed


def test_a_nightly_system_is_matched_without_its_run_folder_timestamp(
    bundled_rows: list[LedgerRow], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nights = list(nightly(bundled_rows[:1], 2, drop_night=2))
    for index, tonight in enumerate(nights, start=1):
        renamed = [dataclasses.replace(row, system=f"nightly-model@2026-11-0{index}T02-00-00Z") for row in tonight]
        append(tmp_path / "ledger.sqlite", renamed)
    assert main(["check", str(tmp_path), "--points", POINTS]) == REGRESSION_EXIT
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("regression: nightly-model@2026-11-02T02-00-00Z: ") and "operation divide" in line


def test_each_template_of_a_batch_is_checked_against_its_own_previous_run(
    bundled_rows: list[LedgerRow], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = list(nightly(bundled_rows[:1], 2, drop_night=2))
    steady = list(nightly(bundled_rows[:1], 2))
    for index in range(2):  # each night: 01-overview (broken on night 2), then 02-error-slices
        for template, nights in (("01-overview", broken), ("02-error-slices", steady)):
            row = nights[index][0]
            append(
                tmp_path / "ledger.sqlite",
                [dataclasses.replace(row, run_id=f"{row.run_id}-{template}", template=template)],
            )
    assert main(["check", str(tmp_path), "--points", POINTS]) == REGRESSION_EXIT
    (line,) = capsys.readouterr().out.splitlines()
    assert "operation divide" in line
