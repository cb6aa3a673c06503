"""ROUGE-1, ROUGE-2 and ROUGE-Lsum computed by the workbench (:mod:`workbench.analysis.textmetrics`)
are ``rouge-score``'s, and its corpus BLEU sacrebleu's (lm-eval's call), to the last bit: on real
outputs and solutions, and on texts hypothesis makes of few tokens (many ties in the LCS table, so
the backtracking's choices show; punctuation and symbols that the ``intl`` tokenizer splits)."""

from __future__ import annotations

import json
from pathlib import Path

import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer
from rouge_score.tokenizers import DefaultTokenizer

from workbench.analysis.textmetrics import TextScores, _corpus_bleu, _rouge_lsum, _rouge_n, text_scores

REPO = Path(__file__).resolve().parents[3]
TORA = REPO / "tests/fixtures/predictions/gsm8k/tora-70b_first_20.jsonl"
RHO = REPO / "data/predictions/math/microsoft-rho-math-7b/test_cot_-1_seed0_t0.0_s0_e-1.jsonl"

_SCORER = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeLsum"], use_stemmer=False)
_TOKENIZE = DefaultTokenizer(use_stemmer=False).tokenize


def _theirs(reference: str, output: str) -> tuple[float, float, float]:
    scores = _SCORER.score(reference, output)
    return tuple(float(scores[key].fmeasure) for key in ("rouge1", "rouge2", "rougeLsum"))  # type: ignore[return-value]


def _ours(reference: str, output: str) -> tuple[float, float, float]:
    ref, out = _TOKENIZE(reference), _TOKENIZE(output)
    return _rouge_n(ref, out, 1), _rouge_n(ref, out, 2), _rouge_lsum(reference, output, _TOKENIZE)


def _pairs() -> list[tuple[str, str]]:
    """(reference, output) pairs of real rows: ToRA-70B's GSM8K outputs and Rho-Math's MATH outputs."""
    pairs = []
    for line in TORA.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        pairs.append((str(row.get("gt_cot") or row.get("solution") or row.get("answer")), str(row.get("code"))))
    for line in RHO.read_text(encoding="utf-8").splitlines()[:40]:
        row = json.loads(line)
        pairs.append((row["solution"], "\n".join(row["code"])))
    return pairs


def test_rouge_is_rouge_scores_on_real_outputs() -> None:
    pairs = _pairs()
    assert len(pairs) == 60
    for reference, output in pairs:
        assert _ours(reference, output) == _theirs(reference, output)
        assert _ours(output, reference) == _theirs(output, reference)
    assert len({_theirs(r, o)[2] for r, o in pairs}) > 30, "the pairs score differently: a real check"


_WORDS = st.sampled_from(["a", "b", "c", "d", "1", "2", "x", "Y", "$", "\n", "\n\n", " ", "ab"])
_TEXTS = st.lists(_WORDS, max_size=40).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(reference=_TEXTS, output=_TEXTS)
def test_rouge_is_rouge_scores_on_any_text(reference: str, output: str) -> None:
    assert _ours(reference, output) == _theirs(reference, output)


def test_text_scores_of_the_same_texts_are_kept() -> None:
    outputs, references = [o for _, o in _pairs()], [r for r, _ in _pairs()]
    first = text_scores(outputs, references)
    assert isinstance(first, TextScores) and first.n == 60 and first.rougeL > 0
    assert text_scores(list(outputs), list(references)) is first  # the same texts: kept, not scored again
    changed = text_scores([*outputs[:-1], "another answer"], references)
    assert changed is not first and changed.rougeL != first.rougeL


def _sacrebleu(outputs: list[str], references: list[str]) -> float:
    """lm-eval's ``bleu`` aggregation, as it calls sacrebleu."""
    return float(
        sacrebleu.corpus_bleu(
            outputs,
            [references],
            smooth_method="exp",
            smooth_value=0.0,
            force=False,
            lowercase=False,
            tokenize="intl",
            use_effective_order=False,
        ).score
    )


def test_bleu_is_sacrebleus_on_real_outputs() -> None:
    pairs = _pairs()
    outputs, references = [o for _, o in pairs], [r for r, _ in pairs]
    assert _corpus_bleu(outputs, references) == _sacrebleu(outputs, references) > 0
    assert _corpus_bleu(references, outputs) == _sacrebleu(references, outputs)
    for reference, output in pairs[:20]:  # one output alone: orders without a match (smoothing)
        assert _corpus_bleu([output], [reference]) == _sacrebleu([output], [reference])


_MARKED = st.lists(
    st.sampled_from(["a", "b", "1", "2", "3.5", ",", ".", "$", "%", "(x)", "a-b", "=", "\n", "€", "٣", "  "]),
    max_size=30,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(pairs=st.lists(st.tuples(_MARKED, _MARKED), min_size=1, max_size=4))
def test_bleu_is_sacrebleus_on_any_text(pairs: list[tuple[str, str]]) -> None:
    outputs, references = [o for o, _ in pairs], [r for _, r in pairs]
    assert _corpus_bleu(outputs, references) == _sacrebleu(outputs, references)
