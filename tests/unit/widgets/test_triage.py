"""The triage view, headless: build it over a real session, call its handlers with made-up
events, then check what the store holds (house style 24)."""

from __future__ import annotations

import html
import json
import logging
import re
from pathlib import Path

import polars as pl
import pytest
from markupsafe import escape

from workbench.annotations.session import AnnotationSession
from workbench.annotations.store import AnnotationStore
from workbench.config import resolve
from workbench.errors import UsageError
from workbench.grading.normalize import parse_cell_number
from workbench.pipeline.run import Run, grade_run
from workbench.schema import ANNOTATION_CATEGORIES
from workbench.widgets import triage
from workbench.widgets.triage import TriageView

REPO = Path(__file__).resolve().parents[3]
DEV_SMALL = REPO / "tests" / "fixtures" / "convfinqa" / "dev_small.json"
PREDICTIONS = REPO / "tests" / "fixtures" / "predictions" / "zarifaziz_dev_small.jsonl"
SCRIPT = "<script>alert('x')</script>"
IMG = '<img src=x onerror="alert(1)">'


@pytest.fixture(scope="module")
def run() -> Run:
    """12 conversations, 42 turns, one system; 2 flagged gold turns, 3 failed turns."""
    return grade_run(resolve(dataset=DEV_SMALL, predictions=[PREDICTIONS]))


@pytest.fixture
def store(tmp_path: Path):
    with AnnotationStore(tmp_path / "annotations.sqlite") as opened:
        yield opened


@pytest.fixture
def view(store: AnnotationStore, run: Run) -> TriageView:
    """The checks queue: 2 flagged gold turns, most confident first."""
    return triage.triage(triage.session_for(store, run, annotator="ana", queue="checks"))


def _annotations(store: AnnotationStore) -> pl.DataFrame:
    return store.events().filter(pl.col("kind") == "annotation")


def _keydown(key: str, **modifiers: bool) -> dict[str, object]:
    return {"type": "keydown", "key": key, **modifiers}


def _error_text(view: TriageView) -> str:
    return "".join(out.get("text", "") for out in view.errors.outputs)


# --------------------------------------------------------------------------- rendering
def test_first_item_is_rendered_with_progress(view: TriageView) -> None:
    key = view.session.current()
    assert key is not None and key.system is None
    assert view.progress.value == "0 of 2 done · item 1 of 2"
    assert key.record_id in view.item_pane.value
    item = view.session.item()
    assert item is not None
    assert item.question in view.item_pane.value
    # below the actions: the automatic flags, with category, confidence and evidence (escaped)
    category, rule, confidence, evidence = item.flags[0]
    assert triage.category_label(category) in view.detail_pane.value
    assert f"{confidence:.2f}" in view.detail_pane.value
    assert escape(evidence) in view.detail_pane.value
    # the gold program and its trace
    assert item.gold_trace.steps and all(escape(s) in view.detail_pane.value for s in item.gold_trace.steps)
    # no Python repr, no absolute path anywhere in the view
    shown = view.item_pane.value + view.detail_pane.value + view.progress.value + view.status.value
    assert "AnnotationStore(" not in shown and str(REPO) not in shown and "/tmp/" not in shown
    assert view.status.value == ""
    assert view.errors.outputs == ()


def test_numbers_the_programs_use_are_marked_in_the_document(view: TriageView) -> None:
    item = view.session.item()
    assert item is not None and item.numbers_used
    marked = re.findall(r"<mark>(.*?)</mark>", view.document_pane.value)
    assert marked, "no number of the programs is marked in the document"
    for text in marked:
        value = parse_cell_number(text)
        assert value is not None
        assert any(abs(abs(value) - abs(n)) <= 1e-6 * abs(n) for n in item.numbers_used) or any(
            abs(abs(value) / 100 - abs(n)) <= 1e-6 * abs(n) for n in item.numbers_used
        ), text


def test_category_buttons_show_their_keys_and_selection(view: TriageView) -> None:
    buttons = list(view.category_buttons.values())
    assert [b.description.split(" ", 1)[0] for b in buttons] == [str(i) for i in range(1, 8)]
    assert list(view.category_buttons) == list(ANNOTATION_CATEGORIES)
    assert buttons[0].description == "1 Missing value"
    view.category_buttons["mislabel"].click()
    assert view.category_buttons["mislabel"].button_style == "primary"
    assert all(b.button_style == "" for name, b in view.category_buttons.items() if name != "mislabel")
    view.select_category("ambiguous_question")
    assert view.category_buttons["ambiguous_question"].button_style == "primary"
    assert view.category_buttons["mislabel"].button_style == ""


