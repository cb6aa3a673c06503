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
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from workbench.grading import patterns
from workbench.grading.compare import MatchPolicy, answers_match, percent_cue, read_number, significant_digits
from workbench.grading.normalize import ParsedNumber, normalize_answer, parse_number
from workbench.grading.program import (
    Call,
    Const,
    Node,
    Num,
    ProgramSyntaxError,
    Ref,
    TableRows,
    cell_value,
    execute_program,
    format_node,
    parse_program,
)
from workbench.grading.status import MatchReason
from workbench.io.gold import GoldDataset, document_table
from workbench.schema import CHECK_CATEGORIES, CHECK_KEYS, CHECKS

#: The rule whose evidence comes from the systems' answers rather than from the gold.
AGREEMENT_RULE = "systems_agree"

__all__ = [
    "AGREEMENT_RULE",
    "gold_checks",
    "agreement_checks",
    "run_checks",
    "flag_counts",
    "top_category",
    "shows_display_answers",
]

#: Confidences, one per (rule, situation); see the module docstring.
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

#: Scales under which a document number may appear in a program: percent and thousands,
#: millions, billions.
_SCALES = np.array([1.0, 100.0, 0.01, 1e3, 1e-3, 1e6, 1e-6, 1e9, 1e-9])
_SCALE_NAMES = ("", " x100", " /100", " x1000", " /1000", " x1e6", " /1e6", " x1e9", " /1e9")
#: Powers of ten a display answer may be off by (unit_inconsistency).
_UNIT_SHIFTS = (2, -2, 1, -1, 3, -3, 6, -6, 9, -9)
#: "Near": within this relative distance.
_NEAR = 0.02
#: How two systems' answers are compared: 1e-3 relative tolerance, x100 reading either way.
_AGREE = MatchPolicy(name="agreement", accept_reported_precision=False, use_cues=False, symbolic=False)
#: Grading reasons that say a wrong answer is only a rounding or unit reading away from the gold.
_NEAR_MISS = frozenset({"rounding", "percent_confusion", "scale", "sign_flip"})


