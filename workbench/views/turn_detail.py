"""The detail of every failed turn, for the offline report's panel.

A failed-turns table (:func:`workbench.views.tables.failed_turns`, :func:`~workbench.views.tables.drilldown`)
carries, after its rows, one ``<script type="application/json" class="wb-turn-data">`` block made
here: every document of its turns ONCE (pre-text and post-text cut into pieces, numbers at the odd
positions; the table's cells), and for each turn everything the panel shows: the question, the
answers, the grader's reason and rule, each policy's verdict, the conversation so far, both programs
with their step traces, the data-quality flags with evidence, the full raw output, and which numbers
of the document the gold and the predicted programs use. Each row of the table names its turn in
``data-wb-key`` (:func:`turn_key`); the page's grid script (``static/sortable.js``) opens the panel
on a click and builds it from this data with ``textContent`` only, so every value stays text.

The numbers are marked here for the panel and for the triage view (:mod:`workbench.widgets.triage`
uses :func:`marked_pieces` and :func:`marked_cell`; both rest on :func:`number_pieces` and :func:`is_used`): read as
:data:`~workbench.grading.patterns.DOCUMENT_NUMBER` reads them, compared without sign, a number also
matching its hundredth (``13.4`` of ``13.4%`` for the literal ``13.4%``). The programs' traces and the
numbers they use come from the triage session (:mod:`workbench.annotations.session`).

Examples
--------
>>> number_pieces("sales rose 13.4% to $ 1,080")
['sales rose ', '13.4', '% to $ ', '1,080', '']
>>> turn_key("s", "r\\"1", 2)
'["s", "r\\\\"1", 2]'
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import polars as pl

from workbench.analysis import words
from workbench.annotations.session import TraceView, _literals, _table, _trace
from workbench.grading import patterns
from workbench.grading.normalize import parse_cell_number
from workbench.grading.policies import POLICIES
from workbench.views.html import Markup, macro, script_json

if TYPE_CHECKING:
    from workbench.pipeline.run import Run

__all__ = [
    "NUMBER_REL_TOL",
    "is_used",
    "number_pieces",
    "marked_pieces",
    "turn_key",
    "detail_data",
    "detail_script",
    "once_per_page",
    "in_words",
    "gold_note",
    "for_page",
]

#: Relative tolerance when matching a document's number to a number a program uses.
NUMBER_REL_TOL = 1e-6


def is_used(value: float, numbers: Iterable[float]) -> bool:
    """Whether ``value`` (or ``value`` as a percent, divided by 100) is one of ``numbers``,
    signs ignored (running text carries no sign), within :data:`NUMBER_REL_TOL`.

    Examples
    --------
    >>> is_used(13.4, {0.134}), is_used(-5.0, {5.0}), is_used(5.1, {5.0})
    (True, True, False)
    """
    candidates = (abs(value), abs(value) / 100.0)
    return any(math.isclose(c, abs(n), rel_tol=NUMBER_REL_TOL, abs_tol=1e-12) for n in numbers for c in candidates)


def number_pieces(text: str) -> list[str]:
    """``text`` cut at its numbers: plain text at the even positions, a number at each odd one
    (so there is always an odd count of pieces; joined, they are ``text``)."""
    pieces: list[str] = []
    last = 0
    for match in patterns.DOCUMENT_NUMBER.finditer(text):
        pieces += [text[last : match.start()], match.group("num")]
        last = match.end()
    pieces.append(text[last:])
    return pieces


def _value(piece: str) -> float | None:
    value = float(piece.replace(",", ""))
    return value if math.isfinite(value) else None


def marked_pieces(text: str, numbers: tuple[float, ...]) -> list[tuple[str, bool]]:
    """``text`` cut into ``(part, marked)`` pieces, marked where a number is one of ``numbers``.

    Examples
    --------
    >>> marked_pieces("up 13.4% to 7", (0.134,))
    [('up ', False), ('13.4', True), ('% to ', False), ('7', False)]
    """
    out: list[tuple[str, bool]] = []
    for i, piece in enumerate(number_pieces(text)):
        value = _value(piece) if i % 2 else None
        if piece or i % 2:
            out.append((piece, value is not None and is_used(value, numbers)))
    return out


def marked_cell(cell: str, numbers: tuple[float, ...]) -> tuple[str, bool]:
    """A document table's cell, and whether it is a number one of ``numbers`` is."""
    value = parse_cell_number(cell) if cell else None
    return cell, value is not None and is_used(value, numbers)


