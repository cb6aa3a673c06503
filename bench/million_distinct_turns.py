"""Grading and slicing a million turns that are (almost) all distinct, built from real outputs.

``bench/million_turns.py`` replicates the two ConvFinQA dev runs 336 times, so grading sees only
2,980 distinct inputs and measures joins and I/O. A million real outputs (100 checkpoints x 10k
samples) are nearly all distinct; this benchmark builds such a set, deterministically (seeded),
from the bundled outputs, and times what ``workbench grade`` and the overview report do with it.

What is built (outside the timed part)

* **GSM8K, 90% of the turns.** The real outputs of ToRA (70b, code-34b), Program-of-Thoughts (two
  runs) and OpenAI's GPT-3 solutions (four systems), linked to the GSM8K test questions, are the
  templates. The gold set holds ``copies`` copies of the 1,319 questions (record ids ``q#k``); eight
  systems (``ckpt-0`` ... ``ckpt-7``, checkpoints) answer every copy, each with one of the real
  outputs of that question. Per record the gold is changed (90%: the real gold times a seeded
  factor between 1/4 and 8, rounded like the real one), and per turn the final answer follows it:
  right (70%) or wrong (off by a few units, a factor of 10, a percent reading, another number).
  A text output keeps its reasoning (all but its last line) and gets a new last line: a marker
  (``The answer is``, ``####``, ``\\boxed{}``, ``$\\boxed{}$``, ``Answer:``, ``So the final answer
  is``, or none, for the last-number rule), the answer in one of several spellings (``1200``,
  ``1,200``, ``$1,200``, ``1200.00``, ``12%``, ``12 percent``, ``$1.2 million``, ``1.2 thousand``)
  and varied whitespace. A program output (PoT) keeps its program; its executed answer
  (``predicted_answer``) takes the new value, plainly spelled.
* **ConvFinQA, 10% of the turns.** The dev gold set and both claude-sonnet-4-6 dev runs replicated
  (record and document ids ``#k``, as ``million_turns.py`` does; the gold, its programs and tables
  stay real), each predicted answer re-spelled (``12%``, ``12 percent``, ``0.12`` for a percent
  answer; ``1,200``, ``$1,200``, ``$1.2 million`` for an amount), rounded differently when right
  (60%), moved when wrong (70% a relative error up to 50%, else x100, /100 or the sign).

``distinct_inputs`` counts distinct (answer, gold, question) triples, the answer being the pair
(``predicted_answer``, ``raw_output``), by 64-bit hashes (the seeded build gives about 92% of the
turns). ``--turns`` smaller than 1,000,000 runs a smaller set of the same shape and says so;
nothing is extrapolated.

Timed

In a fresh process, the built inputs are read from files (Parquet, in a temporary folder; the
predictions as scans that ``grade_predictions`` reads itself, without the gold they carry); then ``grade_predictions`` (as ``workbench grade`` calls it, one call
per benchmark, default workers) and ``slice_accuracy(turns, intervals=False)`` (the slices of the
overview report) on each part; ``grade_plus_slices_s`` is their sum. Policies: the benchmark's main
policy plus every named policy except ``math-verify``. Math-Verify costs about 0.5 ms a pair in its
worker (``math_verify_pairs`` measures it): on a million distinct outputs it alone would take
minutes, so it would measure Math-Verify, not the workbench; the other policies (``exact-string``,
``official``, ``cascade``, ``strict``, ``flex``, ``symbolic``) are what a run is compared and
triaged by. ``--policies main`` grades the main policy only. ``peak_rss_mb`` is the grading
process's peak (``ru_maxrss``: reading the inputs, grading, slicing), ``rss_mb_inputs_read``
its RSS once a part's inputs are read (the larger part's), ``peak_rss_mb_build`` the building process's (not timed, not
the target's), ``peak_rss_mb_freed_at_once`` the grading process's peak in a second run whose
allocator gives freed memory back at once (:data:`FREED_AT_ONCE`; slower, not timed): what it
holds at once, the rest of ``peak_rss_mb`` being freed pages polars' allocator keeps a second or so. ``fast_path_rows``: the distinct inputs the fast path (``workbench.pipeline.fastpath``) decides,
as ``GradedRun.fast_path_rows`` reports it, else as ``fastpath.decide`` counts them on the same
inputs after the timed part; absent without a fast path.

The floor (issue 35, point 4), in the same grading process after the peak is read: the same
Parquet inputs read again, every gold turn given a row per system, decided by exact string equality
after stripping, and sliced the same way (``slice_accuracy(intervals=False)``; the gold turns' slice
labels are read with the gold, ``graders_disagree`` is False), in polars: ``floor_s`` (its read,
decide and slices parts per benchmark) and ``ratio_over_floor`` (``grade_plus_slices_s / floor_s``),
a figure that carries from one machine to another where the absolute seconds do not.

Targets (issue 35): grading and slicing in at most 8 s, peak at most 1,536 MB (issue 21: 10 s,
2 GB), at least 900,000 distinct inputs. Run with ``make bench`` or ``python bench/million_distinct_turns.py [--turns N]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from workbench.analysis.slices import slice_accuracy  # noqa: E402
from workbench.grading.policies import DEFAULT_GRADING_POLICY, POLICIES, for_benchmark, get_policy  # noqa: E402
from workbench.io.gold import GoldDataset, load_gold  # noqa: E402
from workbench.io.predictions import load_predictions  # noqa: E402
from workbench.pipeline.grade import grade_predictions  # noqa: E402
from workbench.schema import PREDICTIONS, keys_as_keys, keys_as_text  # noqa: E402

TURNS = 1_000_000
SEED = 21
GSM8K_SHARE = 0.9
CHECKPOINTS = 8
TARGET_S = 8.0
TARGET_RSS_MB = 1536
CHUNK_ROWS = 100_000

GSM8K_OUTPUTS = (
    "data/predictions/gsm8k/tora/tora-70b.jsonl",
    "data/predictions/gsm8k/tora/tora-code-34b.jsonl",
    "data/predictions/gsm8k/program-of-thoughts/gsm8K_s0_e-1_11_17_10_20.jsonl",
    "data/predictions/gsm8k/program-of-thoughts/gsm8K_zs_s0_e-1_11_19_09_55.jsonl",
    "data/predictions/gsm8k/openai-gpt3/example_model_solutions.jsonl",
)
RUNS = "data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6"
CONVFINQA_OUTPUTS = {
    "a": f"{RUNS}/2026-05-04T06-35-00Z/predictions.jsonl",
    "b": f"{RUNS}/2026-05-04T12-48-44Z/predictions.jsonl",
}

#: Final-line markers: (before the answer, after it). The empty one leaves the last-number rule.
MARKERS = (
    ("The answer is ", "."),
    ("#### ", ""),
    ("\\boxed{", "}"),
    ("The final answer is $\\boxed{", "}$."),
    ("Answer: ", ""),
    ("So the final answer is ", "."),
    ("Therefore the total comes to ", " in the end."),
    ("", ""),
)
SEPARATORS = ("\n", "\n\n", " ")
TAILS = ("", "\n", "  ", "\n\n")
#: Spellings of a number: weights for a GSM8K answer (see ``_spell``).
SPELLINGS = ("plain", "comma", "dollar", "decimal", "percent", "percent_word", "scale")
GSM8K_SPELLING_WEIGHTS = (0.40, 0.15, 0.15, 0.10, 0.07, 0.03, 0.10)


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def rss_mb() -> float:
    """This process's resident memory now (MB)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


