"""ghchen99/ConvFinQA-llm-eval predictions: ``[{id, conversation: [{predicted_program, predicted_answer}]}]``."""

from __future__ import annotations

from workbench.errors import InputError
from workbench.io.predictions.base import GHCHEN99_GOLD, PredictionReader, PredictionSource, Rows

__all__ = ["READER", "detect", "read"]


def detect(source: PredictionSource) -> bool:
    """JSON records whose first has an ``id`` and a ``conversation``.

    Raises :class:`InputError` when a JSON file holds no list of records (see
    :attr:`~workbench.io.predictions.base.PredictionSource.records`).
    """
    if source.kind != "json":
        return False
    records = source.records
    return bool(records) and "conversation" in records[0] and "id" in records[0]


def read(source: PredictionSource) -> Rows:
    path, data = source.path, source.records
    records, locations = [], []
    for index, obj in enumerate(data):
        conversation = obj.get("conversation")
        if not isinstance(conversation, list):
            raise InputError(
                str(path),
                "expected a list of turns",
                location=f"record {index} (id '{obj.get('id')}')",
                field="conversation",
                fix="give each record a 'conversation' list",
            )
        for turn, item in enumerate(conversation):
            item = item if isinstance(item, dict) else {}
            records.append(
                {
                    "record_id": obj.get("id"),
                    "turn": turn,
                    "predicted_answer": item.get("predicted_answer"),
                    "predicted_program": item.get("predicted_program"),
                    "question": item.get("question"),
                    "gold_answer": item.get("expected_answer"),
                }
            )
            locations.append(f"record {index} (id '{obj.get('id')}'), turn {turn}")
    return Rows(records, locations, ["record_id", "turn", "predicted_answer", "predicted_program", *GHCHEN99_GOLD])


READER = PredictionReader(name="ghchen99 predictions", detect=detect, read=read)
