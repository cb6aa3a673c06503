"""Agreement between analysts: Cohen's kappa for two, Krippendorff's alpha for more.

Each analyst's decision on an item is their latest annotation of it still in force (a retracted
one counts as not given); an item is a turn, ``(record_id, turn)``, so a model error recorded
with its system and a data problem recorded on the gold turn are two answers to the same item.
Only items that at least two analysts decided count (for kappa: both analysts).

For every category, and overall, :func:`agreement` reports the statistic, ``n`` (the items it
read), and a 95% interval from a bootstrap over items (:data:`RESAMPLES` resamples, a fixed
seed, so the same store gives the same figures). Per category the decision is "this category or
not"; overall it is the category itself. The statistics come from statsmodels
(:func:`statsmodels.stats.inter_rater.cohens_kappa`) and the ``krippendorff`` package: no
statistic is written here. A statistic is undefined (None) when the analysts' decisions do not
vary (every item rated the same by everyone).

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> from workbench.annotations import AnnotationStore
>>> with AnnotationStore(Path(tempfile.mkdtemp()) / "a.sqlite") as store:
...     for record, ana, bo in [("r1", "mislabel", "mislabel"), ("r2", "other", "mislabel"), ("r3", "other", "other")]:
...         _ = store.annotate(annotator="ana", record_id=record, turn=0, category=ana)
...         _ = store.annotate(annotator="bo", record_id=record, turn=0, category=bo)
...     table = agreement(store)
>>> table.filter(pl.col("category") == "all").select("statistic", "analysts", "n", pl.col("value").round(3)).row(0)
("Cohen's kappa", 'ana, bo', 3, 0.4)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import polars as pl

from workbench.analysis import words
from workbench.errors import UsageError
from workbench.schema import ANNOTATION_CATEGORIES

if TYPE_CHECKING:
    from workbench.annotations.backends import Store

__all__ = [
    "in_force",
    "in_force_at",
    "agreement_at",
    "summary_at",
    "summarise",
    "AgreementSummary",
    "DECISION_RULE",
    "decisions",
    "decided_by",
    "agreement",
    "disagreements",
    "RESAMPLES",
    "RULES",
    "OVERALL",
    "KAPPA",
    "ALPHA",
]

#: Bootstrap resamples of the items for each interval.
RESAMPLES = 1000
#: The row of the table that reads every category at once.
OVERALL = "all"
KAPPA = "Cohen's kappa"
ALPHA = "Krippendorff's alpha"
_SEED = 20260101


#: How a turn's decision was reached (:func:`decided_by`), in the export's manifest.
RULES = ("one analyst", "analysts agreed", "adjudicated", "disagreed, not adjudicated")


def _latest(store: Store) -> pl.DataFrame:
    """Each analyst's latest annotation in force on each turn, with the order in which the
    analysts first annotated the turn (``order`` 1, 2, ...)."""
    events = store.events()
    retracted = set(events.filter(pl.col("kind") == "retraction")["retracts"].drop_nulls().to_list())
    kept = events.filter((pl.col("kind") == "annotation") & ~pl.col("event_id").is_in(list(retracted))).sort("event_id")
    first = kept.group_by("record_id", "turn", "annotator").agg(pl.col("event_id").min().alias("first"))
    return (
        kept.group_by("record_id", "turn", "annotator", maintain_order=True)
        .last()
        .join(first, on=["record_id", "turn", "annotator"])
        .with_columns(pl.col("first").rank("ordinal").over("record_id", "turn").cast(pl.Int64).alias("order"))
        .select("record_id", "turn", "annotator", pl.col("category").cast(pl.String), "system", "event_id", "order")
    )


def _judged(latest: pl.DataFrame) -> pl.DataFrame:
    """Per turn: the first two analysts' categories, whether they differ, and who came after."""
    first_two = latest.filter(pl.col("order") <= 2)
    return (
        first_two.group_by("record_id", "turn")
        .agg(pl.len().alias("n_raters"), pl.col("category").n_unique().alias("n_categories"))
        .join(
            latest.filter(pl.col("order") > 2).group_by("record_id", "turn").agg(pl.col("annotator").alias("later")),
            on=["record_id", "turn"],
            how="left",
        )
        .with_columns(disagree=(pl.col("n_raters") == 2) & (pl.col("n_categories") > 1))
    )