def _number(x: float, decimals: int | None = None) -> str:
    """``x`` as a plain number: an integer without a point, else at most ``decimals`` places."""
    if decimals is None:
        decimals = 0 if float(x).is_integer() else 2
    text = f"{x:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _spell(x: float, how: str) -> str:
    """One realistic spelling of ``x``.

    Examples
    --------
    >>> [_spell(1200, h) for h in SPELLINGS]
    ['1200', '1,200', '$1,200', '1200.00', '1200%', '1200 percent', '1.2 thousand']
    >>> _spell(2_500_000, "scale"), _spell(0.125, "comma")
    ('$2.5 million', '0.12')
    """
    plain = _number(x)
    if how == "comma":
        return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.2f}".rstrip("0").rstrip(".")
    if how == "dollar":
        return "$" + _spell(x, "comma") if x >= 0 else "-$" + _spell(-x, "comma")
    if how == "decimal":
        return f"{x:.2f}"
    if how == "percent":
        return plain + "%"
    if how == "percent_word":
        return plain + " percent"
    if how == "scale":
        if abs(x) >= 1e6:
            return f"${_number(x / 1e6, 3)} million"
        if abs(x) >= 1e3:
            return f"{_number(x / 1e3, 3)} thousand"
    return plain


# ---------------------------------------------------------------------------------------------
# GSM8K
# ---------------------------------------------------------------------------------------------


