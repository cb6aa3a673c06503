"""ghchen99 evaluation results: ``{"results": [{question_id: "<record id>-<turn>", ...}]}``."""

from __future__ import annotations

from workbench.errors import InputError
from workbench.io.predictions.base import GHCHEN99_GOLD, PredictionReader, PredictionSource, Rows

__all__ = ["READER", "detect", "read"]


def detect(source: PredictionSource) -> bool:
    """A JSON object whose ``results`` is a list."""
    return isinstance(source.document, dict) and isinstance(source.document.get("results"), list)


def read(source: PredictionSource) -> Rows:
    path, results = source.path, source.document["results"]
    records, locations = [], []
    for index, obj in enumerate(results):
        location = f"results[{index}]"
        qid = obj.get("question_id") if isinstance(obj, dict) else None
        record_id, sep, turn = str(qid).rpartition("-")
        if not isinstance(qid, str) or not sep or not turn.isdigit():
            raise InputError(
                str(path),
                f"question_id {qid!r} is not '<record id>-<turn>'",
                location=location,
                field="question_id",
                fix="write question_id as the record id, a hyphen, and the 0-based turn",
            )
        records.append(
            {
                "record_id": record_id,
                "turn": int(turn),
                "predicted_answer": obj.get("predicted_answer"),
                "predicted_program": obj.get("predicted_program"),
                "question": obj.get("question"),
                "gold_answer": obj.get("expected_answer"),
                "upstream_correct": obj.get("answer_correct"),
            }
        )
        locations.append(f"{location} (question_id '{qid}')")
    columns = ["record_id", "turn", "predicted_answer", "predicted_program", *GHCHEN99_GOLD, "upstream_correct"]
    return Rows(records, locations, columns)


READER = PredictionReader(name="ghchen99 results", detect=detect, read=read)
