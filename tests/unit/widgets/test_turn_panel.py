"""The failed-turn panel, headless: show a real run's turns, press its buttons, save through its
form, then check what the panes hold and what the store holds (house style 24)."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest
from markupsafe import escape

import workbench.config
from workbench.annotations.store import AnnotationStore
from workbench.config import resolve
from workbench.pipeline.run import Run, grade_run
from workbench.schema import ANNOTATION_CATEGORIES
from workbench.views.turn_detail import detail_data, turn_key
from workbench.widgets.triage import category_label
from workbench.widgets.turn_panel import ABOUT_GOLD, ABOUT_SYSTEM, TurnPanel

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures"
DEV_SMALL = FIXTURES / "convfinqa" / "dev_small.json"
PREDICTIONS = FIXTURES / "predictions" / "zarifaziz_dev_small.jsonl"
HOSTILE_GOLD = FIXTURES / "hostile" / "dev_small_hostile.json"
HOSTILE_PREDICTIONS = FIXTURES / "hostile" / "zarifaziz_dev_small_hostile.jsonl"
GSM8K = FIXTURES / "gsm8k" / "test_first_20.jsonl"
GSM8K_OPENAI = FIXTURES / "predictions" / "gsm8k" / "openai_example_model_solutions_first_20.jsonl"
#: A failed turn of the bundled run whose raw output holds two amounts in dollars
#: ("... current liabilities of $2.7 million and $37.8 million, respectively.").
RSG = ("zarifaziz_dev_small", "Double_RSG/2016/page_144.pdf", 2)


@pytest.fixture(scope="module")
def run() -> Run:
    """12 conversations, 42 turns, one system; 3 failed turns (all of Double_RSG/2016/page_144.pdf)."""
    return grade_run(resolve(dataset=DEV_SMALL, predictions=[PREDICTIONS]))


@pytest.fixture(scope="module")
def gsm8k_run() -> Run:
    """The first 20 GSM8K test problems and the OpenAI example solutions for them."""
    return grade_run(resolve(dataset=GSM8K, predictions=[GSM8K_OPENAI]))


@pytest.fixture
def store(tmp_path: Path):
    with AnnotationStore(tmp_path / "annotations.sqlite") as opened:
        yield opened


@pytest.fixture
def panel(run: Run, store: AnnotationStore) -> TurnPanel:
    return TurnPanel(run, store=store, annotator="ana")


def _row(run: Run, key: tuple[str | None, str, int]) -> dict[str, object]:
    system, record_id, turn = key
    found = run.turns.filter(
        (pl.col("system") == system) & (pl.col("record_id") == record_id) & (pl.col("turn") == turn)
    )
    assert found.height == 1
    return found.row(0, named=True)


def _html(panel: TurnPanel) -> str:
    panes = (panel.title_pane, panel.head_pane, panel.detail_pane, panel.evidence_pane, panel.annotations_pane)
    return "".join(pane.value for pane in panes)


def _visible(html: str) -> str:
    """The text a reader sees in ``html``: without its stylesheet and tags."""
    return re.sub(r"<[^>]+>", "", re.sub(r"<style>.*?</style>", "", html, flags=re.S))


def _annotations(store: AnnotationStore) -> pl.DataFrame:
    return store.events().filter(pl.col("kind") == "annotation")


def _error_text(panel: TurnPanel) -> str:
    return "".join(out.get("text", "") for out in panel.errors.outputs)


# --------------------------------------------------------------------------- what it shows
def test_hidden_until_a_turn_is_shown_and_hidden_again_by_clear(panel: TurnPanel) -> None:
    assert panel.widget.layout.display == "none" and panel.key is None
    assert panel.save_button.disabled and panel.previous_button.disabled and panel.next_button.disabled
    panel.show(RSG)
    assert panel.widget.layout.display is None and panel.key == RSG and not panel.save_button.disabled
    panel.clear()
    assert panel.widget.layout.display == "none" and panel.key is None
    assert _html(panel) == "" and panel.category.value == ""


def test_show_a_failed_turn_renders_the_page_panels_content(panel: TurnPanel, run: Run) -> None:
    panel.show(RSG)
    row = _row(run, RSG)
    html = _html(panel)
    assert panel.status_text() == ""
    # the bar: record, turn, system
    assert escape(RSG[1]) in panel.title_pane.value and "turn 2" in panel.title_pane.value
    assert "zarifaziz_dev_small" in panel.title_pane.value
    # the question, the answers, the verdict and the reason in words
    assert escape(row["question"]) in panel.head_pane.value
    assert "<th>gold answer</th><td>2.7</td>" in panel.head_pane.value
    assert "<th>predicted answer</th><td>37.8</td>" in panel.head_pane.value
    assert '<span class="wb-wrong">wrong</span>' in panel.head_pane.value
    assert "wrong value" in panel.head_pane.value and "wrong_value" not in panel.head_pane.value
    # the document's text, with the numbers the programs use marked
    gold_turn = run.gold.turns.filter((pl.col("record_id") == RSG[1]) & (pl.col("turn") == RSG[2])).row(0, named=True)
    document = run.gold.documents.filter(pl.col("doc_id") == gold_turn["doc_id"]).row(0, named=True)
    assert escape(document["pre_text"][:60]) in panel.evidence_pane.value
    assert '<mark class="wb-mark-gold">2.7</mark>' in panel.evidence_pane.value
    assert '<mark class="wb-mark-pred">37.8</mark>' in panel.evidence_pane.value
    assert "Numbers the programs use, marked: " in panel.evidence_pane.value
    # the conversation so far: turns 0 and 1 of the record
    conversation = panel.detail_pane.value.split("Conversation so far", 1)[1].split("</table>", 1)[0]
    assert [int(t) for t in re.findall(r"<tr><td>(\d+)</td>", conversation)] == [0, 1]
    # both programs with their steps
    assert '<h4>Gold program</h4><pre class="wb-program">2.7</pre>' in panel.detail_pane.value
    assert '<h4>Predicted program</h4><pre class="wb-program">37.8</pre>' in panel.detail_pane.value
    # every policy's verdict
    policies = run.policy_grades.filter((pl.col("record_id") == RSG[1]) & (pl.col("turn") == RSG[2]))["policy"]
    assert policies.len() >= 2
    assert all(f"<tr><td>{escape(p)}</td>" in panel.detail_pane.value for p in policies)
    # the data-quality flags (none on this turn, said in words)
    assert "No automatic flag on this turn." in panel.detail_pane.value
    # the full raw output, its dollar amounts intact, outside MathJax's reach
    raw = str(row["raw_output"])
    assert "$2.7 million and $37.8 million" in raw
    assert f'<pre class="wb-raw">{escape(raw)}</pre>' in panel.evidence_pane.value
    for pane in (panel.title_pane, panel.head_pane, panel.detail_pane, panel.evidence_pane, panel.annotations_pane):
        assert 'class="wb-panel tex2jax_ignore mathjax_ignore' in pane.value
    assert str(REPO) not in html and "/tmp/" not in html


def test_flags_with_their_evidence(run: Run, store: AnnotationStore) -> None:
    """A flagged turn (the checks flag gold turns; its system's row shows them) lists category, rule, confidence, evidence."""
    flag = run.checks.sort("confidence", descending=True).row(0, named=True)
    key = ("zarifaziz_dev_small", flag["record_id"], int(flag["turn"]))
    panel = TurnPanel(run, store=store, annotator="ana")
    panel.show(key)
    flags = panel.detail_pane.value.split("Data-quality flags", 1)[1]
    # as the page's panel has them (turn_detail.detail_data: category and rule in words)
    row = run.turns.filter((pl.col("record_id") == key[1]) & (pl.col("turn") == key[2]))
    shown = detail_data(run, row)["turns"][turn_key(*key)]["flags"]
    assert shown and shown[0][0] == category_label(str(flag["category"])).lower()
    for category, rule, confidence, evidence in shown:
        assert f"<tr><td>{escape(category)}</td><td>{escape(rule)}</td><td>{confidence:.2f}</td>" in flags
        assert f"<td>{escape(evidence)}</td>" in flags
    assert escape(flag["evidence"]) in flags


def test_data_is_escaped(store: AnnotationStore) -> None:
    """The hostile fixture puts script into a question, answers, programs and raw outputs: all shown as text."""
    hostile = grade_run(resolve(dataset=HOSTILE_GOLD, predictions=[HOSTILE_PREDICTIONS]))
    panel = TurnPanel(hostile, store=store, annotator="ana")
    for key in hostile.turns.filter(~pl.col("correct")).select("system", "record_id", "turn").iter_rows():
        panel.show(key)
        html = _html(panel)
        assert panel.status_text() == "", panel.status_text()
        assert "<script>" not in html and "<img" not in html
    panel.show(("zarifaziz_dev_small_hostile", "Single_IPG/2009/page_85.pdf-3", 0))
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in panel.evidence_pane.value


# --------------------------------------------------------------------------- Previous and Next
def test_previous_and_next_call_navigate(panel: TurnPanel) -> None:
    steps: list[int] = []
    panel.show(RSG)
    assert panel.previous_button.disabled and panel.next_button.disabled  # no grid yet
    panel.navigate = steps.append
    assert not panel.previous_button.disabled and not panel.next_button.disabled
    panel.previous_button.click()
    panel.next_button.click()
    panel.next_button.click()
    assert steps == [-1, 1, 1]
    panel.navigate = None
    assert panel.previous_button.disabled and panel.next_button.disabled


def test_position_names_the_row_and_stops_at_either_end(panel: TurnPanel) -> None:
    panel.navigate = lambda _delta: None
    panel.show(RSG, position=(0, 3))
    assert "row 1 of 3" in _visible(panel.title_pane.value)
    assert panel.previous_button.disabled and not panel.next_button.disabled
    panel.show(RSG, position=(2, 3))
    assert not panel.previous_button.disabled and panel.next_button.disabled
    panel.show(RSG)
    assert "row " not in _visible(panel.title_pane.value) and not panel.previous_button.disabled


def test_a_failing_navigate_is_one_line_never_raised(panel: TurnPanel, caplog: pytest.LogCaptureFixture) -> None:
    def broken(_delta: int) -> None:
        raise RuntimeError("the grid is gone")

    panel.show(RSG)
    panel.navigate = broken
    panel.next_button.click()  # must not raise into the event loop
    assert panel.status_text() == "Error: RuntimeError: the grid is gone"
    assert "Traceback" in _error_text(panel)  # the unexpected error's traceback is kept, in the Output
    assert any("turn panel next failed" in r.getMessage() for r in caplog.records)


def test_an_unknown_key_is_one_line(panel: TurnPanel) -> None:
    panel.show(("zarifaziz_dev_small", "no such record", 0))
    assert panel.status_text().startswith("Error: the run has no turn 'no such record', turn 0, of system")
    assert panel.key is None and _error_text(panel) == ""
    panel.show(("zarifaziz_dev_small", RSG[1]))  # type: ignore[arg-type]
    assert panel.status_text().startswith("Error: a turn key is (system, record_id, turn)")


# --------------------------------------------------------------------------- Annotate
def test_categories_are_the_triages(panel: TurnPanel) -> None:
    labels = dict((value, label) for label, value in panel.category.options if value)
    assert labels == {c: category_label(c) for c in ANNOTATION_CATEGORIES}


def test_save_writes_the_event_and_the_panel_lists_it(panel: TurnPanel, store: AnnotationStore) -> None:
    panel.show(RSG)
    assert "No annotation in force for this turn yet." in panel.annotations_pane.value
    panel.category.value = "mislabel"
    assert panel.about.value == ABOUT_GOLD
    panel.corrected_answer.value = " 37.8 "
    panel.corrected_program.value = "37.8"
    panel.note.value = "the $2.7 million is 2016 <b>not</b> 2015"
    panel.exclude.value = True
    panel.save_button.click()
    events = _annotations(store)
    assert events.height == 1
    event = events.row(0, named=True)
    assert (event["annotator"], event["record_id"], event["turn"], event["system"]) == ("ana", RSG[1], 2, None)
    assert (event["category"], event["corrected_answer"], event["corrected_program"]) == ("mislabel", "37.8", "37.8")
    assert event["note"] == "the $2.7 million is 2016 <b>not</b> 2015" and event["exclude"] is True
    assert panel.status_text() == f"Saved annotation #{event['event_id']}: Mislabel, about the gold data, by ana."
    listed = panel.annotations_pane.value
    assert "Annotations in force for this turn" in listed and "<td>Mislabel</td>" in listed
    assert escape(event["note"]) in listed and f"#{event['event_id']}" in listed and "<td>ana</td>" in listed

    # a model error is about the system's output: its own key, listed beside the first
    panel.category.value = "model_error"
    assert panel.about.value == ABOUT_SYSTEM
    second = panel.save()
    assert second is not None
    event = _annotations(store).filter(pl.col("event_id") == second).row(0, named=True)
    assert (event["system"], event["category"], event["annotator"]) == (RSG[0], "model_error", "ana")
    assert panel.annotations_pane.value.count("<td>ana</td>") == 2
    assert "system zarifaziz_dev_small’s output" in panel.annotations_pane.value

    # showing the turn again fills the form from the latest annotation in force
    panel.clear()
    panel.show(RSG)
    assert (panel.category.value, panel.about.value) == ("model_error", ABOUT_SYSTEM)
    assert panel.annotations_pane.value.count("<td>ana</td>") == 2


def test_the_analyst_may_say_what_an_annotation_is_about(panel: TurnPanel, store: AnnotationStore) -> None:
    panel.show(RSG)
    panel.category.value = "other"
    panel.about.value = ABOUT_SYSTEM
    event_id = panel.save()
    event = _annotations(store).filter(pl.col("event_id") == event_id).row(0, named=True)
    assert (event["category"], event["system"]) == ("other", RSG[0])


def test_a_program_that_does_not_parse_is_one_line_and_writes_nothing(panel: TurnPanel, store: AnnotationStore) -> None:
    panel.show(RSG)
    panel.category.value = "mislabel"
    panel.corrected_program.value = "subtract(2.7,"
    assert panel.save() is None
    message = panel.status_text()
    assert message.startswith(
        "Error: annotation: field 'corrected_program': the program 'subtract(2.7,' does not parse"
    )
    assert "Fix: write it in the ConvFinQA program language" in message and "\n" not in message
    assert 'class="wb-error-line"' in panel.status.value
    assert _annotations(store).height == 0 and _error_text(panel) == ""
    assert panel.corrected_program.value == "subtract(2.7,"  # the form is kept, to be fixed


def test_save_without_a_category_writes_nothing(panel: TurnPanel, store: AnnotationStore) -> None:
    assert panel.save() is None
    assert panel.status_text() == "Nothing to annotate: select a turn in the grid first"
    panel.show(RSG)
    panel.note.value = "no category"
    assert panel.save() is None
    assert panel.status_text() == "Nothing saved: pick a category before saving"
    assert store.events().height == 0


@pytest.mark.parametrize("given", ["  ", "", "analyst"])
def test_an_empty_or_shared_annotator_is_asked_before_the_first_save(
    run: Run, store: AnnotationStore, given: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    panel = TurnPanel(run, store=store, annotator=given)
    assert panel.annotator is None and panel.analyst.name == ""
    assert panel.analyst in panel.annotate_box.children
    panel.show(RSG)
    panel.category.value = "mislabel"
    assert panel.save() is None
    assert panel.status_text() == "Nothing saved: type your name in the 'Your name' box first"
    assert store.events().height == 0
    panel.analyst.proposed = "analyst"  # what the browser sends: a shared name is not taken
    assert panel.annotator is None and "shared default name" in panel.analyst.message
    panel.analyst.proposed = "bo"  # typed, or remembered by the browser
    assert panel.annotator == "bo" and panel.status_text() == "Annotating as bo."
    assert panel.save() is not None
    assert store.events()["annotator"].to_list() == ["bo"]


def test_the_panel_takes_the_hub_user(run: Run, store: AnnotationStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTERHUB_USER", "carla")
    panel = TurnPanel(run, store=store, annotator="analyst")
    assert (panel.annotator, panel.analyst.fixed) == ("carla", True)
    assert panel.analyst.message == "Annotating as carla (JupyterHub user)."


def test_model_error_only_where_the_answer_was_graded_wrong(panel: TurnPanel, run: Run, store: AnnotationStore) -> None:
    right = run.turns.filter(pl.col("correct")).select("system", "record_id", "turn").row(0)
    panel.show(right)
    panel.category.value = "model_error"
    assert panel.save() is None and "Model error is for a system's answer graded wrong" in panel.status_text()
    panel.show(RSG)  # graded wrong: recorded about the system even when the toggle says the gold
    panel.category.value = "model_error"
    panel.about.value = ABOUT_GOLD
    assert panel.save() is not None
    assert store.events()["system"].to_list() == [RSG[0]]


def test_the_store_is_a_path_or_the_triages_default(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    given = TurnPanel(run, store=str(tmp_path / "given.sqlite"), annotator="bo")
    given.show(RSG)
    given.category.value = "model_error"
    assert given.save() is not None
    assert _annotations(given.store)["annotator"].to_list() == ["bo"]
    assert given.store.path == tmp_path / "given.sqlite"
    given.store.close()

    monkeypatch.setattr(workbench.config, "project_root", lambda: tmp_path / "project")
    for empty in (None, ""):
        default = TurnPanel(run, store=empty, annotator="bo")
        assert default.store.path == tmp_path / "project" / workbench.config.DEFAULT_ANNOTATION_STORE
        default.store.close()


# --------------------------------------------------------------------------- single problems
def test_a_gsm8k_problem_says_problem_and_shows_what_applies(gsm8k_run: Run, store: AnnotationStore) -> None:
    key = gsm8k_run.turns.filter(~pl.col("correct")).select("system", "record_id", "turn").row(0)
    row = _row(gsm8k_run, key)
    panel = TurnPanel(gsm8k_run, store=store, annotator="ana")
    panel.show(key)
    assert panel.status_text() == ""
    html = _visible(_html(panel))
    assert _visible(panel.title_pane.value).startswith(f"problem {key[1]} · system {key[0]}")
    assert "turn" not in _visible(panel.title_pane.value)
    assert (
        panel.previous_button.description == "‹ Previous problem" and panel.next_button.description == "Next problem ›"
    )
    assert panel.exclude.description == "Exclude the problem"
    assert "No automatic flag on this problem." in panel.detail_pane.value
    assert "Document" not in html and "Conversation so far" not in html and "Programs and their steps" not in html
    assert panel.corrected_program not in panel.annotate_box.children  # no gold programs to correct
    assert escape(row["question"]) in panel.head_pane.value
    assert "Gold solution" in panel.evidence_pane.value
    raw = str(row["raw_output"])
    assert "$2 per egg" in raw and f'<pre class="wb-raw">{escape(raw)}</pre>' in panel.evidence_pane.value
    panel.category.value = "model_error"
    assert panel.save() is not None
    assert "Annotations in force for this problem" in panel.annotations_pane.value