def _gsm8k_templates(gold: GoldDataset) -> pl.DataFrame:
    """The real outputs linked to their question: ``q`` (gold row), ``body`` (a text output without
    its last line), ``program`` (a program output, or null)."""
    questions = gold.turns.select(pl.col("question"), pl.int_range(pl.len(), dtype=pl.Int64).alias("q"))
    frames = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # prompt-only lines skipped: said by the reader, not needed here
        for path in GSM8K_OUTPUTS:
            frames.append(
                load_predictions(ROOT / path, system="x").select("question", "predicted_answer", "raw_output")
            )
    outputs = pl.concat(frames).join(questions, on="question", how="inner").drop_nulls("raw_output")
    is_program = pl.col("predicted_answer").is_not_null()
    return (
        outputs.with_columns(
            pl.when(is_program).then(pl.col("raw_output")).alias("program"),
            pl.when(~is_program)
            .then(pl.col("raw_output").str.strip_chars_end().str.replace(r"\n[^\n]*$", ""))
            .alias("body"),
        )
        .select("q", "body", "program")
        .sort("q", maintain_order=True)
    )


def build_gsm8k(copies: int, rng: np.random.Generator) -> tuple[GoldDataset, pl.DataFrame]:
    gold = load_gold(ROOT / "data/gsm8k/test.jsonl")
    templates = _gsm8k_templates(gold)
    n_q = gold.turns.height
    counts = templates.group_by("q").len().sort("q")
    have = np.zeros(n_q, dtype=np.int64)
    have[counts["q"].to_numpy()] = counts["len"].to_numpy()
    start = np.concatenate([[0], np.cumsum(have)[:-1]])

    # the gold: copies of every question, most with a new gold value
    real = gold.turns["gold_value"].to_numpy()
    records = n_q * copies
    base = np.tile(real, copies)
    factor = np.exp(rng.uniform(math.log(0.25), math.log(8.0), records))
    integer = np.equal(np.mod(base, 1), 0)
    moved = np.where(integer, np.maximum(1, np.round(base * factor)), np.round(base * factor, 2))
    keep = rng.random(records) < 0.1
    gold_value = np.where(keep, base, moved)
    gold_text = [_number(v) for v in gold_value.tolist()]
    rec_q = np.tile(np.arange(n_q), copies)
    rec_k = np.repeat(np.arange(copies), n_q)
    gold_turns = (
        pl.DataFrame({"_q": rec_q, "_k": rec_k, "_gold": gold_text, "_gold_value": gold_value})
        .join(gold.turns.with_row_index("_q").with_columns(pl.col("_q").cast(pl.Int64)), on="_q", how="left")
        .with_columns(
            pl.format("{}#{}", pl.col("record_id"), pl.col("_k")).alias("record_id"),
            pl.col("_gold").alias("gold_answer"),
            pl.col("_gold").alias("gold_executed"),
            pl.col("_gold_value").alias("gold_value"),
            pl.col("gold_solution").str.replace(r"####[^\n]*$", "").add(pl.format("#### {}", pl.col("_gold"))),
        )
        .select(gold.turns.columns)
    )
    big_gold = GoldDataset(
        turns=gold_turns, documents=gold.documents, path=gold.path, layout=gold.layout, benchmark=gold.benchmark
    )

    # the turns: every checkpoint answers every record with one of that question's real outputs
    rows = records * CHECKPOINTS
    row_rec = np.repeat(np.arange(records), CHECKPOINTS)
    row_sys = np.tile(np.arange(CHECKPOINTS), records)
    q = rec_q[row_rec]
    pick = start[q] + (rec_k[row_rec] * CHECKPOINTS + row_sys + rng.integers(0, 1 << 16, rows)) % np.maximum(have[q], 1)
    g = gold_value[row_rec]
    right = rng.random(rows) < 0.7
    how_wrong = rng.integers(0, 5, rows)
    delta = rng.integers(1, 10, rows) * rng.choice([-1, 1], rows)
    wrong = np.select(
        [how_wrong == 0, how_wrong == 1, how_wrong == 2, how_wrong == 3],
        [g + delta, g * 10, np.round(g / 100, 4), np.round(g * rng.uniform(0.3, 3.0, rows))],
        default=g + 0.5,
    )
    answer = np.where(right, g, wrong)
    spelling = rng.choice(len(SPELLINGS), rows, p=GSM8K_SPELLING_WEIGHTS)
    answer_text = [_spell(x, SPELLINGS[s]) for x, s in zip(answer.tolist(), spelling.tolist(), strict=True)]
    del wrong, delta, how_wrong, right, g, spelling
    plain_text = pl.Series("_plain", answer_text)
    del answer_text
    marker = rng.integers(0, len(MARKERS), rows)
    frame = pl.DataFrame(
        {
            "_rec": row_rec,
            "system": pl.Series(row_sys).cast(pl.String),
            "_t": pick,
            "_before": pl.Series([m[0] for m in MARKERS])[marker],
            "_after": pl.Series([m[1] for m in MARKERS])[marker],
            "_sep": pl.Series(SEPARATORS)[rng.integers(0, len(SEPARATORS), rows)],
            "_tail": pl.Series(TAILS)[rng.integers(0, len(TAILS), rows)],
            "_plain": plain_text,
            "_value": answer,
        }
    )
    del row_rec, row_sys, pick, marker, plain_text, answer
    with_t = templates.with_row_index("_t").with_columns(pl.col("_t").cast(pl.Int64))
    with_rec = (
        gold_turns.select("record_id", "question").with_row_index("_rec").with_columns(pl.col("_rec").cast(pl.Int64))
    )
    chunks = []
    for offset in range(0, rows, CHUNK_ROWS):  # in chunks: the joins' transient copies stay small
        part = frame.slice(offset, CHUNK_ROWS).join(with_t, on="_t", how="left").join(with_rec, on="_rec", how="left")
        chunks.append(
            part.select(
                "record_id",
                pl.lit(0, dtype=pl.Int32).alias("turn"),
                pl.format("ckpt-{}", pl.col("system")).alias("system"),
                # a program output's answer is what the program printed: the number, plainly
                pl.when(pl.col("program").is_not_null())
                .then(pl.concat_str(pl.col("_value").round(4).cast(pl.String).str.replace(r"\.0$", ""), "_tail"))
                .alias("predicted_answer"),
                pl.lit(None, dtype=pl.String).alias("predicted_program"),
                pl.coalesce(
                    "program",
                    pl.concat_str("body", "_sep", "_before", "_plain", "_after", "_tail", ignore_nulls=True),
                ).alias("raw_output"),
                "question",
            )
        )
        del part
    del frame
    preds = pl.concat(chunks)
    del chunks
    missing = [pl.lit(None, dtype=dtype).alias(c) for c, dtype in PREDICTIONS.items() if c not in preds.columns]
    return big_gold, preds.with_columns(missing).select(list(PREDICTIONS))


