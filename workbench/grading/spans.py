"""Text-span answers scored by the official DROP rules: normalised bag-of-words F1, numbers as numbers.

The rules are those of DROP's official evaluation script (``drop_eval.py`` of
allenai/allennlp-reading-comprehension, which lm-evaluation-harness's ``drop`` task and
simple-evals follow), written here from their description and its tests:

* a span is cut into tokens at spaces and hyphens (``78-yard`` is ``78 yard``); each token is lower
  cased, loses its punctuation unless it is a number, is written as a float when it is a number
  (``78`` and ``78.0`` and ``7.8e1`` are one token), and articles (a, an, the) go;
* a span's bag is the set of its tokens; an answer with several spans has one bag per span;
* exact match: the two answers have the same normalised spans, as many of them;
* F1: the spans of the two answers are paired one to one so that the sum of their F1 is largest
  (the best assignment), a pair scoring 0 when the gold span holds numbers and the predicted span
  none of them; each gold span's F1 is averaged over the larger count of spans, rounded to 2 decimals.

A text answer lists its spans as :func:`split_spans` cuts them (a comma or semicolon and a space,
"and"): "Tom Brady and Peyton Manning" is two spans. :func:`span_scores` gives both
figures; :func:`workbench.grading.compare.answers_match` credits an answer when its exact match holds or
its F1 reaches the policy's pass mark (``MatchPolicy.span_f1``).
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass

from workbench.grading import patterns
from workbench.grading.status import GradeStatus, MatchReason
from workbench.grading.verdict import Verdict

__all__ = ["SpanScore", "span_scores", "compare_spans", "split_spans", "normalize_span", "DROP_PASS_F1", "MAX_SPANS"]

#: The F1 an answer needs to be credited under the reading-comprehension policy when its exact match
#: fails: two thirds, so "Mike Tolbert" for "Tolbert" (0.67) passes and half of a two-span gold
#: (0.5) does not.
DROP_PASS_F1 = 2 / 3

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_TOKEN_SPLIT = re.compile(r"[ -]")
_PUNCTUATION = frozenset(string.punctuation)


@dataclass(frozen=True, slots=True)
class SpanScore:
    """DROP's two figures for one answer against one gold answer.

    Attributes
    ----------
    exact
        Whether the normalised spans are the same (DROP's exact match, 1.0 or 0.0 there).
    f1
        DROP's F1, rounded to 2 decimals as the official script rounds it.
    pred_spans, gold_spans
        The normalised spans compared.
    """

    exact: bool
    f1: float
    pred_spans: tuple[str, ...]
    gold_spans: tuple[str, ...]


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _token(token: str) -> str:
    lowered = token.lower()
    if not _is_number(lowered):
        lowered = "".join(char for char in lowered if char not in _PUNCTUATION)
    if _is_number(lowered):
        lowered = str(float(lowered))
    return " ".join(_ARTICLES.sub(" ", lowered).split())


def normalize_span(span: str) -> str:
    """A span as DROP compares it: tokens at spaces and hyphens, lower case, no punctuation (numbers
    keep theirs), numbers as floats, no articles.

    Examples
    --------
    >>> normalize_span("S.K. Singh"), normalize_span("12"), normalize_span("the 78-yard TD")
    ('sk singh', '12.0', '78.0 yard td')
    """
    tokens = (_token(token) for token in _TOKEN_SPLIT.split(span))
    return " ".join(token for token in tokens if token.strip()).strip()


def _f1(pred: frozenset[str], gold: frozenset[str]) -> float:
    shared = len(pred & gold)
    precision = shared / len(pred) if pred else 1.0
    recall = shared / len(gold) if gold else 1.0
    return 0.0 if precision == 0.0 and recall == 0.0 else 2 * precision * recall / (precision + recall)


def _numbers_agree(gold: frozenset[str], pred: frozenset[str]) -> bool:
    """DROP pairs a gold span holding numbers only with a predicted span holding one of them."""
    gold_numbers = {token for token in gold if _is_number(token)}
    return not gold_numbers or bool(gold_numbers & {token for token in pred if _is_number(token)})


def _best_total(scores: list[list[float]]) -> float:
    """The largest total score of a one-to-one pairing of gold spans (rows) with predicted spans
    (columns), a span staying unpaired when the counts differ: the best assignment, found over the
    subsets of the shorter side (at most :data:`MAX_SPANS` spans a side)."""
    if not scores or not scores[0]:
        return 0.0
    if len(scores) > len(scores[0]):  # the shorter side indexes the subsets
        scores = [list(column) for column in zip(*scores, strict=True)]
    n_short = len(scores)
    best = {0: 0.0}
    for column in range(len(scores[0])):
        step = dict(best)
        for mask, total in best.items():
            for row in range(n_short):
                if not mask >> row & 1:
                    key, value = mask | 1 << row, total + scores[row][column]
                    if value > step.get(key, -1.0):
                        step[key] = value
        best = step
    return max(best.values())


#: Most spans an answer is cut into (a longer list is compared as one span).
MAX_SPANS = 12


def split_spans(answer: str | Sequence[str]) -> tuple[str, ...]:
    """The spans of an answer: a sequence as given; a text cut at a comma or semicolon followed by
    a space, and at the word "and" (``Tom Brady and Peyton Manning``, ``Green Bay, Chicago``); a
    number's thousands separator (``1,000``) and punctuation inside a span (``S.K. Singh``) stay.

    Examples
    --------
    >>> split_spans("Tom Brady and Peyton Manning"), split_spans("1,000 yards"), split_spans(["a, b"])
    (('Tom Brady', 'Peyton Manning'), ('1,000 yards',), ('a, b',))
    """
    if not isinstance(answer, str):
        return tuple(answer) or ("",)
    spans = tuple(span.strip() for span in patterns.SPAN_SEPARATOR.split(answer))
    return spans if len(spans) <= MAX_SPANS else (answer.strip(),)


def span_scores(pred: str | Sequence[str], gold: str | Sequence[str]) -> SpanScore:
    """DROP's exact match and F1 of ``pred`` against ``gold``, each cut into spans
    (:func:`split_spans`; a sequence is taken as its spans, as DROP's ``get_metrics`` takes a list).

    Examples
    --------
    >>> s = span_scores("Mike Tolbert", "Tolbert")
    >>> s.exact, s.f1
    (False, 0.67)
    >>> span_scores("Peyton Manning and Tom Brady", "Tom Brady, Peyton Manning").exact
    True
    >>> span_scores("John Elton", "Elton John").f1, span_scores("23 yards", "43 yards").f1
    (1.0, 0.0)
    """
    pred_spans = tuple(normalize_span(span) for span in split_spans(pred))
    gold_spans = tuple(normalize_span(span) for span in split_spans(gold))
    exact = set(pred_spans) == set(gold_spans) and len(pred_spans) == len(gold_spans)
    pred_bags = [frozenset(span.split()) for span in pred_spans]
    gold_bags = [frozenset(span.split()) for span in gold_spans]
    scores = [[_f1(p, g) if _numbers_agree(g, p) else 0.0 for p in pred_bags] for g in gold_bags]
    f1 = _best_total(scores) / max(len(pred_bags), len(gold_bags))
    return SpanScore(exact, round(f1, 2), pred_spans, gold_spans)


def compare_spans(pred: str, gold: str, pass_mark: float) -> Verdict:
    """Text spans under DROP's official rules: credited on an exact match of the normalised spans,
    or an F1 of at least ``pass_mark``."""
    score = span_scores(pred, gold)
    said = f"DROP exact match {int(score.exact)}, F1 {score.f1:.2f} (spans {list(score.pred_spans)} for {list(score.gold_spans)})"
    if score.exact:
        return Verdict(True, GradeStatus.OK, MatchReason.NORMALISED, None, None, said, "text")
    if score.f1 >= round(pass_mark, 2):
        return Verdict(
            True, GradeStatus.OK, MatchReason.SPAN_F1, None, None, f"{said}: at least {pass_mark:.2f}", "text"
        )
    return Verdict(False, GradeStatus.OK, MatchReason.WRONG_VALUE, None, None, f"{said}: below {pass_mark:.2f}", "text")
