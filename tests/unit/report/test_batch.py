"""Batch files for `workbench report --config`."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.errors import InputError
from workbench.report.batch import load_batch

REPO = Path(__file__).resolve().parents[3]


def test_bundled_batch_lists_the_report_templates() -> None:
    jobs = load_batch(REPO / "notebooks" / "bundled.yaml")
    overviews = ["01-overview", "02-error-slices"]
    assert [j.template for j in jobs] == [
        *overviews,
        "04-compare-systems",
        "01-overview",
        *overviews * 2,
        "04-compare-systems",
    ]
    assert all((REPO / "notebooks" / f"{j.template}.ipynb").exists() for j in jobs)
    assert all(j.out_dir is None for j in jobs) and all(j.parameters == {} for j in jobs[:2])
    assert jobs[2].parameters == {"systems": ["claude-sonnet-4-6 06-35", "claude-sonnet-4-6 12-48"]}
    # GSM8K (ToRA-70B) and MATH-500 (two Rho-Math runs, then both compared): the outputs carry their own gold
    assert jobs[3].parameters == {"dataset": "none", "predictions": ["data/predictions/gsm8k/tora/tora-70b.jsonl"]}
    math = [j.parameters for j in jobs[4:]]
    assert all(p["dataset"] == "none" and all((REPO / f).is_file() for f in p["predictions"]) for p in math)
    assert [p["systems"] for p in math] == [["rho-math-7b"]] * 2 + [["rho-math-7b-interpreter"]] * 2 + [
        ["rho-math-7b", "rho-math-7b-interpreter"]
    ]
    assert math[4]["predictions"] == math[0]["predictions"] + math[2]["predictions"]


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


def test_anchors_and_merge_keys_still_work(tmp_path: Path) -> None:
    batch = tmp_path / "b.yaml"
    batch.write_text(
        "reports:\n"
        "  - template: 02-error-slices\n"
        "    parameters: &common {n_boot: 50, seed: 3}\n"
        "  - template: 04-compare-systems\n"
        "    parameters: {<<: *common, seed: 4}\n",
        encoding="utf-8",
    )
    first, second = load_batch(batch)
    assert first.parameters == {"n_boot": 50, "seed": 3} and second.parameters == {"n_boot": 50, "seed": 4}


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        # line 9 holds the first value past 100,000 (9**6); expanded, the last would be 9**10
        (
            "reports:\n  - template: 01-overview\n    parameters:\n      l0: &a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n"
            + "".join(f"      l{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 10)),
            "line 9: its aliases expand to more than 100,000 values",
        ),
        (
            "reports:\n  - template: 01-overview\n    parameters: &a {x: *a}\n",
            "an alias refers to a value that contains it",
        ),
        (
            "reports:\n  - template: 01-overview\n    parameters: {x: " + "[" * 100_000 + "]" * 100_000 + "}\n",
            "values are nested too deeply to read",
        ),
    ],
    ids=["billion-laughs", "cycle", "deep"],
)
def test_hostile_yaml_is_refused_before_it_is_expanded(tmp_path: Path, text: str, needle: str) -> None:
    batch = tmp_path / "bad.yaml"
    batch.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_batch(batch)
    message = str(info.value)
    assert message.startswith(f"{batch}: ") and needle in message and "Fix:" in message and "\n" not in message


def test_a_semicolon_in_a_name_is_part_of_the_name(tmp_path: Path) -> None:
    batch = tmp_path / "b.yaml"
    batch.write_text(
        "reports:\n  - template: 01-overview\n    predictions: 'a;b.jsonl'\n    systems: ['a;b']\n", encoding="utf-8"
    )
    (job,) = load_batch(batch)
    assert job.parameters == {"predictions": ["a;b.jsonl"], "systems": ["a;b"]}
