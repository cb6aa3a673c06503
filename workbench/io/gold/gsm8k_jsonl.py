"""GSM8K: ``{question, answer}`` records (JSON Lines, or a JSON list), the answer ending ``#### <final answer>``."""

from __future__ import annotations

from workbench.errors import InputError
from workbench.io.gold.answers import executed_text, gsm8k_final_answer, plain_number
from workbench.io.gold.base import GoldDataset, GoldReader, GoldSource, Record, check_finite, make_dataset, one_turn_row

__all__ = ["READER", "KEYS", "detect", "read"]

#: The keys that identify a GSM8K record.
KEYS = ("question", "answer")


def detect(source: GoldSource) -> bool:
    """Records whose first has a ``question`` and an ``answer``."""
    return set(KEYS) <= source.first_keys


def read(source: GoldSource) -> GoldDataset:
    """GSM8K: the record id is the record's 0-based position (its line index when there are no blank lines)."""
    path, items = source.path, source.records or []
    rows = []
    for index, (where, raw) in enumerate(items):
        rec = Record(path, index, raw, record_id=str(index), where=where)
        question = rec.get("question", kind=str)
        solution = rec.get("answer", kind=str)
        answer = gsm8k_final_answer(solution)
        if answer is None:
            raise InputError(
                str(path),
                "the answer has no final '#### <answer>' line",
                location=rec.location,
                field="answer",
                fix="end the answer with '#### ' and the final answer, as GSM8K does",
            )
        check_finite(path, answer, location=rec.location, field="answer")
        rows.append(one_turn_row(rec.id, question, answer, executed_text(answer), plain_number(answer), solution))
    return make_dataset(path, "gsm8k-jsonl", "gsm8k", rows, [])


READER = GoldReader(layout="gsm8k-jsonl", detect=detect, read=read, shape="GSM8K", keys=KEYS)
