"""One data-quality flag: its row, the CHECKS table it goes into, and the confidences.

Every rule (:mod:`~workbench.quality.display`, :mod:`~workbench.quality.document`,
:mod:`~workbench.quality.agreement`) builds its flags with :func:`flag_row`; the confidences
and the hand-checked sample they come from are described in :mod:`workbench.quality.checks`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from workbench.grading.compare import read_number
from workbench.schema import CHECK_KEYS, CHECKS, as_text

__all__ = [
    "AGREEMENT_RULE",
    "CONFIDENCE",
    "NEAR",
    "checks_frame",
    "as_checks",
    "merge_flags",
    "flag_row",
    "show",
    "gold_value",
]

#: The rule whose evidence comes from the systems' answers rather than from the gold.
AGREEMENT_RULE = "systems_agree"

#: Confidences, one per (rule, situation); see :mod:`workbench.quality.checks`.
CONFIDENCE: Mapping[str, float] = {
    "sign": 0.9,
    "scale": 0.85,
    "percent_without_sign": 0.7,
    "display_far": 0.85,
    "display_near": 0.6,
    "display_not_number": 0.5,
    "yes_no": 0.9,
    "program_differs": 0.9,
    "program_fails": 0.5,
    "missing": 0.8,
    "missing_near": 0.6,
    "table_sign": 0.7,
    "table_sign_convention": 0.1,
    "question_unit": 0.5,
    "agree_cap_few": 0.6,
    "agree_near_miss": 0.15,
}

#: "Near": within this relative distance.
NEAR = 0.02


#: CHECKS with its categories as text: flags are written so, then cast (an unknown category fails).
_CHECKS_AS_TEXT = {c: as_text(t) for c, t in CHECKS.items()}


def checks_frame(rows: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """Rows into a CHECKS table; an unknown category fails loudly in the cast."""
    return as_checks(pl.DataFrame(list(rows), schema=_CHECKS_AS_TEXT))


def as_checks(frame: pl.DataFrame) -> pl.DataFrame:
    """A frame of the CHECKS columns (categories as text) cast to CHECKS; an unknown category
    fails loudly in the cast."""
    return frame.select(list(CHECKS)).cast(_CHECKS_AS_TEXT).cast(CHECKS)


def merge_flags(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per (record_id, turn, category, rule): evidence joined, the highest confidence."""
    return (
        frame.sort([*CHECK_KEYS, "confidence"], descending=[False, False, False, False, True])
        .group_by(list(CHECK_KEYS), maintain_order=True)
        .agg(pl.col("evidence").unique(maintain_order=True).str.join("; "), pl.col("confidence").max())
        .select(list(CHECKS))
        .sort(list(CHECK_KEYS))
    )


def flag_row(record_id: str, turn: int, category: str, rule: str, evidence: str, confidence: float) -> dict[str, Any]:
    """One flag as a row of :data:`workbench.schema.CHECKS` (see :func:`checks_frame`)."""
    return {
        "record_id": record_id,
        "turn": turn,
        "category": category,
        "rule": rule,
        "evidence": evidence,
        "confidence": confidence,
    }


def show(value: float) -> str:
    """A number as an analyst reads it: up to 10 significant digits, no exponent for usual sizes.

    Examples
    --------
    >>> show(18770.0), show(-0.09709), show(0.14136000001)
    ('18770', '-0.09709', '0.14136')
    """
    return f"{value:.10g}"


def gold_value(row: Mapping[str, Any]) -> float | None:
    """The executed value of a gold turn: ``gold_value`` when the gold has it, else the
    executed answer read as a number (a percentage as its fraction); ``None`` when neither."""
    if row.get("gold_value") is not None:
        return float(row["gold_value"])
    number = read_number(row["gold_executed"]) if row.get("gold_executed") else None
    return number.fraction if number else None
