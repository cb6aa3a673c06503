"""A gold final answer as text and as a number: the rules every reader (and the exports) share."""

from __future__ import annotations

from workbench.grading import patterns
from workbench.grading.normalize import parse_number

__all__ = ["gsm8k_final_answer", "plain_number", "executed_text", "gold_value"]


def gsm8k_final_answer(solution: str) -> str | None:
    """The final answer of a GSM8K solution: the text after its last ``####``, stripped.

    ``None`` when there is no ``####`` or nothing follows it.

    Examples
    --------
    >>> gsm8k_final_answer("He makes 9 * 2 = $<<9*2=18>>18.\\n#### 18")
    '18'
    >>> gsm8k_final_answer("#### 1,000 ") , gsm8k_final_answer("no marker")
    ('1,000', None)
    """
    matches = list(patterns.HASH_ANSWER.finditer(solution))
    if not matches:
        return None
    answer = matches[-1].group("answer").strip()
    return answer or None


def plain_number(text: str | None) -> float | None:
    r"""The value of an answer that is just a number (``"70,000"``, ``"-3"``, ``"0.5"``), else ``None``.

    No units, currency, percent or LaTeX: ``\frac{1}{2}`` and ``10,\!080`` are not plain numbers.

    Examples
    --------
    >>> plain_number("70,000"), plain_number("-0.5"), plain_number(r"\frac{1}{2}"), plain_number("5%")
    (70000.0, -0.5, None, None)
    """
    if text is None:
        return None
    match = patterns.PLAIN_NUMBER.match(text)
    if match is None:
        return None
    return float((match.group("sign") or "") + match.group("num").replace(",", ""))


def executed_text(answer: str) -> str:
    r"""Write a gold final answer as the executed answer: a plain number loses its thousands
    separators; anything else is kept as written (stripped).

    Examples
    --------
    >>> executed_text("70,000"), executed_text(r" \frac{1}{2} ")
    ('70000', '\\frac{1}{2}')
    """
    text = answer.strip()
    return text.replace(",", "") if plain_number(text) is not None else text


def gold_value(executed: object) -> float | None:
    """The number an executed answer stands for (``None`` for yes/no and non-numbers).

    Examples
    --------
    >>> gold_value(0.14136), gold_value("yes"), gold_value(True)
    (0.14136, None, None)
    """
    if isinstance(executed, bool) or executed is None:
        return None
    if isinstance(executed, int | float):
        return float(executed)
    number = parse_number(str(executed))
    return number.fraction if number else None
