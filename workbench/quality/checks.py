"""Data-quality detectors: flag gold turns that look wrong, with evidence and a confidence.

Each flag is one row of :data:`workbench.schema.CHECKS`: a gold turn, a category (``mislabel``,
``unit_inconsistency``, ``sign_inconsistency``, ``missing_value``), the rule that fired, one
sentence of evidence quoting the numbers, the program and where a number was (not) found, and a
confidence in [0, 1]: how likely a person who reads the document agrees that the gold turn has
the problem the evidence describes. The confidences below were set from a hand-checked sample of
the flags on ConvFinQA dev with two claude-sonnet-4-6 runs (``tests/fixtures/checks/``; the
figures in brackets are real / sampled).

Rules on the gold alone (:func:`gold_checks`)
----------------------------------------------
``display_vs_executed``
    The display answer (``"14.1%"``) against the executed answer (0.14136). A display that shows
    the executed value at its own precision (rounded or truncated, ``%`` applied, or ``%`` as
    the label of a value the program already put in percent units) is consistent. Otherwise:
    opposite signs give ``sign_inconsistency`` (0.9) [5/5]; a display equal to the executed
    value times a power of ten gives ``unit_inconsistency`` (0.85 for 10^k, k != 2; 0.7 for
    100x without a ``%`` sign) [6/6]; anything else, including the magnitude of a sign-flagged
    turn ("42.9%" for -0.99857), is a ``mislabel`` (0.85; 0.6 within 2%) [3/3]. Yes/no answers
    compare as text (0.9); a display written as a sentence is consistent when it states the
    executed value, else a ``mislabel`` (0.5).
``program_vs_executed``
    The gold program executed here (with the document's table) against the executed answer: a
    difference beyond 5-decimal rounding (or 1e-5 relative) is a ``mislabel`` (0.9); a program
    that does not execute is a ``mislabel`` (0.5) quoting the execution message. (None on dev.)
``argument_not_in_document``
    Every literal number of the gold program (not ``const_*``, not ``#n``) must be among the
    numbers of the document (text, table cells, row labels, column headers), the questions of
    this and the earlier turns, and the executed answers of the earlier turns, allowing commas,
    ``%``, sign and scale (x100, /100, x or / 1e3, 1e6, 1e9) and the precision the program writes:
    a program value with d decimals matches a document number that rounds to it at d decimals
    (12.5 matches 12.53, and 12.50 matches 12.5), but not a less precise one (12.53 does not
    match 12.5). Not found: ``missing_value`` (0.8; 0.6 when a number within 2% exists) [12/12].
    A number a conversation takes from an earlier answer is flagged where it enters, so a
    cumulative program repeats a flag only while the number is not an earlier answer.
``table_sign``
    An argument found only with the opposite sign (a table cell -27.0 where the program uses 27,
    or the program negates a positive cell with ``const_m1``): ``sign_inconsistency``. 0.7 [8/8]:
    in the reformatted layout parentheses that held a percentage (``11.4% ( 11.4 % )``) became
    minus signs; 0.1 [0/7] when the row, column or question says "losses", "cash used",
    "assumed"... (:data:`~workbench.grading.patterns.NEGATIVE_AMOUNT_CUE`): a negative amount
    asked about without its sign is a convention, not an error.
``question_unit``
    The question asks for a percentage (:func:`~workbench.grading.compare.percent_cue`) but the
    display is the bare ratio of a ratio-computing program (``.0751``), or it asks for a ratio
    and the display is a percentage: ``unit_inconsistency``, 0.5 [6/8]. It fires 8 times on dev;
    the inconsistency is usually real but harmless to grading (the same quantity in the other
    unit), hence a confidence below its precision. Skipped for gold whose display answers are
    the executed values (the ghchen99 layout), which has no display to judge.

Rule on several systems (:func:`agreement_checks`)
-----------------------------------------------------
``systems_agree``
    At least ``min_systems`` systems give the same wrong answer (1e-3 relative tolerance, the
    x100 percent-unit reading allowed between them): ``mislabel``, confidence ``0.2 + 0.7 x`` the
    share of systems that agree, capped at 0.6 when fewer than three agree (two runs of one model
    repeat its mistakes) [11/15], and 0.15 when every agreeing answer is only a sign, scale,
    percent or rounding step away from the gold (a convention, not a wrong gold) [0/2]. About a
    third of the real ones are not mislabels but a gold number missing from the document or an
    ambiguous question.

Gold without programs or documents (GSM8K, MATH) gets only the rules that apply to it:
``display_vs_executed`` (silent when the display is the executed answer) and ``systems_agree``.

The rules live one family per module: the flag row and the confidences in
:mod:`~workbench.quality.flags`, the display-answer rules in :mod:`~workbench.quality.display`, the
program-and-document rules in :mod:`~workbench.quality.document`, the several-systems rule in
:mod:`~workbench.quality.agreement`; this module runs them and summarizes their table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from workbench.grading.program import Node, ProgramSyntaxError, parse_program
from workbench.grading.table import TableRows
from workbench.io.gold import GoldDataset, document_table
from workbench.parallel import distinct, first_rows
from workbench.quality.agreement import agreement_checks
from workbench.quality.display import display_flags, question_flags
from workbench.quality.document import Numbers, argument_flags, document_numbers, program_flags, text_numbers
from workbench.quality.flags import AGREEMENT_RULE, checks_frame, gold_value, merge_flags
from workbench.schema import CHECK_CATEGORIES, CHECKS, KEY_DTYPE

__all__ = [
    "AGREEMENT_RULE",
    "gold_checks",
    "agreement_checks",
    "run_checks",
    "flag_counts",
    "top_category",
    "shows_display_answers",
]


def _documents_by_id(documents: pl.DataFrame) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """One document per distinct content (under the first ``doc_id`` that has it), and every
    ``doc_id`` mapped to that first one: copies of a document are read once."""
    content = [c for c in documents.columns if c != "doc_id"]
    groups = documents.group_by(content, maintain_order=True).agg(pl.col("doc_id"))
    first = {}
    same = {}
    for row in groups.iter_rows(named=True):
        ids = row.pop("doc_id")
        first[ids[0]] = {"doc_id": ids[0], **row}
        same.update(dict.fromkeys(ids, ids[0]))
    return first, same


#: A gold turn no gold-only rule flags: no program, and a display that is its executed answer as
#: written, or no display or executed answer. Conversations of only such turns (GSM8K, MATH) are
#: not read row by row.
_SILENT = (pl.col("gold_program").is_null() | (pl.col("gold_program") == "")) & (
    pl.col("gold_answer").is_null()
    | pl.col("gold_executed").is_null()
    | (pl.col("gold_answer") == pl.col("gold_executed"))
)


def gold_checks(gold: GoldDataset) -> pl.DataFrame:
    """Run the detectors that need only the gold set (see the module docstring).

    Parameters
    ----------
    gold
        From :func:`workbench.io.gold.load_gold`; programs and documents are used where
        the gold has them (ConvFinQA), the other turns get the display check only.

    Returns
    -------
    pl.DataFrame
        :data:`workbench.schema.CHECKS`, one row per (record_id, turn, category, rule).

    Examples
    --------
    >>> from workbench.config import project_root
    >>> from workbench.io.gold import load_gold
    >>> gold = load_gold(project_root() / "data/convfinqa/dev.json")
    >>> flags = gold_checks(gold)
    >>> row = flags.filter(pl.col("record_id") == "Single_CDNS/2018/page_31.pdf-1", pl.col("turn") == 2).row(0, named=True)
    >>> row["category"], row["rule"], row["evidence"][:66]
    ('unit_inconsistency', 'display_vs_executed', "display answer '1877' is 10x smaller than the executed value 18770")
    """
    documents, same = _documents_by_id(gold.documents)
    # question_unit reads the display answer: gold whose display is the executed value (the
    # ghchen99 layout) has none to read
    has_display = shows_display_answers(gold.turns)
    ordered = gold.turns.filter(_SILENT.not_().any().over("record_id")).sort("record_id", "turn")
    if "doc_id" in ordered.columns and same:  # documents of the same content read as one
        ordered = ordered.with_columns(pl.col("doc_id").replace(same))
    # the flags of each distinct conversation content (GSM8K copies, replicated runs) are found once
    content = [c for c in ordered.columns if c != "record_id"]
    conversations = ordered.group_by("record_id", maintain_order=True).agg(pl.struct(content).alias("_turns"))
    unique, which = distinct(conversations, ["_turns"])
    record_ids = conversations.get_column("record_id").to_list()
    found = [
        _conversation_flags([{**turn, "record_id": record_ids[i]} for turn in turns], documents, has_display)
        for i, turns in zip(first_rows(which).to_list(), unique.get_column("_turns").to_list(), strict=True)
    ]
    rows: list[dict[str, Any]] = []
    seen: set[int] = set()
    for record_id, u in zip(record_ids, which.to_list(), strict=True):
        if u in seen:
            rows += [{**flag, "record_id": record_id} for flag in found[u]]
        else:
            seen.add(u)
            rows += found[u]
    return merge_flags(checks_frame(rows)) if rows else checks_frame([])


def _conversation_flags(
    turns: Sequence[Mapping[str, Any]], documents: Mapping[str, Mapping[str, Any]], has_display: bool
) -> list[dict[str, Any]]:
    """The gold-only flags of one conversation's turns (in turn order)."""
    rows: list[dict[str, Any]] = []
    document: Numbers | None = None  # the document's numbers, read once per conversation
    table: TableRows | None = None
    known: list[tuple[float, int, str]] = []  # numbers of the questions so far and the earlier answers
    for row in turns:
        turn, program = row["turn"], row.get("gold_program")
        rows += display_flags(row)
        parsed = _parse(program)
        if program and has_display:
            rows += question_flags(row, parsed)
        known += text_numbers(row.get("question"), f"question of turn {turn}")
        doc = documents.get(row["doc_id"]) if row.get("doc_id") else None
        if program and doc is not None:
            if document is None:
                document = document_numbers(doc)
                table = document_table(doc.get("table_json"))
            rows += program_flags(row, table)
            rows += argument_flags(row, document.extend(known), parsed)
        value = gold_value(row)
        if value is not None and math.isfinite(value):
            known.append((value, (value > 0) - (value < 0), f"executed answer of turn {turn}"))
    return rows


