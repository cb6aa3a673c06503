"""Find the final answer in a model's free-text output.

Two policies, as in the design:

* ``strict``: explicit markers only. ``<|begin_of_solution|> ... <|end_of_solution|>``
  narrows the search to the solution block; inside it (or the whole output) the last of
  ``\\boxed{...}``, ``#### n``, "The final answer is ...", "The answer is ...", and an
  ``A: n`` answer line (OpenAI's GSM8K solutions) wins.
* ``flex``: strict first; when no marker is present, the last number or the last inline
  formula (``$...$``), whichever comes later.

Extraction never judges: it returns the span it found and the rule that found it, and
:func:`workbench.grading.compare.answers_match` decides.

Extraction is linear in the length of the output, and an output longer than
:data:`MAX_OUTPUT_CHARS` is not read at all (status ``too_long``, decided before any work), so
one output costs well under a time limit (``bench/hostile_inputs.py`` prints what a megabyte of
nested ``\\boxed{`` costs).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Literal

from workbench.grading import patterns
from workbench.grading.choice import choice_letter
from workbench.grading.status import ExtractionRule, ExtractionStatus

__all__ = [
    "Extraction",
    "ExtractionPolicy",
    "Expectation",
    "extract_answer",
    "last_boxed",
    "clean_answer_text",
    "without_sign_off",
    "after_failed_span",
    "MAX_OUTPUT_CHARS",
]

#: Longest model output answers are extracted from, in characters (real outputs hold a few
#: thousand; the pathological catalogue's 1 MB strings are read). A longer one gets status
#: ``too_long``.
MAX_OUTPUT_CHARS = 1_500_000

ExtractionPolicy = Literal["strict", "flex"]
_POLICIES = ("strict", "flex")

#: What kind of answer the gold asks for: ``any`` (a number or a formula), ``choice`` (a letter A-E:
#: the letter that stands as the answer is read, :func:`~workbench.grading.choice.choice_letter`) or
#: ``span`` (text spans, as reading-comprehension golds: flexible extraction reads a short last line
#: whole before looking for a number).
Expectation = Literal["any", "choice", "span"]
_EXPECTATIONS = ("any", "choice", "span")


@dataclass(frozen=True, slots=True)
class Extraction:
    """An answer found in a model's output.

    Attributes
    ----------
    answer
        The answer text, cleaned of markers, ``$`` and trailing punctuation; ``None`` when
        nothing was found.
    span
        ``(start, end)`` of the matched text in the output, ``None`` when nothing was found.
    rule
        Which rule found it.
    status
        ``found``, ``not_found``, ``empty`` (the output is empty), or ``too_long`` (longer than
        :data:`MAX_OUTPUT_CHARS`, not read).
    policy
        ``strict`` or ``flex``.
    """

    answer: str | None
    span: tuple[int, int] | None
    rule: ExtractionRule
    status: ExtractionStatus
    policy: ExtractionPolicy

    @property
    def found(self) -> bool:
        """Whether an answer was found."""
        return self.status is ExtractionStatus.FOUND


def _brace_pairs(text: str, start: int = 0) -> dict[int, int]:
    """Map the index of every balanced ``{`` from ``start`` on to the index of its ``}``, in one pass.

    An escaped character (``\\{``) does not count. One pass keeps this linear: matching each
    ``\\boxed{`` separately was quadratic, and a megabyte of unclosed ``\\boxed{`` took hours. The
    scan jumps from brace to brace (a regex), and starts at the first box: the braces of the
    reasoning before it cannot close a box.
    """
    pairs: dict[int, int] = {}
    opened: list[int] = []
    for token in patterns.BRACE_TOKEN.finditer(text, start):
        ch = token.group()
        if ch == "{":
            opened.append(token.start())
        elif ch == "}" and opened:
            pairs[opened.pop()] = token.start()
    return pairs


def _boxed_spans(text: str) -> list[tuple[int, int, int, int]]:
    """``(start, end, content_start, content_end)`` of every balanced ``\\boxed{...}``."""
    spans = []
    pairs: dict[int, int] | None = None
    for match in patterns.BOXED_OPEN.finditer(text):
        if pairs is None:
            pairs = _brace_pairs(text, match.start())
        close = pairs.get(match.end() - 1)
        if close is not None:
            spans.append((match.start(), close + 1, match.end(), close))
    return spans


def last_boxed(text: str | None) -> str | None:
    """The content of the last ``\\boxed{...}`` (or ``\\fbox{...}``) in ``text``.

    Braces are matched, so nested groups survive; ``None`` when there is none.

    Examples
    --------
    >>> last_boxed(r"so $\\boxed{\\frac{3}{7}}$ and not \\boxed{2}, finally \\boxed{\\{1, 2\\}}")
    '\\\\{1, 2\\\\}'
    >>> last_boxed("no box") is None
    True
    """
    if not text or ("\\boxed" not in text and "\\fbox" not in text):
        return None
    spans = _boxed_spans(text)
    if spans:
        _, _, start, end = spans[-1]
        return text[start:end].strip()
    bare = list(patterns.BOXED_BARE.finditer(text))
    return bare[-1].group("answer") if bare else None


def clean_answer_text(text: str, *, keep_words: bool = False) -> str:
    """Tidy an answer phrase: a box inside is taken, ``$`` and ``**`` markers, a trailing
    sentence and a trailing period go.

    A number followed by words keeps the number and its unit word only when the phrase is
    short; "18 dollars per day" becomes "18".

    Examples
    --------
    >>> clean_answer_text("$\\\\boxed{18}$.")
    '18'
    >>> clean_answer_text("**14.1%**. This is the growth rate")
    '14.1%'
    >>> clean_answer_text("5 apples per day.")
    '5'
    """
    boxed = last_boxed(text)
    return _tidy(boxed if boxed is not None else text, keep_words=keep_words)


#: How far from its end an answer is searched for Minerva's sign-off (it is 21 characters).
_SIGN_OFF_WINDOW = 64


def without_sign_off(text: str) -> str:
    """``text`` without Minerva's sign-off at its end, "I hope it is correct.", also glued on
    (``Evelyn.Ihopeitiscorrect``, as math-evaluation-harness keeps it); only the last
    :data:`_SIGN_OFF_WINDOW` characters are searched, so a long text costs no more.

    Examples
    --------
    >>> without_sign_off("Evelyn.Ihopeitiscorrect"), without_sign_off("$9$. I hope it is correct.")
    ('Evelyn', '$9$')
    """
    if "hope" not in text[-_SIGN_OFF_WINDOW:].casefold():
        return text
    head, tail = text[:-_SIGN_OFF_WINDOW], text[-_SIGN_OFF_WINDOW:]
    return head + patterns.HOPE_CORRECT.sub("", tail)


def _tidy(text: str, *, keep_words: bool = False) -> str:
    """:func:`clean_answer_text` once the box (if any) is taken; with ``keep_words``, a number followed
    by words keeps them (a text-span answer: "78 yards")."""
    out = (patterns.BOLD_MARKERS.sub("", text) if "*" in text or "_" in text else text).strip()
    if "\\\\" in out:  # "\\frac{1}{2}": a doubled backslash before a command is one backslash
        out = patterns.DOUBLED_BACKSLASH_COMMAND.sub(r"\\", out)
    out = without_sign_off(out)
    marker = patterns.ANSWER_MARKER_PREFIX.match(out)  # every marker at once: one pass, however many
    if marker is not None:  # "Final Answer: The final answer is $9$"
        out = out[marker.end() :]
    # a sentence that follows the answer: ". " then more words
    cut = out.find(". ")
    if cut > 0:
        out = out[:cut]
    out = out.strip().rstrip(".").strip()
    subject = patterns.ANSWER_SUBJECT_IS.match(out) if " " in out else None
    if subject is not None:  # "the smallest $k$ is 12"
        out = subject.group("answer").strip().rstrip(".").strip()
    if len(out) >= 2 and out[0] == out[-1] == '"':
        out = out[1:-1].strip()
    if "$" in out or out.startswith(("\\[", "\\(")):  # display maths too: \[\frac{1}{3}.\]
        out = _formulas(out)
    if keep_words:
        return out
    if len(out) <= _MAX_BARE_ANSWER_CHARS and patterns.NUMBERS_WITH_UNITS.match(out):
        if len(patterns.TEXT_NUMBER.findall(out)) > 1:  # "200 ml and 400 ml": each amount is an item
            return out.rstrip(".").strip()
    first = patterns.TEXT_NUMBER.match(out)
    if first is not None and first.end() < len(out) and out[first.end()] == " ":
        rest = out[first.end() :].strip()
        if rest and rest[0].isalpha():
            return first.group("number").replace(" ", "")
    return out


def _formulas(text: str) -> str:
    """The answer inside ``$...$``: one formula (a unit word after it goes: ``$5$ meters``), or
    several joined by "and", "or" or commas (``$1$ and $4$`` gives ``1, 4``); ``text`` otherwise.
    Punctuation at the end of a formula goes too (``$\\frac{2}{5}.$``)."""
    found = list(patterns.INLINE_MATH.finditer(text))
    if not found or text[: found[0].start()].strip():
        return text
    tail = text[found[-1].end() :].strip()
    if tail and not (len(tail) <= 24 and all(char.isalpha() or char in " ." for char in tail)):
        return text
    for left, right in zip(found, found[1:], strict=False):
        if not patterns.FORMULA_LIST_SEPARATOR.match(text[left.end() : right.start()]):
            return text
    inner = [next(g for g in m.groups() if g is not None).strip().rstrip(".,;").strip() for m in found]
    return ", ".join(part for part in inner if part) or text


def _marker_candidates(text: str) -> list[tuple[int, int, int, int, ExtractionRule]]:
    """Every explicit answer marker in ``text``: ``(start, end, answer_start, answer_end, rule)``.

    The answer is kept as a span, not a copy: copying the content of each of 300,000 nested
    ``\\boxed{`` took gigabytes.
    """
    # Each marker's regex runs only when its literal is in the text (a substring test is a
    # C loop; a regex scan of a long output is not): the same candidates, found faster.
    found: list[tuple[int, int, int, int, ExtractionRule]] = []
    if "\\" in text:
        for start, end, c_start, c_end in _boxed_spans(text):
            found.append((start, end, c_start, c_end, ExtractionRule.BOXED))
        if not found:
            for match in patterns.BOXED_BARE.finditer(text):
                found.append((match.start(), match.end(), *match.span("answer"), ExtractionRule.BOXED))
    if "####" in text:
        for match in patterns.HASH_ANSWER.finditer(text):
            found.append((match.start(), match.end(), *match.span("answer"), ExtractionRule.HASHES))
    if "answer" in text.casefold():
        for match in patterns.ANSWER_IS.finditer(text):
            rule = ExtractionRule.FINAL_ANSWER_IS if match.group("final") else ExtractionRule.ANSWER_IS
            found.append((match.start(), match.end(), *match.span("answer"), rule))
    if "A:" in text:
        for match in patterns.ANSWER_LINE.finditer(text):
            found.append((match.start(), match.end(), *match.span("answer"), ExtractionRule.ANSWER_LINE))
    return found


#: Most boxes read as one answer given together (a cap: a megabyte of ``\\boxed{}\\boxed{}...`` is
#: walked back at most this far from each box, so extraction stays linear).
_MAX_LISTED_BOXES = 12

#: Most words (other than "and", "or") between two boxes read as one answer, and the verbs that make
#: the text between them a statement of its own ("its magnitude is").
_MAX_GAP_WORDS = 4
_STATEMENT_WORDS = frozenset({"is", "are", "was", "were", "be", "equals", "gives", "so", "thus", "then", "therefore"})

#: Longest text between two boxes read as one answer, once LaTeX spacing, math delimiters and text
#: wrappers are gone (``\\boxed{(3, 3)} \\text{ for part (a) and } \\boxed{(1, 1)}``); Math-Verify's
#: limit too (latex2sympy2_extended ``extract_boxed_content``).
_MAX_BOX_GAP = 70


def _boxes_listed(gap: str) -> bool:
    """Whether two boxes with ``gap`` between them are parts of one answer: nothing but spacing, math
    delimiters and punctuation between them (``\\boxed{1}, \\boxed{2}``, ``$\\boxed{-2}$ and
    $\\boxed{1}$``), or a short text that joins them ("and", "or", a comma or a semicolon: ``\\quad
    \\text{and} \\quad``, ``\\text{ for part (a) and }``), within one sentence."""
    if len(gap) > 8 * _MAX_BOX_GAP:
        return False
    plain = patterns.LATEX_SPACING.sub(" ", gap)
    if "\\" in plain:
        plain = patterns.TEXT_WRAPPED.sub(lambda m: f" {m.group('body')} ", plain)
    delimited = patterns.MATH_DELIMITER.search(plain) is not None
    plain = patterns.MATH_DELIMITER.sub(" ", plain).strip()
    if not plain and delimited:  # "$$\boxed{20}$$ \boxed{143}": two formulas, nothing joins them
        return False
    if patterns.BOX_LIST_GAP.match(plain):
        return True
    if len(plain) > _MAX_BOX_GAP or "\n" in plain or patterns.SENTENCE_END.search(plain):
        return False
    if patterns.LIST_WORD.search(plain) is None:
        return False
    # a few words between the parts ("for part (a) and", "hours and"), not a statement about another
    # quantity (", so the ordered pair $(m, b)$ is", ", and its magnitude is")
    words = [word.casefold() for word in patterns.PLAIN_WORD.findall(plain)]
    said = [word for word in words if word not in _CONNECTIVES]
    return len(said) <= _MAX_GAP_WORDS and not _STATEMENT_WORDS.intersection(words)


def _box_list(text: str, braced: list[tuple[int, int, int, int]], last: int) -> tuple[str, int] | None:
    """Several boxes given together as one answer, ``\\boxed{1}`` and ``\\boxed{4}``: their contents
    joined with ", " (a box given twice counts once; each box is one item, a tuple in a box stays
    whole) and the index of the first box; ``None`` for one box."""
    if last >= len(braced) or not text[braced[last][2] : braced[last][3]].strip():
        return None  # an empty box is no answer, alone or listed
    first = last
    while first > max(0, last - _MAX_LISTED_BOXES + 1) and braced[first - 1][1] <= braced[first][0]:
        if not _boxes_listed(text[braced[first - 1][1] : braced[first][0]]):
            break
        first -= 1
    if first == last:
        return None
    parts = [_tidy(text[b[2] : b[3]].strip()) for b in braced[first : last + 1]]
    if not all(parts):
        return None
    unique = list(dict.fromkeys(parts))
    return ", ".join(unique), first


def _strict(text: str, offset: int, keep_words: bool = False) -> tuple[str, tuple[int, int], ExtractionRule] | None:
    # the last statement wins; a box inside "The answer is $\boxed{3}$" starts later than the
    # phrase; a marker with nothing after it ("The answer is:" then a blank line) is no answer
    candidates = sorted(_marker_candidates(text), key=lambda c: (c[0], c[4] is ExtractionRule.BOXED), reverse=True)
    # The balanced boxes, by start: the box clean_answer_text would take from an answer is the last
    # one starting inside it, found by bisection rather than by scanning the answer again (which
    # made an empty box nested 100,000 deep quadratic).
    braced = sorted((c[0], c[1], c[2], c[3]) for c in candidates if c[4] is ExtractionRule.BOXED and c[3] == c[1] - 1)
    starts = [b[0] for b in braced]
    for start, end, answer_start, answer_end, rule in candidates:
        if rule is ExtractionRule.BOXED and answer_end == end - 1:
            boxes = _box_list(text, braced, bisect.bisect_left(starts, start))
            if boxes is not None:
                return boxes[0], (braced[boxes[1]][0] + offset, end + offset), rule
        inner = bisect.bisect_left(starts, answer_end) - 1
        if inner >= 0 and starts[inner] >= answer_start and braced[inner][1] <= answer_end:
            cleaned = _tidy(text[braced[inner][2] : braced[inner][3]].strip(), keep_words=keep_words)
        else:
            cleaned = clean_answer_text(text[answer_start:answer_end].strip(), keep_words=keep_words)
        if cleaned:
            return cleaned, (start + offset, end + offset), rule
    return None


#: Words that join several answers ("x = 1 and x = 4", "2, 4 or 6").
_CONNECTIVES = frozenset({"and", "or"})

#: Longest output read whole as its own answer by flexible extraction (``\\frac{7}{3}``, ``2 3/8``).
_MAX_BARE_ANSWER_CHARS = 200


def _shaped_answer(body: str) -> bool:
    """Whether a one-line output is an answer of a shape the last-number rule would cut: a mixed
    number with a percent sign or word (``4 4/9%``, ``4 4/9 percent``, ``1 000 4/9pct``), a time or
    ratio (``12:00``, ``3:2``), or several amounts with units (``200 ml and 400 ml``)."""
    percent = patterns.TRAILING_PERCENT.search(body)
    if percent is not None and percent.start() > 0 and patterns.MIXED_NUMBER.match(body[: percent.start()]):
        return True
    if patterns.COLON_NUMBER.match(body):
        return True
    return bool(patterns.NUMBERS_WITH_UNITS.match(body)) and len(patterns.TEXT_NUMBER.findall(body)) > 1


def _bare_answer(text: str) -> tuple[str, tuple[int, int], ExtractionRule] | None:
    """The whole output when it is an answer and nothing else: one line, no words but "and", "or"
    and function names (``\\frac{7}{3}``, ``\\sqrt{2}+1``, ``1 + sqrt(2)``, ``2 3/8``, ``x = 1 and
    x = 4``, ``25 000``), or a shape of :func:`_shaped_answer` (``4 4/9%``, ``12:00``, ``200 ml and
    400 ml``). Cutting such an answer to its last number reads ``3`` for ``\\frac{7}{3}``."""
    body = text.strip()
    if not body or len(body) > _MAX_BARE_ANSWER_CHARS or "\n" in body:
        return None
    if _shaped_answer(body):
        start = text.index(body[0])
        return clean_answer_text(body), (start, start + len(body)), ExtractionRule.LAST_FORMULA
    words = patterns.PLAIN_WORD.findall(body)
    if any(word.casefold() not in patterns.BARE_ANSWER_WORDS for word in words):
        return None
    if not any(char.isdigit() for char in body) and not words and "\\" not in body:
        return None  # punctuation alone is no answer
    if patterns.TEXT_NUMBER.fullmatch(body):  # one number: the last-number rule reads it the same
        return None
    spaced = patterns.SPACED_THOUSANDS.match(body) or patterns.MIXED_NUMBER.match(body)
    # digits and operators with an "=" ("9 * 2 = 18") are working, whose last number is the answer;
    # without one ("11 + 4/9") they are the answer, an expression
    # "and"/"or" between plain numbers ("9 and 0") shape nothing: that is the end of a sentence
    bare = " ".join(token for token in body.split() if token.casefold() not in _CONNECTIVES)
    expression = "=" not in body and patterns.ARITHMETIC.search(bare) is not None
    shaped = spaced or expression or any(char.isalpha() or char in "\\{}()[]," or not char.isascii() for char in bare)
    if not shaped or (patterns.DIGITS_APART.search(body) and not spaced):
        return None
    tokens = body.casefold().split()
    if {tokens[0], tokens[-1]} & {"and", "or"}:  # "and 0" is the end of a sentence, not an answer
        return None
    answer = clean_answer_text(body)
    if not answer:
        return None
    start = text.index(body[0])
    return answer, (start, start + len(body)), ExtractionRule.LAST_FORMULA


def _blank_code(text: str) -> str:
    """``text`` with its fenced code blocks blanked (same length): a model's code is not its answer."""
    if "```" not in text:
        return text
    return patterns.FENCED_CODE.sub(
        lambda m: m.group() if m.group("info").strip() == "output" else " " * len(m.group()), text
    )


#: How far around the last number a time or ratio holding it is looked for (``12:00``, ``3:2:1``).
_COLON_WINDOW = 40


def _colon_group(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The time or ratio (``12:00``, ``3:2``) that holds the number at ``start:end`` of ``text``:
    a colon right before or after the number, digits on its other side."""
    if not (text[end : end + 1] == ":" or text[max(0, start - 1) : start] == ":"):
        return None
    window_start = max(0, start - _COLON_WINDOW)
    for group in patterns.TEXT_COLON_NUMBER.finditer(text, window_start, min(len(text), end + _COLON_WINDOW)):
        if group.start() <= start and group.end() >= end:
            return group.span()
    return None


def _last_number_or_formula(text: str, offset: int) -> tuple[str, tuple[int, int], ExtractionRule] | None:
    best: tuple[str, tuple[int, int], ExtractionRule] | None = None
    text = _blank_code(text)
    numbers = list(patterns.TEXT_NUMBER.finditer(text))
    if numbers:
        m = numbers[-1]
        best = (m.group("number").replace(" ", ""), (m.start() + offset, m.end() + offset), ExtractionRule.LAST_NUMBER)
        colon = _colon_group(text, *m.span("number"))
        if colon is not None:  # "at 12:00": the time, not its minutes
            best = (text[colon[0] : colon[1]], (colon[0] + offset, colon[1] + offset), ExtractionRule.LAST_NUMBER)
    formulas = list(patterns.INLINE_MATH.finditer(text))
    if formulas:
        m = formulas[-1]
        inner = clean_answer_text(next(g for g in m.groups() if g is not None).strip())
        if inner and (best is None or m.end() + offset > best[1][1]):  # an empty box is no answer
            best = (inner, (m.start() + offset, m.end() + offset), ExtractionRule.LAST_FORMULA)
    return best


#: Longest last line read whole as a text-span answer (characters).
_MAX_SPAN_LINE = 200


def _last_line(text: str) -> tuple[str, tuple[int, int], ExtractionRule] | None:
    """The last non-empty line of ``text`` when it is short: a text-span answer ("Mike Tolbert")."""
    stripped = text.rstrip()
    start = stripped.rfind("\n") + 1
    line = stripped[start:].strip()
    if not line or len(line) > _MAX_SPAN_LINE:
        return None
    answer = _tidy(line, keep_words=True)
    if not answer:
        return None
    begin = start + stripped[start:].index(line[0])
    return answer, (begin, begin + len(line)), ExtractionRule.LAST_LINE


def _as_choice(
    found: tuple[str, tuple[int, int], ExtractionRule] | None, text: str, policy: ExtractionPolicy
) -> tuple[str, tuple[int, int], ExtractionRule] | None:
    """What a choice gold is compared with: the letter of the marker's answer ("The answer is (C)"),
    else, under ``flex``, the letter that stands as the answer in the whole output; a marker's answer
    without a letter stays as it is (it is wrong, and says what was given)."""
    if found is not None:
        letter = choice_letter(found[0])
        return (letter, found[1], found[2]) if letter is not None else found
    if policy != "flex":
        return None
    letter = choice_letter(text)
    return (letter, (0, len(text)), ExtractionRule.CHOICE_LETTER) if letter is not None else None


def extract_answer(text: str | None, *, policy: ExtractionPolicy = "flex", expect: Expectation = "any") -> Extraction:
    """Find the final answer in a model's output.

    Parameters
    ----------
    text
        The model's unfiltered output.
    policy
        ``strict`` (explicit markers only) or ``flex`` (strict first, then the last number
        or formula).
    expect
        What the gold asks for (:data:`Expectation`): ``any``; ``choice`` reads the choice letter
        that stands as the answer ("A. Because B is not valid" is A); ``span`` reads a short last
        line whole under ``flex`` ("Mike Tolbert").

    Returns
    -------
    Extraction
        With the answer, the span in ``text``, the rule and a status; never raises for odd
        text.

    Examples
    --------
    >>> e = extract_answer("She makes 9 * 2 = $18 every day.\\n#### 18")
    >>> e.answer, e.rule.value, e.span
    ('18', 'hashes', (33, 40))
    >>> extract_answer("so $\\\\boxed{\\\\frac{3}{7}}$.", policy="strict").answer
    '\\\\frac{3}{7}'
    >>> extract_answer("She makes 9 * 2 = $18 every day.", policy="strict").status.value
    'not_found'
    >>> e = extract_answer("She makes 9 * 2 = $18 every day.")
    >>> e.answer, e.rule.value
    ('$18', 'last_number')
    >>> extract_answer("<|begin_of_solution|>The answer is 42.<|end_of_solution|>", policy="strict").answer
    '42'
    >>> extract_answer("#### 18 " * 200_000).status.value  # 1.6 million characters: not read
    'too_long'
    >>> extract_answer("A. Because B is not valid", expect="choice").answer
    'A'
    >>> extract_answer("He passed to\\nMike Tolbert", expect="span").answer
    'Mike Tolbert'
    """
    if policy not in _POLICIES:
        raise ValueError(f"unknown extraction policy {policy!r}; use 'strict' or 'flex'")
    if expect not in _EXPECTATIONS:
        raise ValueError(f"unknown expectation {expect!r}; use one of {', '.join(_EXPECTATIONS)}")
    if text is None:
        return Extraction(None, None, ExtractionRule.NONE, ExtractionStatus.EMPTY, policy)
    if len(text) > MAX_OUTPUT_CHARS:
        return Extraction(None, None, ExtractionRule.NONE, ExtractionStatus.TOO_LONG, policy)
    if not text.strip():
        return Extraction(None, None, ExtractionRule.NONE, ExtractionStatus.EMPTY, policy)
    if patterns.ZERO_WIDTH.search(text):  # invisible characters split numbers: "1\u200b8" is 18
        return _without_invisibles(text, policy, expect)
    search, offset = text, 0
    blocks = list(patterns.SOLUTION_BLOCK.finditer(text)) if "<|begin_of_solution|>" in text else []
    if blocks:
        block = blocks[-1]
        search, offset = block.group("answer"), block.start("answer")
    found = _strict(search, offset, keep_words=expect == "span")
    if found is None and blocks:
        inside = _last_number_or_formula(search, offset)
        if inside is not None:  # the block itself is an explicit marker
            found = (inside[0], inside[1], ExtractionRule.SOLUTION_BLOCK)
    if expect == "choice":
        found = _as_choice(found, text, policy)
    elif found is None and policy == "flex" and expect == "span":
        found = _last_line(text) or _last_number_or_formula(text, 0)
    elif found is None and policy == "flex":
        found = _bare_answer(text) or _last_number_or_formula(text, 0)
    if found is None:
        return Extraction(None, None, ExtractionRule.NONE, ExtractionStatus.NOT_FOUND, policy)
    answer, span, rule = found
    return Extraction(answer, span, rule, ExtractionStatus.FOUND, policy)


def after_failed_span(text: str, failed: Extraction) -> Extraction | None:
    """The answer flexible extraction finds in ``text`` once the answer of ``failed`` (a LaTeX span
    that does not parse) is blanked out: the last number or formula left, ``None`` when there is
    none. A failed span must not hide a good one: in "Final answer is $\\sum_{k=0}^n\\bigl(k\\bigr)$.
    I hope. 42" the answer is 42 (Math-Verify's tests/test_failed_latex_span.py).

    Examples
    --------
    >>> text = r"Final answer is $\\sum_{k=0}^n\\bigl(k\\bigr)$. I hope. 42"
    >>> after_failed_span(text, extract_answer(text)).answer
    '42'
    """
    if failed.span is None or not failed.answer or len(text) > MAX_OUTPUT_CHARS:
        return None
    start, end = failed.span
    inside = text.find(failed.answer, start, end)
    if inside < 0:
        return None
    blanked = text[:inside] + " " * len(failed.answer) + text[inside + len(failed.answer) :]
    found = _last_number_or_formula(blanked, 0)
    if found is None or found[0] == failed.answer:
        return None
    return Extraction(found[0], found[1], found[2], ExtractionStatus.FOUND, "flex")


def _without_invisibles(text: str, policy: ExtractionPolicy, expect: Expectation) -> Extraction:
    """:func:`extract_answer` on ``text`` without its zero-width characters, the span mapped back."""
    kept = [i for i, char in enumerate(text) if not patterns.ZERO_WIDTH.match(char)]
    found = extract_answer("".join(text[i] for i in kept), policy=policy, expect=expect)
    if found.span is None:
        return found
    start, end = found.span
    span = (kept[start] if start < len(kept) else len(text), kept[end - 1] + 1 if end > start else kept[start])
    return Extraction(found.answer, span, found.rule, found.status, found.policy)
