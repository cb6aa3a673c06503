"""LaTeX and expression equivalence through SymPy, parsed by math-verify, always under a time limit.

:func:`latex_equivalent` parses both sides with ``math_verify.parse`` (which uses
``latex2sympy2_extended``) and compares them with ``math_verify.verify``, with math-verify's own
signal-based timeouts off (``parsing_timeout=None``, ``timeout_seconds=None``). Parsing and
comparing happen together in one :func:`workbench.grading.limits.call_with_limit` call, so a
pathological input costs at most the time limit and comes back with status ``timeout``.

:func:`latex_number` is the cheap path: it reads a plain LaTeX number (``\\frac{3}{7}``,
``1{,}000``, ``\\$1.33``, ``15.97\\text{ ml}``) with string operations only, no SymPy and no worker,
for the numeric cascade that runs in front of the symbolic check.

How math-verify reads things
----------------------------
Checked against the source of math-verify 0.9 and latex2sympy2_extended 1.11.

- ``50\\%`` is ``50/100``: the percent sign is applied, so ``50\\%`` equals ``0.5`` here.
  :func:`latex_number` instead keeps percent *as written* (``0.5\\%`` gives ``0.5``), like
  :func:`workbench.grading.normalize.parse_number`, and leaves the percent reading to the cascade.
- ``\\text{ ml}``-style units and ``\\$`` are dropped; plain unit words are not (``3.5 ml`` parses as
  ``3.5*l*m``).
- A bare word is a product of one-letter symbols (``yes`` becomes ``E*s*y``). This module therefore
  treats an answer made only of letters and spaces, with a word of two letters or more, or such a word
  inside ``\\text{}``, as *text*, not a formula (so ``xy`` is the word "xy"; write ``x y`` or
  ``x\\cdot y`` for a product).
- A float is equal to an exact number when both round to the same 6 decimals (``0.428571`` equals
  ``\\frac{3}{7}``); integers are compared exactly. Tolerance decisions belong to the numeric cascade,
  which runs first.
- ``(1,2)`` is an open interval; compared with a two-element set or tuple it is read as a pair.

Asymmetry: the gold decides the kind
------------------------------------
``latex_equivalent(pred, gold)`` is not symmetric. A text gold (a word) is compared as text: a
prediction that is not the same word is not equivalent (status ``ok``). A formula gold needs a formula:
a prediction that is a word, or does not parse, gives status ``unparseable``. Inside math-verify, a
predicted equation ``x = 3`` is reduced to its right-hand side when the gold is not an equation, a
gold assignment ``x = 3`` is reduced to ``3`` when the prediction is not an equation, a gold relation
``1 < x < 2`` is turned into a set when the prediction is a set (not the reverse), and a predicted set
is read in its written order when the gold is a tuple.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from workbench.grading import patterns
from workbench.grading.limits import DEFAULT_TIME_LIMIT, LimitStatus, call_with_limit
from workbench.grading.normalize import parse_number
from workbench.grading.status import GradeStatus

__all__ = [
    "SymbolicVerdict",
    "latex_equivalent",
    "latex_number",
    "collection_size",
    "program_identifier",
    "preview",
    "MAX_SYMBOLIC_CHARS",
]

#: Longest input (per side, in characters) handed to SymPy; longer ones are refused at once with
#: status ``timeout``, because parsing them could not finish within any reasonable limit.
MAX_SYMBOLIC_CHARS = 100_000

#: math-verify's comparison settings, passed explicitly (these are its defaults).
_FLOAT_ROUNDING = 6
_NUMERIC_PRECISION = 15

_PREVIEW_CHARS = 60  # inputs and parses quoted in a detail sentence are cut to this length
_MAX_NUMBER_CHARS = 200  # latex_number reads nothing longer
_MAX_NUMBER_DEPTH = 8  # nesting of \frac and parentheses latex_number follows

_MATH_DELIMITERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
_TEXT_WRAPPERS = ("\\text{", "\\textrm{", "\\textnormal{", "\\textbf{", "\\textit{", "\\mathrm{", "\\mbox{")
_FRACTION_COMMANDS = ("\\dfrac", "\\tfrac", "\\cfrac", "\\frac")
_THIN_SPACES = ("\\!", "\\,")  # inside a number these separate thousands: 1\,000
_LATEX_SPACES = ("\\;", "\\:", "\\ ", "\\quad", "\\qquad", "~")
_DEGREE_SUFFIXES = ("^{\\circ}", "^\\circ", "\\circ", "\\degree", "°")
#: Unicode vulgar fractions, by value: ``3½`` is 3.5.
_VULGAR_FRACTIONS = {
    "½": 1 / 2,
    "⅓": 1 / 3,
    "⅔": 2 / 3,
    "¼": 1 / 4,
    "¾": 3 / 4,
    "⅕": 1 / 5,
    "⅖": 2 / 5,
    "⅗": 3 / 5,
    "⅘": 4 / 5,
    "⅙": 1 / 6,
    "⅚": 5 / 6,
    "⅛": 1 / 8,
    "⅜": 3 / 8,
    "⅝": 5 / 8,
    "⅞": 7 / 8,
}
_TIMES_TEN = ("\\times10^", "\\cdot10^", "*10^")


@dataclass(frozen=True, slots=True)
class SymbolicVerdict:
    """The outcome of one symbolic comparison.

    Attributes
    ----------
    status
        ``ok`` when both sides were read and compared; ``unparseable`` when a side could not be
        read as the kind the gold asks for (or SymPy failed on it); ``timeout`` when parsing and
        comparing ran out of time or the input exceeded :data:`MAX_SYMBOLIC_CHARS`.
    equivalent
        Whether the prediction equals the gold. Always ``False`` unless ``status`` is ``ok``.
    detail
        One readable sentence: what was parsed on each side and why they are equal or not.
    pred_parsed, gold_parsed
        ``str()`` of the parsed SymPy objects (the lower-cased word for text), ``None`` when not parsed.
    """

    status: GradeStatus
    equivalent: bool
    detail: str
    pred_parsed: str | None
    gold_parsed: str | None


def preview(text: str) -> str:
    """``text`` on one line, cut to a few dozen characters, quoted: for the details of verdicts."""
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= _PREVIEW_CHARS else flat[: _PREVIEW_CHARS - 3] + "...")


def _strip_delimiters(text: str) -> str:
    """Remove one pair of math delimiters around the whole text: ``$...$``, ``\\(...\\)``, ``\\[...\\]``,
    and a full stop that ends the mathematics inside them (``\\[\\frac{1}{3}.\\]``)."""
    s = text.strip()
    for left, right in _MATH_DELIMITERS:
        if len(s) >= len(left) + len(right) and s.startswith(left) and s.endswith(right):
            inner = s[len(left) : len(s) - len(right)].strip()
            return inner[:-1].rstrip() if inner.endswith(".") and not inner.endswith("..") else inner
    return s


def _closing_brace(text: str, start: int) -> int:
    """Index of the brace closing the one opened at ``start``, or -1."""
    opening, closing = text[start], {"{": "}", "(": ")"}[text[start]]
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return index
    return -1


_BRACKETS = {"(": ")", "[": "]", "{": "}"}


def collection_size(text: str) -> int:
    r"""How many values an answer lists when it is one bracketed collection (a tuple, list, set
    or dict written out, as program-of-thoughts outputs print them); 1 otherwise.

    Read without SymPy: a collection of two or more values is never equal to one number, so
    the cascade decides it without a worker call. A single bracketed item is looked into
    (``[{x: 16, y: 20}]`` lists 2).

    Examples
    --------
    >>> collection_size("{x: 4000, y: 1000, z: 6000}"), collection_size("(1/8, 1/4, 4, 16)")
    (3, 4)
    >>> collection_size("[{x: 16, y: 20}]"), collection_size("(3+4)"), collection_size("x, y")
    (2, 1, 1)
    >>> collection_size(r"\{1, 2\}"), collection_size("(0, 1]"), collection_size("[1,000]")
    (2, 1, 1)
    """
    s = _strip_delimiters(text)
    if s.startswith("\\{") and s.endswith("\\}"):
        s = "{" + s[2:-2] + "}"
    layers = 0  # at most _MAX_NUMBER_DEPTH: peeling 10,000 nested brackets one scan each took 9 s
    while layers < _MAX_NUMBER_DEPTH and len(s) >= 2 and s[0] in _BRACKETS and s[-1] == _BRACKETS[s[0]]:
        layers += 1
        if patterns.WHOLE_NUMBER_ANSWER.match(s[1:-1].strip()):
            return 1  # "[1,000]": one number with a thousands separator
        items, depth, start = [], 0, 1
        for index in range(1, len(s) - 1):
            char = s[index]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
                if depth < 0:  # the first bracket closes early: "(1)+(2)" is not one collection
                    return 1
            elif char == "," and depth == 0:
                items.append(s[start:index])
                start = index + 1
        if depth != 0:
            return 1
        items.append(s[start:-1])
        items = [item.strip() for item in items if item.strip()]
        if len(items) != 1:
            return max(len(items), 1)
        s = items[0].strip("'\"").strip()
    return 1


def _unwrap(text: str, prefixes: tuple[str, ...]) -> str | None:
    """The content of ``\\cmd{...}`` when one of ``prefixes`` wraps the whole text, else ``None``."""
    for prefix in prefixes:
        if text.startswith(prefix) and _closing_brace(text, len(prefix) - 1) == len(text) - 1:
            return text[len(prefix) : -1]
    return None


def _as_word(text: str) -> str | None:
    """The lower-cased word an answer is, when it is text rather than a formula; else ``None``.

    A word is made of letters and spaces only, with at least one run of two letters or more, possibly
    inside ``\\text{}`` and math delimiters: ``yes``, ``\\text{No}``, ``undefined``.
    """
    s = _strip_delimiters(text)
    inner = _unwrap(s, _TEXT_WRAPPERS)
    s = (inner if inner is not None else s).strip().rstrip(".").strip()
    if s and all(char.isalpha() or char == " " for char in s) and any(len(word) >= 2 for word in s.split()):
        return " ".join(s.lower().split())
    return None


def program_identifier(text: str) -> str | None:
    """The variable name an answer is, when it is a program's name rather than a value: ``return
    Jerry_cherries``, ``total_cost``, ``n_apples2`` (snake case with a part of two letters or more);
    ``None`` for anything else, a subscripted variable ``x_1`` or ``a_b`` included. SymPy would read
    ``Jerry_cherries`` as a product of letters, its ``e`` as Euler's number.

    Examples
    --------
    >>> program_identifier("return Jerry_cherries"), program_identifier("total_cost;")
    ('Jerry_cherries', 'total_cost')
    >>> program_identifier("x_1") is None, program_identifier("a_{37}") is None
    (True, True)
    """
    match = patterns.PROGRAM_IDENTIFIER.match(text)
    if match is None:
        return None
    name = match.group("name")
    if sum(char.isalpha() for char in name.split("_")[0]) < 2 and not any(
        sum(char.isalpha() for char in part) >= 2 for part in name.split("_")[1:]
    ):
        return None
    return name


def _kind(expr: Any) -> str:
    """Name the kind of a parsed SymPy object for a detail sentence."""
    from sympy import Interval, MatrixBase, Set, Tuple
    from sympy.core.relational import Relational
    from sympy.logic.boolalg import And

    if isinstance(expr, MatrixBase):
        return f"{expr.rows}x{expr.cols} matrix"
    if isinstance(expr, Interval):
        return "interval"
    if isinstance(expr, Set):
        return "set"
    if isinstance(expr, Tuple):
        return "tuple"
    if isinstance(expr, Relational | And):
        return "relation"
    if getattr(expr, "is_number", False):
        return "number"
    return "expression"


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1] in "aeiou" else f"a {noun}"


def _why_unequal(gold: Any, pred: Any, gold_kind: str, pred_kind: str) -> str:
    """Say briefly why two parsed objects are not equal."""
    from sympy import Interval

    if gold_kind != pred_kind:
        return f"the gold is {_a(gold_kind)} and the prediction {_a(pred_kind)}"
    if isinstance(gold, Interval) and isinstance(pred, Interval):
        if (gold.left_open, gold.right_open) != (pred.left_open, pred.right_open):
            return "the intervals differ in which ends are open"
        return "the intervals have different endpoints"
    if gold_kind == "tuple":
        return "the tuples differ (order matters in a tuple)"
    if gold_kind == "set":
        return "the sets have different elements"
    if gold_kind.endswith("matrix"):
        return "the matrices differ in at least one entry"
    if gold_kind == "relation":
        return "the relations are not equivalent"
    if gold_kind == "number":
        return "they are different numbers"
    return "their difference does not simplify to 0"


#: Pairs a fresh worker compares before it says it is ready (see :func:`warm_up`).
_WARM_UP_PAIRS = (("18", "18"), ("\\frac{1}{2}", "0.5"), ("x+1", "1+x"), ("(1, 2]", "(1, 2]"), ("yes", "no"))


def warm_up() -> None:
    """Compare a few small pairs, so that the parsers' and SymPy's first-use work is done.

    Called by each limits worker before it reports ready: the first comparison in a fresh
    process costs about 0.15 s more CPU than the same comparison later, and that must count
    against no answer's limit (a fresh worker and a warm one give the same verdicts).

    Examples
    --------
    >>> warm_up()
    """
    for pred, gold in _WARM_UP_PAIRS:
        _compare_parsed(pred, gold)


def _plain_roots(text: str) -> str:
    """``sqrt(2)`` written in plain text as ``\\sqrt{2}``: math-verify reads ``1 + sqrt(2)`` as 1."""
    if "sqrt(" not in text:
        return text
    out, index = [], 0
    for match in patterns.PLAIN_SQRT.finditer(text):
        if match.start() < index:
            continue
        close = _closing_brace(text, match.end() - 1)
        if close < 0:
            break
        out.append(text[index : match.start()] + "\\sqrt{" + _plain_roots(text[match.end() : close]) + "}")
        index = close + 1
    return "".join(out) + text[index:]


def _relation_as_set(gold: Any, pred: Any, gold_kind: str) -> tuple[bool, str]:
    """Compare an inequality in one variable with an interval or set by the set it describes
    (``x \\geq 3`` is ``[3, \\infty)``); ``(equal, how it was read)``."""
    from math_verify import verify

    try:
        if gold_kind == "relation":
            if len(gold.free_symbols) != 1:
                return False, ""
            gold = gold.as_set()
        else:
            if len(pred.free_symbols) != 1:
                return False, ""
            pred = pred.as_set()
        equal = verify(
            gold,
            pred,
            float_rounding=_FLOAT_ROUNDING,
            numeric_precision=_NUMERIC_PRECISION,
            timeout_seconds=None,
            raise_on_error=True,
        )
    except Exception:  # an inequality SymPy cannot solve stays a relation
        return False, ""
    return bool(equal), "the inequality read as the set it describes"


def _compare_parsed(pred: str, gold: str) -> SymbolicVerdict:
    """Parse both sides with math-verify and compare them; runs inside a limits worker."""
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

    config = [LatexExtractionConfig(), ExprExtractionConfig()]
    parsed: dict[str, Any] = {}
    for side, text in (("gold", gold), ("prediction", pred)):
        body = _plain_roots(" ".join(_strip_delimiters(text).split()))  # one line: inline math allows no newline
        # a predicted LaTeX span is read as LaTeX only: when it fails, the expression reading would
        # find a number inside it (the 0 of \sum_{k=0}^n\bigl(k\bigr)), which is not the answer
        latex_only = side == "prediction" and "\\" in body
        try:
            found = parse(
                f"${body}$",
                extraction_config=config[:1] if latex_only else config,
                fallback_mode="no_fallback",
                extraction_mode="any_match",
                parsing_timeout=None,  # our own limit (limits.py) governs; math-verify's relies on alarm signals
                raise_on_error=True,
            )
        except Exception as exc:  # recorded in the verdict
            return SymbolicVerdict(
                GradeStatus.UNPARSEABLE,
                False,
                f"the {side} {preview(text)} could not be parsed: {type(exc).__name__}: {exc}",
                None,
                str(parsed["gold"]) if "gold" in parsed else None,
            )
        if not found:
            return SymbolicVerdict(
                GradeStatus.UNPARSEABLE,
                False,
                f"the {side} {preview(text)} does not parse as LaTeX" + ("" if latex_only else " or as an expression"),
                None,
                str(parsed["gold"]) if "gold" in parsed else None,
            )
        parsed[side] = found[0]

    gold_expr, pred_expr = parsed["gold"], parsed["prediction"]
    gold_str, pred_str = str(gold_expr), str(pred_expr)
    gold_kind, pred_kind = _kind(gold_expr), _kind(pred_expr)
    said = f"gold {gold_kind} {preview(gold_str)} and predicted {pred_kind} {preview(pred_str)}"
    try:
        equal = verify(
            gold_expr,
            pred_expr,
            float_rounding=_FLOAT_ROUNDING,
            numeric_precision=_NUMERIC_PRECISION,
            timeout_seconds=None,  # our own limit governs, as for parse
            raise_on_error=True,
        )
    except Exception as exc:  # recorded in the verdict
        return SymbolicVerdict(
            GradeStatus.UNPARSEABLE,
            False,
            f"SymPy could not compare {said}: {type(exc).__name__}: {exc}",
            pred_str,
            gold_str,
        )
    if not equal and {gold_kind, pred_kind} in ({"relation", "interval"}, {"relation", "set"}):
        equal, how_read = _relation_as_set(gold_expr, pred_expr, gold_kind)
        said = f"{said} ({how_read})" if how_read else said
    if equal:
        how = "identical after parsing" if gold_str == pred_str else "equal under SymPy"
        return SymbolicVerdict(GradeStatus.OK, True, f"{said} are {how}", pred_str, gold_str)
    why = _why_unequal(gold_expr, pred_expr, gold_kind, pred_kind)
    return SymbolicVerdict(GradeStatus.OK, False, f"{said} are not equal: {why}", pred_str, gold_str)


def latex_equivalent(pred: str, gold: str, *, time_limit: float | None = None) -> SymbolicVerdict:
    """Tell whether a predicted LaTeX answer equals the gold one, under a time limit.

    The gold decides the kind of comparison (see the module docstring): a word gold is compared as
    text, a formula gold as a SymPy object (number, expression, set, interval, tuple, matrix,
    relation). Parsing and comparing run in a worker process through
    :func:`workbench.grading.limits.call_with_limit`; they never hang and never raise.

    Parameters
    ----------
    pred
        The predicted answer, with or without math delimiters (``$...$``, ``\\(...\\)``).
    gold
        The gold answer, likewise.
    time_limit
        Seconds for parsing plus comparing; :data:`workbench.grading.limits.DEFAULT_TIME_LIMIT`
        when ``None``.

    Returns
    -------
    SymbolicVerdict
        ``status`` ``ok`` with ``equivalent``; ``unparseable`` or ``timeout`` with ``equivalent``
        ``False`` and a ``detail`` saying why.

    Raises
    ------
    ValueError
        If ``time_limit`` is not a positive finite number (nothing about the inputs raises).

    Examples
    --------
    >>> latex_equivalent(r"\\frac{3}{7}", "3/7").equivalent
    True
    >>> verdict = latex_equivalent("(1, 2]", "[1,2]")
    >>> verdict.status, verdict.equivalent, verdict.pred_parsed, verdict.gold_parsed
    (<GradeStatus.OK: 'ok'>, False, 'Interval.Lopen(1, 2)', 'Interval(1, 2)')
    >>> verdict.detail
    "gold interval 'Interval(1, 2)' and predicted interval 'Interval.Lopen(1, 2)' are not equal: the intervals differ in which ends are open"
    >>> latex_equivalent("yes", "x+1").status
    <GradeStatus.UNPARSEABLE: 'unparseable'>
    """
    limit = DEFAULT_TIME_LIMIT if time_limit is None else time_limit
    for side, text in (("prediction", pred), ("gold", gold)):
        if not text.strip():
            return SymbolicVerdict(GradeStatus.UNPARSEABLE, False, f"the {side} is empty", None, None)
        if len(text) > MAX_SYMBOLIC_CHARS:
            return SymbolicVerdict(
                GradeStatus.TIMEOUT,
                False,
                f"the {side} has {len(text):,} characters, more than the {MAX_SYMBOLIC_CHARS:,}-character "
                "budget for SymPy, so it was not parsed",
                None,
                None,
            )

    name = program_identifier(pred)
    if name is not None and program_identifier(gold) is None:  # decided without SymPy
        return SymbolicVerdict(
            GradeStatus.UNPARSEABLE,
            False,
            f"the prediction {preview(pred)} is the name of a program's variable ({name}), not a value",
            None,
            None,
        )
    gold_word, pred_word = _as_word(gold), _as_word(pred)
    if gold_word is not None:
        if pred_word == gold_word:
            return SymbolicVerdict(GradeStatus.OK, True, f"both are the word {gold_word!r}", pred_word, gold_word)
        said = f"the word {pred_word!r}" if pred_word is not None else f"the formula {preview(pred)}"
        return SymbolicVerdict(
            GradeStatus.OK, False, f"the gold is the word {gold_word!r}; the prediction is {said}", pred_word, gold_word
        )
    if pred_word is not None:
        return SymbolicVerdict(
            GradeStatus.UNPARSEABLE,
            False,
            f"the prediction is the word {pred_word!r}, not a formula like the gold {preview(gold)}",
            pred_word,
            None,
        )

    result = call_with_limit(_compare_parsed, pred, gold, time_limit=limit)
    if result.status is LimitStatus.OK and result.value is not None:
        return result.value
    compared = f"the prediction {preview(pred)} with the gold {preview(gold)}"
    if result.status is LimitStatus.TIMEOUT:
        return SymbolicVerdict(
            GradeStatus.TIMEOUT, False, f"{result.message} parsing and comparing {compared}", None, None
        )
    return SymbolicVerdict(GradeStatus.UNPARSEABLE, False, f"SymPy failed on {compared}: {result.message}", None, None)


# ---------------------------------------------------------------------------------------------
# latex_number: plain LaTeX numbers, read with string operations only
# ---------------------------------------------------------------------------------------------


def _take_argument(text: str) -> tuple[str, str] | None:
    """Split a ``\\frac`` argument off the front: ``{...}`` or a single digit (``\\frac34``)."""
    if text.startswith("{"):
        end = _closing_brace(text, 0)
        return (text[1:end], text[end + 1 :]) if end > 0 else None
    if text[:1].isdigit():
        return text[0], text[1:]
    return None


def _read_number(s: str, depth: int) -> float | None:
    """Read a whitespace-free, decoration-free LaTeX number."""
    if not s or depth > _MAX_NUMBER_DEPTH:
        return None
    if s[0] in "+-":
        inner = _read_number(s[1:], depth + 1)
        return None if inner is None else (-inner if s[0] == "-" else inner)
    if s.endswith("%"):  # percent as written: 0.5% reads 0.5
        return _read_number(s[:-1], depth + 1)
    if s[0] == "$":
        return _read_number(s[1:], depth + 1)
    if s[0] in "({" and _closing_brace(s, 0) == len(s) - 1:
        return _read_number(s[1:-1], depth + 1)
    for command in _FRACTION_COMMANDS:
        if s.startswith(command):
            numerator = _take_argument(s[len(command) :])
            denominator = _take_argument(numerator[1]) if numerator else None
            if numerator is None or denominator is None or denominator[1]:
                return None
            return _divide(_read_number(numerator[0], depth + 1), _read_number(denominator[0], depth + 1))
    if s.count("/") == 1:
        top, bottom = s.split("/")
        return _divide(_read_number(top, depth + 1), _read_number(bottom, depth + 1))
    for times_ten in _TIMES_TEN:
        if times_ten in s:
            mantissa_text, exponent_text = s.split(times_ten, 1)
            mantissa = _read_number(mantissa_text, depth + 1)
            exponent = _read_number(exponent_text, depth + 1)
            if mantissa is None or exponent is None or not exponent.is_integer() or abs(exponent) > 308:
                return None
            return _finite(mantissa * 10.0 ** int(exponent))
    if "\\" in s or "{" in s:
        return None
    parsed = parse_number(s)
    return None if parsed is None else parsed.value


def _divide(top: float | None, bottom: float | None) -> float | None:
    if top is None or bottom is None or bottom == 0:
        return None
    return _finite(top / bottom)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def strip_number_decorations(text: str) -> str | None:
    r"""Remove what surrounds or decorates a LaTeX number (``$``, ``\boxed{}``, ``\text{}``,
    ``\left``, ``{,}``, ``\%``, ``\$``, thin spaces, degrees, a trailing ``\text{ ml}`` unit);
    ``None`` if digits are separated by spaces.

    Examples
    --------
    >>> strip_number_decorations(r"$\$1{,}000.50$"), strip_number_decorations(r"15.97\text{ ml}")
    ('$1,000.50', '15.97')
    """
    s = _strip_delimiters(patterns.UNICODE_MINUS.sub("-", text))
    wrapped = _unwrap(s, ("\\boxed{", *_TEXT_WRAPPERS))
    s = (wrapped if wrapped is not None else s).strip()
    s = s.replace("\\left", "").replace("\\right", "").replace("{,}", ",").replace("\\%", "%").replace("\\$", "$")
    if "\\" in s:  # "11,\\! 111": a thousands separator with a thin space after it, and what follows
        s = patterns.THIN_SPACED_COMMA.sub(",", s)
    for space in _THIN_SPACES:
        s = s.replace(space, "")
    for space in _LATEX_SPACES:
        s = s.replace(space, " ")
    s = s.strip()
    for suffix in _DEGREE_SUFFIXES:
        if s.endswith(suffix):
            s = s[: -len(suffix)].strip()
    for wrapper in _TEXT_WRAPPERS:  # a trailing unit: 15.97\text{ ml}
        start = s.rfind(wrapper)
        if start > 0 and _closing_brace(s, start + len(wrapper) - 1) == len(s) - 1:
            unit = s[start + len(wrapper) : -1].strip()
            if unit in ("%", "\\%"):
                s = s[:start].strip() + "%"
            elif all(char.isalpha() or char in " ./^23" for char in unit):
                s = s[:start].strip()
            break
    if patterns.SPACED_THOUSANDS.match(s):  # "25 000"
        return s.replace(" ", "")
    parts = s.split()
    for left, right in zip(parts, parts[1:], strict=False):
        if (left[-1].isdigit() or left[-1] == ",") and right[0].isdigit():
            return None  # "9 0" is two numbers, and so is "400, 200" (a list, not 400,200)
    return "".join(parts)


def _mixed_number(text: str) -> float | None:
    """A mixed number: ``2 3/8`` (19/8), ``-2 3/8``, ``3½``; ``None`` for anything else, a fraction
    that is not proper included (``11 6/6``, ``4 4/0``: Math-Verify's tests/test_mixed_number_extraction.py)."""
    s = patterns.UNICODE_MINUS.sub("-", _strip_delimiters(text)).strip()
    match = patterns.MIXED_NUMBER.match(s)
    if match is not None:
        whole = int(match.group("whole").replace(" ", ""))
        top, bottom = int(match.group("top")), int(match.group("bottom"))
        if not 0 <= top < bottom:  # "4 4/0", "11 6/6", "11 7/6" are no mixed numbers
            return None
        value = whole + top / bottom
        return -value if match.group("sign") == "-" else value
    if s and s[-1] in _VULGAR_FRACTIONS:
        head = s[:-1].strip()
        sign = -1.0 if head.startswith("-") else 1.0
        head = head.lstrip("+-").strip()
        if head == "" or head.isdigit():
            return sign * ((int(head) if head else 0) + _VULGAR_FRACTIONS[s[-1]])
    return None


def latex_number(text: str) -> float | None:
    """Read a plain LaTeX number without SymPy; ``None`` when the text is not a single number.

    Reads fractions (``\\frac{3}{7}``, ``\\dfrac{-3}{7}``, ``-\\frac34``, ``3/7``), thousands
    separators (``1{,}000``, ``1,000``), currency (``\\$1.33``), a trailing unit in ``\\text{}``
    (``15.97\\text{ ml}``), degrees, ``a\\times10^{k}``, ``\\left( 3 \\right)`` (parentheses group in
    LaTeX; they are not accounting negatives here) and math delimiters or ``\\boxed{}`` around it all.
    A percent sign is kept *as written*: ``0.5\\%`` reads ``0.5``, as
    :func:`workbench.grading.normalize.parse_number` does; the numeric cascade decides the percent reading.

    Parameters
    ----------
    text
        A LaTeX answer.

    Returns
    -------
    float or None
        The value, or ``None`` for anything else (expressions, ``2\\frac{1}{2}``, which MATH writes
        for a product as often as for a mixed number, division by zero, texts longer than 200
        characters). Plain mixed numbers are read: ``2 3/8`` is 19/8, ``3½`` is 3.5; so are
        ``45°`` and spaced thousands (``25 000``).

    Examples
    --------
    >>> latex_number(r"\\dfrac{-3}{7}") == -3 / 7
    True
    >>> latex_number(r"1{,}000"), latex_number(r"\\$1.33"), latex_number(r"15.97\\text{ ml}"), latex_number(r"0.5\\%")
    (1000.0, 1.33, 15.97, 0.5)
    >>> latex_number(r"-\\frac34"), latex_number(r"\\left( 3 \\right)"), latex_number(r"x+1")
    (-0.75, 3.0, None)
    """
    if len(text) > _MAX_NUMBER_CHARS:
        return None
    stripped = strip_number_decorations(text)
    if stripped is None:
        return _mixed_number(text)
    value = _read_number(stripped, 0)
    return value if value is not None else _mixed_number(stripped)
