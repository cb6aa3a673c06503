"""Hypothesis properties of the parsers added for grading fidelity 3 (issue 31): item lists, box lists,
choice letters, times and ratios, mixed numbers with percent, amounts with units, program variable
names, DROP's span normalisation and F1, and the one-to-one matching of items."""

from __future__ import annotations

import itertools
from fractions import Fraction

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from workbench.grading.choice import choice_letter
from workbench.grading.compare import answers_match, read_number
from workbench.grading.extract import extract_answer
from workbench.grading.items import expand_plus_minus, perfect_matching, split_items
from workbench.grading.policies import POLICIES, for_benchmark
from workbench.grading.spans import normalize_span, span_scores
from workbench.grading.symbolic import program_identifier

MATH = for_benchmark(POLICIES["flex"], "math").numbers
CASCADE = for_benchmark(POLICIES["cascade"], "gsm8k").numbers

_integers = st.integers(-999, 999).map(str)
_fractions = st.tuples(st.integers(-99, 99), st.integers(1, 99)).map(lambda t: f"\\frac{{{t[0]}}}{{{t[1]}}}")
_tuples = st.lists(st.integers(-99, 99), min_size=2, max_size=3).map(lambda xs: "(" + ", ".join(map(str, xs)) + ")")
_equations = st.tuples(st.sampled_from("xyzkn"), _integers).map(lambda t: f"{t[0]} = {t[1]}")
_items = st.one_of(_integers, _fractions, _tuples, _equations)
#: (a comma with no space before three digits is a thousands separator: "0,100" is one number)
_separators = st.sampled_from([", ", "; ", " and ", " or ", ", and ", " \\text{ and } ", " \\quad\\text{and}\\quad "])


# --------------------------------------------------------------------------- items
@settings(max_examples=200, deadline=None)
@given(items=st.lists(_items, min_size=1, max_size=6), separators=st.data())
def test_listed_items_are_read_back(items: list[str], separators: st.DataObject) -> None:
    """Items written with any separator are split back into the same items, in order: a tuple, a
    fraction, an equation stays whole."""
    text = items[0]
    for item in items[1:]:
        text += separators.draw(_separators) + item
    assert split_items(text) == tuple(items)


@settings(max_examples=200, deadline=None)
@given(items=st.lists(_items, min_size=1, max_size=6))
def test_splitting_an_item_again_changes_nothing(items: list[str]) -> None:
    for item in split_items(", ".join(items)):
        assert split_items(item) == (item,)


@settings(max_examples=100, deadline=None)
@given(numbers=st.lists(st.integers(-500, 500), min_size=2, max_size=6, unique=True), data=st.data())
def test_a_listed_answer_matches_its_gold_in_any_order(numbers: list[int], data: st.DataObject) -> None:
    """A list of numbers equals the same numbers in any order, and not a list with one changed."""
    shuffled = data.draw(st.permutations(numbers))
    gold, pred = ", ".join(map(str, numbers)), " and ".join(map(str, shuffled))
    assert answers_match(pred, gold, policy=CASCADE).correct
    changed = [*shuffled[:-1], shuffled[-1] + 1000]
    assert not answers_match(", ".join(map(str, changed)), gold, policy=CASCADE).correct


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(0, 5),
    m=st.integers(0, 5),
    edges=st.sets(st.tuples(st.integers(0, 4), st.integers(0, 4))),
)
def test_perfect_matching_agrees_with_every_pairing(n: int, m: int, edges: set[tuple[int, int]]) -> None:
    """Kuhn's augmenting paths find a pairing exactly when one of the n! pairings exists."""
    found = perfect_matching(n, m, lambda i, j: (i, j) in edges)
    exists = n == m and any(all((i, p[i]) in edges for i in range(n)) for p in itertools.permutations(range(m)))
    assert (found is not None) is exists
    if found is not None:
        assert sorted(j for _, j in found) == list(range(m)) and all(pair in edges for pair in found)


