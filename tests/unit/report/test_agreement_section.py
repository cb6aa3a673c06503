"""The 02 page's agreement section (issue 33, point 5: "the 02 report shows agreement when annotations
are given"): the figures and labels of `workbench annotations agreement` (agreement.agreement_at),
the turns awaiting adjudication, one plain line without overlap, names escaped. The page itself in
tests/system/report/test_agreement_report.py."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from workbench.annotations import AnnotationStore
from workbench.annotations.agreement import KAPPA, agreement_at, summary_at
from workbench.report.sections import annotator_agreement

#: Two analysts on eight turns (Wikipedia-style pairs), then a third analyst on one of their disagreements.
PAIRS = [
    ("mislabel", "mislabel"),
    ("other", "mislabel"),
    ("other", "other"),
    ("missing_value", "missing_value"),
    ("other", "other"),
    ("mislabel", "other"),
    ("mislabel", "mislabel"),
    ("unit_inconsistency", "other"),
]


def _two_analysts(path: Path, first: str = "ana", second: str = "bo") -> Path:
    with AnnotationStore(path) as store:
        for i, (a, b) in enumerate(PAIRS):
            store.annotate(annotator=first, record_id=f"r{i}", turn=0, category=a)
            store.annotate(annotator=second, record_id=f"r{i}", turn=0, category=b)
        store.annotate(annotator="cy", record_id="r1", turn=0, category="mislabel")  # cy adjudicates r1
    return path


def _cells(markup: str) -> list[list[str]]:
    """The text of each body row's cells."""
    body = markup.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [
        [unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body)
    ]


def test_the_section_shows_the_cli_figures_and_labels_and_the_adjudication_queue(tmp_path: Path) -> None:
    store = _two_analysts(tmp_path / "a.sqlite")
    block = annotator_agreement(str(store))
    assert block is not None
    printed = agreement_at(store)  # what `workbench annotations agreement` prints, as CSV
    expected = [
        [row["category"], str(row["n"]), *(f"{row[k]:.3f}" for k in ("value", "low", "high"))]
        for row in printed.iter_rows(named=True)
    ]
    assert _cells(block.markup) == expected  # statistic and analysts: the same in every row, in the caption
    assert set(printed["statistic"]) == {KAPPA} and set(printed["analysts"]) == {"ana, bo"}
    assert expected[0][:2] == ["all", "8"]  # overall first, n is the turns both decided
    assert {row[0] for row in expected} == {"all", "mislabel", "other", "missing_value", "unit_inconsistency"}
    text = unescape(block.markup)
    assert "Cohen's kappa of 2 analysts (ana, bo) on the 8 turns both decided" in text
    assert "95% bootstrap interval" in text
    # r1 was adjudicated by cy; r5 and r7 still wait (cy is a ruling, not a third rater)
    assert "2 turns await adjudication" in text and "(ana, bo, cy)" not in text
    assert block.notebook is not None and "2 turns await adjudication" in unescape(block.notebook)


def test_without_overlap_one_plain_line(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    with AnnotationStore(path) as store:
        store.annotate(annotator="ana", record_id="r1", turn=0, category="other")
        store.annotate(annotator="bo", record_id="r2", turn=0, category="mislabel")
    block = annotator_agreement(str(path))
    assert block is not None
    assert "<table" not in block.markup and block.markup.count("<p") == 1
    assert unescape(block.markup) == (
        '<p class="wb-note">No turn was decided by two analysts (2 analysts in the store: ana, bo), so there is no '
        "agreement to measure; the triage shows some turns to two analysts when its overlap is above 0 (e.g. 0.1).</p>"
    )
    assert summary_at(path).status == "no_overlap" and summary_at(path).awaiting == 0


def test_no_store_no_section_and_a_missing_store_is_refused(tmp_path: Path) -> None:
    from workbench.errors import UsageError

    assert annotator_agreement("") is None and annotator_agreement("  ") is None
    with pytest.raises(UsageError, match="no annotation store"):
        annotator_agreement(str(tmp_path / "none.sqlite"))
    assert not (tmp_path / "none.sqlite").exists()


def test_analyst_names_are_text(tmp_path: Path) -> None:
    store = _two_analysts(tmp_path / "a.sqlite", first="<b>ana</b>", second="bo & co")
    block = annotator_agreement(str(store))
    assert block is not None
    assert "<b>ana</b>" not in block.markup and "&lt;b&gt;ana&lt;/b&gt;" in block.markup
    assert "bo &amp; co" in block.markup


def test_an_undefined_statistic_is_a_dash_said_in_words(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    with AnnotationStore(path) as store:  # both always say "other": nothing varies, kappa undefined
        for i in range(3):
            store.annotate(annotator="ana", record_id=f"r{i}", turn=0, category="other")
            store.annotate(annotator="bo", record_id=f"r{i}", turn=0, category="other")
    block = annotator_agreement(str(path))
    assert block is not None
    assert _cells(block.markup)[0] == ["all", "3", "—", "—", "—"]
    assert "the statistic is undefined" in block.markup