def turn_key(system: Any, record_id: Any, turn: Any) -> str:
    """The key of a turn in the detail data and in its row's ``data-wb-key``: a JSON array."""
    return json.dumps([None if system is None else str(system), str(record_id), int(turn)])


# --------------------------------------------------------------------------- the data
def _document(row: Mapping[str, Any]) -> dict[str, Any]:
    columns, rows = _table(row.get("table_json"))
    return {
        "pre": number_pieces(row.get("pre_text") or ""),
        "post": number_pieces(row.get("post_text") or ""),
        "columns": list(columns),
        "rows": [list(r) for r in rows],
    }


def _marks(doc: Mapping[str, Any], numbers: frozenset[float]) -> dict[str, list[Any]]:
    """Where ``numbers`` are in ``doc``: indexes of the pieces of pre- and post-text, ``[row, column]`` of cells."""
    if not numbers:
        return {"pre": [], "post": [], "cells": []}
    used = tuple(numbers)

    def pieces(parts: list[str]) -> list[int]:
        return [i for i in range(1, len(parts), 2) if (v := _value(parts[i])) is not None and is_used(v, used)]

    cells = [[r, c] for r, row in enumerate(doc["rows"]) for c, cell in enumerate(row) if marked_cell(cell, used)[1]]
    return {"pre": pieces(doc["pre"]), "post": pieces(doc["post"]), "cells": cells}


def _trace_data(view: TraceView | None) -> dict[str, Any] | None:
    if view is None or view.program is None:
        return None
    return {
        "program": view.program,
        "status": words.plain(str(view.status)),
        "value": view.value,
        "steps": list(view.steps),
        "message": view.message,
    }


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def in_words(frame: pl.DataFrame, columns: Iterable[str]) -> pl.DataFrame:
    """``frame`` with the names in ``columns`` (those it has) as text in words
    (:func:`workbench.analysis.words.plain`, each distinct value once).

    Examples
    --------
    >>> in_words(pl.DataFrame({"reason": ["wrong_value", None], "n": [1, 2]}), ("reason", "category")).rows()
    [('wrong value', 1), (None, 2)]
    """
    present = [c for c in columns if c in frame.columns]
    return frame.with_columns(
        pl.col(c).cast(pl.String).replace({v: words.plain(v) for v in frame[c].cast(pl.String).unique().drop_nulls()})
        for c in present
    )


def _words(value: Any) -> str | None:
    """A name (a reason, an error type, a rule) in words (:func:`workbench.analysis.words.plain`)."""
    return None if value is None else words.plain(str(value))


def _keys(frame: pl.DataFrame) -> list[str]:
    return [turn_key(*row) for row in frame.select("system", "record_id", "turn").iter_rows()]


def _grouped(frame: pl.DataFrame, columns: list[str]) -> dict[str, list[list[Any]]]:
    """Rows of ``frame`` by turn key, each as the values of ``columns``."""
    out: dict[str, list[list[Any]]] = {}
    for key, row in zip(_keys(frame), frame.select(columns).iter_rows(), strict=True):
        out.setdefault(key, []).append([v if isinstance(v, bool) or v is None else _text(v) for v in row])
    return out