# --------------------------------------------------------------------------- rows and tables
def _frame(rows: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """Rows into a CHECKS table; an unknown category fails loudly in the cast."""
    text = {c: (pl.String() if isinstance(t, pl.Enum) else t) for c, t in CHECKS.items()}
    return pl.DataFrame(list(rows), schema=text).cast(CHECKS)


def _merge(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per (record_id, turn, category, rule): evidence joined, the highest confidence."""
    return (
        frame.sort([*CHECK_KEYS, "confidence"], descending=[False, False, False, False, True])
        .group_by(list(CHECK_KEYS), maintain_order=True)
        .agg(pl.col("evidence").unique(maintain_order=True).str.join("; "), pl.col("confidence").max())
        .select(list(CHECKS))
        .sort(list(CHECK_KEYS))
    )


def _flag(record_id: str, turn: int, category: str, rule: str, evidence: str, confidence: float) -> dict[str, Any]:
    return {
        "record_id": record_id,
        "turn": turn,
        "category": category,
        "rule": rule,
        "evidence": evidence,
        "confidence": confidence,
    }


def _show(value: float) -> str:
    """A number as an analyst reads it: up to 10 significant digits, no exponent for usual sizes.

    Examples
    --------
    >>> _show(18770.0), _show(-0.09709), _show(0.14136000001)
    ('18770', '-0.09709', '0.14136')
    """
    return f"{value:.10g}"


# --------------------------------------------------------------------------- display vs executed
def _shows(display: ParsedNumber, value: float, *, loose: bool = True) -> bool:
    """Whether ``display`` (in its own units, ``%`` not applied) shows ``value`` at the precision
    it writes: rounded, truncated, within 1e-3 relative, or equal to 5 decimals. ``loose=False``
    asks for two significant digits before rounding or truncation count.

    Examples
    --------
    >>> d = parse_number("14.1%")
    >>> _shows(d, 14.136), _shows(d, 14.19), _shows(d, 14.2), _shows(parse_number("2"), 2.4, loose=False)
    (True, True, False, False)
    """
    shown = display.value
    if math.isclose(shown, value, rel_tol=1e-3, abs_tol=1e-9) or round(shown, 5) == round(value, 5):
        return True
    if not loose and significant_digits(display) < 2:
        return False
    unit = 10.0 ** (-display.decimals)
    if abs(shown - value) <= 0.5 * unit * (1 + 1e-9):
        return True
    return abs(shown) <= abs(value) and abs(shown - value) < unit * (1 - 1e-6) and (shown >= 0) == (value >= 0)


def _magnitude(display: ParsedNumber, value: float, of: str) -> tuple[str, str, float] | None:
    """Compare a display number with an executed value of the same sign; ``of`` names the
    program (`` of subtract(...)``).

    Returns ``None`` when consistent, else ``(category, what the display is, confidence)``.

    Examples
    --------
    >>> _magnitude(parse_number("14.1%"), 0.14136, "") is None
    True
    >>> _magnitude(parse_number("1877"), 18770.0, " of p")[1]
    'is 10x smaller than the executed value 18770 of p'
    >>> _magnitude(parse_number("-30"), -0.29898, " of p")[1]
    'is 100x the executed value -0.29898 of p: a percentage without its % sign, or a unit slip'
    """
    base = value * 100.0 if display.is_percent else value
    if _shows(display, base) or (display.is_percent and _shows(display, value)):
        return None  # "14.1%" for 0.141, or "1.11%" labelling 1.11111 already in percent units
    for shift in _UNIT_SHIFTS:
        if _shows(display, base * 10.0**shift, loose=False):
            if shift == 2 and not display.is_percent:
                how = f"is 100x the executed value {_show(value)}{of}: a percentage without its % sign, or a unit slip"
                return "unit_inconsistency", how, CONFIDENCE["percent_without_sign"]
            size = "larger" if shift > 0 else "smaller"
            how = f"is {_show(10.0 ** abs(shift))}x {size} than the executed value {_show(value)}{of}"
            return "unit_inconsistency", how, CONFIDENCE["scale"]
    near = base != 0 and abs(display.value - base) <= _NEAR * abs(base)
    how = f"is not the executed value {_show(value)}{of}" + (", though within 2% of it" if near else "")
    return "mislabel", how, CONFIDENCE["display_near" if near else "display_far"]


def _display_flags(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``display_vs_executed`` flags of one gold turn."""
    display, executed = row["gold_answer"], row["gold_executed"]
    if (
        not display
        or not display.strip()
        or executed is None
        or normalize_answer(display) == normalize_answer(executed)
    ):
        return []  # no display answer (the original layout has one for the last turn only), or the same text
    key = (row["record_id"], row["turn"])
    program = row.get("gold_program")
    of = f" of {program}" if program else ""
    display_yes_no = patterns.YES_NO.match(normalize_answer(display)) is not None
    executed_yes_no = patterns.YES_NO.match(normalize_answer(executed)) is not None
    if display_yes_no or executed_yes_no:
        if answers_match(display, executed, kind="text").correct:
            return []
        how = f"display answer '{display}' is not the executed answer '{executed}'{of}"
        return [_flag(*key, "mislabel", "display_vs_executed", how, CONFIDENCE["yes_no"])]
    verdict = answers_match(display, executed, question=row.get("question"))
    number, value = read_number(display), _value(row)
    if verdict.correct and (verdict.reason is not MatchReason.PERCENT_READING or number is None or number.is_percent):
        return []  # of the matches, only a bare display read x100 ("8.8" for 0.0875) needs a second look
    if number is None or value is None or not math.isfinite(value):
        if value is not None and _prose_states(display, value):
            return []  # "... had a 62.63% greater return ..." for 62.63
        how = f"display answer '{display}' is not a number, but the executed answer is '{executed}'{of}"
        return [_flag(*key, "mislabel", "display_vs_executed", how, CONFIDENCE["display_not_number"])]
    flags = []
    shown, subject = number.value, f"display answer '{display}'"
    if shown != 0 and value != 0 and (shown > 0) != (value > 0):
        signs = ("positive", "negative") if shown > 0 else ("negative", "positive")
        how = f"{subject} is {signs[0]} but the executed value {_show(value)}{of} is {signs[1]}"
        flags.append(_flag(*key, "sign_inconsistency", "display_vs_executed", how, CONFIDENCE["sign"]))
        number = ParsedNumber(abs(shown), number.is_percent, number.decimals, number.text)
        value, subject = abs(value), f"apart from the sign, {subject}"
    found = _magnitude(number, value, of)
    if found is not None:
        category, how, confidence = found
        flags.append(_flag(*key, category, "display_vs_executed", f"{subject} {how}", confidence))
    return flags


def _prose_states(text: str, value: float) -> bool:
    """Whether a display answer written as a sentence states ``value`` (as written or as a percentage).

    Examples
    --------
    >>> _prose_states("advance auto parts had a 62.63% greater return than the market", 62.63)
    True
    >>> _prose_states("it grew by 14.1%", 0.14136), _prose_states("it grew by 12%", 0.14136)
    (True, False)
    """
    for match in patterns.TEXT_NUMBER.finditer(text):
        number = parse_number(match.group("number"))
        if number is not None and (_shows(number, value) or (number.is_percent and _shows(number, value * 100.0))):
            return True
    return False


def _value(row: Mapping[str, Any]) -> float | None:
    if row.get("gold_value") is not None:
        return float(row["gold_value"])
    number = read_number(row["gold_executed"]) if row.get("gold_executed") else None
    return number.fraction if number else None


# --------------------------------------------------------------------------- program vs executed
def _program_flags(row: Mapping[str, Any], table: TableRows | None) -> list[dict[str, Any]]:
    program, executed = row["gold_program"], row["gold_executed"]
    key = (row["record_id"], row["turn"])
    result = execute_program(program, table=table)
    if not result.ok:
        how = f"the gold program {program} does not execute ({result.message}); the gold says '{executed}'"
        return [_flag(*key, "mislabel", "program_vs_executed", how, CONFIDENCE["program_fails"])]
    if executed is None:
        return []
    if isinstance(result.value, bool):
        if result.answer == normalize_answer(executed):
            return []
    else:
        value = _value(row)
        if value is not None and (
            round(result.value, 5) == round(value, 5) or math.isclose(result.value, value, rel_tol=1e-5)
        ):
            return []
    how = f"the gold program {program} executes to {result.answer}, but the executed answer is '{executed}'"
    return [_flag(*key, "mislabel", "program_vs_executed", how, CONFIDENCE["program_differs"])]


# --------------------------------------------------------------------------- arguments in the document
@dataclass(frozen=True, slots=True)
class _Numbers:
    """The numbers a conversation can draw on: absolute values as written, their signs (+1 or
    -1 where known: table cells, executed answers; 0 in running text and questions), and
    where each was found."""

    values: np.ndarray
    signs: np.ndarray
    places: tuple[str, ...]

    def extend(self, more: Sequence[tuple[float, int, str]]) -> _Numbers:
        if not more:
            return self
        values = np.concatenate([self.values, np.array([abs(v) for v, _, _ in more])])
        signs = np.concatenate([self.signs, np.array([s for _, s, _ in more], dtype=np.int8)])
        return _Numbers(values, signs, (*self.places, *(p for _, _, p in more)))


def _text_numbers(text: str | None, place: str) -> list[tuple[float, int, str]]:
    """Numbers of running text, unsigned, each with a few words around it.

    Examples
    --------
    >>> _text_numbers("expense was $ 1,080 million in 2007", "pre_text")[0]
    (1080.0, 0, "pre_text ('expense was $ 1,080 million in 2007')")
    >>> _text_numbers("the total stockholder return on common stock was 12.5 percent for the year", "post_text")[0][2]
    "post_text ('on common stock was 12.5 percent for the year')"
    """
    out = []
    text = text or ""
    for match in patterns.DOCUMENT_NUMBER.finditer(text):
        value = float(match.group("num").replace(",", ""))
        if not math.isfinite(value):
            continue
        start = text.rfind(" ", 0, max(0, match.start() - 20)) + 1  # whole words around the number
        end = text.find(" ", match.end() + 20)
        snippet = patterns.WHITESPACE.sub(" ", text[start : len(text) if end < 0 else end]).strip()
        out.append((value, 0, f"{place} ('{snippet}')"))
    return out


def _document_numbers(doc: Mapping[str, Any]) -> _Numbers:
    found: list[tuple[float, int, str]] = []
    if doc:
        found += _text_numbers(doc.get("pre_text"), "pre_text")
        found += _text_numbers(doc.get("post_text"), "post_text")
        grid = _grid(doc)
        columns = [str(c) for c in grid["columns"]]
        for column in columns:
            found += _text_numbers(column, "column header")
        for row in grid["rows"]:
            label = str(row[0]) if row else ""
            found += _text_numbers(label, "table row label")
            for column, cell in zip(columns, row[1:], strict=False):
                value = cell_value(cell)
                if value is not None:
                    sign = 1 if value > 0 else -1 if value < 0 else 0
                    found.append((value, sign, f"table row '{label}', column '{column}' ({cell})"))
    return _Numbers(np.array([0.0])[:0], np.array([], dtype=np.int8), ()).extend(found)


def _grid(doc: Mapping[str, Any]) -> dict[str, list[Any]]:
    """The document's table as ``{"columns": [...], "rows": [[label, cells...], ...]}``."""
    grid = json.loads(doc["table_json"]) if doc.get("table_json") else {}
    return {"columns": list(grid.get("columns", [])), "rows": list(grid.get("rows", []))}


def _literals(node: Node, negated: bool = False) -> Iterator[tuple[Num, bool]]:
    """The literal numbers of a step, each with whether the program negates it
    (``multiply(30584, const_m1)`` uses -30584).

    Examples
    --------
    >>> [(n.text, neg) for n, neg in _literals(parse_program("divide(multiply(5, const_m1), 2)").steps[0])]
    [('5', True), ('2', False)]
    """
    if isinstance(node, Num):
        yield node, negated
    elif isinstance(node, Call):
        minus_one = node.op == "multiply" and any(isinstance(a, Const) and a.value == -1 for a in node.args)
        for arg in node.args:
            yield from _literals(arg, negated ^ minus_one)


@dataclass(frozen=True, slots=True)
class _Lookup:
    found: bool
    opposite: str | None  # where it was found with the opposite sign only
    nearest: str | None  # the nearest number and its place, when not found
    near: bool


def _look_up(literal: Num, numbers: _Numbers, *, negated: bool = False) -> _Lookup:
    """Find a program literal among ``numbers`` (see the module docstring for the rules).

    Examples
    --------
    >>> nums = _Numbers(np.array([1234.0, 27.0, 12.53]), np.array([0, -1, 0], dtype=np.int8), ("a", "b", "c"))
    >>> _look_up(Num(1.234, "1.234"), nums).found, _look_up(Num(0.27, "27%"), nums).opposite
    (True, 'b')
    >>> _look_up(Num(12.5, "12.5"), nums).found, _look_up(Num(12.55, "12.55"), nums).nearest
    (True, '12.53 in c')
    """
    written = parse_number(literal.text)
    if written is None:  # a literal the number parser does not read (never in FinQA programs)
        return _Lookup(True, None, None, False)
    target, sign = abs(written.value), (written.value > 0) - (written.value < 0)
    sign = -sign if negated else sign
    if numbers.values.size == 0:
        return _Lookup(False, None, None, False)
    tolerance = 0.5 * 10.0 ** (-written.decimals) * (1 + 1e-9) + 1e-12 * target
    scaled = numbers.values[:, None] * _SCALES[None, :]
    hits = np.abs(scaled - target) <= tolerance
    rows = hits.any(axis=1)
    if sign == 0:
        same = rows
    else:
        same = rows & ((numbers.signs == 0) | (numbers.signs == sign))
    if same.any():
        return _Lookup(True, None, None, False)
    if rows.any():
        return _Lookup(False, numbers.places[int(np.argmax(rows))], None, False)
    distance = np.abs(scaled - target) / max(target, 1e-12)
    index, scale = np.unravel_index(int(np.argmin(distance)), distance.shape)
    value = float(numbers.values[index])
    nearest = f"{_show(value)}{_SCALE_NAMES[scale]} in {numbers.places[index]}"
    return _Lookup(False, None, nearest, bool(distance[index, scale] <= _NEAR))


def _argument_flags(row: Mapping[str, Any], numbers: _Numbers, parsed: Sequence[Node] | None) -> list[dict[str, Any]]:
    key = (row["record_id"], row["turn"])
    flags = []
    for step_index, step in enumerate(parsed or ()):
        step_text = f"step #{step_index} {format_node(step)}"
        for literal, negated in _literals(step):
            lookup = _look_up(literal, numbers, negated=negated)
            if lookup.found:
                continue
            if lookup.opposite is not None:
                used = f"-{literal.text}" if negated else literal.text
                how = (
                    f"argument {used} of {step_text} appears in the document only with the opposite "
                    f"sign, in {lookup.opposite}"
                )
                # "losses", "cash used": a negative cell the question asks about as an amount
                convention = patterns.NEGATIVE_AMOUNT_CUE.search(f"{lookup.opposite} {row.get('question') or ''}")
                if convention is not None:
                    how += f" (the word '{convention.group(0)}' suggests a sign convention rather than an error)"
                confidence = CONFIDENCE["table_sign_convention" if convention else "table_sign"]
                flags.append(_flag(*key, "sign_inconsistency", "table_sign", how, confidence))
                continue
            how = (
                f"argument {literal.text} of {step_text} is not in the document text or table, the questions "
                "so far or the earlier answers (allowing commas, %, sign and x100/x1000/x1e6/x1e9 scales)"
            )
            if lookup.nearest is not None:
                how += f"; nearest: {lookup.nearest}"
            confidence = CONFIDENCE["missing_near" if lookup.near else "missing"]
            flags.append(_flag(*key, "missing_value", "argument_not_in_document", how, confidence))
    return flags


# --------------------------------------------------------------------------- question unit
def _question_flags(row: Mapping[str, Any], parsed: Sequence[Node] | None) -> list[dict[str, Any]]:
    display, value = row["gold_answer"], _value(row)
    number = read_number(display) if display else None
    if number is None or value is None or value == 0:
        return []
    cue = percent_cue(row.get("question"), None)
    key = (row["record_id"], row["turn"])
    if cue == "percent" and not number.is_percent and _shows(number, value):
        if not parsed or not _is_ratio(parsed):
            return []
        how = (
            f"the question asks for a percentage ('{row['question']}') but the display answer '{display}' "
            f"is the ratio {_show(value)} without a % sign"
        )
        return [_flag(*key, "unit_inconsistency", "question_unit", how, CONFIDENCE["question_unit"])]
    if cue == "ratio" and number.is_percent:
        how = f"the question asks for a ratio ('{row['question']}') but the display answer '{display}' is a percentage"
        return [_flag(*key, "unit_inconsistency", "question_unit", how, CONFIDENCE["question_unit"])]
    return []


def _is_ratio(steps: Sequence[Node]) -> bool:
    """Whether a program's last step computes a ratio: a division (not by a percentage or by
    another ratio, which gives an amount back), or a sum or difference of ratios; a step that
    multiplies by 100 gives percent units.

    Examples
    --------
    >>> _is_ratio(parse_program("subtract(5, 4), divide(#0, 4)").steps)
    True
    >>> _is_ratio(parse_program("divide(1, 4), multiply(#0, const_100)").steps), _is_ratio(parse_program("subtract(26.3, 19.5)").steps)
    (False, False)
    >>> _is_ratio(parse_program("divide(7.1, 32%)").steps), _is_ratio(parse_program("divide(1, 5), divide(2, 5), subtract(#1, #0)").steps)
    (False, True)
    """
    return bool(steps) and _node_is_ratio(steps[-1], steps, depth=0)


def _node_is_ratio(node: Node, steps: Sequence[Node], depth: int) -> bool:
    if depth > len(steps) + 8:  # references only point backwards; this is a guard, not a case
        return False
    if isinstance(node, Ref):
        return node.index < len(steps) and _node_is_ratio(steps[node.index], steps, depth + 1)
    if not isinstance(node, Call) or len(node.args) != 2:
        return False
    if node.op == "divide":
        divisor = node.args[1]
        percent_divisor = isinstance(divisor, Num) and divisor.text.endswith("%")
        return not percent_divisor and not _node_is_ratio(divisor, steps, depth + 1)
    if node.op in ("add", "subtract"):
        inner = [a for a in node.args if isinstance(a, Ref | Call)]
        return bool(inner) and all(_node_is_ratio(a, steps, depth + 1) for a in inner)
    return False


# --------------------------------------------------------------------------- public API
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
    rows: list[dict[str, Any]] = []
    done: dict[tuple[Any, ...], list[dict[str, Any]]] = {}  # flags by conversation content
    ordered = gold.turns.sort("record_id", "turn").iter_rows(named=True)
    for record_id, conversation in itertools.groupby(ordered, key=lambda row: row["record_id"]):
        turns = [
            {**row, "doc_id": same.get(row["doc_id"], row["doc_id"])} if row.get("doc_id") else row
            for row in conversation
        ]
        key = tuple(tuple((k, v) for k, v in row.items() if k != "record_id") for row in turns)
        flags = done.get(key)
        if flags is None:
            flags = done[key] = _conversation_flags(turns, documents, has_display)
            rows += flags
        else:
            rows += [{**flag, "record_id": record_id} for flag in flags]
    return _merge(_frame(rows)) if rows else _frame([])


def _conversation_flags(
    turns: Sequence[Mapping[str, Any]], documents: Mapping[str, Mapping[str, Any]], has_display: bool
) -> list[dict[str, Any]]:
    """The gold-only flags of one conversation's turns (in turn order)."""
    rows: list[dict[str, Any]] = []
    document: _Numbers | None = None  # the document's numbers, read once per conversation
    table: TableRows | None = None
    known: list[tuple[float, int, str]] = []  # numbers of the questions so far and the earlier answers
    for row in turns:
        turn, program = row["turn"], row.get("gold_program")
        rows += _display_flags(row)
        parsed = _parse(program)
        if program and has_display:
            rows += _question_flags(row, parsed)
        known += _text_numbers(row.get("question"), f"question of turn {turn}")
        doc = documents.get(row["doc_id"]) if row.get("doc_id") else None
        if program and doc is not None:
            if document is None:
                document = _document_numbers(doc)
                table = document_table(doc.get("table_json"))
            rows += _program_flags(row, table)
            rows += _argument_flags(row, document.extend(known), parsed)
        value = _value(row)
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


def _answers_agree(a: str, b: str) -> bool:
    return answers_match(a, b, policy=_AGREE).correct or answers_match(b, a, policy=_AGREE).correct


def agreement_checks(turns: pl.DataFrame, *, min_systems: int = 2) -> pl.DataFrame:
    """Flag turns where at least ``min_systems`` systems agree on one answer the gold contradicts.

    Parameters
    ----------
    turns
        Graded turns (:data:`workbench.schema.GRADED_TURNS`; needs ``system, record_id, turn,
        correct, status, reason, answer, gold_answer, gold_executed``).
    min_systems
        How many systems must agree.

    Returns
    -------
    pl.DataFrame
        :data:`workbench.schema.CHECKS` rows of rule ``systems_agree``, category ``mislabel``.

    Examples
    --------
    >>> turns = pl.DataFrame({"system": ["a", "b", "c"], "record_id": ["r"] * 3, "turn": [0] * 3,
    ...     "correct": [False, False, True], "status": ["ok"] * 3, "reason": ["wrong_value", "wrong_value", "exact"],
    ...     "answer": ["12.5", "0.125", "7"], "gold_answer": ["7"] * 3, "gold_executed": ["7"] * 3})
    >>> flags = agreement_checks(turns)
    >>> flags["confidence"].to_list(), flags["evidence"][0][:60]
    ([0.6], "2 of 3 systems agree on 12.5 (a: '12.5', b: '0.125') but the")
    """
    if turns.is_empty() or min_systems < 1:
        return _frame([])
    wrong = turns.filter(
        pl.col("status").cast(pl.String) == "ok", pl.col("correct").not_(), pl.col("answer").is_not_null()
    )
    answered = (
        turns.filter(pl.col("status").cast(pl.String) != "no_prediction")
        .group_by("record_id", "turn")
        .agg(pl.col("system").n_unique().alias("n_systems"))
    )
    grouped = (
        wrong.group_by("record_id", "turn")
        .agg(
            pl.col("system"),
            pl.col("answer"),
            pl.col("reason").cast(pl.String),
            pl.col("gold_answer").first(),
            pl.col("gold_executed").first(),
        )
        .filter(pl.col("system").list.len() >= min_systems)
        .join(answered, on=["record_id", "turn"], how="left")
        .sort("record_id", "turn")
    )
    rows = []
    done: dict[tuple[Any, ...], tuple[str, float] | None] = {}  # by the answers and the gold
    for row in grouped.iter_rows(named=True):
        key = (*(tuple(row[c]) for c in ("system", "answer", "reason")), row["n_systems"])
        key += (row["gold_answer"], row["gold_executed"])
        if key not in done:
            done[key] = _agreement(row, min_systems)
        found = done[key]
        if found is not None:
            rows.append(_flag(row["record_id"], row["turn"], "mislabel", AGREEMENT_RULE, *found))
    return _merge(_frame(rows)) if rows else _frame([])


def _agreement(row: Mapping[str, Any], min_systems: int) -> tuple[str, float] | None:
    """The evidence and confidence of a ``systems_agree`` flag on one turn's wrong answers, if any."""
    answers = list(zip(row["system"], row["answer"], row["reason"], strict=True))
    best: list[tuple[str, str, str]] = []
    for _, answer, _ in answers:
        group = [a for a in answers if _answers_agree(answer, a[1])]
        if len(group) > len(best):
            best = group
    if len(best) < min_systems:
        return None
    share = len(best) / row["n_systems"]
    confidence = min(0.2 + 0.7 * share, 0.95)
    if len(best) < 3:  # two runs of one model often repeat one mistake
        confidence = min(confidence, CONFIDENCE["agree_cap_few"])
    if all(reason in _NEAR_MISS for _, _, reason in best):  # a sign, scale or rounding convention
        confidence = min(confidence, CONFIDENCE["agree_near_miss"])
    listed = ", ".join(f"{system}: '{answer}'" for system, answer, _ in best)
    reasons = ", ".join(sorted({reason for _, _, reason in best}))
    how = (
        f"{len(best)} of {row['n_systems']} systems agree on {best[0][1]} ({listed}) but the gold display "
        f"answer is '{row['gold_answer']}' and the executed answer '{row['gold_executed']}' (graded: {reasons})"
    )
    return how, round(confidence, 3)


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
    return _merge(pl.concat(parts))


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
    >>> flags = _frame([_flag("r", 0, "mislabel", "x", "e", 0.5), _flag("r", 0, "mislabel", "y", "e", 0.5)])
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
    >>> flags = _frame([_flag("r", 0, "missing_value", "x", "e", 0.9), _flag("r", 0, "mislabel", "y", "e", 0.4),
    ...                 _flag("r", 0, "mislabel", "z", "e", 0.6)])
    >>> top_category(flags).rows()
    [('r', 0, 'mislabel', 0.6)]
    >>> top_category(_frame([_flag("r", 0, "missing_value", "x", "e", 0.8),
    ...                      _flag("r", 0, "mislabel", AGREEMENT_RULE, "e", 0.6)])).rows()
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
            pl.col("record_id").cast(pl.String),
            pl.col("turn").cast(pl.Int32),
            "dq_category",
            pl.col("dq_confidence").cast(pl.Float64),
        )
    )