def test_model_error_is_offered_only_where_the_answer_was_graded_wrong(view: TriageView, store, run: Run) -> None:
    # the checks queue's first item: a flagged gold turn the system answered right
    assert view.session.item().correct is True
    assert view.category_buttons["model_error"].disabled
    view.on_key(_keydown("6"))
    assert view._selected is None and view.status.value.startswith("Model error is for a system's answer graded wrong")
    wrong = triage.session_for(store, run, annotator="ana", queue="failed")
    failed = triage.triage(wrong)
    assert not failed.category_buttons["model_error"].disabled
    failed.on_key(_keydown("6"))
    assert failed.save() is not None
    assert _annotations(store)["system"].to_list() == [wrong.queue[0].system]


def test_the_triage_asks_for_a_name_before_the_first_save(store, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    view = triage.triage(triage.session_for(store, run, annotator="analyst", queue="checks"))
    assert view.analyst in view.widget.children and view.analyst.name == ""
    assert view.analyst.message.startswith("Who is annotating?")
    view.on_key(_keydown("2"))
    assert view.save() is None
    assert view.status.value == "nothing saved: type your name in the 'Your name' box above first"
    assert store.events().height == 0
    view.analyst.proposed = "ana"  # typed in the box, or the name this browser remembered
    assert view.status.value == "annotating as ana"
    view.on_key(_keydown("2"))
    assert view.save() is not None
    assert store.events()["annotator"].to_list() == ["ana"]


def test_keys_are_not_taken_from_the_form(view: TriageView) -> None:
    """ipyevents captures every key while the mouse is over a watched widget: the text inputs
    must not be inside one, or typing a 1 in the note would select a category."""

    def descendants(widget: object) -> list[object]:
        children = list(getattr(widget, "children", ()))
        return [widget] + [d for c in children for d in descendants(c)]

    watched = [d for event in view._key_events for d in descendants(event.source)]
    assert all(event.watched_events == ["keydown"] for event in view._key_events)
    for typed in (view.corrected_answer, view.corrected_program, view.note):
        assert all(typed is not w for w in watched)
    assert any(view.save_button is w for w in watched)
    assert any(view.item_pane is w for w in watched)


# --------------------------------------------------------------------------- saving
def test_select_and_save_writes_the_form_to_the_store(view: TriageView, store: AnnotationStore) -> None:
    key = view.session.current()
    assert key is not None
    view.select_category("sign_inconsistency")
    view.corrected_answer.value = " -10% "
    view.note.value = "the table shows a decrease"
    view.exclude.value = True
    event_id = view.save()

    events = store.events()
    assert events.height == 1
    row = events.row(0, named=True)
    assert event_id == row["event_id"]
    assert row["kind"] == "annotation"
    assert (row["record_id"], row["turn"], row["system"]) == (key.record_id, key.turn, None)
    assert row["annotator"] == "ana"
    assert row["category"] == "sign_inconsistency"
    assert row["corrected_answer"] == "-10%"
    assert row["corrected_program"] is None
    assert row["note"] == "the table shows a decrease"
    assert row["exclude"] is True

    assert view.status.value == f"saved #{event_id}"
    assert view.progress.value == "1 of 2 done · item 2 of 2"
    # the form is cleared for the next item
    assert (view.note.value, view.corrected_answer.value, view.exclude.value) == ("", "", False)
    assert all(b.button_style == "" for b in view.category_buttons.values())
    assert view.session.current() != key


def test_keyboard_selects_and_enter_saves(view: TriageView, store: AnnotationStore) -> None:
    view.on_key(_keydown("2"))
    assert view.category_buttons["unit_inconsistency"].button_style == "primary"
    view.note.value = "scale"
    view.on_key(_keydown("Enter"))
    row = store.events().row(-1, named=True)
    assert (row["category"], row["note"], row["exclude"]) == ("unit_inconsistency", "scale", False)
    assert view.status.value == f"saved #{row['event_id']}"
    # keys with ctrl/alt other than ctrl+z and unknown keys do nothing
    view.on_key(_keydown("3", ctrlKey=True))
    view.on_key(_keydown("q"))
    view.on_key({"type": "keyup", "key": "Enter"})
    assert all(b.button_style == "" for b in view.category_buttons.values())
    assert store.events().height == 1


def test_save_without_a_category_writes_nothing(view: TriageView, store: AnnotationStore) -> None:
    view.note.value = "forgot the category"
    assert view.save() is None
    assert view.status.value.startswith("nothing selected")
    assert store.events().height == 0
    assert view.progress.value == "0 of 2 done · item 1 of 2"
    assert view.note.value == "forgot the category"


def test_skip_and_back_move_without_writing(view: TriageView, store: AnnotationStore) -> None:
    first = view.session.current()
    view.skip()
    assert view.progress.value == "0 of 2 done · item 2 of 2"
    assert view.status.value == "skipped"
    view.on_key(_keydown("ArrowLeft"))
    assert view.session.current() == first
    assert view.progress.value == "0 of 2 done · item 1 of 2"
    view.on_key(_keydown("ArrowRight"))
    view.on_key(_keydown("s"))
    assert view.session.current() is None
    # the end of the queue says none is annotated and why: both were skipped (not "done")
    assert _said(view).startswith("End of your queue. Annotated: 0 of 2 items. Still open: 2 you skipped. Back")
    assert view.progress.value == "0 of 2 done · end of the queue"
    view.back()
    view.back()
    view.back()
    assert view.status.value == "already at the first item"
    assert store.events().height == 0


def test_undo_appends_a_retraction_and_shows_the_item_again(view: TriageView, store: AnnotationStore) -> None:
    first = view.session.current()
    view.select_category("mislabel")
    saved = view.save()
    assert saved is not None
    view.on_key(_keydown("u"))
    events = store.events()
    assert events.get_column("kind").to_list() == ["annotation", "retraction"]
    retraction = events.row(1, named=True)
    assert retraction["retracts"] == saved
    assert retraction["category"] is None
    assert store.active().height == 0
    assert view.session.current() == first
    assert view.progress.value == "0 of 2 done · item 1 of 2"
    assert view.status.value == f"undone (retraction #{retraction['event_id']})"
    # ctrl+z does the same; with nothing left it says so
    view.on_key(_keydown("z", ctrlKey=True))
    assert view.status.value == "nothing to undo"
    assert store.events().height == 2


def test_an_exhausted_queue_says_all_done(view: TriageView, store: AnnotationStore) -> None:
    for category in ("sign_inconsistency", "unit_inconsistency"):
        view.select_category(category)
        view.save()
    assert _said(view).startswith("All 2 items are annotated (both by you). Back (←)")
    assert view.progress.value == "2 of 2 done · end of the queue"
    assert view.save_button.disabled and all(b.disabled for b in view.category_buttons.values())
    assert view.document_pane.value == ""
    assert view.save() is None
    assert _annotations(store).height == 2


def _said(view: TriageView) -> str:
    """The item pane's text as a reader sees it (its markup's entities read)."""
    return html.unescape(re.sub(r"<style>.*?</style>|<[^>]+>", "", view.item_pane.value, flags=re.S))


def _checks_view(store: AnnotationStore, run: Run, name: str, **options: object) -> TriageView:
    """A triage of the checks queue for ``name``, its leases its own (as another analyst's kernel)."""
    session = AnnotationSession.from_checks(store, run, annotator=name, owner=f"kernel-{name}", **options)  # type: ignore[arg-type]
    return triage.triage(session)


def test_the_end_of_the_queue_says_an_item_another_analyst_has_open_is_not_done(
    store: AnnotationStore, run: Run
) -> None:
    bo = _checks_view(store, run, "bo")  # bo has the first item on screen
    ana = _checks_view(store, run, "ana")
    assert ana.session.position == 1
    ana.select_category("mislabel")
    assert ana.save() is not None
    line = "End of your queue. Annotated: 1 of 2 items (by you). Still open: 1 on another analyst's screen."
    assert _said(ana) == f"{line} Back (←) shows the last item again; Undo takes back the last save."
    # bo saves it: every item is annotated now, one by each analyst
    bo.select_category("other")
    assert bo.save() is not None
    assert _said(bo).startswith("All 2 items are annotated (1 by you, 1 by another analyst). Back (←)")


def test_the_end_of_the_queue_says_which_items_wait_for_a_second_analyst(store: AnnotationStore, run: Run) -> None:
    ana = _checks_view(store, run, "ana", overlap=1.0)  # every item shown to two analysts
    for category in ("mislabel", "other"):
        ana.select_category(category)
        assert ana.save() is not None
    line = "End of your queue. Annotated: 0 of 2 items. Still open: 2 waiting for another analyst's decision"
    assert _said(ana).startswith(line)
    bo = _checks_view(store, run, "bo", overlap=1.0)
    bo.select_category("mislabel")
    assert bo.save() is not None
    bo.skip()
    assert "Annotated: 1 of 2 items (by you). Still open: 1 you skipped." in _said(bo)  # decided by both, bo too


def test_an_active_annotation_fills_the_form(store: AnnotationStore, run: Run) -> None:
    session = triage.session_for(store, run, annotator="ana", queue="checks")
    key = session.current()
    assert key is not None
    store.annotate(annotator="bob", record_id=key.record_id, turn=key.turn, category="other", note="seen", exclude=True)
    view = TriageView(session)
    assert view.category_buttons["other"].button_style == "primary"
    assert (view.note.value, view.exclude.value) == ("seen", True)
    assert "Already annotated" in view.item_pane.value
    assert view.progress.value == "1 of 2 done · item 1 of 2"


def test_an_empty_queue_renders(store: AnnotationStore, run: Run) -> None:
    view = TriageView(AnnotationSession(store, run, [], annotator="ana"))
    assert view.progress.value == "nothing to triage: the queue is empty"
    assert "Nothing to triage" in view.item_pane.value
    view.on_key(_keydown("1"))
    view.on_key(_keydown("Enter"))
    view.skip()
    view.undo()
    assert store.events().height == 0
    assert view.errors.outputs == ()


# --------------------------------------------------------------------------- errors
def test_an_invalid_program_is_shown_not_raised(view: TriageView, store: AnnotationStore, caplog) -> None:
    view.select_category("mislabel")
    view.corrected_program.value = "subtract(60.94,"
    with caplog.at_level(logging.WARNING, logger="workbench.widgets.triage"):
        assert view.save() is None
    assert store.events().height == 0
    assert "InputError" in _error_text(view)
    assert "corrected_program" in _error_text(view)
    assert view.status.value.startswith("error: ")
    assert any("corrected_program" in r.getMessage() for r in caplog.records)
    # nothing moved, nothing was cleared: the analyst can fix the program and save again
    assert view.progress.value == "0 of 2 done · item 1 of 2"
    assert view.corrected_program.value == "subtract(60.94,"
    view.corrected_program.value = "subtract(60.94, 25.14)"
    event_id = view.save()
    assert store.events().row(0, named=True)["corrected_program"] == "subtract(60.94, 25.14)"
    assert view.status.value == f"saved #{event_id}"


def test_an_unexpected_error_keeps_its_traceback(
    view: TriageView, store: AnnotationStore, monkeypatch: pytest.MonkeyPatch, caplog
) -> None:
    def broken(**_: object) -> int:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(view.session, "submit", broken)
    view.on_key(_keydown("1"))
    with caplog.at_level(logging.ERROR, logger="workbench.widgets.triage"):
        view.on_key(_keydown("Enter"))
    text = _error_text(view)
    assert "Traceback" in text and "RuntimeError: disk on fire" in text
    assert view.status.value == "error: disk on fire"
    assert any(r.exc_info for r in caplog.records)
    assert store.events().height == 0


def test_a_save_that_worked_is_not_hidden_by_a_failing_render(
    view: TriageView, store: AnnotationStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> None:
        raise RuntimeError("broken document")

    view.select_category("other")
    monkeypatch.setattr(view.session, "item", broken)
    event_id = view.save()
    assert event_id == store.events().row(0, named=True)["event_id"]
    assert view.status.value == f"saved #{event_id}; error: broken document"
    assert "RuntimeError: broken document" in _error_text(view)


def test_an_unknown_category_is_reported(view: TriageView) -> None:
    view.select_category("typo")
    assert "UsageError" in _error_text(view)
    assert "missing_value" in view.status.value


# --------------------------------------------------------------------------- escaping
@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The small fixture with a ``<script>`` in a question and an ``<img onerror>`` in a document."""
    data = json.loads(DEV_SMALL.read_text())
    record = next(r for r in data["dev"] if r["id"] == "Double_RSG/2016/page_144.pdf")
    record["dialogue"]["conv_questions"][0] = SCRIPT + " " + record["dialogue"]["conv_questions"][0]
    record["dialogue"]["conv_questions"][2] = SCRIPT
    record["doc"]["pre_text"] = IMG + " " + record["doc"]["pre_text"]
    path = tmp_path_factory.mktemp("hostile") / "dev_small_hostile.json"
    path.write_text(json.dumps(data))
    return grade_run(resolve(dataset=path, predictions=[PREDICTIONS]))


def test_questions_and_documents_are_escaped(hostile_run: Run, store: AnnotationStore) -> None:
    session = triage.session_for(store, hostile_run, annotator="ana", queue="failed")
    view = TriageView(session)
    assert session.current() is not None and session.current().turn == 0
    for pane in (view.item_pane.value, view.document_pane.value):
        assert "<script" not in pane and "<img" not in pane
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in view.item_pane.value
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in view.document_pane.value
    view.skip()  # turn 2: the question itself, and turn 0's question in the conversation so far
    assert session.current().turn == 2
    shown = view.item_pane.value + view.detail_pane.value  # the question; the conversation below the actions
    assert "<script" not in shown
    assert view.item_pane.value.count("&lt;script&gt;") == 1 and shown.count("&lt;script&gt;") == 2


# --------------------------------------------------------------------------- session_for
def test_session_for_the_failed_queue_of_a_slice_group(store: AnnotationStore, run: Run) -> None:
    every = triage.session_for(store, run, annotator="ana", queue="failed")
    assert every.total == 3 and all(k.system is not None for k in every.queue)
    first_turns = triage.session_for(store, run, annotator="ana", queue="failed", slice_name="turn_index", group="0")
    assert [k.turn for k in first_turns.queue] == [0]
    confident = triage.session_for(store, run, annotator="ana", queue="checks", min_confidence=0.88)
    assert confident.total == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"queue": "flagged"}, "queue 'flagged' is not one of checks, failed"),
        ({"queue": "checks", "slice_name": "operation", "group": "divide"}, "were given with queue='checks'"),
    ],
)
def test_session_for_refuses_what_it_cannot_do(
    store: AnnotationStore, run: Run, options: dict[str, str], message: str
) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        triage.session_for(store, run, annotator="ana", **options)


def test_store_path_defaults_to_reports_under_the_project_root(tmp_path: Path) -> None:
    from workbench.config import annotation_store_path

    assert annotation_store_path() == REPO / "reports" / "annotations.sqlite"
    assert annotation_store_path(tmp_path / "a.sqlite") == tmp_path / "a.sqlite"
    with triage.open_store(tmp_path / "new" / "b.sqlite") as opened:
        assert opened.path == tmp_path / "new" / "b.sqlite"
        assert opened.events().height == 0


# --------------------------------------------------------------------------- the run, graded once
def test_load_run_grades_once_and_opens_the_kept_folder_after(tmp_path: Path) -> None:
    config = resolve(dataset=DEV_SMALL, predictions=[PREDICTIONS])
    with AnnotationStore(tmp_path / "annotations.sqlite") as store:
        first = triage.load_run(config, store=store)
        assert first.graded_dir is None  # graded here, then kept beside the store
        kept = list((tmp_path / triage.GRADED_CACHE).iterdir())
        assert len(kept) == 1 and (kept[0] / "summary.json").is_file()
        again = triage.load_run(config, store=store)
        assert again.graded_dir is not None and again.graded_dir.resolve() == kept[0].resolve()
        assert again.turns.sort("record_id", "turn").equals(first.turns.sort("record_id", "turn"))
        assert again.checks.height == first.checks.height
        # another set of inputs gets a folder of its own
        triage.load_run(resolve(dataset=DEV_SMALL, predictions=[PREDICTIONS], systems="other"), store=store)
        assert len(list((tmp_path / triage.GRADED_CACHE).iterdir())) == 2


def test_the_adjudication_queue_shows_both_ratings(store, run: Run) -> None:
    record_id, turn = run.gold.turns.select("record_id", "turn").row(0)
    store.annotate(annotator="ana", record_id=record_id, turn=turn, category="mislabel")
    store.annotate(annotator="bo", record_id=record_id, turn=turn, category="other")
    view = triage.triage(triage.session_for(store, run, annotator="cy", queue="adjudicate"))
    assert view.progress.value == "0 of 1 done · item 1 of 1 · to adjudicate: ana said Mislabel, bo said Other"
    view.on_key(_keydown("4"))
    assert view.save() is not None
    assert view.progress.value.startswith("1 of 1 done · end of the queue")