def decisions(store: Store) -> pl.DataFrame:
    """One row per (record_id, turn, annotator): that analyst's latest annotation in force on the turn
    (columns record_id, turn, annotator, category, system, event_id). An adjudication (an analyst
    after the first two, on a turn those two decided differently) is a ruling, not a rating: left out."""
    latest = _latest(store)
    judged = _judged(latest).select("record_id", "turn", "disagree")
    return (
        latest.join(judged, on=["record_id", "turn"], how="left")
        .filter(~((pl.col("order") > 2) & pl.col("disagree")))
        .select("record_id", "turn", "annotator", "category", "system", "event_id")
        .sort("record_id", "turn", "annotator")
    )


def decided_by(store: Store) -> pl.DataFrame:
    """Per annotated turn (record_id, turn): which of :data:`RULES` decided it. Two analysts who
    decided differently are settled by a third (the adjudicator, whose annotation is the latest);
    until then the turn is "disagreed, not adjudicated"."""
    judged = _judged(_latest(store))
    rule = (
        pl.when(pl.col("n_raters") < 2)
        .then(pl.lit(RULES[0]))
        .when(~pl.col("disagree"))
        .then(pl.lit(RULES[1]))
        .when(pl.col("later").is_not_null())
        .then(pl.lit(RULES[2]))
        .otherwise(pl.lit(RULES[3]))
    )
    return judged.select("record_id", "turn", rule.alias("rule")).sort("record_id", "turn")


#: What the export applies, in words (its manifest says it, with a count of turns per rule).
DECISION_RULE = (
    "each turn's latest annotation in force; on a turn whose first two analysts decided differently, "
    "the adjudicator's (a later analyst's) latest annotation"
)


def in_force(store: Store) -> tuple[pl.DataFrame, dict[str, int]]:
    """The annotations an export applies (``store.active()``, with an adjudicated turn's rows
    replaced by the adjudicator's latest annotation) and how many turns each of :data:`RULES`
    decided."""
    active = store.active()
    rules = decided_by(store)
    counts = {rule: int((rules["rule"] == rule).sum()) for rule in RULES}
    adjudicated = rules.filter(pl.col("rule") == RULES[2]).select("record_id", "turn")
    if adjudicated.is_empty():
        return active, counts
    rulings = (
        _latest(store)
        .filter(pl.col("order") > 2)
        .join(adjudicated, on=["record_id", "turn"])
        .group_by("record_id", "turn")
        .agg(pl.col("event_id").max())["event_id"]
    )
    ruled = store.events().filter(pl.col("event_id").is_in(rulings.to_list())).select(active.columns)
    kept = active.join(adjudicated, on=["record_id", "turn"], how="anti")
    return pl.concat([kept, ruled.cast(active.schema)]).sort("event_id"), counts


def disagreements(store: Store) -> pl.DataFrame:
    """The turns whose first two analysts decided differently and no adjudicator has settled
    (record_id, turn, the two analysts, their categories): the adjudication queue."""
    open_turns = decided_by(store).filter(pl.col("rule") == RULES[3]).select("record_id", "turn")
    latest = _latest(store).filter(pl.col("order") <= 2).sort("order")
    return (
        latest.join(open_turns, on=["record_id", "turn"])
        .group_by("record_id", "turn")
        .agg(pl.col("annotator"), pl.col("category"))
        .sort("record_id", "turn")
    )


