"""Batch files for `workbench report --config`."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.batch import load_batch
from workbench.errors import InputError

REPO = Path(__file__).resolve().parents[1]


def test_bundled_batch_lists_the_report_templates() -> None:
    jobs = load_batch(REPO / "notebooks" / "bundled.yaml")
    assert [j.template for j in jobs] == ["01-overview", "02-error-slices", "04-compare-systems"]
    assert all((REPO / "notebooks" / f"{j.template}.ipynb").exists() for j in jobs)
    assert all(j.out_dir is None and j.parameters == {} for j in jobs)


def test_inputs_become_template_parameters(tmp_path: Path) -> None:
    batch = tmp_path / "b.yaml"
    batch.write_text(
        "out: nightly\n"
        "reports:\n"
        "  - template: 04-compare-systems\n"
        "    predictions: [a.jsonl, b.jsonl]\n"
        "    systems: [A, B]\n"
        "    parameters: {n_boot: 50}\n"
        "  - template: 01-overview\n"
        "    dataset: d.json\n"
        "    out: elsewhere\n",
        encoding="utf-8",
    )
    first, second = load_batch(batch)
    assert first.parameters == {"predictions": ["a.jsonl", "b.jsonl"], "systems": ["A", "B"], "n_boot": 50}
    assert first.out_dir == Path("nightly/04-compare-systems")
    assert second.parameters == {"dataset": "d.json"} and second.out_dir == Path("elsewhere")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("reports: []\n", "non-empty 'reports' list"),
        ("reports:\n  - dataset: d.json\n", "report 1: expected a mapping with a 'template'"),
        ("reports:\n  - template: 01-overview\n    colour: red\n", "report 1: unknown key colour"),
        ("reports:\n  - template: 01-overview\n    systems: 3\n", "field 'systems'"),
        ("reports: [\n", "not valid YAML"),
        ("outdir: x\nreports:\n  - template: 01-overview\n", "unknown key outdir"),
    ],
)
def test_bad_batch_files_name_the_entry_and_field(tmp_path: Path, text: str, needle: str) -> None:
    batch = tmp_path / "bad.yaml"
    batch.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match="bad.yaml") as info:
        load_batch(batch)
    assert needle in str(info.value) and "Fix:" in str(info.value)


def test_a_template_given_as_a_path_names_a_folder_inside_out(tmp_path: Path) -> None:
    config = tmp_path / "batch.yaml"
    outside = tmp_path / "elsewhere" / "01-overview.ipynb"
    config.write_text(
        f"out: {tmp_path / 'reports'}\nreports:\n  - template: {outside}\n  - template: ../../02-error-slices\n"
    )
    jobs = load_batch(config)
    assert [job.out_dir for job in jobs] == [
        tmp_path / "reports" / "01-overview",
        tmp_path / "reports" / "02-error-slices",
    ]