def detail_data(source: Run | pl.DataFrame, failed: pl.DataFrame) -> dict[str, Any]:
    """The detail of each turn of ``failed`` (rows of the turns table), with the documents of
    ``source`` when it is a :class:`~workbench.pipeline.run.Run` (a bare turns table has none).

    Returns ``{"docs": {doc_id: document}, "turns": {turn key: detail}}``.
    """
    turns = source if isinstance(source, pl.DataFrame) else source.turns
    run = None if isinstance(source, pl.DataFrame) else source
    policy = DEFAULT_POLICY if run is None else run.graded.policy.name
    doc_ids: dict[tuple[str, int], str] = {}
    docs: dict[str, dict[str, Any]] = {}
    tables: dict[str, Any] = {}
    policies: dict[str, list[list[Any]]] = {}
    flags: dict[str, list[list[Any]]] = {}
    if run is not None:
        gold = run.gold.turns.join(failed.select("record_id", "turn").unique(), on=["record_id", "turn"], how="semi")
        if "doc_id" in gold.columns:
            doc_ids = {(r, t): d for r, t, d in gold.select("record_id", "turn", "doc_id").iter_rows() if d is not None}
        wanted = sorted(set(doc_ids.values()))
        for row in run.gold.documents.filter(pl.col("doc_id").is_in(wanted)).iter_rows(named=True):
            docs[row["doc_id"]] = _document(row)
        tables = run.gold.tables(wanted) if wanted else {}
        grades = run.policy_grades
        if grades.height:
            grades = grades.join(failed.select("system", "record_id", "turn"), on=["system", "record_id", "turn"])
            grades = in_words(grades.sort("policy"), ("reason",))
            policies = _grouped(grades, ["policy", "correct", "reason", "answer", "detail"])
        checks = run.checks.join(failed.select("record_id", "turn").unique(), on=["record_id", "turn"], how="semi")
        checks = checks.sort("confidence", descending=True, maintain_order=True)
        for record_id, turn, category, rule, confidence, evidence in checks.select(
            "record_id", "turn", "category", "rule", "confidence", "evidence"
        ).iter_rows():
            flags.setdefault(json.dumps([record_id, int(turn)]), []).append(
                [words.plain(str(category)), _words(rule), _number(confidence), evidence]
            )
    history = _history(turns, failed)
    out: dict[str, Any] = {}
    for key, row in zip(_keys(failed), failed.iter_rows(named=True), strict=True):
        doc_id = doc_ids.get((row["record_id"], row["turn"]))
        table = tables.get(doc_id) if doc_id is not None else None
        gold_program, predicted_program = row.get("gold_program"), row.get("predicted_program")
        detail = {
            "system": _text(row.get("system")),
            "record_id": str(row["record_id"]),
            "turn": int(row["turn"]),
            "question": _text(row.get("question")),
            "gold": _text(row.get("gold_answer")),
            "gold_executed": _text(row.get("gold_executed")),
            "gold_solution": _text(row.get("gold_solution")),
            "predicted": _text(row.get("predicted_answer")),
            "graded": _text(row.get("answer")),
            "correct": row.get("correct"),
            "reason": _words(row.get("reason")),
            "detail": _text(row.get("detail")),
            "rule": _words(row.get("extraction_rule")),
            "source": _words(row.get("answer_source")),
            "gold_note": gold_note(row.get("gold_answer"), row.get("gold_executed"), policy),
            "error_type": _words(row.get("error_type")),
            "raw": _text(row.get("raw_output")),
            "doc": doc_id,
            "history": history.get(key, []),
            "gold_trace": _trace_data(_trace(gold_program, table)) if gold_program else None,
            "predicted_trace": _trace_data(_trace(predicted_program, table)) if predicted_program else None,
            "policies": policies.get(key, []),
            "flags": flags.get(json.dumps([row["record_id"], int(row["turn"])]), []) or _flag_columns(row),
        }
        if doc_id is not None and doc_id in docs:
            detail["gold_marks"] = _marks(docs[doc_id], _literals(gold_program))
            detail["predicted_marks"] = _marks(docs[doc_id], _literals(predicted_program))
        out[key] = detail
    return {"docs": docs, "turns": out}


#: The main grading policy of a bare turns table (a run names its own).
DEFAULT_POLICY = "symbolic"


def gold_note(written: Any, executed: Any, policy: str = DEFAULT_POLICY) -> str | None:
    """One sentence saying which gold answer graded a turn, when the dataset writes it otherwise
    than its gold program computes it (ConvFinQA: ``5583331`` written, ``16750002`` executed);
    None when they are the same text or one is missing.

    Every policy compares with the executed gold but ``exact-string``, which compares with the
    answer as the dataset writes it (:func:`workbench.grading.turn.grade_turn`).

    Examples
    --------
    >>> gold_note("5583331", "16750002")
    'The executed gold answer, 16750002 (what the gold program computes), graded this turn, not the written 5583331.'
    >>> gold_note("14.1%", "0.14136", "exact-string")
    'The written gold answer, 14.1%, graded this turn (the exact-string policy compares with it), not the executed 0.14136.'
    >>> gold_note("18", "18") is None, gold_note(None, "18") is None
    (True, True)
    """
    if written is None or executed is None or str(written).strip() == str(executed).strip():
        return None
    spec = POLICIES.get(policy)
    if spec is not None and spec.matcher == "exact_string":
        return (
            f"The written gold answer, {written}, graded this turn (the {policy} policy compares with it), "
            f"not the executed {executed}."
        )
    return f"The executed gold answer, {executed} (what the gold program computes), graded this turn, not the written {written}."


def _flag_columns(row: Mapping[str, Any]) -> list[list[Any]]:
    """The turn's own data-quality columns, when there is no run to read the checks from."""
    category = row.get("dq_category")
    if not category:
        return []
    return [[words.plain(str(category)), None, _number(row.get("dq_confidence")), None]]


