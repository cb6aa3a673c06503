"""The upstream grader's verdicts that travel in prediction files, set against ours.

Several formats carry the verdict of the grader that produced them (``upstream_correct``):
math-evaluation-harness's ``score`` (the Rho-Math MATH-500 runs), lm-eval's ``exact_match``,
zarifaziz's ``correct``, OpenAI's ``is_correct``. :func:`upstream_disagreements_under` lists the
turns of a graded run where a policy of ours and that grader disagree, with our reason, so a
report can show each one (on the MATH-500 runs: where upstream is wrong, and where we are).
"""

from __future__ import annotations

import polars as pl

__all__ = ["UPSTREAM_DISAGREEMENT_COLUMNS", "upstream_disagreements_under"]

#: The columns of :func:`upstream_disagreements_under`, in order.
UPSTREAM_DISAGREEMENT_COLUMNS = (
    "system",
    "record_id",
    "turn",
    "policy",
    "gold_answer",
    "answer",
    "correct",
    "upstream_correct",
    "reason",
    "detail",
)


def upstream_disagreements_under(
    turns: pl.DataFrame, policy_grades: pl.DataFrame | None = None, policy: str | None = None
) -> pl.DataFrame:
    """Turns where our verdict differs from the upstream grader's, with our reason.

    Parameters
    ----------
    turns
        A graded run's turns (``turns.parquet``): ``system, record_id, turn, gold_answer,
        upstream_correct`` and, for the main policy, ``answer, correct, reason, detail``.
    policy_grades
        The run's policy grades (``policy_grades.parquet``); needed when ``policy`` is given.
    policy
        A policy name (``flex``: our own extraction from the raw output, ``math-verify``, ...);
        ``None`` for the run's main verdict.

    Returns
    -------
    polars.DataFrame
        :data:`UPSTREAM_DISAGREEMENT_COLUMNS`: ``answer`` is the answer we compared, ``correct``
        our verdict, ``upstream_correct`` theirs, ``reason`` and ``detail`` why we decided so;
        ``policy`` is ``None`` for the main verdict. Sorted by system, then by record id as a
        number when it is one (``97`` before ``100``), then turn. Empty when the run has no
        upstream verdicts.

    Examples
    --------
    >>> turns = pl.DataFrame({"system": ["s", "s", "s"], "record_id": ["100", "97", "3"], "turn": [0, 0, 0],
    ...     "gold_answer": ["\\\\text{east}", "2", "9"], "answer": ["east", "2", "9"],
    ...     "correct": [True, True, True], "upstream_correct": [False, False, True],
    ...     "reason": ["symbolic", "exact", "exact"], "detail": ["both are the word 'east'", "", ""]})
    >>> upstream_disagreements_under(turns)["record_id"].to_list()
    ['97', '100']
    >>> grades = pl.DataFrame({"system": ["s"] * 3, "record_id": ["100", "97", "3"], "turn": [0] * 3,
    ...     "policy": ["flex"] * 3, "answer": ["north", "2", "9"], "correct": [False, True, True],
    ...     "reason": ["wrong_value", "exact", "exact"], "detail": ["", "", ""]})
    >>> upstream_disagreements_under(turns, grades, "flex")[["record_id", "answer", "correct"]].rows()
    [('97', '2', True)]
    """
    keys = ["system", "record_id", "turn"]
    if "upstream_correct" not in turns.columns:
        return pl.DataFrame(schema={c: turns.schema.get(c, pl.String) for c in UPSTREAM_DISAGREEMENT_COLUMNS})
    if policy is None:
        ours = turns.select(
            *keys, pl.lit(None, dtype=pl.String).alias("policy"), "answer", "correct", "reason", "detail"
        )
    else:
        if policy_grades is None:
            raise ValueError("policy_grades are needed to compare a named policy with upstream")
        ours = policy_grades.filter(pl.col("policy") == policy).select(
            *keys, "policy", "answer", "correct", "reason", "detail"
        )
    joined = ours.join(turns.select(*keys, "gold_answer", "upstream_correct"), on=keys, how="inner")
    differ = joined.filter(pl.col("upstream_correct").is_not_null() & (pl.col("upstream_correct") != pl.col("correct")))
    return differ.sort(
        "system", pl.col("record_id").cast(pl.String).cast(pl.Int64, strict=False), "record_id", "turn", nulls_last=True
    ).select(UPSTREAM_DISAGREEMENT_COLUMNS)
