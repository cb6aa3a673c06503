"""Several answers given together, compared one to one: the SymPy side of item lists.

:func:`compare_items` pairs the items of a predicted answer with those of the gold
(:func:`workbench.grading.items.split_items`), in any order; what the caller decided without SymPy
comes in ``known``, the rest is parsed and compared by math-verify in one
:func:`~workbench.grading.limits.call_with_limit` call (:func:`items_equivalent`). An item with one
``\\pm`` stands for its two values, and a predicted LaTeX item that does not parse is left out when
another parses: a failed span must not hide a good one.
"""

from __future__ import annotations

from typing import Any

from workbench.grading.items import expand_plus_minus, normalize_item, perfect_matching
from workbench.grading.limits import DEFAULT_TIME_LIMIT, LimitStatus, call_with_limit
from workbench.grading.status import GradeStatus, MatchReason
from workbench.grading.symbolic import (
    _FLOAT_ROUNDING,
    _NUMERIC_PRECISION,
    MAX_SYMBOLIC_CHARS,
    SymbolicVerdict,
    _plain_roots,
    _strip_delimiters,
    preview,
)
from workbench.grading.verdict import Verdict

__all__ = ["Known", "items_equivalent", "compare_items"]


#: Whether two items are equal, as far as the caller knows without SymPy (``None``: ask SymPy), by
#: predicted item (rows) and gold item (columns).
Known = tuple[tuple[bool | None, ...], ...]


def _parse_item(text: str) -> Any | None:
    """One item parsed by math-verify, or ``None`` when it does not parse. An item holding LaTeX is
    read as LaTeX only: a LaTeX span that fails must not give a number embedded in it (math-verify's
    expression reading finds the ``0`` of ``\\sum_{k=0}^n\\bigl(k\\bigr)``)."""
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse

    body = _plain_roots(" ".join(_strip_delimiters(text).split()))
    config: list[Any] = [LatexExtractionConfig()]
    if "\\" not in body:
        config.append(ExprExtractionConfig())
    try:
        found = parse(
            f"${body}$",
            extraction_config=config,
            fallback_mode="no_fallback",
            extraction_mode="any_match",
            parsing_timeout=None,
            raise_on_error=True,
        )
    except Exception:  # the item does not parse: the caller says so in its verdict
        return None
    return found[0] if found else None


def _expanded(items: tuple[str, ...]) -> list[tuple[int, str, bool]]:
    """``(index, text, expanded)`` of each item, an item with one ``\\pm`` as its two values."""
    out: list[tuple[int, str, bool]] = []
    for index, item in enumerate(items):
        values = expand_plus_minus(item)
        out.extend((index, value, len(values) > 1) for value in values)
    return out


def _compare_item_lists(pred: tuple[str, ...], gold: tuple[str, ...], known: Known) -> SymbolicVerdict:
    """Match predicted items with gold items one to one (SymPy for the pairs ``known`` leaves open);
    runs inside a limits worker."""
    from math_verify import verify

    pred_x, gold_x = _expanded(pred), _expanded(gold)
    parsed: dict[str, Any] = {}

    def parse_once(text: str) -> Any | None:
        if text not in parsed:
            parsed[text] = _parse_item(text)
        return parsed[text]

    def told(a: tuple[int, str, bool], b: tuple[int, str, bool]) -> bool | None:
        return None if a[2] or b[2] else known[a[0]][b[0]]

    # a predicted LaTeX item that does not parse, and equals nothing known, is a failed span: dropped
    # when another item is left (Math-Verify's tests/test_failed_latex_span.py)
    failed = [a for a in pred_x if "\\" in a[1] and not any(told(a, b) for b in gold_x) and parse_once(a[1]) is None]
    kept = [a for a in pred_x if a not in failed] if len(failed) < len(pred_x) else pred_x
    if not kept or all(parse_once(a[1]) is None and not any(told(a, b) for b in gold_x) for a in kept):
        return SymbolicVerdict(
            GradeStatus.UNPARSEABLE,
            False,
            f"no item of the prediction parses: {'; '.join(map(preview, pred))}",
            None,
            None,
        )

    def equal(i: int, j: int) -> bool:
        a, b = kept[i], gold_x[j]
        said = told(a, b)
        if said is not None:
            return said
        pa, gb = parse_once(a[1]), parse_once(b[1])
        if pa is None or gb is None:
            return normalize_item(a[1]) == normalize_item(b[1])
        try:
            return bool(
                verify(
                    gb,
                    pa,
                    float_rounding=_FLOAT_ROUNDING,
                    numeric_precision=_NUMERIC_PRECISION,
                    timeout_seconds=None,
                    raise_on_error=True,
                )
            )
        except Exception:  # SymPy cannot compare the pair: not equal, said in the detail below
            return False

    pairs = perfect_matching(len(kept), len(gold_x), equal)
    dropped = (
        f"; the prediction's {', '.join(preview(a[1]) for a in failed)} does not parse and is left out"
        if failed and kept is not pred_x
        else ""
    )
    shown_pred = "; ".join(preview(a[1]) for a in kept)
    shown_gold = "; ".join(preview(b[1]) for b in gold_x)
    if pairs is not None:
        detail = f"the items {shown_pred} match the gold's {shown_gold} one to one, in any order (SymPy){dropped}"
        return SymbolicVerdict(GradeStatus.OK, True, detail, shown_pred, shown_gold)
    if len(kept) != len(gold_x):
        detail = (
            f"the prediction lists {len(kept)} values ({shown_pred}); the gold {len(gold_x)} ({shown_gold}){dropped}"
        )
    else:
        detail = f"the items {shown_pred} do not match the gold's {shown_gold} one to one (SymPy){dropped}"
    return SymbolicVerdict(GradeStatus.OK, False, detail, shown_pred, shown_gold)


