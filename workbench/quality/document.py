"""The rules on a gold program against its document: ``program_vs_executed``,
``argument_not_in_document`` and ``table_sign``.

What each rule flags and with which confidence: :mod:`workbench.quality.checks`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.grading import patterns
from workbench.grading.normalize import normalize_answer, parse_number
from workbench.grading.program import Call, Const, Node, Num, execute_program, format_node
from workbench.grading.table import TableRows, cell_value
from workbench.quality.flags import CONFIDENCE, NEAR, flag_row, gold_value, show

__all__ = ["Numbers", "program_flags", "text_numbers", "document_numbers", "argument_flags"]

#: millions, billions.
_SCALES = np.array([1.0, 100.0, 0.01, 1e3, 1e-3, 1e6, 1e-6, 1e9, 1e-9])
_SCALE_NAMES = ("", " x100", " /100", " x1000", " /1000", " x1e6", " /1e6", " x1e9", " /1e9")


def program_flags(row: Mapping[str, Any], table: TableRows | None) -> list[dict[str, Any]]:
    program, executed = row["gold_program"], row["gold_executed"]
    key = (row["record_id"], row["turn"])
    result = execute_program(program, table=table)
    if not result.ok:
        how = f"the gold program {program} does not execute ({result.message}); the gold says '{executed}'"
        return [flag_row(*key, "mislabel", "program_vs_executed", how, CONFIDENCE["program_fails"])]
    if executed is None:
        return []
    if isinstance(result.value, bool):
        if result.answer == normalize_answer(executed):
            return []
    else:
        value = gold_value(row)
        if value is not None and (
            round(result.value, 5) == round(value, 5) or math.isclose(result.value, value, rel_tol=1e-5)
        ):
            return []
    how = f"the gold program {program} executes to {result.answer}, but the executed answer is '{executed}'"
    return [flag_row(*key, "mislabel", "program_vs_executed", how, CONFIDENCE["program_differs"])]


@dataclass(frozen=True, slots=True)
class Numbers:
    """The numbers a conversation can draw on: absolute values as written, their signs (+1 or
    -1 where known: table cells, executed answers; 0 in running text and questions), and
    where each was found."""

    values: np.ndarray
    signs: np.ndarray
    places: tuple[str, ...]

    def extend(self, more: Sequence[tuple[float, int, str]]) -> Numbers:
        if not more:
            return self
        values = np.concatenate([self.values, np.array([abs(v) for v, _, _ in more])])
        signs = np.concatenate([self.signs, np.array([s for _, s, _ in more], dtype=np.int8)])
        return Numbers(values, signs, (*self.places, *(p for _, _, p in more)))


def text_numbers(text: str | None, place: str) -> list[tuple[float, int, str]]:
    """Numbers of running text, unsigned, each with a few words around it.

    Examples
    --------
    >>> text_numbers("expense was $ 1,080 million in 2007", "pre_text")[0]
    (1080.0, 0, "pre_text ('expense was $ 1,080 million in 2007')")
    >>> text_numbers("the total stockholder return on common stock was 12.5 percent for the year", "post_text")[0][2]
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


def document_numbers(doc: Mapping[str, Any]) -> Numbers:
    found: list[tuple[float, int, str]] = []
    if doc:
        found += text_numbers(doc.get("pre_text"), "pre_text")
        found += text_numbers(doc.get("post_text"), "post_text")
        grid = _grid(doc)
        columns = [str(c) for c in grid["columns"]]
        for column in columns:
            found += text_numbers(column, "column header")
        for row in grid["rows"]:
            label = str(row[0]) if row else ""
            found += text_numbers(label, "table row label")
            for column, cell in zip(columns, row[1:], strict=False):
                value = cell_value(cell)
                if value is not None:
                    sign = 1 if value > 0 else -1 if value < 0 else 0
                    found.append((value, sign, f"table row '{label}', column '{column}' ({cell})"))
    return Numbers(np.array([0.0])[:0], np.array([], dtype=np.int8), ()).extend(found)


def _grid(doc: Mapping[str, Any]) -> dict[str, list[Any]]:
    """The document's table as ``{"columns": [...], "rows": [[label, cells...], ...]}``."""
    grid = json.loads(doc["table_json"]) if doc.get("table_json") else {}
    return {"columns": list(grid.get("columns", [])), "rows": list(grid.get("rows", []))}


def _literals(node: Node, negated: bool = False) -> Iterator[tuple[Num, bool]]:
    """The literal numbers of a step, each with whether the program negates it
    (``multiply(30584, const_m1)`` uses -30584).

    Examples
    --------
    >>> from workbench.grading.program import parse_program
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


def _look_up(literal: Num, numbers: Numbers, *, negated: bool = False) -> _Lookup:
    """Find a program literal among ``numbers`` (see the module docstring for the rules).

    Examples
    --------
    >>> nums = Numbers(np.array([1234.0, 27.0, 12.53]), np.array([0, -1, 0], dtype=np.int8), ("a", "b", "c"))
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
    nearest = f"{show(value)}{_SCALE_NAMES[scale]} in {numbers.places[index]}"
    return _Lookup(False, None, nearest, bool(distance[index, scale] <= NEAR))


def argument_flags(row: Mapping[str, Any], numbers: Numbers, parsed: Sequence[Node] | None) -> list[dict[str, Any]]:
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
                flags.append(flag_row(*key, "sign_inconsistency", "table_sign", how, confidence))
                continue
            how = (
                f"argument {literal.text} of {step_text} is not in the document text or table, the questions "
                "so far or the earlier answers (allowing commas, %, sign and x100/x1000/x1e6/x1e9 scales)"
            )
            if lookup.nearest is not None:
                how += f"; nearest: {lookup.nearest}"
            confidence = CONFIDENCE["missing_near" if lookup.near else "missing"]
            flags.append(flag_row(*key, "missing_value", "argument_not_in_document", how, confidence))
    return flags