@settings(max_examples=100, deadline=None)
@given(head=st.sampled_from(["x = ", "", "y_1 = "]), a=_integers, b=st.integers(1, 99))
def test_plus_minus_stands_for_its_two_values(head: str, a: str, b: int) -> None:
    plus, minus = expand_plus_minus(f"{head}{a} \\pm \\sqrt{{{b}}}")
    assert (plus, minus) == (f"{head}{a} + \\sqrt{{{b}}}", f"{head}{a} - \\sqrt{{{b}}}")
    assert expand_plus_minus(plus) == (plus,)


# --------------------------------------------------------------------------- several boxes
_gaps = st.sampled_from([", ", " and ", "$ and $", " \\quad \\text{and} \\quad ", " \\text{ for part (b) and } ", ","])


@settings(max_examples=150, deadline=None)
@given(parts=st.lists(st.one_of(_integers, _tuples), min_size=2, max_size=5, unique=True), data=st.data())
def test_boxes_given_together_are_read_together(parts: list[str], data: st.DataObject) -> None:
    """Boxes joined by a short joining text are one answer, each box one item, in order."""
    text = "So the answers are $\\boxed{" + parts[0] + "}"
    for part in parts[1:]:
        text += data.draw(_gaps) + "\\boxed{" + part + "}"
    found = extract_answer(text + "$.")
    assert found.answer == ", ".join(parts)
    assert split_items(found.answer) == tuple(parts)


@settings(max_examples=100, deadline=None)
@given(first=_integers, last=_integers)
def test_a_statement_between_boxes_keeps_them_apart(first: str, last: str) -> None:
    text = f"The slope is $\\boxed{{{first}}}$, so the intercept of the line is $\\boxed{{{last}}}$."
    assert extract_answer(text).answer == last


# --------------------------------------------------------------------------- choice letters
_letters = st.sampled_from("ABCDE")
_openings = st.sampled_from(["{L}. Because {O} is not valid", "({L}) seems correct", "{L}) since {O} fails", "{L}"])
_standing = st.sampled_from(
    ["Because {L} is valid", "I believe it is ({L})", "so the best choice is {L}", "It must be {L}."]
)
_marked = st.sampled_from(["Answer: {L}", "The answer is ({L}).", "The final answer is {L}", "Answer is: {L}!"])


@settings(max_examples=200, deadline=None)
@given(letter=_letters, other=_letters, template=st.one_of(_openings, _standing, _marked))
def test_the_letter_that_stands_as_the_answer(letter: str, other: str, template: str) -> None:
    text = template.format(L=letter, O=other)
    assert extract_answer(text, expect="choice").answer == letter
    assert choice_letter(text) == letter


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="abcdefghijklmnopqrstuvwxyz FGHXYZ.,0123456789", max_size=60))
def test_no_capital_letter_a_to_e_no_choice(text: str) -> None:
    """Lower-case prose holds no choice letter (a lone lower-case letter is one only as a whole answer)."""
    assume(len(text.strip()) > 3)
    assert choice_letter(text) is None


# --------------------------------------------------------------------------- times and ratios
_parts = st.lists(st.integers(0, 59), min_size=2, max_size=3)


@settings(max_examples=200, deadline=None)
@given(parts=_parts, width=st.sampled_from([1, 2]), spaced=st.booleans())
def test_a_time_or_ratio_equals_itself_part_by_part(parts: list[int], width: int, spaced: bool) -> None:
    written = ":".join(str(p).zfill(width) for p in parts)
    as_gold = (" : " if spaced else ":").join(map(str, parts))
    assert answers_match(written, as_gold, policy=MATH).correct
    assert extract_answer(f"It starts at {written}").answer == written


@settings(max_examples=200, deadline=None)
@given(a=st.integers(1, 99), b=st.integers(1, 99))
def test_a_colon_is_never_a_division(a: int, b: int) -> None:
    quotient = Fraction(a, b)
    for gold in (f"{a}/{b}", f"\\frac{{{a}}}{{{b}}}", str(float(quotient))):
        verdict = answers_match(f"{a}:{b}", gold, policy=MATH)
        assert (verdict.correct, verdict.reason.value) == (False, "wrong_value")


