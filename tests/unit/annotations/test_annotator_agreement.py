"""Agreement between analysts (issue 33, point 5) on fixtures with published values: Cohen's kappa
(Wikipedia's worked example, 50 items, kappa 0.4) and Krippendorff's alpha (Krippendorff's
three-coder example in the krippendorff package's docs: nominal alpha 0.691), read back from a store."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa, to_table

from workbench.annotations import Store
from workbench.annotations.agreement import ALPHA, KAPPA, OVERALL, agreement, decisions, disagreements
from workbench.errors import UsageError
from workbench.schema import ANNOTATION_CATEGORIES

NAN = np.nan
#: Krippendorff's example: three coders, 15 units, values 1-4 (NaN: not coded).
CODERS = {
    "ana": [NAN, NAN, NAN, NAN, NAN, 3, 4, 1, 2, 1, 1, 3, 3, NAN, 3],
    "bo": [1, NAN, 2, 1, 3, 3, 4, 3, NAN, NAN, NAN, NAN, NAN, NAN, NAN],
    "cy": [NAN, NAN, 2, 1, 3, 4, 4, NAN, 2, 1, 1, 3, 3, NAN, 4],
}


def _fill(store: Store, coders: dict[str, list[float]]) -> None:
    for name, values in coders.items():
        for unit, value in enumerate(values):
            if not np.isnan(value):
                store.annotate(
                    annotator=name, record_id=f"r{unit:02d}", turn=0, category=ANNOTATION_CATEGORIES[int(value)]
                )


def test_kappa_equals_the_published_value_and_statsmodels(store: Store) -> None:
    # Wikipedia's example: both yes 20, A yes B no 5, A no B yes 10, both no 15 -> kappa 0.4
    pairs = [(1, 1)] * 20 + [(1, 0)] * 5 + [(0, 1)] * 10 + [(0, 0)] * 15
    _fill(store, {"ana": [float(a) for a, _ in pairs], "bo": [float(b) for _, b in pairs]})
    table = agreement(store)
    overall = table.row(0, named=True)
    assert (overall["category"], overall["statistic"], overall["analysts"], overall["n"]) == (
        OVERALL,
        KAPPA,
        "ana, bo",
        50,
    )
    assert overall["value"] == pytest.approx(0.4)
    reference = cohens_kappa(to_table(np.array(pairs))[0], return_results=False)
    assert overall["value"] == pytest.approx(reference)
    assert overall["low"] < 0.4 < overall["high"] and -1 <= overall["low"] and overall["high"] <= 1
    # per category: two categories, "this one or not" is the same split, so the same kappa
    by_category = {row["category"]: row for row in table.iter_rows(named=True)}
    assert set(by_category) == {OVERALL, ANNOTATION_CATEGORIES[0], ANNOTATION_CATEGORIES[1]}
    assert by_category[ANNOTATION_CATEGORIES[1]]["value"] == pytest.approx(0.4)
    assert agreement(store).equals(table)  # a fixed seed: the same figures every time


def test_alpha_equals_the_published_value_and_krippendorff(store: Store) -> None:
    _fill(store, CODERS)
    table = agreement(store)
    overall = table.row(0, named=True)
    assert (overall["statistic"], overall["analysts"]) == (ALPHA, "ana, bo, cy")
    assert overall["value"] == pytest.approx(0.691, abs=5e-4)
    data = np.array(list(CODERS.values()))
    assert overall["value"] == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    assert overall["n"] == 12  # units coded by at least two coders
    assert overall["low"] <= overall["value"] <= overall["high"]
    third = table.filter(table["category"] == ANNOTATION_CATEGORIES[3]).row(0, named=True)
    binary = np.where(np.isnan(data), np.nan, (data == 3).astype(float))
    assert third["value"] == pytest.approx(krippendorff.alpha(reliability_data=binary, level_of_measurement="nominal"))


def test_a_retracted_annotation_is_not_a_decision_and_the_latest_counts(store: Store) -> None:
    first = store.annotate(annotator="ana", record_id="r1", turn=0, category="mislabel")
    store.annotate(annotator="ana", record_id="r1", turn=0, category="other")
    store.annotate(annotator="bo", record_id="r1", turn=0, category="mislabel")
    wrong = store.annotate(annotator="bo", record_id="r2", turn=0, category="other")
    store.retract(wrong, annotator="bo")
    got = decisions(store)
    assert got.select("record_id", "annotator", "category").rows() == [
        ("r1", "ana", "other"),
        ("r1", "bo", "mislabel"),
    ]
    assert first not in got["event_id"].to_list()
    assert disagreements(store).select("record_id", "annotator", "category").rows() == [
        ("r1", ["ana", "bo"], ["other", "mislabel"])
    ]


def test_one_analyst_is_refused_in_one_line(store: Store) -> None:
    store.annotate(annotator="ana", record_id="r1", turn=0, category="mislabel")
    with pytest.raises(UsageError, match="agreement needs two analysts") as refused:
        agreement(store)
    assert "\n" not in str(refused.value) and "overlap" in str(refused.value)


def test_a_third_analyst_adjudicates_a_disagreement_and_is_no_rater(store: Store) -> None:
    from workbench.annotations.agreement import RULES, decided_by

    for record, ana, bo in [("r1", "mislabel", "mislabel"), ("r2", "other", "mislabel"), ("r3", "other", "mislabel")]:
        store.annotate(annotator="ana", record_id=record, turn=0, category=ana)
        store.annotate(annotator="bo", record_id=record, turn=0, category=bo)
    store.annotate(annotator="solo", record_id="r4", turn=0, category="other")
    assert disagreements(store).select("record_id", "annotator", "category").rows() == [
        ("r2", ["ana", "bo"], ["other", "mislabel"]),
        ("r3", ["ana", "bo"], ["other", "mislabel"]),
    ]
    before = agreement(store)
    store.annotate(annotator="cy", record_id="r2", turn=0, category="mislabel")  # cy adjudicates r2
    assert disagreements(store)["record_id"].to_list() == ["r3"]  # the adjudication queue shrinks
    assert dict(decided_by(store).select("record_id", "rule").iter_rows()) == {
        "r1": RULES[1],
        "r2": RULES[2],
        "r3": RULES[3],
        "r4": RULES[0],
    }
    assert "cy" not in decisions(store)["annotator"].to_list()  # a ruling, not a rating
    assert agreement(store).equals(before)
    assert store.active().filter(store.active()["record_id"] == "r2")["annotator"].to_list() == ["cy"]
