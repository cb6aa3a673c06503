"""OpenAI grade-school-math ``example_model_solutions.jsonl``: four systems a line, no record id."""

from __future__ import annotations

from typing import Any

from workbench.errors import InputError
from workbench.grading import patterns
from workbench.io.predictions.base import ADAPTER_COLUMNS, PredictionReader, PredictionSource, Rows

__all__ = ["READER", "detect", "read"]


def _is_solution(value: object) -> bool:
    return isinstance(value, dict) and "solution" in value


def detect(source: PredictionSource) -> bool:
    """JSON Lines whose first line has a ``question``, a ``ground_truth`` and a system's ``{solution}``."""
    if source.lines is None:
        return False
    first = source.objects[0] if source.objects else {}
    return {"question", "ground_truth"} <= set(first) and any(_is_solution(v) for v in first.values())


def read(source: PredictionSource) -> Rows:
    """OpenAI grade-school-math ``example_model_solutions.jsonl``: one line a question.

    Each line holds ``question``, ``ground_truth`` (the gold solution, ending ``A: n``) and one
    key per system (``6b_finetuning``, ``6b_verification``, ``175b_finetuning``,
    ``175b_verification``), each ``{is_correct, solution}``. One row per system and line:
    ``system`` is the key, ``raw_output`` the solution (the grader extracts the answer),
    ``upstream_correct`` is ``is_correct``, ``gold_answer`` what follows the last ``A:`` line of
    the ground truth. There is no id: ``record_id`` stays null until linked by question.
    """
    path, pairs = source.path, source.lines or []
    records: list[dict[str, Any]] = []
    locations: list[str] = []
    for number, obj in pairs:
        truth = obj.get("ground_truth")
        finals = list(patterns.ANSWER_LINE.finditer(truth)) if isinstance(truth, str) else []
        gold = finals[-1].group("answer").strip() if finals else None
        systems = [(key, value) for key, value in obj.items() if _is_solution(value)]
        if not systems:
            raise InputError(
                str(path),
                "no system solutions on this line (expected keys such as '6b_finetuning': {is_correct, solution})",
                location=f"line {number}",
                fix="give every line the same systems as the first line",
            )
        for key, value in systems:
            records.append(
                {
                    "record_id": None,
                    "turn": 0,
                    "system": key,
                    "raw_output": value.get("solution"),
                    "upstream_correct": value.get("is_correct"),
                    "question": obj.get("question"),
                    "gold_answer": gold,
                    "gold_solution": truth,
                }
            )
            locations.append(f"line {number}, {key}")
    return Rows(records, locations, ADAPTER_COLUMNS, by_question=True, system_suffix=True)


READER = PredictionReader(name="OpenAI GSM8K", detect=detect, read=read)
