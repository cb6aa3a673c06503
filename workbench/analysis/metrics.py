"""Aggregations over the graded ``turns`` table, as ``pl.Expr`` builders.

Definitions follow the seed report: turn-level execution accuracy; conversation-level
execution accuracy is the final turn's answer; all-turns-correct; program accuracy by
equivalence of the predicted program, at turn level and for the final turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from workbench.analysis.textmetrics import text_scores

__all__ = [
    "conversations",
    "turn_execution_accuracy",
    "turn_program_accuracy",
    "summarize",
    "accuracy_by",
    "policy_accuracy",
    "upstream_disagreements",
]


def turn_execution_accuracy() -> pl.Expr:
    """Share of turns whose answer is correct."""
    return pl.col("correct").cast(pl.Float64).mean().alias("turn_execution_accuracy")


def turn_program_accuracy() -> pl.Expr:
    """Share of turns whose predicted program is equivalent to the gold (missing counts wrong)."""
    return pl.col("program_correct").fill_null(False).cast(pl.Float64).mean().alias("turn_program_accuracy")


def conversations(turns: pl.DataFrame) -> pl.DataFrame:
    """Derive the ``conversations`` table (one row per system and record) from ``turns``.

    Examples
    --------
    >>> t = pl.DataFrame({"system": ["s"] * 2, "record_id": ["r"] * 2, "turn": [0, 1],
    ...                   "correct": [False, True], "program_correct": [None, True]})
    >>> conversations(t).select("final_turn_correct", "all_turns_correct", "first_error_turn").row(0)
    (True, False, 0)
    """
    ordered = turns.sort("system", "record_id", "turn")
    return ordered.group_by("system", "record_id", maintain_order=True).agg(
        pl.len().cast(pl.Int32).alias("n_turns"),
        pl.col("correct").sum().cast(pl.Int32).alias("n_correct"),
        pl.col("correct").last().alias("final_turn_correct"),
        pl.col("correct").all().alias("all_turns_correct"),
        pl.col("turn").filter(~pl.col("correct")).min().alias("first_error_turn"),
        pl.col("program_correct").last().alias("final_program_correct"),
    )


def accuracy_by(turns: pl.DataFrame, by: str | list[str]) -> pl.DataFrame:
    """Turn execution accuracy per system and group, with counts."""
    keys = ["system", *([by] if isinstance(by, str) else by)]
    return (
        turns.group_by(keys)
        .agg(pl.len().alias("n_turns"), pl.col("correct").sum().alias("n_correct"), turn_execution_accuracy())
        .sort(keys)
    )


def policy_accuracy(policy_grades: pl.DataFrame) -> pl.DataFrame:
    """Accuracy per system and grading policy, side by side (policies in their given order).

    Examples
    --------
    >>> g = pl.DataFrame({"system": ["s"] * 4, "policy": ["exact-string", "cascade"] * 2,
    ...                   "correct": [False, True, True, True]})
    >>> policy_accuracy(g).rows()
    [('s', 'exact-string', 2, 1, 0.5), ('s', 'cascade', 2, 2, 1.0)]
    """
    return policy_grades.group_by("system", "policy", maintain_order=True).agg(
        pl.len().alias("n_turns"),
        pl.col("correct").sum().alias("n_correct"),
        pl.col("correct").cast(pl.Float64).mean().alias("accuracy"),
    )


def upstream_disagreements(turns: pl.DataFrame) -> pl.DataFrame:
    """Turns where our verdict differs from the upstream grader's, with our reason."""
    return turns.filter(pl.col("upstream_correct").is_not_null() & (pl.col("upstream_correct") != pl.col("correct")))


def summarize(
    turns: pl.DataFrame,
    unmatched: pl.DataFrame,
    policy_name: str,
    systems: Sequence[str] = (),
    policy_grades: pl.DataFrame | None = None,
    *,
    text_metrics: bool = True,
) -> dict[str, dict[str, Any]]:
    """Headline metrics per system (in the order of ``systems``), as in ``summary.json``.

    With ``policy_grades``, each system also gets ``policies``: accuracy under every
    grading policy. With ``text_metrics`` and gold solutions present (GSM8K, MATH), BLEU
    and ROUGE of the unfiltered outputs.
    """
    convs = conversations(turns)
    out: dict[str, dict[str, Any]] = {}
    systems = list(systems) or list(dict.fromkeys(turns["system"].to_list()))
    by_policy = policy_accuracy(policy_grades) if policy_grades is not None and policy_grades.height else None
    for system in systems:
        t = turns.filter(pl.col("system") == system)
        c = convs.filter(pl.col("system") == system)
        row: dict[str, Any] = {
            "policy": policy_name,
            "n_turns": t.height,
            "n_conversations": c.height,
            "n_predictions": int(t.filter(pl.col("status") != "no_prediction").height),
            "n_missing": int(t.filter(pl.col("status") == "no_prediction").height),
            "n_unmatched": int(unmatched.filter(pl.col("system") == system).height),
            "n_turns_correct": int(t["correct"].sum()),
            "turn_execution_accuracy": t.select(turn_execution_accuracy()).item(),
            "conversation_execution_accuracy": c["final_turn_correct"].cast(pl.Float64).mean(),
            "all_turns_correct_rate": c["all_turns_correct"].cast(pl.Float64).mean(),
        }
        if t["predicted_program"].is_not_null().any():
            row["turn_program_accuracy"] = t.select(turn_program_accuracy()).item()
            row["conversation_program_accuracy"] = c["final_program_correct"].fill_null(False).cast(pl.Float64).mean()
            row["n_programs_equivalent"] = int(t["program_correct"].fill_null(False).sum())
            row["program_step_credit"] = t["program_credit"].fill_null(0.0).mean()
        if "upstream_correct" in t.columns and t["upstream_correct"].is_not_null().any():
            row["n_upstream_correct"] = int(t["upstream_correct"].fill_null(False).sum())
            row["n_upstream_disagreements"] = upstream_disagreements(t).height
        if by_policy is not None:
            row["policies"] = {
                name: {"n_correct": int(n_correct), "accuracy": accuracy}
                for name, n_correct, accuracy in by_policy.filter(pl.col("system") == system)
                .select("policy", "n_correct", "accuracy")
                .iter_rows()
            }
        if text_metrics and "gold_solution" in t.columns:
            scored = t.filter(pl.col("gold_solution").is_not_null() & pl.col("raw_output").is_not_null())
            if scored.height:

                row["text"] = text_scores(scored["raw_output"].to_list(), scored["gold_solution"].to_list()).as_dict()
        row["reasons"] = dict(
            t.group_by("reason")
            .len()
            .with_columns(pl.col("reason").cast(pl.String))
            .sort(["len", "reason"], descending=[True, False])  # ties in a fixed order: summary.json is byte-stable
            .select("reason", "len")
            .iter_rows()
        )
        out[system] = row
    return out