def _parse(program: str | None) -> tuple[Node, ...] | None:
    """The steps of a program, or ``None`` when there is none or it does not parse (the
    ``program_vs_executed`` rule reports why)."""
    if not program:
        return None
    try:
        return parse_program(program).steps
    except (ProgramSyntaxError, RecursionError):
        return None


def run_checks(gold: GoldDataset, turns: pl.DataFrame | None = None) -> pl.DataFrame:
    """All detectors: :func:`gold_checks`, and :func:`agreement_checks` when graded ``turns``
    are given.

    Parameters
    ----------
    gold
        The gold set.
    turns
        Graded turns of one or more systems on ``gold`` (``Run.turns``), or ``None``.

    Returns
    -------
    pl.DataFrame
        :data:`workbench.schema.CHECKS`, sorted by record_id, turn, category (in
        :data:`~workbench.schema.CHECK_CATEGORIES` order), rule; unique on those keys.

    Examples
    --------
    >>> from workbench.config import project_root
    >>> from workbench.io.gold import load_gold
    >>> gold = load_gold(project_root() / "tests/fixtures/gsm8k/test_first_20.jsonl")
    >>> run_checks(gold).height
    0
    """
    parts = [gold_checks(gold)]
    if turns is not None:
        parts.append(agreement_checks(turns))
    return merge_flags(pl.concat(parts))