# ---------------------------------------------------------------------------------------------
# ConvFinQA
# ---------------------------------------------------------------------------------------------


def _replicate(frame: pl.DataFrame, columns: tuple[str, ...], copies: int) -> pl.DataFrame:
    return pl.concat(
        [frame.with_columns(pl.format("{}#{}", pl.col(c), pl.lit(k)).alias(c) for c in columns) for k in range(copies)]
    )


def build_convfinqa(copies: int, rng: np.random.Generator) -> tuple[GoldDataset, list[pl.DataFrame]]:
    gold = load_gold(ROOT / "data/convfinqa/dev.json")
    big = GoldDataset(
        turns=_replicate(gold.turns, ("record_id", "doc_id"), copies),
        documents=_replicate(gold.documents, ("doc_id",), copies),
        path=gold.path,
        layout=gold.layout,
        benchmark=gold.benchmark,
    )
    preds = []
    for name, path in CONVFINQA_OUTPUTS.items():
        frame = _replicate(load_predictions(ROOT / path, system=name), ("record_id",), copies)
        value = frame["predicted_answer"].str.replace_all(",", "").cast(pl.Float64, strict=False).to_numpy()
        unit = frame["predicted_unit"].fill_null("").to_list()
        n = frame.height
        right = rng.random(n) < 0.6
        how_wrong = rng.choice(4, n, p=(0.7, 0.1, 0.1, 0.1))
        wrong = np.select(
            [how_wrong == 0, how_wrong == 1, how_wrong == 2],
            [value * (1 + rng.uniform(-0.5, 0.5, n)), value * 100, value / 100],
            default=-value,
        )
        x = np.where(right, value, wrong)
        decimals = rng.integers(0, 4, n)
        style = rng.integers(0, 4, n)
        texts = []
        for v, kind, d, s, original in zip(
            x.tolist(),
            unit,
            decimals.tolist(),
            style.tolist(),
            frame["predicted_answer"].to_list(),
            strict=True,
        ):
            if v is None or not math.isfinite(v):
                texts.append(original)
                continue
            v = round(v, d + 1)
            if kind == "percent":
                texts.append(
                    (
                        f"{_number(v, d + 1)}%",
                        f"{_number(v, d + 1)} percent",
                        _number(v / 100, d + 3),
                        _number(v, d + 1),
                    )[s]
                )
            elif kind == "raw":  # an amount
                texts.append(_spell(v, ("plain", "comma", "dollar", "scale")[s]))
            else:  # a ratio, a count, yes/no read as a number: plainly, rounded
                texts.append(_number(v, d + 1))
        preds.append(frame.with_columns(pl.Series("predicted_answer", texts, dtype=pl.String)))
    return big, preds


