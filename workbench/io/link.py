"""Give prediction rows without ids a gold record, by their question text.

GSM8K outputs often carry no record id (OpenAI's example solutions, program-of-thoughts
runs) but do carry the question. :func:`attach_record_ids` links those rows to a gold
dataset by the question text; :func:`gold_from_predictions` builds the gold dataset from
the gold the outputs carry when no dataset file is given; :func:`detect_benchmark` says
which grading rules apply.

Questions are compared after :func:`normalize_question`: unicode quotes become ASCII
quotes, runs of whitespace one space, and the ends are stripped.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import polars as pl

from workbench.errors import InputError
from workbench.grading import patterns
from workbench.io.gold import Benchmark, GoldDataset, check_finite, executed_text, plain_number
from workbench.io.gold.base import level_text
from workbench.schema import DOCUMENTS, GOLD_TURNS, KEY_DTYPE

__all__ = [
    "NOT_IN_GOLD",
    "REPEATED_QUESTION",
    "normalize_question",
    "question_key",
    "attach_record_ids",
    "unlinked_rows",
    "gold_from_predictions",
    "detect_benchmark",
]

#: Prefix of the record id given to a row whose question is not in gold.
NOT_IN_GOLD = "question-not-in-gold:"
#: Prefix of the record id given to a row whose question is in gold fewer times than the
#: system answers it.
REPEATED_QUESTION = "question-repeated:"

_QUOTES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u00b4": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
    }
)


def normalize_question(text: str) -> str:
    """Normalise a question for matching: ASCII quotes, single spaces, no outer whitespace.

    Examples
    --------
    >>> normalize_question("Janet\\u2019s ducks lay  16 eggs\\n per day. ")
    "Janet's ducks lay 16 eggs per day."
    """
    return patterns.WHITESPACE.sub(" ", text.translate(_QUOTES)).strip()


def question_key(text: str) -> str:
    """A short stable key for a question: the first 10 hex digits of the SHA-1 of its normalised text.

    Examples
    --------
    >>> question_key("What is 1 + 1?") == question_key("  What is 1 +  1? ")
    True
    >>> len(question_key("What is 1 + 1?"))
    10
    """
    return hashlib.sha1(normalize_question(text).encode("utf-8")).hexdigest()[:10]


def _keys(questions: pl.Series) -> tuple[pl.Series, pl.Series]:
    texts = questions.to_list()
    normal = [normalize_question(q) for q in texts]
    hashed = [hashlib.sha1(q.encode("utf-8")).hexdigest()[:10] for q in normal]
    return pl.Series("_q", normal, dtype=pl.String), pl.Series("_key", hashed, dtype=pl.String)


def attach_record_ids(predictions: pl.DataFrame, gold: GoldDataset) -> pl.DataFrame:
    """Fill null ``record_id`` (and ``turn``) by matching each row's question to a gold question.

    Rows that already have a record id are left as they are. Within one system, the k-th
    row asking a question links to the k-th gold turn with that question, in order of
    appearance; so when two gold records share a question text, a system that answers it
    twice gets both, in file order. Rows that cannot be linked are kept, keyed and distinct:

    * question not in gold: ``record_id = "question-not-in-gold:<question_key>"`` (then
      ``#2``, ``#3``, ... for repeats);
    * question in gold fewer times than the system asks it:
      ``"question-repeated:<question_key>#<occurrence>"``.

    Grading then reports them as unmatched; :func:`unlinked_rows` lists them with the reason.

    Parameters
    ----------
    predictions
        A canonical table (:data:`workbench.schema.PREDICTIONS`).
    gold
        The dataset to link to.

    Returns
    -------
    polars.DataFrame
        The same rows in the same order, with no null ``record_id``.

    Raises
    ------
    InputError
        For a row with neither a record id nor a question (names its file and location).

    Examples
    --------
    >>> from workbench.config import project_root
    >>> from workbench.io.gold import load_gold
    >>> from workbench.io.predictions import load_predictions
    >>> root = project_root()
    >>> gold = load_gold(root / "data/gsm8k/test.jsonl")
    >>> preds = load_predictions(root / "data/predictions/gsm8k/openai-gpt3/example_model_solutions.jsonl")
    >>> linked = attach_record_ids(preds, gold)
    >>> preds["record_id"].null_count(), linked["record_id"].null_count(), linked.row(0, named=True)["record_id"]
    (5276, 0, '0')
    """
    missing = pl.col("record_id").is_null()
    if predictions.filter(missing).height == 0:
        return predictions
    columns = predictions.columns
    indexed = predictions.with_row_index("_row")
    todo = indexed.filter(missing)
    no_question = todo.filter(pl.col("question").is_null() | (pl.col("question").str.strip_chars() == ""))
    if no_question.height:
        row = no_question.row(0, named=True)
        raise InputError(
            str(row.get("source_file") or "<predictions>"),
            f"a row has neither a record id nor a question ({no_question.height} such rows)",
            location=str(row.get("source_location") or f"row {row['_row'] + 1}"),
            field="record_id",
            fix="give each row its record id, or the question it answers",
        )
    gold_turns = gold.turns.filter(pl.col("question").is_not_null())
    gold_q, _ = _keys(gold_turns["question"])
    gold_index = (
        gold_turns.select(pl.col("record_id").alias("_gold_id"), pl.col("turn").alias("_gold_turn"))
        .with_columns(gold_q)
        .with_columns(pl.int_range(pl.len()).over("_q").alias("_occ"))
    )
    known = gold_index["_q"].unique()
    normal, hashed = _keys(todo["question"])
    occurrence = pl.col("_occ") + 1
    linked = (
        todo.with_columns(normal, hashed)
        .with_columns(pl.int_range(pl.len()).over("system", "_q").alias("_occ"))
        .join(gold_index, on=["_q", "_occ"], how="left")
        .with_columns(
            pl.when(pl.col("_gold_id").is_not_null())
            .then(pl.col("_gold_id").cast(pl.String))
            .when(pl.col("_q").is_in(known.implode()))
            .then(pl.format(REPEATED_QUESTION + "{}#{}", pl.col("_key"), occurrence))
            .when(pl.col("_occ") == 0)
            .then(pl.lit(NOT_IN_GOLD) + pl.col("_key"))
            .otherwise(pl.format(NOT_IN_GOLD + "{}#{}", pl.col("_key"), occurrence))
            .cast(KEY_DTYPE)
            .alias("record_id"),
            pl.coalesce("_gold_turn", "turn").cast(pl.Int32).alias("turn"),
        )
    )
    return (
        pl.concat([indexed.filter(~missing).select("_row", *columns), linked.select("_row", *columns)])
        .sort("_row")
        .drop("_row")
    )


def unlinked_rows(predictions: pl.DataFrame) -> pl.DataFrame:
    """The rows :func:`attach_record_ids` could not link, with the reason.

    Returns
    -------
    polars.DataFrame
        ``system, source_file, source_location, question, reason`` with ``reason`` one of
        ``"question not in gold"`` or ``"question asked more often than gold has it"``.

    Examples
    --------
    >>> frame = pl.DataFrame(
    ...     {"record_id": ["1", NOT_IN_GOLD + "abc"], "system": ["s", "s"], "source_file": ["p", "p"],
    ...      "source_location": ["line 1", "line 2"], "question": ["q1", "q2"]}
    ... )
    >>> unlinked_rows(frame).rows()
    [('s', 'p', 'line 2', 'q2', 'question not in gold')]
    """
    rid = pl.col("record_id").cast(pl.String)  # a key (a category) read as text
    return predictions.filter(rid.str.starts_with(NOT_IN_GOLD) | rid.str.starts_with(REPEATED_QUESTION)).select(
        "system",
        "source_file",
        "source_location",
        "question",
        pl.when(rid.str.starts_with(NOT_IN_GOLD))
        .then(pl.lit("question not in gold"))
        .otherwise(pl.lit("question asked more often than gold has it"))
        .alias("reason"),
    )


def _benchmark_of(answers: list[str]) -> Benchmark:
    if not answers:
        return "table"
    if all(plain_number(a) is not None for a in answers):
        return "gsm8k"
    if any("\\" in a or "{" in a for a in answers):
        return "math"
    return "table"


def _same_answer(a: str, b: str) -> bool:
    if a.strip() == b.strip():
        return True
    value = plain_number(a)
    return value is not None and value == plain_number(b)


def gold_from_predictions(predictions: pl.DataFrame, *, source: str) -> GoldDataset:
    """Build the gold dataset from the gold that travels inside the outputs.

    Use it when no dataset file is given. Each ``(record_id, turn)`` becomes a gold turn with
    the row's ``question``, ``gold_answer``, ``gold_solution`` and MATH's ``level``; rows without a record id
    are keyed ``"q-" + question_key(question)``, so :func:`attach_record_ids` then links the
    predictions to these turns. Rows of several systems that answer the same record must
    carry the same gold answer (``"18"`` and ``"18.0"`` are the same).

    Parameters
    ----------
    predictions
        One or more canonical tables concatenated.
    source
        What the gold came from (a file or a description), used as the dataset's path and in
        errors for rows that do not name their file.

    Returns
    -------
    GoldDataset
        Layout ``"carried-in-predictions"``; benchmark ``"gsm8k"`` when every gold answer is a
        plain number, ``"math"`` when answers hold LaTeX, else ``"table"``.

    Raises
    ------
    InputError
        When a row carries no gold answer (the fix is to pass the dataset file), has neither
        id nor question, or disagrees with another row about the same record's answer.

    Examples
    --------
    >>> from workbench.config import project_root
    >>> from workbench.io.predictions import load_predictions
    >>> path = project_root() / "data/predictions/gsm8k/openai-gpt3/example_model_solutions.jsonl"
    >>> gold = gold_from_predictions(load_predictions(path), source=str(path))
    >>> gold.benchmark, gold.turns.height, gold.turns.row(0, named=True)["record_id"][:2]
    ('gsm8k', 1319, 'q-')
    """
    wanted = [
        "record_id",
        "turn",
        "question",
        "gold_answer",
        "gold_solution",
        "level",
        "source_file",
        "source_location",
    ]
    present = [c for c in wanted if c in predictions.columns]
    turns: dict[tuple[str, int], dict[str, Any]] = {}
    where_of: dict[tuple[str, int], str] = {}
    for row in predictions.select(present).iter_rows(named=True):
        file = str(row.get("source_file") or source)
        location = str(row.get("source_location") or "")
        record_id, question = row.get("record_id"), row.get("question")
        if record_id is None:
            if not question or not str(question).strip():
                raise InputError(
                    file,
                    "the row has neither a record id nor a question",
                    location=location,
                    field="record_id",
                    fix="pass the dataset file, or give each row its record id",
                )
            record_id = "q-" + question_key(question)
        answer = row.get("gold_answer")
        if answer is None or not str(answer).strip():
            raise InputError(
                file,
                "the row carries no gold answer, so gold cannot be taken from the outputs",
                location=location,
                field="gold_answer",
                fix="pass the dataset file (e.g. data/gsm8k/test.jsonl)",
            )
        check_finite(file, answer, location=location, field="gold_answer")
        key = (str(record_id), int(row.get("turn") or 0))
        if key in turns:
            if not _same_answer(turns[key]["gold_answer"], answer):
                raise InputError(
                    file,
                    f"gold answer {answer!r} for record '{key[0]}' differs from {turns[key]['gold_answer']!r} "
                    f"given at {where_of[key]}",
                    location=location,
                    field="gold_answer",
                    fix="pass the dataset file, so gold comes from one place",
                )
            continue
        where_of[key] = f"{file}: {location}"
        turns[key] = {
            "record_id": key[0],
            "turn": key[1],
            "question": question,
            "gold_answer": answer,
            "gold_executed": executed_text(answer),
            "gold_value": plain_number(answer),
            "gold_program": None,
            "gold_solution": row.get("gold_solution"),
            "level": level_text(row.get("level")),
        }
    if not turns:
        raise InputError(source, "no predictions to take gold from", fix="pass the dataset file")
    n_turns: dict[str, int] = {}
    for record_id, _ in turns:
        n_turns[record_id] = n_turns.get(record_id, 0) + 1
    rows = [{**t, "n_turns": n_turns[t["record_id"]]} for t in turns.values()]
    return GoldDataset(
        turns=pl.DataFrame(rows, schema=GOLD_TURNS),
        documents=pl.DataFrame(schema=DOCUMENTS),
        path=Path(source),
        layout="carried-in-predictions",
        benchmark=_benchmark_of([t["gold_answer"] for t in rows]),
    )


def detect_benchmark(gold: GoldDataset | None, predictions: pl.DataFrame) -> Benchmark:
    """Say which benchmark's grading rules apply.

    The gold dataset's own ``benchmark`` when there is one; otherwise ``"convfinqa"`` for
    ConvFinQA record ids (``Single_...``, ``Double_...``), then as
    :func:`gold_from_predictions` decides from the carried gold answers (``"table"`` when
    there are none).

    Examples
    --------
    >>> detect_benchmark(None, pl.DataFrame({"record_id": [None], "gold_answer": [r"\\frac{1}{2}"]}))
    'math'
    >>> detect_benchmark(None, pl.DataFrame({"record_id": ["Single_A/2001/page_1.pdf-1"], "gold_answer": ["5"]}))
    'convfinqa'
    """
    if gold is not None:
        return gold.benchmark
    if "record_id" in predictions.columns:
        ids = predictions["record_id"].drop_nulls().cast(pl.String)
        if (ids.str.starts_with("Single_") | ids.str.starts_with("Double_")).any():
            return "convfinqa"
    if "gold_answer" not in predictions.columns:
        return "table"
    return _benchmark_of(predictions["gold_answer"].drop_nulls().cast(pl.String).to_list())
