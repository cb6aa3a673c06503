"""A ``compute_metrics`` for Hugging Face ``Seq2SeqTrainer`` that grades with the workbench.

It replaces the exact string match that ConvFinQA fine-tuning scripts compute on decoded
predictions and labels: each decoded prediction's answer is extracted (the
``<|begin_of_solution|> ... <|end_of_solution|>`` block when there is one, else the
extraction policy), compared with the label under the workbench's numeric cascade, and
every verdict's reason is counted, so a training log shows *how* the model is wrong
(percent confusion, scale, sign flip...) and not only how often.

Optionally the decoded pairs are written as a canonical predictions table (JSON Lines), so
the same evaluation opens in the workbench with :func:`workbench.io.predictions.load_predictions`.

Install with ``pip install 'workbench[hf]'``; importing this module does not import
``transformers``.

Examples
--------
>>> scores = score_pairs(["so it is <|begin_of_solution|> 37.5 <|end_of_solution|>", "12.6%"], ["37.5%", "12.6%"])
>>> scores["exact_match"], scores["numeric_match"], scores["reason/percent_reading"]
(0.5, 1.0, 1)
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.errors import UsageError
from workbench.grading.compare import Verdict
from workbench.grading.extract import extract_answer
from workbench.grading.policies import POLICIES, GradingPolicy, get_policy, grade_answer, select_answer
from workbench.integrations import require
from workbench.io.atomic import write_atomic

__all__ = ["PairGrade", "grade_pair", "score_pairs", "decode_eval_preds", "make_compute_metrics", "write_pairs"]

logger = logging.getLogger(__name__)

#: The value ``DataCollatorForSeq2Seq`` and the trainer's gathering pad labels and predictions with.
IGNORE_INDEX = -100


@dataclass(frozen=True, slots=True)
class PairGrade:
    """One decoded prediction graded against its decoded label.

    Attributes
    ----------
    raw_output
        The decoded prediction.
    answer
        The answer extracted from it (``None`` when none was found).
    gold
        The gold answer read from the label.
    exact
        The ``exact-string`` verdict (answer text equals gold text).
    numeric
        The verdict of the grading policy (the numeric cascade by default); its ``reason``
        says which rule decided.
    """

    raw_output: str
    answer: str | None
    gold: str
    exact: Verdict
    numeric: Verdict


def label_answer(label: str) -> str:
    """The gold answer a decoded label gives: its explicit answer marker (solution block,
    ``####``, "The answer is", ``\\boxed{}``) when it has one, else the whole label, stripped.

    Examples
    --------
    >>> label_answer(" 14.1% "), label_answer("<|begin_of_solution|> 14.1% <|end_of_solution|>")
    ('14.1%', '14.1%')
    """
    found = extract_answer(label, policy="strict")
    return found.answer if found.answer is not None else label.strip()


def grade_pair(output: str, label: str, *, policy: str | GradingPolicy = "flex") -> PairGrade:
    """Grade one decoded prediction against its decoded label.

    Parameters
    ----------
    output
        The decoded prediction.
    label
        The decoded label (see :func:`label_answer` for how the gold is read from it).
    policy
        The grading policy (a name of :data:`~workbench.grading.policies.POLICIES` or a
        :class:`~workbench.grading.policies.GradingPolicy`): ``flex`` (default) extracts the
        solution block, else an explicit marker, else the last number; ``strict`` explicit
        markers only.

    Examples
    --------
    >>> g = grade_pair("The answer is 14.1", "14.1%")
    >>> g.answer, g.exact.correct, g.numeric.correct, g.numeric.reason.value
    ('14.1', False, True, 'percent_reading')
    """
    grading = get_policy(policy)
    answer, _, _ = select_answer(grading, predicted_answer=None, raw_output=output)
    gold = label_answer(label)
    exact = grade_answer(POLICIES["exact-string"], answer, gold)
    numeric = grade_answer(grading, answer, gold)
    return PairGrade(output, answer, gold, exact, numeric)


def _summarize(grades: Sequence[PairGrade]) -> dict[str, float | int]:
    n = len(grades)
    scores: dict[str, float | int] = {
        "n": n,
        "exact_match": sum(g.exact.correct for g in grades) / n if n else 0.0,
        "numeric_match": sum(g.numeric.correct for g in grades) / n if n else 0.0,
    }
    counts = Counter(g.numeric.reason.value for g in grades)
    for reason, count in sorted(counts.items()):
        scores[f"reason/{reason}"] = count
    for reason, count in sorted(counts.items()):
        scores[f"reason_rate/{reason}"] = count / n
    return scores


def score_pairs(
    outputs: Sequence[str], labels: Sequence[str], *, policy: str | GradingPolicy = "flex"
) -> dict[str, float | int]:
    """Grade decoded predictions against decoded labels and summarise.

    Parameters
    ----------
    outputs, labels
        Decoded predictions and labels, in the same order.
    policy
        See :func:`grade_pair`.

    Returns
    -------
    dict
        ``n``; ``exact_match`` (share whose answer text equals the gold text);
        ``numeric_match`` (share correct under the policy's cascade); and for each reason
        that decided at least one verdict (:class:`~workbench.grading.status.MatchReason`:
        ``exact``, ``percent_reading``, ``scale``, ``wrong_value``, ``no_answer``...)
        ``reason/<reason>`` (count) and ``reason_rate/<reason>`` (share).

    Examples
    --------
    >>> score_pairs(["18770"], ["1877"])
    {'n': 1, 'exact_match': 0.0, 'numeric_match': 0.0, 'reason/scale': 1, 'reason_rate/scale': 1.0}
    """
    if len(outputs) != len(labels):
        raise UsageError(f"{len(outputs)} predictions but {len(labels)} labels; give one label per prediction")
    return _summarize([grade_pair(o, g, policy=policy) for o, g in zip(outputs, labels, strict=True)])


def _token_ids(array: Any, pad_token_id: int) -> list[list[int]]:
    """Token id rows from generated ids or logits, with ``-100`` replaced by the pad id."""
    import numpy as np

    if isinstance(array, tuple | list) and array and np.ndim(array[0]) >= 2:
        array = array[0]  # model outputs (logits, past key values, ...): the logits come first
    ids = np.asarray(array)
    if ids.ndim == 3:
        ids = ids.argmax(axis=-1)
    if ids.ndim != 2:
        raise UsageError(
            f"expected token ids of shape (batch, length) or logits (batch, length, vocab), got shape {ids.shape}; "
            "pass predict_with_generate=True or the model's logits"
        )
    ids = np.where(ids == IGNORE_INDEX, pad_token_id, ids)
    return [[int(t) for t in row] for row in ids]


def decode_eval_preds(tokenizer: Any, eval_preds: Any) -> tuple[list[str], list[str]]:
    """Decode an ``EvalPrediction`` (or ``(predictions, label_ids)``) into texts.

    ``-100`` in labels and predictions is replaced by the pad token; logits (3-D) are
    reduced by argmax; both sides are decoded with ``skip_special_tokens=True``.

    Parameters
    ----------
    tokenizer
        A ``transformers`` tokenizer with a pad token.
    eval_preds
        A ``transformers.EvalPrediction`` or a ``(predictions, label_ids)`` tuple.

    Returns
    -------
    tuple of list of str
        ``(decoded_predictions, decoded_labels)``.
    """
    if hasattr(eval_preds, "predictions") and hasattr(eval_preds, "label_ids"):
        predictions, label_ids = eval_preds.predictions, eval_preds.label_ids
    else:
        predictions, label_ids = eval_preds[0], eval_preds[1]
    if label_ids is None:
        raise UsageError("the evaluation has no label_ids to compare with; give the eval dataset a 'labels' column")
    pad = getattr(tokenizer, "pad_token_id", None)
    if pad is None:
        raise UsageError(
            "the tokenizer has no pad token, so -100 cannot be decoded; set tokenizer.pad_token "
            "(for instance tokenizer.pad_token = tokenizer.eos_token)"
        )
    outputs = tokenizer.batch_decode(_token_ids(predictions, pad), skip_special_tokens=True)
    labels = tokenizer.batch_decode(_token_ids(label_ids, pad), skip_special_tokens=True)
    if len(outputs) != len(labels):
        raise UsageError(f"{len(outputs)} predictions but {len(labels)} labels; they must come from one evaluation")
    return list(outputs), list(labels)


def write_pairs(
    path: str | Path,
    grades: Sequence[PairGrade],
    *,
    system: str,
    keys: Sequence[tuple[str, int]] | None = None,
) -> Path:
    """Write graded pairs as a canonical predictions table (JSON Lines), atomically.

    Columns: ``record_id, turn, system, predicted_answer`` (the extracted answer),
    ``raw_output`` (the decoded prediction), ``gold_answer`` (read from the label) and
    ``upstream_correct`` (the verdict ``compute_metrics`` gave), which
    :func:`workbench.io.predictions.load_predictions` reads as they are.

    Parameters
    ----------
    path
        The ``.jsonl`` file to write (replaced if it exists).
    grades
        From :func:`grade_pair`.
    system
        The system name written on every row.
    keys
        ``(record_id, turn)`` of each example, in order; by default ``(str(index), 0)``.
    """

    if keys is not None and len(keys) != len(grades):
        raise UsageError(f"{len(keys)} keys for {len(grades)} evaluation examples; give one (record_id, turn) each")
    rows = []
    for index, grade in enumerate(grades):
        record_id, turn = keys[index] if keys is not None else (str(index), 0)
        rows.append(
            {
                "record_id": record_id,
                "turn": turn,
                "system": system,
                "predicted_answer": grade.answer,
                "raw_output": grade.raw_output,
                "gold_answer": grade.gold,
                "upstream_correct": grade.numeric.correct,
            }
        )

    def write(tmp: Path) -> None:
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")

    return write_atomic(Path(path), write)


def make_compute_metrics(
    tokenizer: Any,
    *,
    policy: str | GradingPolicy = "flex",
    pairs_path: str | Path | None = None,
    system: str = "hf-seq2seq",
    keys: Sequence[tuple[str, int]] | None = None,
) -> Callable[[Any], dict[str, float | int]]:
    """Build a ``compute_metrics`` for ``Seq2SeqTrainer`` that grades with the workbench.

    Parameters
    ----------
    tokenizer
        The model's ``transformers`` tokenizer (it needs a pad token).
    policy
        The grading policy; ``flex`` (default) or ``strict``, see :func:`grade_pair`.
    pairs_path
        When given, every call writes the decoded, graded pairs there (JSON Lines, replaced
        each evaluation; see :func:`write_pairs`) for
        :func:`workbench.io.predictions.load_predictions`.
    system
        The system name in the pairs file.
    keys
        ``(record_id, turn)`` of each evaluation example, in order, for the pairs file
        (ConvFinQA ids link the rows to the gold documents); by default ``(str(index), 0)``.

    Returns
    -------
    callable
        ``compute_metrics(eval_preds) -> dict`` with the keys of :func:`score_pairs`.

    Raises
    ------
    MissingExtraError
        When ``transformers`` is not installed (``pip install 'workbench[hf]'``).

    Notes
    -----
    With a trainer (a model is needed, so this is not run as a doctest)::

        from transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments
        trainer = Seq2SeqTrainer(model=model, args=Seq2SeqTrainingArguments("out", predict_with_generate=True),
                                 compute_metrics=make_compute_metrics(tokenizer), ...)
    """
    require("transformers", extra="hf")
    grading = get_policy(policy)

    def compute_metrics(eval_preds: Any) -> dict[str, float | int]:
        outputs, labels = decode_eval_preds(tokenizer, eval_preds)
        grades = [grade_pair(o, g, policy=grading) for o, g in zip(outputs, labels, strict=True)]
        if pairs_path is not None:
            written = write_pairs(pairs_path, grades, system=system, keys=keys)
            logger.info("wrote %d graded pairs to %s", len(grades), written)
        return _summarize(grades)

    return compute_metrics