# ---------------------------------------------------------------------------------------------


def distinct_inputs(gold: GoldDataset, preds: list[pl.DataFrame]) -> int:
    """Distinct (answer, gold, question) triples, the answer being (``predicted_answer``, ``raw_output``)."""
    keys = ["record_id", "turn"]
    joined = pl.concat([keys_as_keys(p.select(*keys, "predicted_answer", "raw_output")) for p in preds]).join(
        gold.turns.select(*keys, "question", "gold_executed"), on=keys, how="inner"
    )
    # 64-bit hashes of the four texts, not the texts: a few MB instead of a second copy of the outputs
    # (a collision among a million keys has a chance of about 3e-8)
    key = pl.struct(
        *(pl.col(c).hash(seed=SEED) for c in ("predicted_answer", "raw_output", "question", "gold_executed"))
    )
    return joined.select(key.hash(seed=SEED).n_unique()).item()


def policies(which: str) -> list:
    if which == "main":
        return []
    return [p for p in POLICIES.values() if p.matcher != "math_verify"]


def fast_path_rows(gold: GoldDataset, preds: list[pl.DataFrame], also: list) -> int | None:
    """How many distinct inputs ``workbench.pipeline.fastpath.decide`` decides under the graded
    policies (untimed, outside ``grade_predictions``); ``None`` when there is no fast path."""
    if importlib.util.find_spec("workbench.pipeline.fastpath") is None:
        return None
    fastpath = importlib.import_module("workbench.pipeline.fastpath")
    keys = ["record_id", "turn"]
    inputs = [c for c in fastpath.INPUTS if c not in ("gold_executed", "gold_answer", "question")]
    frame = (
        pl.concat([keys_as_keys(p.select(*keys, *[c for c in inputs if c in p.columns])) for p in preds])
        .join(gold.turns.select(*keys, "gold_executed", "gold_answer", "question"), on=keys, how="inner")
        .drop(keys)
        .unique()
    )
    graded = [for_benchmark(get_policy(p), gold.benchmark) for p in (DEFAULT_GRADING_POLICY, *also)]
    rows, _ = fastpath.decide(frame, list({p.name: p for p in graded}.values()))
    return rows.len()


def _write(parts: dict[str, tuple[GoldDataset, list[pl.DataFrame]]], folder: Path) -> None:
    """Each part's gold (turns, documents, how it was read) and predictions, as files in ``folder``."""
    for name, (gold, preds) in parts.items():
        # the keys as text, as a user's files hold them (the workbench holds them as categories)
        keys_as_text(gold.turns).write_parquet(folder / f"{name}.gold_turns.parquet")
        gold.documents.write_parquet(folder / f"{name}.documents.parquet")
        (folder / f"{name}.gold.json").write_text(
            json.dumps({"path": str(gold.path), "layout": gold.layout, "benchmark": gold.benchmark})
        )
        for i, frame in enumerate(preds):
            keys_as_text(frame).write_parquet(folder / f"{name}.predictions.{i}.parquet")