def _kappa(matrix: np.ndarray) -> float | None:
    from statsmodels.stats.inter_rater import cohens_kappa, to_table

    table, _bins = to_table(matrix.astype(int), bins=int(matrix.max()) + 1)
    if len(np.unique(matrix)) < 2:
        return None
    value = float(cohens_kappa(table, return_results=False))
    return value if np.isfinite(value) else None


def _alpha(matrix: np.ndarray) -> float | None:
    import krippendorff

    present = matrix[~np.isnan(matrix)]
    if len(np.unique(present)) < 2:
        return None
    value = float(krippendorff.alpha(reliability_data=matrix.T, level_of_measurement="nominal"))
    return value if np.isfinite(value) else None


def _interval(matrix: np.ndarray, statistic: Any) -> tuple[float | None, float | None]:
    rng = np.random.default_rng(_SEED)
    values = []
    for _ in range(RESAMPLES):
        value = statistic(matrix[rng.integers(0, len(matrix), len(matrix))])
        if value is not None:
            values.append(value)
    if len(values) < RESAMPLES / 2:  # most resamples undefined: no honest interval
        return None, None
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


def _overlap(store: Store, analysts: list[str] | None) -> tuple[list[str], pl.DataFrame]:
    """The analysts compared (sorted) and the turns at least two of them decided (for two
    analysts: both), one column of categories per analyst; no rows when there is nothing to compare."""
    decided = decisions(store)
    if analysts:
        decided = decided.filter(pl.col("annotator").is_in(analysts))
    names = sorted(set(decided["annotator"].to_list()))
    wide = decided.pivot(on="annotator", index=["record_id", "turn"], values="category").select(
        "record_id", "turn", *names
    )
    shared = wide.filter(pl.sum_horizontal(pl.col(names).is_not_null()) >= 2) if len(names) >= 2 else wide.clear()
    if len(names) == 2:
        shared = shared.drop_nulls(names)
    return names, shared


#: The columns of the agreement table (the CSV ``workbench annotations agreement`` prints).
_TABLE = {
    "category": pl.String,
    "statistic": pl.String,
    "analysts": pl.String,
    "n": pl.Int64,
    "value": pl.Float64,
    "low": pl.Float64,
    "high": pl.Float64,
}


def _measure(names: list[str], shared: pl.DataFrame) -> pl.DataFrame:
    statistic, compute = (KAPPA, _kappa) if len(names) == 2 else (ALPHA, _alpha)
    codes = {c: float(i) for i, c in enumerate(ANNOTATION_CATEGORIES)}
    raw = np.array([[codes[v] if v is not None else np.nan for v in row] for row in shared.select(names).iter_rows()])
    rows = []
    for category in (OVERALL, *ANNOTATION_CATEGORIES):
        if category == OVERALL:
            matrix = raw
        else:
            matrix = np.where(np.isnan(raw), np.nan, (raw == codes[category]).astype(float))
            if not np.nansum(matrix):
                continue  # nobody chose it: nothing to agree on
        value = compute(matrix)
        low, high = _interval(matrix, compute) if value is not None else (None, None)
        rows.append((category, statistic, ", ".join(names), len(matrix), value, low, high))
    return pl.DataFrame(rows, schema=_TABLE, orient="row")


def agreement(store: Store, *, analysts: list[str] | None = None) -> pl.DataFrame:
    """Agreement per category and overall (``category`` :data:`OVERALL`): statistic, analysts, n,
    value, low, high (None where undefined).

    Raises
    ------
    UsageError
        When fewer than two analysts decided a common item (nothing to compare), in one line.
    """
    names, shared = _overlap(store, analysts)
    if shared.is_empty():
        raise UsageError(
            f"agreement needs two analysts who decided the same turns; the store has {len(names)} analyst(s) "
            f"({', '.join(names) or 'none'}) and {shared.height} turns decided by two. "
            "Fix: triage with overlap > 0 so some turns are shown to two analysts"
        )
    return _measure(names, shared)


