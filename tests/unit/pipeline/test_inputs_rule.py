"""``report`` reads its inputs as ``grade`` does (issue 34, point 5): one rule for the gold
(:func:`workbench.config.resolve`), one for the systems' names (:func:`workbench.config.system_names`),
and gold carried in several files counted once per problem."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from workbench.cli import _split_files, build_parser
from workbench.config import BUNDLED_DATASET, locate, resolve, system_names
from workbench.errors import InputError
from workbench.pipeline.run import grade_run
from workbench.report.inputs import notes_html, report_name

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests/fixtures/predictions"
TORA = FIXTURES / "gsm8k/tora-70b_first_20.jsonl"  # ids (ToRA's idx)
POT = FIXTURES / "gsm8k/pot_zeroshot_first_20.jsonl"  # no ids: linked by question
LM_EVAL = FIXTURES / "lm_eval/tora-70b-rendered/samples_gsm8k_2026-11-21T19-50-41.jsonl"  # doc_id
CLAUDE = REPO / "data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6/2026-05-04T06-35-00Z/predictions.jsonl"


def _grade_config(argv: list[str]) -> object:
    """The run config ``workbench grade ARGV`` resolves (its own parser and file split)."""
    args = build_parser().parse_args(["grade", *argv, "--out", "unused"])
    dataset, predictions = _split_files(args.dataset, args.files)
    return resolve(dataset=dataset, predictions=predictions, systems=args.system, benchmark=args.benchmark)


def _report_config(argv: list[str]) -> object:
    """The run config ``workbench report ARGV`` resolves (as ``cli._report`` calls resolve)."""
    args = build_parser().parse_args(["report", *argv])
    return resolve(
        dataset=args.dataset,
        predictions=list(args.predictions),
        systems=list(args.system),
        benchmark=args.benchmark or "auto",
    )


@pytest.mark.parametrize(
    ("grade_argv", "report_argv"),
    [
        ([str(TORA)], ["--predictions", str(TORA)]),  # no dataset named: rule 3 for both
        ([str(CLAUDE)], ["--predictions", str(CLAUDE)]),
        (
            ["--dataset", "none", str(TORA), str(POT)],
            ["--dataset", "none", "--predictions", str(TORA), "--predictions", str(POT)],
        ),
        ([BUNDLED_DATASET, str(CLAUDE)], ["--dataset", BUNDLED_DATASET, "--predictions", str(CLAUDE)]),
        ([str(TORA), "--benchmark", "math"], ["--predictions", str(TORA), "--benchmark", "math"]),
    ],
)
def test_grade_and_report_resolve_the_same_inputs_to_the_same_config(
    grade_argv: list[str], report_argv: list[str]
) -> None:
    assert _grade_config(grade_argv) == _report_config(report_argv)


def test_one_file_without_a_dataset_lets_the_rule_decide() -> None:
    """Before, ``grade FILE`` read the gold from the file and ``report --predictions FILE`` from the
    bundled dev set: the same ConvFinQA outputs were graded against two golds."""
    assert _split_files(None, ["a.jsonl"]) == ("", ["a.jsonl"])
    assert _split_files(None, ["gold.json", "a.jsonl"]) == ("gold.json", ["a.jsonl"])
    assert _split_files("none", ["a.jsonl"]) == (None, ["a.jsonl"])
    config = resolve(dataset="", predictions=[str(CLAUDE)])
    assert config.dataset_default and config.dataset == locate(BUNDLED_DATASET)


def test_outputs_on_the_dev_set_are_graded_against_it_and_others_against_their_own_gold() -> None:
    on_dev = grade_run(resolve(dataset="", predictions=[str(CLAUDE)]))
    assert on_dev.gold.layout == "convfinqa-reformatted" and on_dev.unmatched.height == 0
    assert not any("gold answers carried" in note for note in on_dev.notes)
    own = grade_run(resolve(dataset="", predictions=[str(TORA)]))
    assert own.gold.layout == "carried-in-predictions" and own.gold.turns.height == 20
    assert own.summary == grade_run(resolve(dataset="none", predictions=[str(TORA)])).summary


def test_three_gsm8k_files_without_a_dataset_count_each_problem_once() -> None:
    """Two files with ids (ToRA's idx, lm-eval's doc_id) and one without (program-of-thoughts):
    the carried gold had the 20 problems twice (40), and each system's accuracy was halved."""
    run = grade_run(resolve(dataset="none", predictions=[str(TORA), str(POT), str(LM_EVAL)]))
    assert run.gold.turns.height == 20 and run.gold.turns["record_id"].n_unique() == 20
    assert run.unmatched.height == 0
    counts = run.turns.group_by("system").agg(pl.len().alias("n"), pl.col("record_id").n_unique().alias("ids"))
    assert sorted(counts.rows()) == [
        ("pot_zeroshot_first_20", 20, 20),
        ("tora-70b-rendered", 20, 20),
        ("tora-70b_first_20", 20, 20),
    ]
    for path in (TORA, POT, LM_EVAL):  # each system as graded alone, against its own gold
        (alone,) = grade_run(resolve(dataset="none", predictions=[str(path)])).summary.items()
        name, metrics = alone
        assert run.summary[name]["turn_execution_accuracy"] == metrics["turn_execution_accuracy"] > 0
        assert run.summary[name]["n_turns"] == metrics["n_turns"] == 20


