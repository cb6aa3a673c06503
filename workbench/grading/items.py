"""Several answers given together: an answer split into its items, and two lists of items matched.

An answer can list several values: ``-2, 1``, ``1 and -2``, ``k = 45, n = 2``, ``200 ml and 400 ml``,
several boxes read together (``\\boxed{(1, 2)}, \\boxed{(2, 1)}``, joined by
:func:`workbench.grading.extract.extract_answer`). :func:`split_items` cuts such an answer at its
top-level separators (commas that do not separate thousands, semicolons, the words "and" and "or",
``\\text{ and }``), never inside brackets or braces, so a tuple ``(1, 2)`` or a set ``\\{1, 2\\}`` stays
one item: each box is one item, compared as a whole (a tuple in its order).

:func:`perfect_matching` pairs the items of two lists one to one, whatever their order: a list
without brackets is a set of answers. Which pairs are equal is for the caller to say
(:func:`workbench.grading.compare.answers_match` with numbers, :mod:`workbench.grading.symbolic`
with SymPy). Everything here is string work, linear in the text, and bounded: at most
:data:`MAX_ITEMS` items a side are compared.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from workbench.grading import patterns

__all__ = ["MAX_ITEMS", "split_items", "expand_plus_minus", "perfect_matching", "normalize_item", "dedupe"]

#: Most items a side that are compared one by one (a longer list is compared as a whole only).
MAX_ITEMS = 12

#: Longest answer split into items (characters); a longer one is one item.
_MAX_CHARS = 2_000

_OPENING = "([{"
_CLOSING = ")]}"


def _unwrap_box(item: str) -> str:
    """``\\boxed{x}`` or ``\\fbox{x}`` around a whole item: ``x``."""
    for opening in ("\\boxed{", "\\fbox{"):
        if item.startswith(opening) and item.endswith("}"):
            depth = 0
            for index in range(len(opening) - 1, len(item)):
                char = item[index]
                if char == "{":
                    depth += 1
                elif char == "}":
                    depth -= 1
                    if depth == 0:
                        return item[len(opening) : -1].strip() if index == len(item) - 1 else item
    return item


def normalize_item(item: str) -> str:
    """An item as it is compared as text: spaces, ``$``, a final full stop and a box around it gone.

    Examples
    --------
    >>> normalize_item(" $\\\\boxed{(1, 2)}$. "), normalize_item("k = 45")
    ('(1,2)', 'k=45')
    """
    out = patterns.MATH_DELIMITER.sub(" ", item).strip().rstrip(".").strip()
    out = _unwrap_box(out)
    return "".join(out.split())


def _plain(text: str) -> str:
    """``text`` with LaTeX spacing as spaces and ``\\text{ and }``-style words unwrapped."""
    out = patterns.LATEX_SPACING.sub(" ", patterns.NEGATIVE_SPACE.sub("", patterns.THIN_SPACED_COMMA.sub(",", text)))
    if "\\" in out:
        out = patterns.TEXT_WRAPPED.sub(
            lambda m: f" {m.group('body').strip()} " if _is_joining(m.group("body")) else m.group(), out
        )
    return out


def _is_joining(body: str) -> bool:
    """Whether the content of a text wrapper only joins items (``and``, ``or``, ``,``)."""
    return body.strip().casefold() in ("and", "or", ",", ", and", ",and")


def split_items(text: str) -> tuple[str, ...]:
    """The items an answer lists, in order: cut at top-level commas (not thousands separators),
    semicolons and the words "and"/"or"; brackets, braces and ``\\left(...\\right)`` are never cut.
    Math delimiters, LaTeX spacing and a box around an item go; empty items are dropped. An answer
    longer than 2,000 characters, or one of more than :data:`MAX_ITEMS` items, is one item.

    Examples
    --------
    >>> split_items("-2, 1"), split_items("1 and -2"), split_items("1,000")
    (('-2', '1'), ('1', '-2'), ('1,000',))
    >>> split_items("(1, 2), (2, 1)"), split_items("\\\\{1, 2\\\\}")
    (('(1, 2)', '(2, 1)'), ('\\\\{1, 2\\\\}',))
    >>> split_items("k = 45 \\\\quad \\\\text{and} \\\\quad n = 2")
    ('k = 45', 'n = 2')
    >>> split_items("200 ml and 400 ml"), split_items("Anderson or Gordon")
    (('200 ml', '400 ml'), ('Anderson', 'Gordon'))
    """
    if len(text) > _MAX_CHARS:
        return (text,)
    plain = _plain(text)
    cuts: list[tuple[int, int]] = []  # (start, end) of each separator at depth 0
    depth = 0
    index = 0
    while index < len(plain):
        char = plain[index]
        if char in _OPENING:
            depth += 1
        elif char in _CLOSING:
            depth = max(0, depth - 1)
        elif depth == 0:
            if char in ",;" and not (char == "," and patterns.THOUSANDS_COMMA.match(plain, index)):
                cuts.append((index, index + 1))
            elif char in "aAoO" and (index == 0 or not (plain[index - 1].isalnum() or plain[index - 1] == "\\")):
                word = (
                    3
                    if plain[index : index + 3].casefold() == "and"
                    else 2
                    if plain[index : index + 2].casefold() == "or"
                    else 0
                )
                after = plain[index + word : index + word + 1]
                if word and not (after.isalnum() or after == "_"):
                    cuts.append((index, index + word))
                    index += word
                    continue
        index += 1
    if not cuts:
        item = _clean(text)
        return (item,) if item else ()
    items, start = [], 0
    for cut_start, cut_end in cuts:
        items.append(plain[start:cut_start])
        start = cut_end
    items.append(plain[start:])
    cleaned = tuple(item for item in (_clean(part) for part in items) if item)
    return cleaned if 0 < len(cleaned) <= MAX_ITEMS else (_clean(text),)


def _clean(item: str) -> str:
    """An item without math delimiters around it, spaces, a final full stop, a box around it."""
    out = item.strip()
    out = patterns.MATH_DELIMITER.sub(" ", out).strip().rstrip(".").strip()
    return _unwrap_box(out)


def expand_plus_minus(item: str) -> tuple[str, ...]:
    """An item with one plus-or-minus sign as its two values (``x = 1 \\pm \\sqrt{2}``: ``x = 1 +
    \\sqrt{2}`` and ``x = 1 - \\sqrt{2}``); the item alone otherwise (none, or several signs).

    Examples
    --------
    >>> expand_plus_minus("x = \\\\frac{-1 \\\\pm \\\\sqrt{13}}{4}")
    ('x = \\\\frac{-1 + \\\\sqrt{13}}{4}', 'x = \\\\frac{-1 - \\\\sqrt{13}}{4}')
    >>> expand_plus_minus("3 - x")
    ('3 - x',)
    """
    found = list(patterns.PLUS_MINUS.finditer(item))
    if len(found) != 1:
        return (item,)
    sign = found[0]
    first, second = ("+", "-") if sign.group() in ("\\pm", "\u00b1") else ("-", "+")
    head, tail = item[: sign.start()], item[sign.end() :]
    return (f"{head}{first}{tail}", f"{head}{second}{tail}")


def perfect_matching(n_pred: int, n_gold: int, equal: Callable[[int, int], bool]) -> list[tuple[int, int]] | None:
    """Pair every predicted item with a distinct gold item it equals, in any order; ``None`` when
    the counts differ or no such pairing exists. ``equal(i, j)`` is asked at most once a pair.

    Examples
    --------
    >>> perfect_matching(2, 2, lambda i, j: (i, j) in {(0, 1), (1, 0), (1, 1)})
    [(0, 1), (1, 0)]
    >>> perfect_matching(2, 2, lambda i, j: j == 0) is None
    True
    """
    if n_pred != n_gold:
        return None
    known: dict[tuple[int, int], bool] = {}

    def same(i: int, j: int) -> bool:
        if (i, j) not in known:
            known[(i, j)] = equal(i, j)
        return known[(i, j)]

    owner: list[int | None] = [None] * n_gold  # the predicted item paired with each gold item

    def place(i: int, seen: list[bool]) -> bool:  # an augmenting path (Kuhn's algorithm)
        for j in range(n_gold):
            if not seen[j] and same(i, j):
                seen[j] = True
                holder = owner[j]
                if holder is None or place(holder, seen):
                    owner[j] = i
                    return True
        return False

    for i in range(n_pred):
        if not place(i, [False] * n_gold):
            return None
    return sorted((i, j) for j, i in enumerate(owner) if i is not None)


def dedupe(items: Sequence[str]) -> tuple[str, ...]:
    """``items`` without repeats (compared as :func:`normalize_item` writes them), in order: a box
    given twice is one answer."""
    seen: set[str] = set()
    out = []
    for item in items:
        key = normalize_item(item)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return tuple(out)