def flag_counts(checks: pl.DataFrame) -> pl.DataFrame:
    """Flags and distinct flagged turns per category, for the report.

    Parameters
    ----------
    checks
        A :data:`workbench.schema.CHECKS` table.

    Returns
    -------
    pl.DataFrame
        ``category, n_flags, n_turns``: every automatic category in
        :data:`~workbench.schema.CHECK_CATEGORIES` order (0 when it has no flag), then any other.

    Examples
    --------
    >>> from workbench.quality.flags import flag_row
    >>> flags = checks_frame([flag_row("r", 0, "mislabel", "x", "e", 0.5), flag_row("r", 0, "mislabel", "y", "e", 0.5)])
    >>> flag_counts(flags).rows()
    [('mislabel', 2, 1), ('unit_inconsistency', 0, 0), ('sign_inconsistency', 0, 0), ('missing_value', 0, 0)]
    """
    counted = checks.group_by("category").agg(
        pl.len().cast(pl.Int64).alias("n_flags"),
        pl.struct("record_id", "turn").n_unique().cast(pl.Int64).alias("n_turns"),
    )
    present = [c for c in counted["category"].cast(pl.String).to_list() if c not in CHECK_CATEGORIES]
    order = pl.DataFrame({"category": [*CHECK_CATEGORIES, *sorted(present)]}, schema={"category": pl.String()})
    return (
        order.join(counted.with_columns(pl.col("category").cast(pl.String)), on="category", how="left")
        .with_columns(pl.col("n_flags", "n_turns").fill_null(0))
        .select("category", "n_flags", "n_turns")
    )