def test_a_row_without_an_id_whose_gold_differs_from_the_row_with_its_question_is_refused(tmp_path: Path) -> None:
    lines = POT.read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace('"answer": 18.0', '"answer": 19.0')
    assert '"answer": 19.0' in lines[0]
    pot = tmp_path / "pot.jsonl"
    pot.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"gold answer .*19.* differs from '18'"):
        grade_run(resolve(dataset="none", predictions=[str(TORA), str(pot)]))


@pytest.mark.parametrize(
    ("paths", "names"),
    [
        (["/o/llama-7b/samples_gsm8k_2025-09-09T13-42-42.857006.jsonl"], ("llama-7b",)),  # lm-eval: the model folder
        (["/o/tora-70b.jsonl", "/o/tora-code-34b.jsonl"], ("tora-70b", "tora-code-34b")),  # the file's stem
        (["/o/gpt4/outputs.csv"], ("gpt4",)),  # a generic stem: its folder
        (["/r/claude/2026-05-04T06-35-00Z/predictions.jsonl"], ("claude@2026-05-04T06-35-00Z",)),
        # two lm-eval logs of one model folder: told apart by their own part, never the same name
        (
            [
                "/o/llama-7b/samples_gsm8k_2025-09-09T13-42-42.jsonl",
                "/o/llama-7b/samples_math_2025-09-09T13-42-42.jsonl",
            ],
            ("llama-7b@gsm8k_2025-09-09T13-42-42", "llama-7b@math_2025-09-09T13-42-42"),
        ),
        (["/a/tora-70b.jsonl", "/b/tora-70b.jsonl"], ("a/tora-70b", "b/tora-70b")),  # one name, two folders
    ],
)
def test_systems_are_named_by_one_rule(paths: list[str], names: tuple[str, ...]) -> None:
    assert system_names(paths) == names
    assert len(set(names)) == len(names)


def test_a_file_given_from_inside_its_folder_is_named_as_from_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``grade samples_gsm8k_...jsonl`` run in the model's folder named the system after the file's
    stem; ``report`` (absolute paths) after the folder."""
    folder = tmp_path / "wbtest"
    folder.mkdir()
    shutil.copy(LM_EVAL, folder / LM_EVAL.name)
    monkeypatch.chdir(folder)
    relative = grade_run(resolve(dataset="none", predictions=[LM_EVAL.name]))
    absolute = grade_run(resolve(dataset="none", predictions=[str(folder / LM_EVAL.name)]))
    assert [s for _, s in relative.prediction_files] == [s for _, s in absolute.prediction_files] == ["wbtest"]
    assert relative.summary == absolute.summary
    # the report's file name says the same system
    assert report_name({"predictions": [str(folder / LM_EVAL.name)], "dataset": "none"}, tmp_path).startswith("wbtest-")


def test_two_lm_eval_logs_of_one_folder_grade_as_two_systems(tmp_path: Path) -> None:
    folder = tmp_path / "llama-7b"
    folder.mkdir()
    first, second = (
        folder / "samples_gsm8k_2025-09-09T13-42-42.jsonl",
        folder / "samples_gsm8k_2025-09-10T08-00-00.jsonl",
    )
    shutil.copy(LM_EVAL, first)
    shutil.copy(LM_EVAL, second)
    run = grade_run(resolve(dataset="none", predictions=[str(first), str(second)]))
    assert [s for _, s in run.prediction_files] == [
        "llama-7b@gsm8k_2025-09-09T13-42-42",
        "llama-7b@gsm8k_2025-09-10T08-00-00",
    ]
    assert run.gold.turns.height == 20


def test_a_system_named_in_the_file_or_by_the_user_keeps_its_name() -> None:
    openai = FIXTURES / "gsm8k/openai_example_model_solutions_first_20.jsonl"  # a system column (four systems)
    run = grade_run(resolve(dataset="none", predictions=[str(openai), str(TORA)]))
    assert [s for _, s in run.prediction_files] == [
        "6b_finetuning",
        "6b_verification",
        "175b_finetuning",
        "175b_verification",
        "tora-70b_first_20",
    ]
    named = grade_run(resolve(dataset="none", predictions=[str(TORA)], systems=["mine"]))
    assert [s for _, s in named.prediction_files] == ["mine"]


def test_notes_reach_the_page_escaped_with_paths_as_the_page_shows_them(tmp_path: Path) -> None:
    inside, outside = tmp_path / "project/data/a<b>.jsonl", Path("/elsewhere/runs/c.jsonl")
    markup = notes_html(
        [f"no turn column in {inside}: every row is turn 0 (single-turn)", f"no turn column in {outside}: x"],
        [inside, outside],
        tmp_path / "project",
    )
    assert markup.count('<p class="wb-note">Note on grading: ') == 2
    assert "data/a&lt;b&gt;.jsonl" in markup and str(tmp_path) not in markup and "<b>" not in markup
    assert "in c.jsonl: x" in markup