def items_equivalent(
    pred: tuple[str, ...], gold: tuple[str, ...], known: Known, *, time_limit: float | None = None
) -> SymbolicVerdict:
    """Tell whether two lists of answers match one to one, in any order, under a time limit: each
    predicted item equals a distinct gold item (``known`` says which pairs the caller has decided;
    SymPy decides the rest, in one :func:`~workbench.grading.limits.call_with_limit` call). An item
    with one ``\\pm`` stands for its two values; a predicted LaTeX item that does not parse is left out
    when another parses (a failed span must not hide a good one).

    Examples
    --------
    >>> items_equivalent(("42", "\\\\sum_{k=0}^n\\\\bigl(k\\\\bigr)"), ("42",), ((True,), (None,))).equivalent
    True
    >>> items_equivalent(("x = \\\\frac{1}{2}", "x = 1 \\\\pm \\\\sqrt{2}"), ("1+\\\\sqrt{2}", "1/2", "1-\\\\sqrt{2}"),
    ...                  ((None, None, None), (None, None, None))).equivalent
    True
    """
    limit = DEFAULT_TIME_LIMIT if time_limit is None else time_limit
    if sum(map(len, pred)) + sum(map(len, gold)) > MAX_SYMBOLIC_CHARS:
        detail = f"the items hold more than the {MAX_SYMBOLIC_CHARS:,}-character budget for SymPy; not parsed"
        return SymbolicVerdict(GradeStatus.TIMEOUT, False, detail, None, None)
    result = call_with_limit(_compare_item_lists, pred, gold, known, time_limit=limit)
    if result.status is LimitStatus.OK and result.value is not None:
        return result.value
    compared = f"the items {'; '.join(map(preview, pred))} with {'; '.join(map(preview, gold))}"
    if result.status is LimitStatus.TIMEOUT:
        return SymbolicVerdict(GradeStatus.TIMEOUT, False, f"{result.message} comparing {compared}", None, None)
    return SymbolicVerdict(GradeStatus.UNPARSEABLE, False, f"SymPy failed on {compared}: {result.message}", None, None)


def _listed(items: tuple[str, ...]) -> str:
    return "; ".join(repr(item) for item in items)


def compare_items(
    pred: tuple[str, ...], gold: tuple[str, ...], known: Known, *, symbolic: bool, time_limit: float | None = None
) -> tuple[Verdict, bool]:
    """Compare two lists of answers as sets: every predicted item paired with a distinct gold item it
    equals; the verdict, and whether every pair was read without SymPy. ``known`` holds what the
    caller decided without SymPy (numbers, texts, times); the rest goes to SymPy in one limited call
    when ``symbolic`` (:func:`items_equivalent`).

    Examples
    --------
    >>> verdict, read = compare_items(("400 ml", "200 ml"), ("200", "400"), ((False, True), (True, False)),
    ...                               symbolic=False)
    >>> verdict.correct, verdict.reason.value, read
    (True, 'items', True)
    """
    read = all(entry is not None for row in known for entry in row)
    pairs = perfect_matching(len(pred), len(gold), lambda i, j: known[i][j] is True)
    if pairs is not None:
        detail = f"the {len(pred)} items match one to one, in any order: {_listed(pred)} and {_listed(gold)}"
        return Verdict(True, GradeStatus.OK, MatchReason.ITEMS, None, None, detail, "latex"), read
    if not read and symbolic:
        result = items_equivalent(pred, gold, known, time_limit=time_limit)
        if result.status is GradeStatus.TIMEOUT:
            return Verdict(False, GradeStatus.TIMEOUT, MatchReason.TIMEOUT, None, None, result.detail, "latex"), read
        if result.status is not GradeStatus.OK:
            return Verdict(False, result.status, MatchReason.UNPARSEABLE, None, None, result.detail, "latex"), read
        reason = MatchReason.ITEMS if result.equivalent else MatchReason.WRONG_VALUE
        return Verdict(result.equivalent, GradeStatus.OK, reason, None, None, result.detail, "latex"), read
    if len(pred) != len(gold):
        detail = f"the prediction lists {len(pred)} values ({_listed(pred)}); the gold {len(gold)} ({_listed(gold)})"
    else:
        missing = [g for j, g in enumerate(gold) if not any(known[i][j] for i in range(len(pred)))]
        said = f": nothing matches {_listed(tuple(missing))}" if missing else ""
        detail = f"the items {_listed(pred)} do not match {_listed(gold)} one to one{said}"
    return Verdict(False, GradeStatus.OK, MatchReason.WRONG_VALUE, None, None, detail, "latex"), read
