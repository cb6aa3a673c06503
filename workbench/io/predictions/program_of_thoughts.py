"""Program-of-thoughts outputs ``{question, answer, executed, generated}`` (JSON Lines), no record id.

Few-shot prompt lines are skipped with a warning.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from workbench.io.predictions.base import ADAPTER_COLUMNS, PredictionReader, PredictionSource, Rows

__all__ = ["READER", "detect", "read"]

#: The keys every line of program-of-thoughts output has.
KEYS = ("question", "answer", "executed", "generated")


def is_prompt_only(obj: Mapping[str, Any]) -> bool:
    """A line that holds only a few-shot ``prompt``, not a prediction."""
    return set(obj) == {"prompt"}


def detect(source: PredictionSource) -> bool:
    """JSON Lines whose lines have, between them, every key of :data:`KEYS`."""
    return source.lines is not None and set(KEYS) <= source.keys


def read(source: PredictionSource) -> Rows:
    """Program-of-thoughts outputs ``{question, answer, executed, generated}``.

    ``predicted_answer`` is ``executed`` (null stays null; a non-number such as ``(160, 300)``
    stays as its text), ``raw_output`` the generated program (a list is joined with newlines),
    ``gold_answer`` ``answer``. There is no id: ``record_id`` stays null until linked by question.
    Lines holding only a ``prompt`` (the few-shot file has two) are not predictions: they are
    skipped, and a warning names how many and which lines.
    """
    path, pairs = source.path, source.lines or []
    records: list[dict[str, Any]] = []
    locations: list[str] = []
    prompt_only: list[int] = []
    for number, obj in pairs:
        if set(obj) == {"prompt"}:
            prompt_only.append(number)
            continue
        generated = obj.get("generated")
        if isinstance(generated, list):
            generated = "\n".join(str(g) for g in generated)
        records.append(
            {
                "record_id": None,
                "turn": 0,
                "predicted_answer": obj.get("executed"),
                "raw_output": generated,
                "question": obj.get("question"),
                "gold_answer": obj.get("answer"),
            }
        )
        locations.append(f"line {number}")
    if prompt_only:
        shown = ", ".join(str(n) for n in prompt_only[:20]) + (", ..." if len(prompt_only) > 20 else "")
        warnings.warn(
            f"{path}: skipped {len(prompt_only)} prompt-only line{'s' if len(prompt_only) != 1 else ''} "
            f"(line{'s' if len(prompt_only) != 1 else ''} {shown}): they hold a few-shot prompt, not a prediction",
            UserWarning,
            stacklevel=4,  # the caller of load_predictions (through registry.read_rows)
        )
    return Rows(records, locations, ADAPTER_COLUMNS, by_question=True)


READER = PredictionReader(name="program-of-thoughts", detect=detect, read=read, keys=KEYS, skips=is_prompt_only)
