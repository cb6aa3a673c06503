"""Apply annotations to the gold set: the cleaning plan.

:func:`plan_annotations` checks the active annotations against the gold and says what the
gold-level ones change (a :class:`Plan`); :func:`apply_plan` applies it to a
:class:`~workbench.io.gold.GoldDataset`; :func:`apply_annotations` does both, for re-grading
without a file. :mod:`workbench.cleaning.layouts` applies the same plan to the input file's own
records when :func:`workbench.cleaning.export.export_cleaned` writes it back.

What an annotation does
-----------------------
Only *gold-level* annotations (``system`` null) change the gold:

* ``corrected_answer`` replaces the turn's answer (``gold_answer``, ``gold_executed`` and
  ``gold_value``; the final ``#### n`` line of a GSM8K solution; see :func:`executed_value`
  for the executed answer of a ConvFinQA correction).
* ``corrected_program`` replaces ``gold_program``; GSM8K and MATH have no program, and a
  program correction for them is an error.
* ``exclude`` drops the whole record (a conversation's turns build on each other).

System-level annotations (``system`` set, such as ``model_error``) change nothing in the gold.
An annotation about a record or turn the dataset does not have is an :class:`InputError`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import polars as pl

from workbench.errors import InputError, UsageError
from workbench.grading import patterns
from workbench.grading.compare import answer_text
from workbench.io.gold import (
    GoldDataset,
    executed_text,
    gold_value,
    gsm8k_final_answer,
    plain_number,
)
from workbench.schema import ACTIVE_ANNOTATIONS

__all__ = [
    "Correction",
    "Plan",
    "active_frame",
    "apply_annotations",
    "apply_plan",
    "executed_value",
    "plan_annotations",
    "rewrite_final_answer",
]

#: Benchmarks whose gold has no program, so a program correction has nowhere to go.
_NO_PROGRAM = ("gsm8k", "math")


@dataclass(frozen=True)
class Correction:
    """A turn's corrected answer and program (``None``: left as it was)."""

    answer: str | None
    program: str | None


@dataclass(frozen=True)
class Plan:
    """What the active annotations ask of the gold, keyed as the gold is."""

    corrections: dict[tuple[str, int], Correction]
    excluded: dict[str, tuple[int, ...]]  # record id -> the turns whose annotation excludes it
    n_active: int
    n_gold_level: int
    n_system_level: int


# --------------------------------------------------------------------------- values
def executed_value(answer: str) -> float | str:
    """The executed answer a corrected display answer stands for.

    A plain number is its value, a plain percentage its fraction (computed in decimal, so
    ``"14.1%"`` gives exactly ``0.141``); anything else is the text, stripped.

    Examples
    --------
    >>> executed_value("18,770"), executed_value("14.1%"), executed_value("-21.1 %"), executed_value(" yes ")
    (18770.0, 0.141, -0.211, 'yes')
    >>> executed_value("$ 5")
    '$ 5'
    """
    text = answer.strip()
    number = plain_number(text)
    if number is not None:
        return number
    if text.endswith("%"):
        body = text[:-1].strip()
        if plain_number(body) is not None:
            return float(Decimal(body.replace(",", "")) / 100)
    return text


def rewrite_final_answer(solution: str, answer: str) -> str:
    """Replace the answer after a GSM8K solution's last ``####`` (the rest is kept as it was)."""
    matches = list(patterns.HASH_ANSWER.finditer(solution))
    if not matches:
        return f"{solution.rstrip()}\n#### {answer.strip()}"
    start, end = matches[-1].span("answer")
    return solution[:start] + answer.strip() + solution[end:]


