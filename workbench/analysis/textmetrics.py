"""Text-overlap metrics on unfiltered outputs: BLEU and ROUGE-1/2/L, as
lm-evaluation-harness reports them for generative GSM8K-style tasks.

* BLEU: corpus BLEU of sacrebleu over all outputs against the gold solutions
  (lm-eval's ``bleu`` aggregation: exponential smoothing, ``intl`` tokenisation);
* ROUGE: the mean per-output F-measure of ``rouge-score`` for ``rouge1``, ``rouge2`` and
  ``rougeLsum`` (reported as ``rougeL``), with stemming off, times 100; computed here as
  ``rouge-score`` computes them, on its own tokens and with its F-measure (:func:`_rouge_n`,
  :func:`_rouge_lsum`), without importing its scorer (which imports nltk, hence scipy.stats: 2-3 s
  of CPU a process). ``rougeLsum`` is its summary-level LCS, computed faster: a pair of sentences without a common token is not tabled, and the table of the others
  is filled in one pass (the same table, hence the same LCS and the same scores; 80% of the
  time of ``rouge-score``'s, whose table calls ``max`` per cell).

Both packages are imported on first use, so grading that never asks for text metrics
does not pay for them. The scores of the last few sets of texts are kept (:data:`KEPT_CHARS`):
a batch of reports scores a run for its own pages, then again in its comparison with another.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["TextScores", "text_scores", "KEPT_CHARS"]

#: The scores of outputs and references that hold at most this many characters together are
#: kept for a later call on the same texts (the last :data:`_KEPT_SETS` such calls): ROUGE-Lsum
#: takes ~5 ms an output (6 s of CPU for GSM8K's 1,319), and it is a pure function of the texts.
KEPT_CHARS = 8_000_000
_KEPT_SETS = 8


@dataclass(frozen=True, slots=True)
class TextScores:
    """BLEU and ROUGE over a set of outputs, each on a 0-100 scale."""

    n: int
    bleu: float
    rouge1: float
    rouge2: float
    rougeL: float

    def as_dict(self) -> dict[str, float | int]:
        return {"n": self.n, "bleu": self.bleu, "rouge1": self.rouge1, "rouge2": self.rouge2, "rougeL": self.rougeL}


def text_scores(outputs: Sequence[str], references: Sequence[str]) -> TextScores:
    """Score unfiltered outputs against reference solutions.

    Parameters
    ----------
    outputs
        The model's raw outputs, one per item.
    references
        The gold solution texts, in the same order.

    Examples
    --------
    >>> s = text_scores(["She makes 9 * 2 = 18 dollars."], ["She makes 9 * 2 = 18 dollars."])
    >>> round(s.bleu), round(s.rouge1), round(s.rougeL)
    (100, 100, 100)
    >>> text_scores([], []).n
    0
    """
    if len(outputs) != len(references):
        raise ValueError(f"{len(outputs)} outputs but {len(references)} references; give one reference per output")
    if not outputs:
        return TextScores(0, 0.0, 0.0, 0.0, 0.0)
    if sum(map(len, outputs)) + sum(map(len, references)) <= KEPT_CHARS:
        return _kept_scores(tuple(outputs), tuple(references))
    return _scores(outputs, references)


@functools.lru_cache(maxsize=_KEPT_SETS)
def _kept_scores(outputs: tuple[str, ...], references: tuple[str, ...]) -> TextScores:
    return _scores(outputs, references)


def _scores(outputs: Sequence[str], references: Sequence[str]) -> TextScores:
    from rouge_score.tokenize import tokenize as rouge_tokenize

    tokenize = functools.partial(rouge_tokenize, stemmer=None)  # its scorer's, stemming off
    totals = {"rouge1": 0.0, "rouge2": 0.0, "rougeLsum": 0.0}
    for output, reference in zip(outputs, references, strict=True):
        ref_tokens, out_tokens = tokenize(reference), tokenize(output)
        totals["rouge1"] += _rouge_n(ref_tokens, out_tokens, 1)
        totals["rouge2"] += _rouge_n(ref_tokens, out_tokens, 2)
        totals["rougeLsum"] += _rouge_lsum(reference, output, tokenize)
    n = len(outputs)
    return TextScores(
        n=n,
        bleu=_corpus_bleu(outputs, references),
        rouge1=100.0 * totals["rouge1"] / n,
        rouge2=100.0 * totals["rouge2"] / n,
        rougeL=100.0 * totals["rougeLsum"] / n,
    )


def _ngrams(tokens: list[str], n: int) -> collections.Counter[tuple[str, ...]]:
    """How often each run of ``n`` tokens occurs in ``tokens`` (tuples, as sacrebleu and rouge-score key them).

    Examples
    --------
    >>> sorted(_ngrams(["a", "b", "a", "b"], 2).items())
    [(('a', 'b'), 2), (('b', 'a'), 1)]
    """
    return collections.Counter(zip(*(tokens[i:] for i in range(n)), strict=False))


def _corpus_bleu(outputs: Sequence[str], references: Sequence[str]) -> float:
    """``sacrebleu.corpus_bleu(outputs, [references], smooth_method="exp", tokenize="intl")``'s score
    (lm-eval's ``bleu``): its tokenizer and its formula (``BLEU.compute_bleu``) on the same
    statistics (tokens and matched n-grams of each order, summed over the outputs), the n-grams
    counted in C (:func:`_ngrams`) rather than sacrebleu's Python loop (2-3 times faster).

    Examples
    --------
    >>> import sacrebleu
    >>> outs, refs = ["She makes 9 * 2 = 18 dollars.", "x"], ["She makes 18 dollars a day.", "y z"]
    >>> _corpus_bleu(outs, refs) == sacrebleu.corpus_bleu(outs, [refs], smooth_method="exp", tokenize="intl").score
    True
    """
    from sacrebleu.metrics.bleu import BLEU

    bleu = BLEU(smooth_method="exp", smooth_value=0.0, force=False, lowercase=False, tokenize="intl")
    order = bleu.max_ngram_order
    correct, total = [0] * order, [0] * order
    sys_len = ref_len = 0
    for output, reference in zip(outputs, references, strict=True):
        hyp = bleu.tokenizer(output.rstrip()).split()
        ref = bleu.tokenizer(reference.rstrip()).split()
        sys_len += len(hyp)
        ref_len += len(ref)
        for n in range(1, order + 1):
            total[n - 1] += max(0, len(hyp) - n + 1)
            correct[n - 1] += (_ngrams(hyp, n) & _ngrams(ref, n)).total()
    score = BLEU.compute_bleu(
        correct, total, sys_len, ref_len, smooth_method="exp", smooth_value=0.0, max_ngram_order=order
    ).score
    return float(score)


def _rouge_n(target: list[str], prediction: list[str], n: int) -> float:
    """``rouge-score``'s ``rougeN`` F-measure of the tokens ``prediction`` against ``target``: the
    n-grams both hold (each counted at most as often as both do), over each side's n-grams.

    Examples
    --------
    >>> round(_rouge_n(["a", "b", "c"], ["a", "b", "x"], 2), 4), _rouge_n([], ["a"], 1)
    (0.5, 0.0)
    """
    from rouge_score.scoring import fmeasure

    grams = [_ngrams(t, n) for t in (target, prediction)]
    hits = (grams[0] & grams[1]).total()
    return float(fmeasure(hits / max(grams[1].total(), 1), hits / max(grams[0].total(), 1)))


def _lcs_indices(ref: list[str], can: list[str]) -> list[int]:
    """``rouge_score.rouge_scorer.lcs_ind``: the indices into ``ref`` of the LCS its backtracking
    reads from the LCS table (the same table, the same path); none without a common token. A row
    whose token is not in ``can`` is the row above, and a row equals the row above up to its
    token's first place in ``can`` (a row of the table never decreases): only the rest is filled."""
    at: dict[str, int] = {}  # each token's first place in ``can``
    for j, token in enumerate(can):
        at.setdefault(token, j)
    if not at.keys() & set(ref):
        return []  # the table is zeros: its backtracking finds nothing
    prev = [0] * (len(can) + 1)
    table = [prev]
    for token in ref:
        first = at.get(token)
        if first is None:  # no match in the row: it is the row above (rows never decrease)
            table.append(prev)
            continue
        row = prev[: first + 1]  # the same up to the first match
        left = row[-1]
        for j in range(first, len(can)):
            if can[j] == token:
                left = prev[j] + 1
            elif prev[j + 1] > left:
                left = prev[j + 1]
            row.append(left)
        table.append(row)
        prev = row
    i, j = len(ref), len(can)
    found = []
    while i > 0 and j > 0:
        if ref[i - 1] == can[j - 1]:
            found.append(i - 1)
            i -= 1
            j -= 1
        elif table[i][j - 1] > table[i - 1][j]:
            j -= 1
        else:
            i -= 1
    return found


def _rouge_lsum(reference: str, output: str, tokenize: Callable[[str], list[str]]) -> float:
    r"""``rouge-score``'s ``rougeLsum`` F-measure of ``output`` against ``reference``: sentences split
    on newlines (as lm-eval does), the union LCS of each reference sentence with the output's
    sentences, each token counted at most as often as both texts hold it (its ``_summary_level_lcs``).

    Examples
    --------
    >>> from rouge_score.tokenize import tokenize
    >>> round(_rouge_lsum("a b c\nd e", "a c\nd x e", lambda text: tokenize(text, None)), 4)
    0.8
    """
    from rouge_score.scoring import fmeasure

    ref_sents = [tokenize(s) for s in reference.split("\n") if s]
    can_sents = [tokenize(s) for s in output.split("\n") if s]
    m = sum(map(len, ref_sents))
    n = sum(map(len, can_sents))
    if not ref_sents or not can_sents or not n or not m:
        return 0.0
    counts_r = collections.Counter(token for s in ref_sents for token in s)
    counts_c = collections.Counter(token for s in can_sents for token in s)
    hits = 0
    for sent in ref_sents:
        union = sorted(set().union(*(_lcs_indices(sent, can) for can in can_sents)))
        for token in (sent[i] for i in union):
            if counts_c[token] > 0 and counts_r[token] > 0:
                hits += 1
                counts_c[token] -= 1
                counts_r[token] -= 1
    return float(fmeasure(hits / n, hits / m))
