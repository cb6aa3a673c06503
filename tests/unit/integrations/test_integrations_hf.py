"""``make_compute_metrics`` with a real ``transformers`` fast tokenizer, built here from a small
vocabulary (no download), on real ConvFinQA answers and real model outputs.

Labels are the dev answers as ConvFinQA displays them (``conv_answers`` of
``tests/fixtures/convfinqa/dev_small.json``); outputs are the reasoning and answers of the
zarifaziz claude-sonnet-4-6 run on the same turns (``tests/fixtures/predictions/zarifaziz_dev_small.jsonl``),
some wrapped in ``<|begin_of_solution|> ... <|end_of_solution|>`` as a reasoning model writes them.
"""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

import numpy as np  # noqa: E402
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers  # noqa: E402
from transformers import EvalPrediction, PreTrainedTokenizerFast  # noqa: E402

from workbench.errors import UsageError  # noqa: E402
from workbench.integrations.hf import IGNORE_INDEX, make_compute_metrics, score_pairs  # noqa: E402
from workbench.io.gold import load_gold  # noqa: E402
from workbench.io.predictions import load_predictions  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
BEGIN, END = "<|begin_of_solution|>", "<|end_of_solution|>"


def _gold_answers() -> dict[tuple[str, int], str]:
    data = json.loads((FIXTURES / "convfinqa" / "dev_small.json").read_text(encoding="utf-8"))
    return {(r["id"], t): a for r in data["dev"] for t, a in enumerate(r["dialogue"]["conv_answers"])}


def _model_outputs() -> dict[tuple[str, int], dict[str, str]]:
    lines = (FIXTURES / "predictions" / "zarifaziz_dev_small.jsonl").read_text(encoding="utf-8").splitlines()
    return {(o["record_id"], o["turn_idx"]): o for o in map(json.loads, lines)}


GOLD = _gold_answers()
OUTPUTS = _model_outputs()


def _output(key: tuple[str, int], *, tagged: bool) -> str:
    """The model's reasoning, followed by its answer in a solution block when ``tagged``."""
    row = OUTPUTS[key]
    if not tagged:
        return row["predicted_reasoning"]
    return f"{row['predicted_reasoning']}\n{BEGIN} {row['predicted_answer']} {END}"


# (key, tagged): the 'right' batch, all correct under the cascade, half of them as exact strings
RIGHT = [
    (("Double_HII/2017/page_104.pdf", 3), True),  # 37.5 for "37.5%": percent reading (the 14.1 / 14.1% case)
    (("Double_MRO/2015/page_18.pdf", 0), True),  # 257 for "257": exact
    (("Single_MRO/2007/page_134.pdf-1", 2), False),  # no tags: the last number, 35.80 for "35.80"
    (("Single_IPG/2009/page_85.pdf-3", 0), True),  # 0.1082 for "0.1083": relative tolerance
]
# the 'wrong' batch
WRONG = [
    (("Single_CDNS/2018/page_31.pdf-1", 2), True),  # 18770 for the display answer "1877": scale
    (("Double_RSG/2016/page_144.pdf", 2), True),  # 37.8 for "2.7": wrong value
    (("Single_UNP/2008/page_77.pdf-2", 4), False),  # no tags, ends "-9.709%." for "10%": wrong value
]


def _texts(batch: list[tuple[tuple[str, int], bool]]) -> tuple[list[str], list[str]]:
    return [_output(k, tagged=t) for k, t in batch], [GOLD[k] for k, _ in batch]