# --------------------------------------------------------------------------- mixed numbers, units
_suffixes = st.sampled_from(["%", " %", "percent", " percent", "percentage", " percentage", "pct", " pct"])


@settings(max_examples=200, deadline=None)
@given(whole=st.integers(0, 99_999), bottom=st.integers(2, 99), data=st.data(), suffix=_suffixes)
def test_a_mixed_number_with_percent_is_read_whole(whole: int, bottom: int, data: st.DataObject, suffix: str) -> None:
    """``w n/d%`` is (w + n/d)/100, as written and as extracted; a whole part with spaced thousands too."""
    top = data.draw(st.integers(1, bottom - 1))
    written = f"{whole:,}".replace(",", " ") + f" {top}/{bottom}"
    number = read_number(written + suffix)
    assert number is not None and number.is_percent
    assert abs(number.value - (whole + top / bottom)) <= 1e-9 * max(1.0, whole)
    assert extract_answer(written + suffix).answer == written + suffix


@settings(max_examples=200, deadline=None)
@given(
    amounts=st.lists(st.integers(1, 9999), min_size=1, max_size=3),
    unit=st.sampled_from(["ml", "cm^2", "inches^2", "kg", "square feet", "km/h"]),
)
def test_amounts_with_units_are_their_numbers(amounts: list[int], unit: str) -> None:
    text = " and ".join(f"{a} {unit}" for a in amounts)
    gold = ", ".join(map(str, reversed(amounts)))
    found = extract_answer(text)
    assert found.answer is not None
    assert answers_match(found.answer, gold, policy=CASCADE).correct
    assert extract_answer(f"The total is {amounts[-1]} {unit}.").answer == str(amounts[-1])


# --------------------------------------------------------------------------- program variable names
_words = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=2, max_size=8)


@settings(max_examples=200, deadline=None)
@given(words=st.lists(_words, min_size=2, max_size=4), returned=st.booleans())
def test_a_snake_case_name_is_a_variable(words: list[str], returned: bool) -> None:
    name = "_".join(words)
    assert program_identifier(("return " if returned else "") + name) == name


@settings(max_examples=100, deadline=None)
@given(letter=st.sampled_from("abxyzkn"), index=st.integers(0, 99))
def test_a_subscripted_letter_is_no_variable_name(letter: str, index: int) -> None:
    assert program_identifier(f"{letter}_{index}") is None
    assert program_identifier(f"{letter}_{{{index}}}") is None


# --------------------------------------------------------------------------- DROP spans
_span_text = st.text(alphabet="abcdefghij ABC-.,'0123456789", max_size=30)


@settings(max_examples=300, deadline=None)
@given(span=_span_text)
def test_drop_normalisation_is_idempotent(span: str) -> None:
    once = normalize_span(span)
    assert normalize_span(once) == once


@settings(max_examples=200, deadline=None)
@given(pred=st.lists(_span_text, min_size=1, max_size=4), gold=st.lists(_span_text, min_size=1, max_size=4))
def test_drop_scores(pred: list[str], gold: list[str]) -> None:
    """F1 lies in [0, 1], an exact match of distinct spans with words scores 1 (DROP's exact match
    compares the sets of spans and their counts, so repeated spans may score less), and an answer
    equals itself."""
    score = span_scores(pred, gold)
    assert 0.0 <= score.f1 <= 1.0
    distinct = len(set(score.gold_spans)) == len(score.gold_spans) == len(set(score.pred_spans))
    if score.exact and distinct and all(score.gold_spans):
        assert score.f1 == 1.0
    assert span_scores(gold, gold).exact
    if len(pred) == len(gold) == 1:  # one span a side: F1 is symmetric
        assert span_scores(gold, pred).f1 == score.f1
