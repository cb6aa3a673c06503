"""An lm-evaluation-harness task that grades GSM8K outputs with the workbench.

The task directory ships inside the package (:func:`task_dir`); point the harness at it::

    lm_eval --model ... --tasks workbench_gsm8k --include_path "$(python -c
        'from workbench.integrations.lm_eval import task_dir; print(task_dir())')" --log_samples

One ``process_results`` reports, under each of the two filters ``strict-match`` and
``flexible-extract`` (the workbench's ``strict`` and ``flex`` extraction, not regexes):

==========================  ===========================================================
``exact_match``             the extracted answer's text equals the gold's (``exact-string``)
``workbench_numeric``       the workbench's numeric cascade on the extracted answer
``bleu``                    corpus BLEU of the unfiltered output against the gold solution
``rouge1/rouge2/rougeL``    mean ROUGE F-measure of the unfiltered output (x100)
==========================  ===========================================================

BLEU and ROUGE are :func:`workbench.analysis.textmetrics.text_scores`, so they are the same under
both filters and equal to the workbench's own figures. The ``--log_samples`` file loads
with :func:`workbench.io.predictions.load_predictions`.

The data are local: a 20-problem GSM8K test sample ships with the task
(:func:`default_data_file`); give another GSM8K JSON Lines file with
``--metadata '{"data_files": "/path/to/test.jsonl"}'``. Nothing is downloaded.

Nothing here imports ``lm_eval`` at import time; :func:`load_docs` needs ``datasets``
(installed with ``pip install 'workbench[lmeval]'``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from workbench.analysis.textmetrics import text_scores
from workbench.grading.extract import Extraction
from workbench.grading.policies import POLICIES, for_benchmark, get_policy, grade_answer, select_answer
from workbench.integrations import require
from workbench.io.gold import executed_text, gsm8k_final_answer
from workbench.io.jsonfiles import iter_json_lines

__all__ = [
    "TASK_NAME",
    "task_dir",
    "default_data_file",
    "load_docs",
    "FilteredAnswer",
    "WorkbenchExtraction",
    "process_results",
    "corpus_bleu",
]

#: The task's name, as ``--tasks`` takes it.
TASK_NAME = "workbench_gsm8k"
#: Grading rules of this benchmark (:func:`~workbench.grading.policies.for_benchmark`).
_BENCHMARK = "gsm8k"


def task_dir() -> Path:
    """The directory to give lm-eval as ``--include_path`` (or ``TaskManager(include_path=...)``).

    Examples
    --------
    >>> (task_dir() / TASK_NAME / f"{TASK_NAME}.yaml").is_file()
    True
    """
    return Path(__file__).resolve().parent / "lm_eval_tasks"


def default_data_file() -> Path:
    """The GSM8K test sample that ships with the task (the first 20 problems of the test split)."""
    return task_dir() / TASK_NAME / "gsm8k_test_first_20.jsonl"


def load_docs(*, data_files: str | Path | None = None, **_metadata: Any) -> Any:
    """Load the task's documents from a local GSM8K JSON Lines file (the task's ``custom_dataset``).

    Parameters
    ----------
    data_files
        A GSM8K ``{question, answer}`` JSON Lines file; by default :func:`default_data_file`.
        Relative paths are taken from the current directory.
    **_metadata
        The rest of the task's metadata and ``dataset_kwargs``, which lm-eval passes along.

    Returns
    -------
    datasets.DatasetDict
        With one split, ``test``.

    Raises
    ------
    MissingExtraError
        When ``datasets`` is not installed (``pip install 'workbench[lmeval]'``).
    InputError
        For a missing file or a line that is not a JSON object.
    """

    datasets = require("datasets", extra="lmeval")
    path = Path(data_files) if data_files is not None else default_data_file()
    rows = [obj for _, obj in iter_json_lines(path)]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})


class FilteredAnswer(str):
    """The answer a filter extracted (its text; empty when none was found), carrying the
    unfiltered output so that ``process_results`` can score both.

    It is a ``str``, so lm-eval logs it as the answer text in ``filtered_resps``.

    Attributes
    ----------
    answer
        The extracted answer, ``None`` when none was found.
    raw_output
        The model's unfiltered output.
    policy
        The grading policy's name (``strict`` or ``flex``).
    extraction
        The extraction (span and rule).
    """

    answer: str | None
    raw_output: str
    policy: str
    extraction: Extraction | None

    def __new__(cls, raw_output: str, policy: str) -> FilteredAnswer:
        answer, _, extraction = select_answer(get_policy(policy), predicted_answer=None, raw_output=raw_output)
        self = super().__new__(cls, answer or "")
        self.answer, self.raw_output, self.policy, self.extraction = answer, raw_output, policy, extraction
        return self

    def __reduce__(self) -> tuple[Any, ...]:  # copies and pickles keep the raw output
        return (FilteredAnswer, (self.raw_output, self.policy))


class WorkbenchExtraction:
    """An lm-eval filter step: extract each response's answer under a workbench policy.

    It follows lm-eval's ``Filter`` protocol (``apply(resps, docs)``) without importing
    lm-eval. In the task YAML: ``function: !function process.WorkbenchExtraction`` with
    ``policy: strict`` or ``policy: flex``.

    Examples
    --------
    >>> [[a]] = WorkbenchExtraction(policy="strict").apply([["9 * 2 = 18.\\n#### 18"]], [{}])
    >>> a, a.extraction.rule.value
    ('18', 'hashes')
    """

    def __init__(self, policy: str = "flex", **_kwargs: Any) -> None:
        if get_policy(policy).source not in ("strict", "flex"):
            raise ValueError(f"policy {policy!r} does not extract from the output; use 'strict' or 'flex'")
        self.policy = policy

    def apply(self, resps: Iterable[Sequence[str]], docs: Sequence[Mapping[str, Any]]) -> list[list[FilteredAnswer]]:
        return [[FilteredAnswer(str(r), self.policy) for r in responses] for responses in resps]


def process_results(doc: Mapping[str, Any], results: Sequence[str]) -> dict[str, Any]:
    """Grade one GSM8K document's response (lm-eval's ``process_results``).

    Parameters
    ----------
    doc
        A GSM8K record: ``question`` and ``answer`` (the solution ending in ``#### n``).
    results
        One response: a :class:`FilteredAnswer` from :class:`WorkbenchExtraction`, or a
        plain output (no filter), graded under ``flex`` extraction.

    Returns
    -------
    dict
        ``exact_match`` and ``workbench_numeric`` (1.0 or 0.0), ``bleu`` (the pair
        ``(gold solution, output)`` that :func:`corpus_bleu` aggregates), and ``rouge1``,
        ``rouge2``, ``rougeL`` of this output (0-100).

    Examples
    --------
    >>> doc = {"question": "How much?", "answer": "9 * 2 = <<9*2=18>>18\\n#### 18"}
    >>> r = process_results(doc, ["She makes 9 * 2 = $18.\\nThe answer is $18."])
    >>> r["exact_match"], r["workbench_numeric"]
    (0.0, 1.0)
    """
    response = results[0]
    if not isinstance(response, FilteredAnswer):
        response = FilteredAnswer(str(response), "flex")
    solution = str(doc["answer"])
    gold = gsm8k_final_answer(solution)
    question = doc.get("question")
    policy = for_benchmark(get_policy(response.policy), _BENCHMARK)
    exact = grade_answer(POLICIES["exact-string"], response.answer, gold)
    numeric = grade_answer(policy, response.answer, executed_text(gold) if gold else gold, question=question)
    text = text_scores([response.raw_output], [solution])
    return {
        "exact_match": float(exact.correct),
        "workbench_numeric": float(numeric.correct),
        "bleu": (solution, response.raw_output),
        "rouge1": text.rouge1,
        "rouge2": text.rouge2,
        "rougeL": text.rougeL,
    }


def corpus_bleu(items: Sequence[tuple[str, str]]) -> float:
    """Aggregate ``(reference, output)`` pairs into corpus BLEU, as :func:`workbench.analysis.textmetrics.text_scores`.

    Examples
    --------
    >>> round(corpus_bleu([("She makes 18 dollars.", "She makes 18 dollars.")]))
    100
    """
    references = [r for r, _ in items]
    outputs = [o for _, o in items]
    return text_scores(outputs, references).bleu
