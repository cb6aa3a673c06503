"""Multiple-choice answers: the letter that stands as the answer in a text, and whether a gold is one.

"A. Because B is not valid" answers A and "Because B is valid" answers B (Math-Verify's
``StringExtractionConfig`` tests): the letter is the one that opens the answer ("A.", "(C)", "B)"),
else the last capital letter A-E standing alone, never the first capital letter of the text, and
never the article "A" ("A train leaves..."). Explicit markers ("Answer: C", "The answer is (C)") are
read by :func:`workbench.grading.extract.extract_answer` before this is asked.
"""

from __future__ import annotations

from workbench.grading import patterns
from workbench.grading.normalize import normalize_answer
from workbench.grading.status import GradeStatus, MatchReason
from workbench.grading.verdict import Verdict

__all__ = ["choice_letter", "choice_gold", "compare_choice", "MAX_CHOICE_TEXT"]

#: Longest text searched for a choice letter (characters): a choice is near the end of an answer,
#: and the standing-letter search reads this much from the end.
MAX_CHOICE_TEXT = 4_000


def _unwrapped(text: str) -> str:
    """``text`` without math delimiters, bold markers and ``\\text{...}`` wrappers around a letter."""
    out = patterns.MATH_DELIMITER.sub(" ", text)
    if "\\" in out:
        out = patterns.TEXT_WRAPPED.sub(lambda m: f" {m.group('body')} ", out)
    return out.replace("**", " ").strip()


#: Words after which a capital "A" is a choice, not the article ("A is valid", "A and B").
_NOT_A_NOUN = frozenset(
    {"is", "was", "are", "seems", "appears", "would", "will", "must", "should", "can", "could", "and", "or", "because"}
)


def _article(after: str) -> bool:
    """Whether an "A" followed by ``after`` is the article: a lower-case word that is not a verb or
    a conjunction follows it ("A train", not "A is valid")."""
    if not after.startswith(" "):
        return False
    word = after[1:].split(" ", 1)[0].rstrip(".,;:!?")
    return bool(word) and word[0].islower() and word not in _NOT_A_NOUN


def choice_letter(text: str | None) -> str | None:
    """The choice letter (upper case) that stands as the answer in ``text``; ``None`` when none does.

    Examples
    --------
    >>> choice_letter("A. Because B is not valid"), choice_letter("Because B is valid")
    ('A', 'B')
    >>> choice_letter("(C)"), choice_letter("Answer: C"), choice_letter("\\\\text{(E)}"), choice_letter("b")
    ('C', 'C', 'E', 'B')
    >>> choice_letter("A train leaves at noon") is None, choice_letter("No valid answer here") is None
    (True, True)
    """
    if text is None:
        return None
    body = _unwrapped(text[-MAX_CHOICE_TEXT:])
    whole = patterns.CHOICE_LETTER.match(normalize_answer(body))
    if whole is not None:
        return whole.group("letter").upper()
    marker = patterns.ANSWER_MARKER_PREFIX.match(body)
    if marker is not None and marker.end() > 0:
        body = body[marker.end() :]
        whole = patterns.CHOICE_LETTER.match(normalize_answer(body))
        if whole is not None:
            return whole.group("letter").upper()
    opening = patterns.CHOICE_AT_START.match(body)
    if opening is not None:
        return opening.group("paren") or opening.group("letter")
    standing = None
    for match in patterns.CHOICE_STANDING.finditer(body):
        letter = match.group("letter")
        if letter == "A" and match.group().startswith("A") and _article(body[match.end() :]):
            continue  # the article: "A train"
        standing = letter
    return standing


def choice_gold(gold: str | None, *, latex: bool = False) -> str | None:
    """The choice letter a gold answer is (``C``, ``(c)``, ``Option D``, ``\\text{(E)}``), else ``None``.

    A bare lower-case letter is a choice only outside LaTeX (``latex=True``: MATH, where ``e`` or ``a``
    may be a value); a gold longer than a few characters around its letter is not a choice.

    Examples
    --------
    >>> choice_gold("C"), choice_gold("(c)"), choice_gold("\\\\text{(E)}", latex=True), choice_gold("e", latex=True)
    ('C', 'C', 'E', None)
    >>> choice_gold("Because B is valid") is None
    True
    """
    if gold is None:
        return None
    body = _unwrapped(gold)
    if len(body) > 12:
        return None
    whole = patterns.CHOICE_LETTER.match(" ".join(body.split()).rstrip(". "))
    if whole is None:
        return None
    letter = whole.group("letter")
    if latex and letter.islower():
        return None
    if (
        not latex
        and len(gold.strip()) > 3
        and body == gold.strip()
        and not body.lower().startswith(("option", "choice"))
    ):
        return None
    return letter.upper()


def compare_choice(pred: str, gold_letter: str) -> Verdict:
    """A choice gold: the letter that stands as the answer in ``pred`` ("A. Because B is not valid"
    is A; :func:`~workbench.grading.choice.choice_letter`) against the gold's."""
    letter = choice_letter(pred)
    if letter is None:
        detail = f"gold is choice {gold_letter.upper()}; {pred!r} names no choice letter"
        return Verdict(False, GradeStatus.UNPARSEABLE, MatchReason.UNPARSEABLE, None, None, detail, "text")
    ok = letter == gold_letter.upper()
    detail = f"gold choice {gold_letter.upper()}, predicted {letter}"
    return Verdict(
        ok, GradeStatus.OK, MatchReason.NORMALISED if ok else MatchReason.WRONG_VALUE, None, None, detail, "text"
    )