def _read(name: str, folder: Path) -> tuple[GoldDataset, list[pl.LazyFrame]]:
    """A part's gold, read, and its predictions as Parquet scans (``pl.scan_parquet``), which
    ``grade_predictions`` takes: it reads the rows that match no gold turn in full and the rest
    without the gold they carry, which the gold set holds."""
    meta = json.loads((folder / f"{name}.gold.json").read_text())
    gold = GoldDataset(
        turns=pl.read_parquet(folder / f"{name}.gold_turns.parquet"),
        documents=pl.read_parquet(folder / f"{name}.documents.parquet"),
        path=Path(meta["path"]),
        layout=meta["layout"],
        benchmark=meta["benchmark"],
    )
    preds = [pl.scan_parquet(p) for p in sorted(folder.glob(f"{name}.predictions.*.parquet"))]
    return gold, preds


#: The slice labels of a gold turn (what the overview's slices group by beside the keys), as grading
#: finds them; the floor reads them with the gold (``graders_disagree`` is the floor's own: False).
LABELS = ("operation", "rare_operation", "n_turns", "has_type2_question", "qa_split", "dependency_distance",
          "answer_format", "dq_category")  # fmt: skip


def floor(name: str, folder: Path) -> dict[str, float]:
    """The floor of one part, timed: read the same Parquet inputs (the gold turns with their slice
    labels, the predictions), give every gold turn a row per system, decide each by exact string
    equality after stripping (the answer: ``predicted_answer``, else ``raw_output``, against
    ``gold_executed``) and compute the same slices (``slice_accuracy(intervals=False)``), in polars."""
    keys = ["record_id", "turn"]
    start = time.perf_counter()
    gold = pl.read_parquet(folder / f"{name}.gold_turns.parquet", columns=[*keys, "gold_executed"]).join(
        pl.read_parquet(folder / f"{name}.labels.parquet"), on=keys, how="left"
    )
    preds = pl.concat(
        [
            pl.read_parquet(p, columns=["system", *keys, "predicted_answer", "raw_output"])
            for p in sorted(folder.glob(f"{name}.predictions.*.parquet"))
        ]
    )
    read_s = time.perf_counter() - start
    systems = preds.select(pl.col("system").unique(maintain_order=True))
    answer = pl.coalesce("predicted_answer", "raw_output").str.strip_chars()
    turns = (
        gold.join(systems, how="cross")
        .join(preds, on=["system", *keys], how="left")
        .with_columns(
            (answer == pl.col("gold_executed").str.strip_chars()).fill_null(False).alias("correct"),
            pl.lit(False).alias("graders_disagree"),
        )
        .drop("predicted_answer", "raw_output")
    )
    decide_s = time.perf_counter() - start - read_s
    table = slice_accuracy(turns, intervals=False)
    total = time.perf_counter() - start
    return {
        "floor_s": round(total, 2),
        "floor_read_s": round(read_s, 2),
        "floor_decide_s": round(decide_s, 2),
        "floor_slices_s": round(total - read_s - decide_s, 2),
        "floor_turns": turns.height,
        "floor_groups": table.height,
        "floor_accuracy": round(float(turns["correct"].mean()), 4),
    }