@pytest.fixture(scope="module")
def tokenizer() -> PreTrainedTokenizerFast:
    """A character-level WordLevel tokenizer whose vocabulary covers the fixture texts, with
    the solution tags as added (not special) tokens, so decoding gives the text back."""
    texts = [o["predicted_reasoning"] for o in OUTPUTS.values()] + list(GOLD.values())
    chars = sorted(set(string.printable) | set("".join(texts)))
    vocab = {"<pad>": 0, "<unk>": 1, "</s>": 2}
    for ch in chars:
        vocab.setdefault(ch, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    tok.add_tokens([AddedToken(BEGIN, normalized=False), AddedToken(END, normalized=False)])
    tok.add_special_tokens(["<pad>", "</s>"])
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")


def _padded(rows: list[list[int]], value: int) -> np.ndarray:
    width = max(len(r) for r in rows) + 3
    return np.array([r + [value] * (width - len(r)) for r in rows], dtype=np.int64)


def _eval_preds(tokenizer: PreTrainedTokenizerFast, outputs: list[str], labels: list[str]) -> EvalPrediction:
    """As ``Seq2SeqTrainer`` hands them over: generations end in EOS then pad, and are padded with
    -100 across batches; labels end in EOS and are padded with -100 by ``DataCollatorForSeq2Seq``."""
    eos, pad = tokenizer.eos_token_id, tokenizer.pad_token_id
    generated = [[pad, *tokenizer(o)["input_ids"], eos, pad] for o in outputs]
    label_ids = [[*tokenizer(g)["input_ids"], eos] for g in labels]
    return EvalPrediction(predictions=_padded(generated, IGNORE_INDEX), label_ids=_padded(label_ids, IGNORE_INDEX))


def test_tokenizer_round_trips_the_outputs(tokenizer: PreTrainedTokenizerFast) -> None:
    outputs, _ = _texts(RIGHT + WRONG)
    assert "×" in outputs[4]  # real model text, not ASCII only
    for text in outputs:
        assert tokenizer.decode(tokenizer(text)["input_ids"], skip_special_tokens=True) == text


def test_right_batch_exact_half_numeric_all(tokenizer: PreTrainedTokenizerFast) -> None:
    outputs, labels = _texts(RIGHT)
    assert labels == ["37.5%", "257", "35.80", "0.1083"]
    metrics = make_compute_metrics(tokenizer)(_eval_preds(tokenizer, outputs, labels))
    assert metrics == {
        "n": 4,
        "exact_match": 0.5,
        "numeric_match": 1.0,
        "reason/exact": 2,
        "reason/percent_reading": 1,
        "reason/rel_tolerance": 1,
        "reason_rate/exact": 0.5,
        "reason_rate/percent_reading": 0.25,
        "reason_rate/rel_tolerance": 0.25,
    }


def test_wrong_batch_reasons_flex_and_strict(tokenizer: PreTrainedTokenizerFast) -> None:
    outputs, labels = _texts(WRONG)
    outputs.append("")  # a generation of EOS only: no answer
    labels.append(GOLD[("Single_UNP/2014/page_35.pdf-3", 4)])  # "11%"
    eval_preds = _eval_preds(tokenizer, outputs, labels)
    flex = make_compute_metrics(tokenizer)(eval_preds)
    assert flex == {
        "n": 4,
        "exact_match": 0.0,
        "numeric_match": 0.0,
        "reason/no_answer": 1,
        "reason/scale": 1,
        "reason/wrong_value": 2,
        "reason_rate/no_answer": 0.25,
        "reason_rate/scale": 0.25,
        "reason_rate/wrong_value": 0.5,
    }
    # strict: the untagged output has no explicit answer marker
    strict = make_compute_metrics(tokenizer, policy="strict")(eval_preds)
    assert {k: v for k, v in strict.items() if k.startswith("reason/")} == {
        "reason/no_answer": 2,
        "reason/scale": 1,
        "reason/wrong_value": 1,
    }


def test_logits_tuples_and_text_agree(tokenizer: PreTrainedTokenizerFast) -> None:
    outputs, labels = _texts(RIGHT + WRONG)
    eval_preds = _eval_preds(tokenizer, outputs, labels)
    compute = make_compute_metrics(tokenizer)
    expected = score_pairs(outputs, labels)
    assert expected["n"] == 7 and expected["exact_match"] == 2 / 7 and expected["numeric_match"] == 4 / 7
    assert compute(eval_preds) == expected
    assert compute((eval_preds.predictions, eval_preds.label_ids)) == expected
    # logits (batch, length, vocab): argmax gives the ids back; -100 positions become pad
    ids = np.where(eval_preds.predictions == IGNORE_INDEX, tokenizer.pad_token_id, eval_preds.predictions)
    logits = np.eye(len(tokenizer), dtype=np.float32)[ids]
    assert compute(EvalPrediction(predictions=logits, label_ids=eval_preds.label_ids)) == expected
    assert compute(((logits, None), eval_preds.label_ids)) == expected  # model outputs: logits first


def test_usage_errors(tokenizer: PreTrainedTokenizerFast) -> None:
    compute = make_compute_metrics(tokenizer)
    with pytest.raises(UsageError, match="label_ids"):
        compute((np.zeros((1, 2), dtype=np.int64), None))
    with pytest.raises(UsageError, match="shape"):
        compute((np.zeros(3, dtype=np.int64), np.zeros((1, 2), dtype=np.int64)))


def test_pairs_file_opens_in_the_workbench(tokenizer: PreTrainedTokenizerFast, tmp_path: Path) -> None:
    batch = RIGHT + WRONG
    outputs, labels = _texts(batch)
    keys = [k for k, _ in batch]
    pairs = tmp_path / "eval_pairs.jsonl"
    compute = make_compute_metrics(tokenizer, pairs_path=pairs, system="t5-convfinqa", keys=keys)
    metrics = compute(_eval_preds(tokenizer, outputs, labels))

    preds = load_predictions(pairs)
    assert preds.height == 7
    first = preds.row(0, named=True)
    assert (first["record_id"], first["turn"], first["system"]) == ("Double_HII/2017/page_104.pdf", 3, "t5-convfinqa")
    assert (first["predicted_answer"], first["gold_answer"], first["upstream_correct"]) == ("37.5", "37.5%", True)
    assert preds["raw_output"].to_list() == outputs
    assert preds["gold_answer"].to_list() == labels
    assert preds["upstream_correct"].sum() / preds.height == metrics["numeric_match"]

    # graded by the workbench against the dataset, the display answer "1877" turns out to be a
    # mislabel of the executed 18770: the same prediction is right there
    from workbench.pipeline.grade import grade_predictions

    run = grade_predictions(
        load_gold(FIXTURES / "convfinqa" / "dev_small.json"),
        preds,
        policy="flex",
        also=["flex"],
        checks=False,
        workers=1,
    )
    graded = run.turns.filter(run.turns["status"] != "no_prediction")
    assert graded.height == 7
    verdicts = {(r["record_id"], r["turn"]): (r["correct"], r["reason"]) for r in graded.iter_rows(named=True)}
    assert verdicts[("Single_CDNS/2018/page_31.pdf-1", 2)] == (True, "exact")
    assert verdicts[("Double_HII/2017/page_104.pdf", 3)] == (True, "percent_reading")