def shows_display_answers(turns: pl.DataFrame) -> bool:
    """Whether a gold set writes display answers of its own (some differ from the executed
    values); the ``question_unit`` rule only runs on such a set.

    Examples
    --------
    >>> shows_display_answers(pl.DataFrame({"gold_answer": ["14.1%"], "gold_executed": ["0.141"]}))
    True
    """
    return bool(turns.select((pl.col("gold_answer") != pl.col("gold_executed")).any()).item())


def top_category(checks: pl.DataFrame) -> pl.DataFrame:
    """One row per flagged (record_id, turn): ``dq_category``, the category of a flag the gold
    alone raised that comes first in :data:`~workbench.schema.CHECK_CATEGORIES` (the most
    specific), and ``dq_confidence``, that category's highest confidence. A ``systems_agree``
    flag (evidence from the systems, not the gold) counts only when the gold alone raised none:
    otherwise every missing value that systems also stumble on would show as a mislabel.

    Parameters
    ----------
    checks
        A :data:`workbench.schema.CHECKS` table.

    Returns
    -------
    pl.DataFrame
        ``record_id, turn, dq_category`` (text), ``dq_confidence``; to join onto graded turns.

    Examples
    --------
    >>> from workbench.quality.flags import flag_row
    >>> flags = checks_frame([flag_row("r", 0, "missing_value", "x", "e", 0.9),
    ...     flag_row("r", 0, "mislabel", "y", "e", 0.4), flag_row("r", 0, "mislabel", "z", "e", 0.6)])
    >>> top_category(flags).rows()
    [('r', 0, 'mislabel', 0.6)]
    >>> top_category(checks_frame([flag_row("r", 0, "missing_value", "x", "e", 0.8),
    ...     flag_row("r", 0, "mislabel", AGREEMENT_RULE, "e", 0.6)])).rows()
    [('r', 0, 'missing_value', 0.8)]
    """
    return (
        checks.with_columns(
            pl.col("category").cast(CHECKS["category"]),  # rank by category order, not by name
            (pl.col("rule") == AGREEMENT_RULE).alias("_from_systems"),
        )
        .sort(
            ["record_id", "turn", "_from_systems", "category", "confidence"],
            descending=[False, False, False, False, True],
        )
        .group_by("record_id", "turn", maintain_order=True)
        .agg(
            pl.col("category").first().cast(pl.String).alias("dq_category"),
            pl.col("confidence").first().alias("dq_confidence"),
        )
        .select(
            pl.col("record_id").cast(KEY_DTYPE),
            pl.col("turn").cast(pl.Int32),
            "dq_category",
            pl.col("dq_confidence").cast(pl.Float64),
        )
    )