def _number(value: Any) -> float | None:
    """A float for JSON: None for a missing or non-finite one (JSON has no NaN)."""
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def _history(turns: pl.DataFrame, failed: pl.DataFrame) -> dict[str, list[list[Any]]]:
    """The conversation before each failed turn: ``[turn, question, gold, predicted, correct]`` of
    the same system's earlier turns of the record."""
    columns = [c for c in ("question", "gold_answer", "predicted_answer", "correct") if c in turns.columns]
    if len(columns) < 4 or not failed.height:
        return {}
    earlier = (
        turns.join(failed.select("system", "record_id").unique(), on=["system", "record_id"], how="semi")
        .select("system", "record_id", "turn", *columns)
        .sort("system", "record_id", "turn")
    )
    by_record: dict[tuple[Any, Any], list[list[Any]]] = {}
    for system, record_id, turn, question, gold, predicted, correct in earlier.iter_rows():
        by_record.setdefault((system, record_id), []).append([int(turn), question, gold, predicted, correct])
    return {
        key: [h for h in by_record.get((system, record_id), []) if h[0] < turn]
        for key, (system, record_id, turn) in zip(
            _keys(failed), failed.select("system", "record_id", "turn").iter_rows(), strict=True
        )
    }


#: The fields of a turn's detail its key already names (:func:`turn_key`): the page's script reads them from the key.
_IN_KEY = ("system", "record_id", "turn")


def for_page(turn: Mapping[str, Any]) -> dict[str, Any]:
    """A turn's detail (:func:`detail_data`) as the page holds it: without the fields its key
    names (system, record id, turn) and without those that have no value, which the page's
    script reads from the key and as empty (every byte counts: a page holds 2,000 turns).

    Examples
    --------
    >>> for_page({"system": "s", "record_id": "r", "turn": 0, "question": "q", "gold_note": None})
    {'question': 'q'}
    """
    return {k: v for k, v in turn.items() if v is not None and k not in _IN_KEY}


def detail_script(source: Run | pl.DataFrame, failed: pl.DataFrame) -> Markup:
    """The detail data of ``failed`` as a ``<script type="application/json">`` block (script-safe JSON).

    Examples
    --------
    >>> failed = pl.DataFrame({"system": ["s"], "record_id": ["</script>"], "turn": [0], "correct": [False],
    ...                        "question": ["q"], "gold_answer": ["1"], "predicted_answer": ["2"]})
    >>> block = str(detail_script(failed, failed))
    >>> block.startswith('<script type="application/json" class="wb-turn-data">') and "</script>" not in block[50:-9]
    True
    """
    data = detail_data(source, failed)
    data["turns"] = {key: for_page(turn) for key, turn in data["turns"].items()}
    data = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=_finite)
    return macro("tables.html.j2", "turn_data", script_json(data))


def _finite(value: Any) -> Any:
    """JSON for what ``json`` does not write itself (dates, decimals): their text."""
    return str(value)


#: A detail block as :func:`detail_script` writes it: its JSON holds no ``<`` (``script_json``).
_DATA_BLOCK = re.compile(r'<script type="application/json" class="wb-turn-data">([^<]*)</script>')


def once_per_page(markup: str) -> str:
    """``markup`` (a whole page's content) with each turn's and each document's detail data once:
    the detail blocks after the first keep only the turns and documents no earlier block holds
    (a block left with none is dropped). The page's panel script merges every block, so what a
    row opens is unchanged; a page whose tables of the same run each carry their turns (the
    error-slices page's drill-downs) stores them once.

    Examples
    --------
    >>> failed = pl.DataFrame({"system": ["s"], "record_id": ["r"], "turn": [0], "correct": [False]})
    >>> block = str(detail_script(failed, failed))
    >>> page = once_per_page(f"<p>a</p>{block}<p>b</p>{block}")
    >>> page.count('class="wb-turn-data"'), page.endswith("<p>b</p>")
    (1, True)
    """
    docs: set[str] = set()
    turns: set[str] = set()

    def kept(match: re.Match[str]) -> str:
        data = json.loads(match.group(1))
        new_docs = {k: v for k, v in data.get("docs", {}).items() if k not in docs}
        new_turns = {k: v for k, v in data.get("turns", {}).items() if k not in turns}
        if not new_docs and not new_turns:
            return ""
        if len(new_docs) == len(data.get("docs", {})) and len(new_turns) == len(data.get("turns", {})):
            text = match.group(0)
        else:
            body = json.dumps({"docs": new_docs, "turns": new_turns}, ensure_ascii=False, separators=(",", ":"))
            text = str(macro("tables.html.j2", "turn_data", script_json(body)))
        docs.update(new_docs)
        turns.update(new_turns)
        return text

    return _DATA_BLOCK.sub(kept, markup)