# --------------------------------------------------------------------------- annotations
def active_frame(annotations: pl.DataFrame) -> pl.DataFrame:
    """The annotations cast to the active columns; an empty frame may have no columns."""
    if annotations.height == 0 and not annotations.columns:
        return pl.DataFrame(schema=ACTIVE_ANNOTATIONS)
    if "kind" in annotations.columns and (annotations["kind"].cast(pl.String) != "annotation").any():
        raise UsageError(
            "expected the active annotations, got events that include retractions; "
            "pass AnnotationStore.active() (or active_annotations(events)) instead of the raw events"
        )
    missing = [c for c in ACTIVE_ANNOTATIONS if c not in annotations.columns]
    if missing:
        raise UsageError(
            f"the annotations frame lacks column(s) {', '.join(missing)} "
            f"(expected {', '.join(ACTIVE_ANNOTATIONS)}; got {', '.join(annotations.columns) or 'none'}); "
            "pass AnnotationStore.active()"
        )
    try:
        frame = annotations.select([pl.col(c).cast(t) for c, t in ACTIVE_ANNOTATIONS.items()])
    except (pl.exceptions.InvalidOperationError, pl.exceptions.ComputeError) as exc:
        raise UsageError(
            f"the annotations frame has a column of the wrong type ({str(exc).splitlines()[0]}); "
            "expected the types of workbench.schema.ANNOTATION_EVENTS; pass AnnotationStore.active()"
        ) from None
    keys = frame.select("record_id", "turn", "system")
    if keys.is_duplicated().any():
        record_id, turn, system = keys.filter(keys.is_duplicated()).row(0)
        raise UsageError(
            f"expected one active annotation per (record_id, turn, system), got several for "
            f"('{record_id}', {turn}, {system!r}); pass AnnotationStore.active(), which keeps the latest"
        )
    return frame


def _annotation_error(gold: GoldDataset, row: Mapping[str, Any], problem: str, field: str, fix: str) -> InputError:
    return InputError(
        str(gold.path),
        problem,
        location=f"annotation event {row['event_id']} (record '{row['record_id']}', turn {row['turn']})",
        field=field,
        fix=fix,
    )


def plan_annotations(gold: GoldDataset, active: pl.DataFrame) -> Plan:
    """Check every annotation against ``gold`` and say what the gold-level ones change."""
    n_turns = dict(gold.turns.group_by("record_id").agg(pl.len()).iter_rows())
    corrections: dict[tuple[str, int], Correction] = {}
    excluded: dict[str, list[int]] = {}
    n_gold = 0
    retract = "retract that annotation (undo in the triage view, or AnnotationStore.retract(event_id, annotator=...)), or export the dataset it was made on"
    for row in active.sort("event_id").iter_rows(named=True):
        record_id, turn = row["record_id"], row["turn"]
        if record_id not in n_turns:
            raise _annotation_error(
                gold, row, f"the dataset has no record '{record_id}' ({len(n_turns)} records)", "record_id", retract
            )
        if turn is None or not 0 <= turn < n_turns[record_id]:
            raise _annotation_error(
                gold,
                row,
                f"record '{record_id}' has turns 0..{n_turns[record_id] - 1}, not turn {turn}",
                "turn",
                retract,
            )
        if row["system"] is not None:
            continue
        n_gold += 1
        answer, program = row["corrected_answer"], row["corrected_program"]
        if answer is not None and not answer.strip():
            raise _annotation_error(
                gold, row, "the corrected answer is blank", "corrected_answer", "give the answer, or leave it null"
            )
        if answer is not None and gold.benchmark == "gsm8k" and "\n" in answer.strip():
            raise _annotation_error(
                gold,
                row,
                "a GSM8K final answer is one line; the corrected answer has several",
                "corrected_answer",
                "give the final answer on one line",
            )
        if program is not None and gold.benchmark in _NO_PROGRAM:
            raise _annotation_error(
                gold,
                row,
                f"{gold.benchmark} gold ({gold.layout}) has no program to correct",
                "corrected_program",
                "leave corrected_program empty and give corrected_answer",
            )
        if answer is not None or program is not None:
            corrections[(record_id, turn)] = Correction(answer, program)
        if row["exclude"]:
            excluded.setdefault(record_id, []).append(turn)
    return Plan(
        corrections=corrections,
        excluded={k: tuple(sorted(v)) for k, v in excluded.items()},
        n_active=active.height,
        n_gold_level=n_gold,
        n_system_level=active.height - n_gold,
    )


