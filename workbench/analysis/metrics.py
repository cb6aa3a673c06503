"""The metrics: one record per metric (:class:`MetricSpec`, in :data:`METRICS`), and
aggregations over the graded ``turns`` table as ``pl.Expr`` builders.

Definitions follow the seed report: turn-level execution accuracy; conversation-level
execution accuracy is the final turn's answer; all-turns-correct; program accuracy by
equivalence of the predicted program, at turn level and for the final turn.

Every place that shows a metric reads its key, label, definition and format from its
record: :func:`summarize` (``summary.json``), the headline table
(:func:`workbench.views.tables.headline`), the comparison of systems
(:mod:`workbench.analysis.comparison`) and the report's manifest
(:mod:`workbench.analysis.changes`). Each of them shows a selection of the records, in its
own order (:data:`HEADLINE_METRICS`, :data:`COMPARED_METRICS`, :data:`MANIFEST_METRICS`); a run
of single problems (:func:`counted_item`) shows fewer of them, named for problems (:func:`for_items`).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal

import polars as pl

from workbench.analysis.textmetrics import text_scores

__all__ = [
    "MetricSpec",
    "METRICS",
    "HEADLINE_METRICS",
    "COMPARED_METRICS",
    "MANIFEST_METRICS",
    "Item",
    "is_multi_turn",
    "counted_item",
    "for_items",
    "metric",
    "conversations",
    "turn_execution_accuracy",
    "turn_program_accuracy",
    "summarize",
    "accuracy_by",
    "policy_accuracy",
    "upstream_disagreements",
]

#: Over what a metric is taken: a share (or mean) over turns, a share over conversations, a count.
Aggregation = Literal["turn", "conversation", "count"]
#: How a value is shown: ``percent`` (0.831 as 83.1%), ``integer``, ``decimal`` (as it is).
Format = Literal["percent", "integer", "decimal"]
#: What a system's turns must carry for the metric to be reported for it.
Requirement = Literal["programs", "upstream"]
#: What a run counts: a ``turn`` of a conversation, or a ``problem`` (GSM8K, MATH: one question, one turn).
Item = Literal["turn", "problem"]


@dataclass(frozen=True, kw_only=True)
class MetricSpec:
    """One metric: everything the summary, the tables, the comparison and the manifest know
    about it.

    Attributes
    ----------
    key
        Its name in ``summary.json`` and in manifests.
    label
        Its name in tables.
    definition
        What it measures, in one sentence.
    aggregation
        Over what it is taken: ``turn`` (a share or mean over turns), ``conversation`` (a
        share over conversations), ``count``.
    format
        How a value is shown (``percent``, ``integer``, ``decimal``).
    qualifier
        Said after the label in the headline table, when the label alone is ambiguous.
    single_label
        Its name when every item is a single question (GSM8K, MATH: a problem, not a turn);
        empty when the label already fits.
    requires
        Reported only for systems whose turns carry it: ``programs`` (a predicted program in
        some turn) or ``upstream`` (the upstream grader's verdict in some turn).
    value
        Computes it from one system's ``turns``, ``conversations`` and unmatched predictions.
    outcome
        For a share that is compared between systems: the turn's outcome (a boolean
        expression over ``turns``), taken over every turn (``turn``) or over each
        conversation's final turn (``conversation``).

    Examples
    --------
    >>> spec = METRICS["conversation_execution_accuracy"]
    >>> spec.heading, spec.display(0.8312), spec.aggregation
    ('Conversation execution accuracy (final turn)', '83.1%', 'conversation')
    >>> METRICS["n_turns"].display(1490)
    1490
    """

    key: str
    label: str
    definition: str
    aggregation: Aggregation
    format: Format
    qualifier: str = ""
    single_label: str = ""
    requires: Requirement | None = None
    value: Callable[[pl.DataFrame, pl.DataFrame, pl.DataFrame], Any] = field(compare=False, repr=False)
    outcome: pl.Expr | None = field(default=None, compare=False, repr=False)

    @property
    def heading(self) -> str:
        """The label with its qualifier, as the headline table shows it."""
        return f"{self.label} ({self.qualifier})" if self.qualifier else self.label

    def display(self, value: Any) -> Any:
        """A value as tables show it: a float of a ``percent`` metric as ``83.1%``; anything
        else (a count, a missing value) as it is."""
        return f"{value:.1%}" if self.format == "percent" and isinstance(value, float) else value


def turn_execution_accuracy() -> pl.Expr:
    """Share of turns whose answer is correct."""
    return pl.col("correct").cast(pl.Float64).mean().alias("turn_execution_accuracy")


def turn_program_accuracy() -> pl.Expr:
    """Share of turns whose predicted program is equivalent to the gold (missing counts wrong)."""
    return pl.col("program_correct").fill_null(False).cast(pl.Float64).mean().alias("turn_program_accuracy")


# One record per metric; each takes (turns, conversations, unmatched) of one system.
N_TURNS = MetricSpec(
    key="n_turns",
    label="Turns",
    single_label="Problems",
    definition="Number of gold turns graded.",
    aggregation="count",
    format="integer",
    value=lambda t, c, u: t.height,
)
N_CONVERSATIONS = MetricSpec(
    key="n_conversations",
    label="Conversations",
    definition="Number of gold conversations (records) graded.",
    aggregation="count",
    format="integer",
    value=lambda t, c, u: c.height,
)
N_PREDICTIONS = MetricSpec(
    key="n_predictions",
    label="Turns with a prediction",
    single_label="Problems with a prediction",
    definition="Number of turns the system gave a prediction for.",
    aggregation="count",
    format="integer",
    value=lambda t, c, u: int(t.filter(pl.col("status") != "no_prediction").height),
)
N_MISSING = MetricSpec(
    key="n_missing",
    label="Turns without prediction",
    single_label="Problems without prediction",
    definition="Number of turns the system gave no prediction for (graded wrong).",
    aggregation="count",
    format="integer",
    value=lambda t, c, u: int(t.filter(pl.col("status") == "no_prediction").height),
)
N_UNMATCHED = MetricSpec(
    key="n_unmatched",
    label="Unmatched predictions",
    definition="Number of predictions that match no gold turn (left out of every other metric).",
    aggregation="count",
    format="integer",
    value=lambda t, c, u: int(u.height),
)
N_TURNS_CORRECT = MetricSpec(
    key="n_turns_correct",
    label="Turns correct",
    single_label="Problems correct",
    definition="Number of turns whose answer is correct.",
    aggregation="count",
    format="integer",
    value=lambda t, c, u: int(t["correct"].sum()),
)
TURN_EXECUTION_ACCURACY = MetricSpec(
    key="turn_execution_accuracy",
    label="Turn execution accuracy",
    single_label="Accuracy",
    definition="Share of turns whose answer is correct.",
    aggregation="turn",
    format="percent",
    value=lambda t, c, u: t.select(turn_execution_accuracy()).item(),
    outcome=pl.col("correct"),
)
CONVERSATION_EXECUTION_ACCURACY = MetricSpec(
    key="conversation_execution_accuracy",
    label="Conversation execution accuracy",
    definition="Share of conversations whose final turn's answer is correct.",
    aggregation="conversation",
    format="percent",
    qualifier="final turn",
    value=lambda t, c, u: c["final_turn_correct"].cast(pl.Float64).mean(),
    outcome=pl.col("correct"),
)
ALL_TURNS_CORRECT_RATE = MetricSpec(
    key="all_turns_correct_rate",
    label="All turns correct",
    definition="Share of conversations whose every turn's answer is correct.",
    aggregation="conversation",
    format="percent",
    value=lambda t, c, u: c["all_turns_correct"].cast(pl.Float64).mean(),
)
TURN_PROGRAM_ACCURACY = MetricSpec(
    key="turn_program_accuracy",
    label="Turn program accuracy",
    definition="Share of turns whose predicted program is equivalent to the gold program (none counts wrong).",
    aggregation="turn",
    format="percent",
    requires="programs",
    value=lambda t, c, u: t.select(turn_program_accuracy()).item(),
    outcome=pl.col("program_correct").fill_null(False),
)
CONVERSATION_PROGRAM_ACCURACY = MetricSpec(
    key="conversation_program_accuracy",
    label="Conversation program accuracy",
    definition="Share of conversations whose final turn's predicted program is equivalent to the gold program.",
    aggregation="conversation",
    format="percent",
    requires="programs",
    value=lambda t, c, u: c["final_program_correct"].fill_null(False).cast(pl.Float64).mean(),
    outcome=pl.col("program_correct").fill_null(False),
)
N_PROGRAMS_EQUIVALENT = MetricSpec(
    key="n_programs_equivalent",
    label="Programs equivalent",
    definition="Number of turns whose predicted program is equivalent to the gold program.",
    aggregation="count",
    format="integer",
    requires="programs",
    value=lambda t, c, u: int(t["program_correct"].fill_null(False).sum()),
)
PROGRAM_STEP_CREDIT = MetricSpec(
    key="program_step_credit",
    label="Program step credit",
    definition="Mean over turns of the share of the gold program's steps the predicted program reproduces (none: 0).",
    aggregation="turn",
    format="decimal",
    requires="programs",
    value=lambda t, c, u: t["program_credit"].fill_null(0.0).mean(),
)
N_UPSTREAM_CORRECT = MetricSpec(
    key="n_upstream_correct",
    label="Turns correct upstream",
    single_label="Problems correct upstream",
    definition="Number of turns the upstream grader (the prediction file's own verdict) counts correct.",
    aggregation="count",
    format="integer",
    requires="upstream",
    value=lambda t, c, u: int(t["upstream_correct"].fill_null(False).sum()),
)
N_UPSTREAM_DISAGREEMENTS = MetricSpec(
    key="n_upstream_disagreements",
    label="Disagreements with upstream",
    definition="Number of turns where the upstream grader's verdict differs from ours.",
    aggregation="count",
    format="integer",
    requires="upstream",
    value=lambda t, c, u: upstream_disagreements(t).height,
)

#: Every metric by key, in the order ``summary.json`` lists them.
METRICS: Mapping[str, MetricSpec] = MappingProxyType(
    {
        spec.key: spec
        for spec in (
            N_TURNS,
            N_CONVERSATIONS,
            N_PREDICTIONS,
            N_MISSING,
            N_UNMATCHED,
            N_TURNS_CORRECT,
            TURN_EXECUTION_ACCURACY,
            CONVERSATION_EXECUTION_ACCURACY,
            ALL_TURNS_CORRECT_RATE,
            TURN_PROGRAM_ACCURACY,
            CONVERSATION_PROGRAM_ACCURACY,
            N_PROGRAMS_EQUIVALENT,
            PROGRAM_STEP_CREDIT,
            N_UPSTREAM_CORRECT,
            N_UPSTREAM_DISAGREEMENTS,
        )
    }
)

#: The headline table's columns (the seed report's layout), in order.
HEADLINE_METRICS: tuple[MetricSpec, ...] = (
    TURN_EXECUTION_ACCURACY,
    CONVERSATION_EXECUTION_ACCURACY,
    ALL_TURNS_CORRECT_RATE,
    TURN_PROGRAM_ACCURACY,
    CONVERSATION_PROGRAM_ACCURACY,
    N_TURNS,
    N_CONVERSATIONS,
    N_MISSING,
    N_UNMATCHED,
)

#: The shares compared between systems with intervals (the seed report's metrics), in order.
COMPARED_METRICS: tuple[MetricSpec, ...] = (
    CONVERSATION_EXECUTION_ACCURACY,
    CONVERSATION_PROGRAM_ACCURACY,
    TURN_EXECUTION_ACCURACY,
    TURN_PROGRAM_ACCURACY,
)

#: The headline metrics a report's manifest keeps per system, in order.
MANIFEST_METRICS: tuple[MetricSpec, ...] = (
    TURN_EXECUTION_ACCURACY,
    CONVERSATION_EXECUTION_ACCURACY,
    ALL_TURNS_CORRECT_RATE,
    TURN_PROGRAM_ACCURACY,
    CONVERSATION_PROGRAM_ACCURACY,
    N_TURNS,
    N_TURNS_CORRECT,
)


def is_multi_turn(turn: pl.Series) -> bool:
    """Whether some turn follows another in its conversation (a ``turn`` index above 0).

    Examples
    --------
    >>> is_multi_turn(pl.Series([0, 0])), is_multi_turn(pl.Series([0, 1])), is_multi_turn(pl.Series([], dtype=pl.Int32))
    (False, True, False)
    """
    return bool(turn.len()) and int(turn.max() or 0) > 0  # type: ignore[arg-type]


def counted_item(benchmark: str, turn: pl.Series) -> Item:
    """What a run counts, from its benchmark and its turns' ``turn`` index.

    ``"turn"`` for ConvFinQA, or for any run where some turn follows another in its
    conversation (:func:`is_multi_turn`); else ``"problem"`` (GSM8K, MATH: one question, one turn).

    Examples
    --------
    >>> counted_item("gsm8k", pl.Series([0, 0])), counted_item("gsm8k", pl.Series([0, 1]))
    ('problem', 'turn')
    >>> counted_item("convfinqa", pl.Series([0])), counted_item("math", pl.Series([], dtype=pl.Int32))
    ('turn', 'problem')
    """
    return "turn" if is_multi_turn(turn) or benchmark == "convfinqa" else "problem"


def for_items(specs: Sequence[MetricSpec], item: Item) -> tuple[MetricSpec, ...]:
    """The metrics of ``specs`` a run counting ``item`` shows, under the label it shows them by.

    Turns keep every metric as it is. Problems (every item a single question) leave out the
    conversation-level metrics, which would repeat the turn-level figure, and name the rest
    for problems (:attr:`MetricSpec.single_label`: "Accuracy", "Problems"), in the same order.

    Examples
    --------
    >>> [spec.label for spec in for_items(MANIFEST_METRICS, "problem")]
    ['Accuracy', 'Turn program accuracy', 'Problems', 'Problems correct']
    >>> for_items(MANIFEST_METRICS, "turn") == MANIFEST_METRICS
    True
    """
    if item == "turn":
        return tuple(specs)
    return tuple(
        replace(spec, label=spec.single_label) if spec.single_label else spec
        for spec in specs
        if spec.aggregation != "conversation" and spec.key != N_CONVERSATIONS.key
    )


def metric(key: str) -> MetricSpec:
    """The record of the metric named ``key``.

    Raises
    ------
    KeyError
        For an unknown key, with the closest names and the list of metrics.

    Examples
    --------
    >>> metric("turn_execution_accuracy").label
    'Turn execution accuracy'
    >>> metric("turn_execution_acuracy")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    KeyError: "no metric 'turn_execution_acuracy'; did you mean turn_execution_accuracy, ...
    """
    try:
        return METRICS[key]
    except KeyError:
        close = difflib.get_close_matches(key, METRICS, n=3)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        raise KeyError(f"no metric {key!r}; {hint}Metrics: {', '.join(METRICS)}") from None


def _has_programs(turns: pl.DataFrame) -> bool:
    return bool(turns["predicted_program"].is_not_null().any())


def _has_upstream(turns: pl.DataFrame) -> bool:
    return "upstream_correct" in turns.columns and bool(turns["upstream_correct"].is_not_null().any())


#: Whether one system's turns carry what a metric ``requires``.
_REQUIREMENTS: Mapping[Requirement, Callable[[pl.DataFrame], bool]] = MappingProxyType(
    {"programs": _has_programs, "upstream": _has_upstream}
)


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

    Each system gets ``policy``, then every metric of :data:`METRICS` its turns carry, in
    that order (program metrics only with predicted programs, upstream counts only with the
    upstream grader's verdicts). With ``policy_grades``, each system also gets ``policies``: accuracy under every
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
        u = unmatched.filter(pl.col("system") == system)
        row: dict[str, Any] = {"policy": policy_name}
        for spec in METRICS.values():
            if spec.requires is None or _REQUIREMENTS[spec.requires](t):
                row[spec.key] = spec.value(t, c, u)
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