def _as_printed(table: pl.DataFrame) -> pl.DataFrame:
    """The figures as ``workbench annotations agreement`` prints them: rounded to 3 places."""
    return table.with_columns(pl.col("value", "low", "high").round(3))


@dataclass(frozen=True, kw_only=True)
class AgreementSummary:
    """What a report says about the analysts' agreement in a store (:func:`summarise`).

    Attributes
    ----------
    status
        ``"measured"``: two or more analysts decided some turns in common and :attr:`table` has
        the figures; ``"no_overlap"``: no turn was decided by two analysts (:attr:`table` is empty).
    reason
        One plain sentence: what was measured, or why nothing could be.
    table
        The figures and labels ``workbench annotations agreement`` prints (:func:`agreement`,
        rounded to 3 places): category, statistic, analysts, n, value, low, high.
    awaiting
        Turns whose first two analysts decided differently and no one has adjudicated
        (:func:`disagreements`: the triage's adjudication queue).
    """

    status: Literal["measured", "no_overlap"]
    reason: str
    table: pl.DataFrame
    awaiting: int


def summarise(store: Store) -> AgreementSummary:
    """The analysts' agreement in ``store`` as a report shows it: :func:`agreement`'s table when
    two analysts decided some turns in common, else one sentence saying that none were; and how
    many turns await adjudication.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from workbench.annotations import AnnotationStore
    >>> with AnnotationStore(Path(tempfile.mkdtemp()) / "a.sqlite") as store:
    ...     _ = store.annotate(annotator="ana", record_id="r1", turn=0, category="other")
    ...     summarise(store).status, summarise(store).reason
    ('no_overlap', 'No turn was decided by two analysts (1 analyst in the store: ana), so there is no agreement to measure; the triage shows some turns to two analysts when its overlap is above 0 (e.g. 0.1).')
    """
    awaiting = disagreements(store).height
    names, shared = _overlap(store, None)
    if shared.is_empty():
        who = f": {', '.join(names)}" if names else ""
        return AgreementSummary(
            status="no_overlap",
            reason=(
                f"No turn was decided by two analysts ({words.counted(len(names), 'analyst')} in the store{who}), "
                "so there is no agreement to measure; the triage shows some turns to two analysts when its "
                "overlap is above 0 (e.g. 0.1)."
            ),
            table=pl.DataFrame(schema=_TABLE),
            awaiting=awaiting,
        )
    table = _as_printed(_measure(names, shared))
    decided_by = "both" if len(names) == 2 else "two or more of them"
    return AgreementSummary(
        status="measured",
        reason=(
            f"{table['statistic'][0]} of {words.counted(len(names), 'analyst')} ({', '.join(names)}) "
            f"on the {words.counted(shared.height, 'turn')} {decided_by} decided"
        ),
        table=table,
        awaiting=awaiting,
    )


def agreement_at(location: Any, analysts: str | None = None) -> pl.DataFrame:
    """:func:`agreement` of the store at ``location`` (a path or URL, opened read-only), for the
    ``analysts`` named with commas (None: everyone), its figures rounded to 3 places (the CLI's)."""
    from workbench.annotations.backends import open_store

    chosen = [a.strip() for a in analysts.split(",") if a.strip()] if analysts else None
    with open_store(location, create=False) as store:
        return _as_printed(agreement(store, analysts=chosen))


def summary_at(location: Any) -> AgreementSummary:
    """:func:`summarise` of the store at ``location`` (a path or URL, opened read-only)."""
    from workbench.annotations.backends import open_store

    with open_store(location, create=False) as store:
        return summarise(store)


def in_force_at(location: Any) -> tuple[pl.DataFrame, dict[str, int]]:
    """:func:`in_force` of the store at ``location`` (a path or URL)."""
    from workbench.annotations.backends import open_store

    with open_store(location, create=False) as store:
        return in_force(store)
