"""lm-evaluation-harness ``samples_<task>_<date>.jsonl`` logs (``--log_samples``), one row per ``doc_id``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.errors import InputError
from workbench.grading.extract import last_boxed
from workbench.io.gold.answers import gsm8k_final_answer
from workbench.io.predictions.base import (
    ADAPTER_COLUMNS,
    PredictionReader,
    PredictionSource,
    Rows,
    first_item,
    short,
    text,
)

__all__ = ["READER", "detect", "read"]

#: The keys every line of lm-eval samples output has.
KEYS = ("doc_id", "doc", "resps")


def _lm_eval_gold(doc: Mapping[str, Any], target: Any) -> tuple[str | None, str | None]:
    """``(gold_answer, gold_solution)`` of an lm-eval sample: the solution is ``doc.answer``
    (``doc.solution`` for MATH tasks) or the target; the answer follows its ``####``, else is its
    last ``\\boxed{}``, else the target itself."""
    target = first_item(target)
    solution = doc.get("answer", doc.get("solution"))
    if not isinstance(solution, str):
        solution = target if isinstance(target, str) else None
    answer = None
    if solution is not None:
        answer = gsm8k_final_answer(solution) or last_boxed(solution)
    if answer is None and target is not None and target != solution:
        answer = text(target)
    return answer, solution


def detect(source: PredictionSource) -> bool:
    """JSON Lines whose lines have, between them, every key of :data:`KEYS`."""
    return source.lines is not None and set(KEYS) <= source.keys


def read(source: PredictionSource) -> Rows:
    """lm-evaluation-harness ``samples_<task>_<date>.jsonl`` (``--log_samples``).

    Each line is ``{doc_id, doc, target, arguments, resps, filtered_resps, filter, metrics,
    <metric>, ...}``, and the same ``doc_id`` comes once per filter (gsm8k: ``strict-match``,
    ``flexible-extract``). One row per ``doc_id``: ``raw_output`` is ``resps[0][0]`` (the model's
    text, before any filter), ``predicted_answer`` is left to the grader, ``upstream_correct`` and
    ``upstream_answer`` are the ``exact_match`` and ``filtered_resps`` of the ``flexible-extract``
    line if there is one, else of the first line.
    ``question`` is ``doc.question`` (``doc.problem``), gold as :func:`_lm_eval_gold` reads it,
    ``record_id`` the ``doc_id`` as text.
    """
    path, pairs = source.path, source.lines or []
    groups: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    seen: dict[tuple[str, str], int] = {}
    for number, obj in pairs:
        doc_id = obj.get("doc_id")
        if isinstance(doc_id, dict | list | bool):
            raise InputError(
                str(path),
                f"doc_id {short(doc_id)} is a {type(doc_id).__name__}, not a number or text",
                location=f"line {number}",
                field="doc_id",
                fix="give each sample the doc_id of its document (a number)",
            )
        key = (str(doc_id), str(obj.get("filter")))
        if key in seen:
            raise InputError(
                str(path),
                f"duplicate (doc_id, filter) = ({key[0]}, '{key[1]}'); first at line {seen[key]}",
                location=f"line {number}",
                field="doc_id, filter",
                fix="keep one sample per document and filter (was the log appended to twice?)",
            )
        seen[key] = number
        groups.setdefault("" if doc_id is None else str(doc_id), []).append((number, obj))
    records: list[dict[str, Any]] = []
    locations: list[str] = []
    for doc_id, lines in groups.items():
        number, first = lines[0]
        chosen = next((o for _, o in lines if o.get("filter") == "flexible-extract"), first)
        doc = first.get("doc") if isinstance(first.get("doc"), dict) else {}
        gold_answer, gold_solution = _lm_eval_gold(doc, first.get("target"))
        records.append(
            {
                "record_id": doc_id or None,
                "turn": 0,
                "raw_output": first_item(first_item(first.get("resps"))),
                "upstream_correct": chosen.get("exact_match"),
                "upstream_answer": first_item(chosen.get("filtered_resps")),
                "question": doc.get("question", doc.get("problem")),
                "gold_answer": gold_answer,
                "gold_solution": gold_solution,
            }
        )
        where = f"line {number}" if len(lines) == 1 else f"lines {', '.join(str(n) for n, _ in lines)}"
        locations.append(f"{where} (doc_id {doc_id})")
    return Rows(records, locations, ADAPTER_COLUMNS)


READER = PredictionReader(name="lm-eval samples", detect=detect, read=read, keys=KEYS)