def grade(folder: Path, policy_set: str, with_floor: bool = True) -> dict[str, Any]:
    """The timed part, in a fresh process: read the inputs ``folder`` holds (as ``workbench grade``
    reads a user's files), grade and slice each part; its figures and this process's peak RSS.
    With ``with_floor``, then (after the peak is read) the floor of each part (:func:`floor`)."""
    also = policies(policy_set)
    out: dict[str, Any] = {}
    mb_inputs = 0.0
    for name in ("gsm8k", "convfinqa"):  # one benchmark at a time, as a user grades them
        gold, preds = _read(name, folder)
        mb_read = rss_mb()
        mb_inputs = max(mb_inputs, mb_read)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graded = grade_predictions(gold, preds, also=also)
        grade_s = time.perf_counter() - start
        start = time.perf_counter()
        table = slice_accuracy(graded.turns, intervals=False)
        slices_s = time.perf_counter() - start
        rows = getattr(graded, "fast_path_rows", None)
        if rows is None:  # grade_predictions does not say: ask the fast path itself, untimed
            rows = fast_path_rows(gold, preds, also)
        out[name] = {
            "turns": graded.turns.height,
            "rss_mb_inputs_read": round(mb_read),
            "grade_s": round(grade_s, 2),
            "slices_s": round(slices_s, 2),
            "groups": table.height,
            "accuracy": round(float(graded.turns["correct"].mean()), 4),
            **({"fast_path_rows": int(rows)} if rows is not None else {}),
        }
        if with_floor:  # the gold turns' slice labels, beside the gold, for the floor (not timed)
            labels = graded.turns.select("record_id", "turn", *[c for c in LABELS if c in graded.turns.columns])
            keys_as_text(labels.unique(["record_id", "turn"], keep="first")).write_parquet(
                folder / f"{name}.labels.parquet"
            )
            del labels
        del graded, table, gold, preds
    out["rss_mb_inputs_read"] = round(mb_inputs)
    out["peak_rss_mb"] = round(peak_mb())
    if with_floor:
        for name in ("gsm8k", "convfinqa"):
            out[name].update(floor(name, folder))
    return out


#: Polars' allocator (jemalloc) settings that give freed memory back at once (appended to its own).
FREED_AT_ONCE = "dirty_decay_ms:0,muzzy_decay_ms:0"


