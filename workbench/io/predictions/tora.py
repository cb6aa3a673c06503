"""ToRA outputs ``{idx, question, gt, gt_cot, code: [...], pred: [...]}`` (JSON Lines)."""

from __future__ import annotations

from typing import Any

from workbench.errors import InputError
from workbench.io.predictions.base import (
    ADAPTER_COLUMNS,
    PredictionReader,
    PredictionSource,
    Rows,
    first_item,
    short,
)

__all__ = ["READER", "detect", "read"]

#: The keys every line of ToRA output has.
KEYS = ("idx", "question", "gt", "pred", "code")


def detect(source: PredictionSource) -> bool:
    """JSON Lines whose lines have, between them, every key of :data:`KEYS`."""
    return source.lines is not None and set(KEYS) <= source.keys


def read(source: PredictionSource) -> Rows:
    """ToRA outputs ``{idx, question, gt, gt_cot, code, pred, report}``.

    ``code`` and ``pred`` are lists (one entry per sampled trajectory); element 0 is taken, which
    is the only one in greedy runs such as the published GSM8K files. ``record_id`` is ``idx``
    (the GSM8K line index), ``raw_output`` the tool-integrated trajectory, ``upstream_answer``
    the answer ToRA's evaluation script extracted (the grader extracts its own from the
    trajectory), ``gold_answer`` ``gt`` and ``gold_solution`` ``gt_cot``. Runs of the same harness
    on MATH-500 (math-evaluation-harness, e.g. Rho-Math's) also carry the dataset's ``answer``,
    which is the gold then (``gt`` is a lossy normalisation of it), and the harness's verdict
    ``score`` (a list like ``code``), read as ``upstream_correct``. Their ``pred`` is not taken
    as ``upstream_answer``: the harness normalised it as it did ``gt`` and lost content (Rho-Math
    CoT idx 4 "Evelyn.Ihopeitiscorrect", idx 102 "(+5)(b+2)" for the model's "(a+5)(b+2)"), so the
    grader reads the model's own answer from ``code`` instead. Their ``level`` (MATH's) travels with
    the gold, as the turn's level.
    """
    pairs = source.lines or []
    for n, obj in pairs:
        _check_code(source, n, obj)
    if any("answer" in obj for _, obj in pairs):  # a MATH-500 harness file: its gold is ``answer``
        for n, obj in pairs:
            if not isinstance(obj.get("answer"), str):
                raise InputError(
                    str(source.path),
                    "the MATH-500 answer is missing or not text (the other lines carry it, and the"
                    " harness's 'gt' is a lossy copy, so it is not used instead)",
                    location=f"line {n} (idx {obj.get('idx')!r})",
                    field="answer",
                    fix="give every line the problem's 'answer' as text, as MATH-500 writes it",
                )
    records = [
        {
            "record_id": obj.get("idx"),
            "turn": 0,
            "upstream_answer": None if "answer" in obj else first_item(obj.get("pred")),
            "raw_output": first_item(obj.get("code")),
            "question": obj.get("question"),
            # MATH-500 runs also carry the dataset's own ``answer``; their ``gt`` is the harness's
            # normalisation of it, which loses content (Rho-Math idx 97: "" for \text{east})
            "gold_answer": obj["answer"] if "answer" in obj else obj.get("gt"),
            "gold_solution": obj.get("gt_cot"),
            "upstream_correct": first_item(obj.get("score")),
            "level": obj.get("level"),
        }
        for _, obj in pairs
    ]
    return Rows(records, [f"line {n}" for n, _ in pairs], [*ADAPTER_COLUMNS, "level"])


def _check_code(source: PredictionSource, n: int, obj: dict[str, Any]) -> None:
    """Refuse a ``code`` that is not a list of texts (a bare number, a mapping): read as element 0,
    a bare ``5`` would be graded as an output that says 5."""
    code = obj.get("code")
    if code is None or (isinstance(code, list) and all(isinstance(item, str) for item in code)):
        return
    name = type(code).__name__
    shown = (
        f"a list holding {short(code)}" if isinstance(code, list) else f"{'an' if name[0] in 'aeiou' else 'a'} {name}"
    )
    shown = shown if isinstance(code, list) else f"{shown} ({short(code)})"
    raise InputError(
        str(source.path),
        f"'code' is {shown}, not a list of output texts (one per sampled trajectory)",
        location=f"line {n} (idx {obj.get('idx')!r})",
        field="code",
        fix='write the output as a list of strings, as ToRA does: "code": ["..."]',
    )


READER = PredictionReader(name="ToRA", detect=detect, read=read, keys=KEYS)