def _corrected_row(gold: GoldDataset, row: dict[str, Any], correction: Correction) -> dict[str, Any]:
    """A gold turn row with a correction applied, written as :func:`workbench.io.gold.load_gold` reads the export."""
    out = dict(row)
    if correction.program is not None:
        out["gold_program"] = correction.program
    answer = correction.answer
    if answer is None:
        return out
    if gold.benchmark == "convfinqa":
        executed = executed_value(answer)
        out.update(
            gold_answer=answer_text(answer), gold_executed=answer_text(executed), gold_value=gold_value(executed)
        )
    elif gold.benchmark == "gsm8k":
        solution = row["gold_solution"]
        if solution is not None and gsm8k_final_answer(solution) is not None:
            out["gold_solution"] = solution = rewrite_final_answer(solution, answer)
            final = gsm8k_final_answer(solution) or answer.strip()
        else:
            final = answer.strip()
        out.update(gold_answer=final, gold_executed=executed_text(final), gold_value=plain_number(final))
    elif gold.benchmark == "table":
        text = answer_text(answer)
        out.update(gold_answer=text, gold_executed=executed_text(text), gold_value=gold_value(answer))
    else:  # math: the boxed answer; the solution text is left as it was
        text = answer.strip()
        out.update(gold_answer=text, gold_executed=text, gold_value=plain_number(text))
    return out


def apply_plan(gold: GoldDataset, plan: Plan, *, drop_excluded: bool = True) -> GoldDataset:
    turns = gold.turns
    if plan.corrections:
        rows = [
            _corrected_row(gold, row, plan.corrections[(row["record_id"], row["turn"])])
            if (row["record_id"], row["turn"]) in plan.corrections
            else row
            for row in turns.iter_rows(named=True)
        ]
        turns = pl.DataFrame(rows, schema=turns.schema)
    documents = gold.documents
    if drop_excluded and plan.excluded:
        dropped = turns.filter(pl.col("record_id").is_in(list(plan.excluded)))
        turns = turns.filter(~pl.col("record_id").is_in(list(plan.excluded)))
        orphans = set(dropped["doc_id"].drop_nulls()) - set(turns["doc_id"].drop_nulls())
        documents = documents.filter(~pl.col("doc_id").is_in(sorted(orphans)))
    return dataclasses.replace(gold, turns=turns, documents=documents)


def apply_annotations(gold: GoldDataset, annotations: pl.DataFrame) -> GoldDataset:
    """The cleaned gold for re-grading: gold-level corrections applied, excluded records removed.

    Gives the same ``turns`` as :func:`workbench.io.gold.load_gold` on the file
    :func:`workbench.cleaning.export.export_cleaned` writes (for GSM8K with exclusions, up to
    the renumbered ids: here the records keep their original ids).

    Parameters
    ----------
    gold
        From :func:`workbench.io.gold.load_gold`.
    annotations
        The active annotations (``AnnotationStore.active()``): one row per
        ``(record_id, turn, system)`` with the columns of ``ANNOTATION_EVENTS`` but ``kind`` and
        ``retracts``. A corrected answer sets ``gold_answer``, ``gold_executed`` and
        ``gold_value`` (and the ``####`` line of a GSM8K ``gold_solution``); a corrected program
        sets ``gold_program``; ``exclude`` removes the record's turns and its document.
        Annotations with a ``system`` change nothing.

    Returns
    -------
    GoldDataset
        A new dataset; ``gold`` is not changed.

    Raises
    ------
    InputError
        An annotation names a record or turn ``gold`` does not have, has a blank corrected
        answer, or corrects a program of a dataset without programs.
    UsageError
        ``annotations`` is not a frame of active annotations.

    Examples
    --------
    >>> from workbench.config import project_root
    >>> from workbench.io.gold import load_gold
    >>> gold = load_gold(project_root() / "tests/fixtures/convfinqa/dev_small.json")
    >>> notes = pl.DataFrame([  # gold "10%" where the program gives -0.09709; and one conversation left out
    ...     {"event_id": 1, "record_id": "Single_UNP/2008/page_77.pdf-2", "turn": 4, "corrected_answer": "-9.7%"},
    ...     {"event_id": 2, "record_id": "Double_RSG/2016/page_144.pdf", "turn": 0, "exclude": True},
    ... ], schema=ACTIVE_ANNOTATIONS)
    >>> cleaned = apply_annotations(gold, notes)
    >>> cleaned.turns.filter(record_id="Single_UNP/2008/page_77.pdf-2", turn=4).select("gold_answer", "gold_value").row(0)
    ('-9.7%', -0.097)
    >>> gold.turns.height - cleaned.turns.height, gold.documents.height - cleaned.documents.height
    (4, 1)
    """
    active = active_frame(annotations)
    return apply_plan(gold, plan_annotations(gold, active))
