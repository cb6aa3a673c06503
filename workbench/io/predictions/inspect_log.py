"""Inspect AI evaluation logs (``inspect eval``: ``.eval`` and ``.json``), one row per sample and epoch.

The log is read through ``inspect_ai.log`` (the optional extra ``workbench[inspect]``); it is
imported only when a file is recognised as an Inspect log, so the rest of the workbench never
needs it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from workbench.errors import InputError
from workbench.io.predictions.base import ADAPTER_COLUMNS, PredictionReader, PredictionSource, Rows, first_item, text

__all__ = ["READER", "detect", "read", "upstream_verdict", "upstream_answer", "INSTALL"]

#: What a user without the extra is told to run.
INSTALL = "pip install 'workbench[inspect]'"

#: Inspect's verdict letters (``inspect_ai.scorer.CORRECT``, ``INCORRECT``, ``PARTIAL``, ``NOANSWER``).
_VERDICTS: dict[str, bool | None] = {"C": True, "I": False, "N": False, "P": None}


def detect(source: PredictionSource) -> bool:
    """An ``.eval`` file, or a JSON document with a ``version`` and an ``eval`` header naming its
    ``task`` and ``model`` (an Inspect log written with ``--log-format json``)."""
    if source.kind == "eval":
        return True
    document = source.document
    if source.kind != "json" or not isinstance(document, dict) or "version" not in document:
        return False
    header = document.get("eval")
    return isinstance(header, dict) and {"task", "model"} <= set(header)


def _inspect_log(source: PredictionSource) -> ModuleType:
    """``inspect_ai.log``, or the one-line error that says how to install it."""
    try:
        return importlib.import_module("inspect_ai.log")
    except ImportError as exc:
        raise InputError(
            str(source.path),
            f"this is an Inspect AI log, and reading it needs the inspect-ai package ({exc})",
            fix=INSTALL,
        ) from None


def upstream_verdict(value: Any) -> bool | None:
    """Inspect's score value as a verdict.

    ``"C"``/``"I"`` (``CORRECT``/``INCORRECT``), ``"N"`` (``NOANSWER``, wrong), ``True``/``False``,
    ``1``/``0``; anything else (``"P"`` partial, a fraction, a dict of values) is no verdict.

    Examples
    --------
    >>> [upstream_verdict(v) for v in ("C", "I", "N", "P", 1, 0.0, True, 0.5, {"a": 1}, None)]
    [True, False, False, None, True, False, True, None, None, None]
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _VERDICTS.get(value.strip().upper())
    if isinstance(value, int | float) and value in (0, 1):
        return value == 1
    return None


def _message_text(message: Any) -> str | None:
    content = getattr(message, "text", None)
    return content if isinstance(content, str) and content.strip() else None


def _question(sample_input: Any) -> str | None:
    """The sample's input: the text, or the last user message of a chat input."""
    if isinstance(sample_input, str):
        return sample_input
    users = [m for m in sample_input or [] if getattr(m, "role", None) == "user"]
    return _message_text(users[-1]) if users else None


def _raw_output(sample: Any) -> str | None:
    """The completion of the sample's output, else the text of its last assistant message."""
    output = getattr(sample, "output", None)
    completion = getattr(output, "completion", None)
    if isinstance(completion, str) and completion.strip():
        return completion
    assistants = [m for m in sample.messages or [] if getattr(m, "role", None) == "assistant"]
    return _message_text(assistants[-1]) if assistants else None


def upstream_answer(answer: Any, raw_output: str | None) -> str | None:
    """Inspect's answer (``score.answer``) when it is an answer the model gave: written as it is
    in the output, and not the whole output.

    ``match(numeric=True)`` re-writes the number it reads to five significant digits
    (``"1.2001e+05"`` for ``"120,006"``), and ``includes()`` keeps the whole output: neither is
    an extracted answer, and the grader reads the output itself instead.

    Examples
    --------
    >>> upstream_answer("33.333", "so 33.333 percent. The answer is 33.333 percent.")
    '33.333'
    >>> upstream_answer("1.2001e+05", "Today's population is 120,000+6 = 120,006\\nA: 120,006") is None
    True
    >>> upstream_answer("The answer is 4", "The answer is 4") is None
    True
    >>> upstream_answer("4", None)
    '4'
    """
    answer = text(answer)
    if answer is None or not answer.strip() or raw_output is None:
        return answer
    if answer.strip() == raw_output.strip() or answer.strip() not in raw_output:
        return None
    return answer


def _score(scores: Mapping[str, Any] | None, order: Sequence[str]) -> Any:
    """The score of the eval's first scorer that scored the sample (``None`` when unscored)."""
    if not scores:
        return None
    name = next((n for n in order if n in scores), next(iter(scores)))
    return scores[name]


def read(source: PredictionSource) -> Rows:
    """An Inspect AI log: one row per sample and epoch.

    ``record_id`` is the sample's ``id`` as text; when the log holds more than one epoch it is
    ``"<id>#<epoch>"`` (``"ducks#2"``), each epoch graded as its own record. ``turn`` is 0.
    ``system`` is the eval's model (``eval.model``, e.g. ``"openai/gpt-4o"``; ``--system`` gives
    another name). ``raw_output`` is ``output.completion`` (else the last assistant message),
    ``question`` the input (the last user message of a chat input), ``gold_answer`` the
    ``target`` (the first, when it is a list). ``upstream_correct`` is the ``value`` of the score
    of the eval's first scorer (``C``/``I``, 1/0, true/false; see :func:`upstream_verdict`), and
    ``upstream_answer`` its ``answer`` when the output holds it as written (see
    :func:`upstream_answer`): the main policy grades that answer, else what it extracts itself.

    Raises
    ------
    InputError
        When ``inspect-ai`` is not installed (the message says how to install it), the log
        cannot be read, or it holds no samples.
    """
    path = source.path
    log_module = _inspect_log(source)
    try:
        log = log_module.read_eval_log(str(path), exclude_fields={"events"})  # events are the bulk of a log
    except Exception as exc:  # Inspect raises ValueError, KeyError, zip and pydantic errors
        raise InputError(
            str(path),
            f"cannot read this Inspect AI log ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})",
            fix="give a log written by 'inspect eval' (.eval or .json), or check it with 'inspect log dump'",
        ) from None
    samples = log.samples or []
    if not samples:
        raise InputError(
            str(path),
            f"the Inspect AI log holds no samples (status '{log.status}')",
            fix="run 'inspect eval' again without --no-log-samples, or give a log of a finished eval",
        )
    order = [s.name for s in getattr(log.eval, "scorers", None) or []]
    epochs = any((s.epoch or 1) > 1 for s in samples)
    records: list[dict[str, Any]] = []
    locations: list[str] = []
    for sample in samples:
        sample_id = text(sample.id)
        record_id = f"{sample_id}#{sample.epoch}" if epochs else sample_id
        score = _score(sample.scores, order)
        raw_output = _raw_output(sample)
        records.append(
            {
                "record_id": record_id,
                "turn": 0,
                "system": log.eval.model,
                "raw_output": raw_output,
                "question": _question(sample.input),
                "gold_answer": text(first_item(sample.target)),
                "upstream_correct": upstream_verdict(getattr(score, "value", None)),
                "upstream_answer": upstream_answer(getattr(score, "answer", None), raw_output),
            }
        )
        locations.append(f"sample {sample_id}, epoch {sample.epoch}")
    return Rows(records, locations, ADAPTER_COLUMNS)


READER = PredictionReader(name="Inspect AI log", detect=detect, read=read)