def _grade_in_child(
    folder: Path, policy_set: str, env: dict[str, str] | None = None, with_floor: bool = True
) -> dict[str, Any]:
    """:func:`grade` in a fresh process (with ``env`` added to this one's environment)."""
    child = subprocess.run(
        [sys.executable, __file__, "--grade-folder", str(folder), "--policies", policy_set]
        + ([] if with_floor else ["--no-floor"]),
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )
    if child.returncode != 0:
        raise RuntimeError(f"grading the built turns failed (exit {child.returncode}): {child.stderr.strip()[-2000:]}")
    return json.loads(child.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def run(turns: int = TURNS, policy_set: str = "all-but-math-verify") -> dict[str, Any]:
    rng = np.random.default_rng(SEED)
    start = time.perf_counter()
    gsm_copies = max(1, math.ceil(turns * GSM8K_SHARE / (1319 * CHECKPOINTS)))  # at least the turns asked for
    cf_copies = max(1, math.ceil(turns * (1 - GSM8K_SHARE) / (2 * 1490)))
    parts = {"gsm8k": build_gsm8k(gsm_copies, rng)}
    parts["gsm8k"] = (parts["gsm8k"][0], [parts["gsm8k"][1]])
    parts["convfinqa"] = build_convfinqa(cf_copies, rng)
    distinct = {name: distinct_inputs(g, p) for name, (g, p) in parts.items()}
    t_build = time.perf_counter() - start
    with tempfile.TemporaryDirectory(prefix="million_distinct_turns.") as tmp:
        folder = Path(tmp)
        _write(parts, folder)
        del parts
        # graded in a fresh process that reads the inputs from files, as a user's run does: its
        # peak is grading's and slicing's, not the building's (``peak_rss_mb_build``)
        graded = _grade_in_child(folder, policy_set)
        # the same with memory given back to the system as soon as it is freed (polars' allocator
        # keeps freed pages 0.5 s, then 1 s more lazily, and they count in RSS): what the process
        # holds at once, to tell the size of the tables from what the allocator keeps; not timed
        at_once = _grade_in_child(folder, policy_set, {"_RJEM_MALLOC_CONF": FREED_AT_ONCE}, with_floor=False)
    out: dict[str, Any] = {"turns_requested": turns, "policies": ["main", *[p.name for p in policies(policy_set)]]}
    t_grade = sum(graded[name]["grade_s"] for name in distinct)
    t_slices = sum(graded[name]["slices_s"] for name in distinct)
    t_floor = sum(graded[name]["floor_s"] for name in distinct)
    total = sum(graded[name]["turns"] for name in distinct)
    for name in distinct:
        out[name] = {**graded[name], "distinct_inputs": distinct[name]}
    fast = [graded[name]["fast_path_rows"] for name in distinct if "fast_path_rows" in graded[name]]
    out.update(
        {
            "turns": total,
            "distinct_inputs": sum(distinct.values()),
            "distinct_share": round(sum(distinct.values()) / max(total, 1), 4),
            "build_s": round(t_build, 2),
            "grade_s": round(t_grade, 2),
            "slices_s": round(t_slices, 2),
            "grade_plus_slices_s": round(t_grade + t_slices, 2),
            "distinct_per_s": round(sum(distinct.values()) / max(t_grade + t_slices, 1e-9)),
            "floor_s": round(t_floor, 2),
            "ratio_over_floor": round((t_grade + t_slices) / max(t_floor, 1e-9), 2),
            "target_s": TARGET_S,
            "peak_rss_mb_build": round(peak_mb()),
            "rss_mb_inputs_read": graded["rss_mb_inputs_read"],
            "peak_rss_mb": graded["peak_rss_mb"],
            "peak_rss_mb_freed_at_once": at_once["peak_rss_mb"],
            "target_rss_mb": TARGET_RSS_MB,
        }
    )
    if fast:
        out["fast_path_rows"] = sum(fast)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--turns", type=int, default=TURNS, help=f"turns to build (default {TURNS:,}); nothing is extrapolated"
    )
    parser.add_argument(
        "--policies",
        choices=("all-but-math-verify", "main"),
        default="all-but-math-verify",
        help="the main policy and every named policy but math-verify (default), or the main policy only",
    )
    parser.add_argument("--grade-folder", type=Path, help=argparse.SUPPRESS)  # the child process
    parser.add_argument("--no-floor", action="store_true", help=argparse.SUPPRESS)  # the child: no floor
    args = parser.parse_args(argv)
    if args.grade_folder:
        print(json.dumps(grade(args.grade_folder, args.policies, with_floor=not args.no_floor)))
        return 0
    f = run(args.turns, args.policies)
    print(
        f"{f['turns']:,} turns ({f['gsm8k']['turns']:,} GSM8K, {f['convfinqa']['turns']:,} ConvFinQA), "
        f"{f['distinct_inputs']:,} distinct inputs ({f['distinct_share']:.1%}) [target >= 900,000 of 1,000,000], "
        f"built in {f['build_s']:.1f} s"
    )
    if f["turns"] < TURNS:
        print(
            f"  a SMALLER run than the benchmark's {TURNS:,} turns (--turns {args.turns:,}): figures are for these turns only"
        )
    print(f"  policies graded: {', '.join(f['policies'])}")
    for name in ("gsm8k", "convfinqa"):
        p = f[name]
        fast = (
            f", fast path decides {p['fast_path_rows']:,} ({p['fast_path_rows'] / max(p['distinct_inputs'], 1):.0%})"
            if "fast_path_rows" in p
            else ""
        )
        print(
            f"  {name}: grade_predictions {p['grade_s']:.1f} s, slice_accuracy {p['slices_s']:.2f} s "
            f"({p['groups']} groups), {p['distinct_inputs']:,} distinct, accuracy {p['accuracy']:.1%}{fast}; "
            f"floor {p['floor_s']:.2f} s (read {p['floor_read_s']:.2f}, decide {p['floor_decide_s']:.2f}, "
            f"slices {p['floor_slices_s']:.2f}; exact-string accuracy {p['floor_accuracy']:.1%})"
        )
    print(
        f"  grade + slices: {f['grade_plus_slices_s']:.1f} s [target <= {TARGET_S:g} s], "
        f"{f['ratio_over_floor']:.1f}x the floor ({f['floor_s']:.2f} s: the same Parquet inputs read, "
        "decided by exact string equality after stripping and sliced the same way, in polars, in the same run); "
        f"peak RSS of the grading process {f['peak_rss_mb']:,} MB (after reading the inputs "
        f"{f['rss_mb_inputs_read']:,}) [target <= {TARGET_RSS_MB:,} MB]; building them peaked at {f['peak_rss_mb_build']:,} MB"
    )
    print(
        f"  peak RSS with freed memory given back at once ({FREED_AT_ONCE}, not timed): "
        f"{f['peak_rss_mb_freed_at_once']:,} MB; the rest of the peak is freed memory the allocator keeps"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
