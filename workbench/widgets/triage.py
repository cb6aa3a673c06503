"""Triage view: one turn at a time, a category per turn, saved to the annotation store.

:class:`TriageView` is a *view* over an :class:`~workbench.annotations.session.AnnotationSession`
(queue, cursor, skip, undo) which writes to an :class:`~workbench.annotations.store.AnnotationStore`.
The view renders ``session.item()`` and calls session methods; besides widget state (the
selected category, what is typed in the form) it keeps nothing.

It shows the document (table and text, with the numbers the gold and predicted programs use
marked), the conversation so far, the question, the gold and predicted answers with the grader's
verdict, both programs with their execution traces, and the automatic data-quality flags. The
analyst picks a category, optionally types a corrected answer or program, a note, marks the
conversation excluded, and saves.

Keyboard shortcuts (with the mouse over the item, the document or the buttons; typing in the form is never
taken as a shortcut): ``1``-``7`` a category, ``Enter`` save, ``s`` or ``→`` skip, ``←`` back,
``u`` or ``ctrl+z`` undo.

Every handler is wrapped: an exception goes to the view's ``errors`` Output widget, the status
label and the log; it is never raised into the event loop, never lost.

With ``wait_for_page`` (the triage template) the view takes its first item only when a page shows
it: Voila runs the template in a kernel started ahead of any page (``preheat_kernel``), and such a
kernel must hold no lease until an analyst's browser connects and says who is there.

Every string from the data (document, questions, answers, programs, evidence) reaches an HTML
widget through the package's one autoescaping renderer (:mod:`workbench.views.html`, the
macros of ``templates/triage.html.j2``), so it shows as text.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import traceback
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import ipywidgets as widgets

from workbench.annotations.backends import Store, store_location
from workbench.annotations.backends import open_store as _open_store
from workbench.annotations.queues import session_for
from workbench.config import RunConfig, annotation_store_path
from workbench.errors import InputError, UsageError, WorkbenchError
from workbench.pipeline.run import Run, grade_run, open_or_grade
from workbench.schema import ANNOTATION_CATEGORIES
from workbench.views.html import Markup, macro, static_text
from workbench.views.turn_detail import marked_cell as _cell
from workbench.views.turn_detail import marked_pieces as _segments
from workbench.widgets.analyst import AnalystName
from workbench.widgets.queue_end import BACK_AND_UNDO, end_of_queue

if TYPE_CHECKING:
    from workbench.annotations.session import AnnotationSession, TriageItem

__all__ = [
    "TriageView",
    "triage",
    "session_for",
    "open_store",
    "load_run",
    "category_label",
    "highlight_numbers",
    "document_html",
    "item_html",
    "head_html",
    "details_html",
    "KEY_HELP",
]

logger = logging.getLogger(__name__)

#: The queues the template can open: flagged gold turns, or failed turns (of a slice group).
QueueName = Literal["checks", "failed", "adjudicate"]

#: What each key does; shown under the buttons.
KEY_HELP = "Keys, with the mouse over the item, document or buttons: 1-7 category · Enter save · s or → skip · ← back · u or ctrl+z undo"

#: The template of the panes.
_TEMPLATE = "triage.html.j2"

F = TypeVar("F", bound=Callable[..., Any])


# --------------------------------------------------------------------------- store and session
def open_store(path: str | Path = "") -> Store:
    """Open (or create) the annotation store at ``path``: a SQLite file (or ``sqlite:///path``,
    created with its folder), a ``postgresql://user@host:port/db`` URL (the password from
    ``PGPASSWORD``, ``~/.pgpass`` or a service file), or empty for the default,
    :func:`workbench.config.annotation_store_path`.

    Calling it again in the same kernel (the template's cell run twice) is safe: every store
    opened on one file shares the process's one connection to it (see
    :class:`~workbench.annotations.store.AnnotationStore`).

    Examples
    --------
    >>> import tempfile
    >>> with open_store(Path(tempfile.mkdtemp()) / "a.sqlite") as store:
    ...     store.snapshot()["n_events"]
    0
    """
    return _open_store(store_location(path))


#: The folder beside the store that keeps one graded folder per set of inputs.
GRADED_CACHE = "triage.graded"


def _inputs_key(config: RunConfig) -> str:
    """A short digest of what ``config`` grades: each file's resolved path, size and change time,
    the system names, column maps, policy and benchmark (a changed file gets a new key)."""
    files: list[object] = []
    for path in (config.dataset, *config.predictions):
        try:
            found = path.stat() if path is not None else None
        except OSError:
            found = None  # open_or_grade says what is wrong with it, in one line
        files.append([str(path.resolve()), found.st_size, found.st_mtime_ns] if path and found else str(path))
    described = [
        files,
        list(config.systems),
        [repr(m) for m in config.column_maps],
        config.policy.name,
        config.benchmark,
    ]
    return hashlib.sha256(json.dumps(described, default=str).encode("utf-8")).hexdigest()[:16]


def load_run(config: RunConfig, graded_dir: str | Path = "", *, store: Store | None = None) -> Run:
    """The run to triage, graded at most once per set of inputs.

    With ``graded_dir`` this is :func:`~workbench.pipeline.run.open_or_grade` (the folder
    ``workbench grade`` or ``workbench report`` wrote). Without it the run is kept in a folder
    beside the annotation store (``triage.graded/<digest of the inputs>/``): graded and written
    the first time, opened (about a second, no grading) every time after, so the triage shows
    its first item quickly. A cache that cannot be written or read is left aside: the run is
    then graded here, as before.
    """
    if str(graded_dir).strip():
        return open_or_grade(config, graded_dir)
    local = store.location.path if store is not None else None  # a server store keeps the cache in reports/
    base = local.parent if local is not None else annotation_store_path().parent
    folder = base / GRADED_CACHE / _inputs_key(config)
    try:
        run = open_or_grade(config, folder)
    except InputError as exc:  # a cache folder that no longer matches its inputs: grade here
        logger.warning("triage: the graded cache %s was not used (%s); grading again", folder.name, exc)
        return grade_run(config)
    if run.graded_dir is None:
        try:
            run.write(folder)
        except (OSError, WorkbenchError) as exc:  # the run is graded; only the next start is slower
            logger.warning("triage: could not keep the graded run for next time (%s)", exc)
    return run


# --------------------------------------------------------------------------- rendering (pure)
def category_label(category: str) -> str:
    """A readable label for an annotation category.

    Examples
    --------
    >>> category_label("unit_inconsistency")
    'Unit inconsistency'
    """
    return category.replace("_", " ").capitalize()


def highlight_numbers(text: str, numbers: Iterable[float]) -> str:
    """Escape ``text`` for HTML and mark each number in it that is one of ``numbers``.

    Numbers are read as :data:`~workbench.grading.patterns.DOCUMENT_NUMBER` reads them (thousands
    separators, no sign) and compared without sign; a number also matches its hundredth, so the
    ``13.4`` of ``13.4%`` matches the program literal ``13.4%`` (0.134).

    Examples
    --------
    >>> highlight_numbers("expense rose 13.4% to $ 1,080 <b>million</b>", {0.134, 1080.0})
    'expense rose <mark>13.4</mark>% to $ <mark>1,080</mark> &lt;b&gt;million&lt;/b&gt;'
    """
    return str(macro(_TEMPLATE, "highlight", _segments(text, tuple(numbers))))


def document_html(item: TriageItem) -> str:
    """The document of ``item``: pre-text, table and post-text, escaped, with every number the
    gold or predicted program uses marked (``<mark>``), in the cells and in the text.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> doc = SimpleNamespace(pre_text="sales were 60.94", post_text="", table_columns=("2007",),
    ...                       table_rows=(("price <b>", "$ 60.94"),), numbers_used=frozenset({60.94}))
    >>> "<td><mark>$ 60.94</mark></td>" in document_html(doc), "<th>price &lt;b&gt;</th>" in document_html(doc)
    (True, True)
    >>> "<thead><tr><th></th><th>2007</th></tr></thead>" in document_html(doc)
    True
    """
    numbers = tuple(item.numbers_used)
    columns = [str(c) for c in item.table_columns]
    if any(len(row) > len(columns) for row in item.table_rows):  # the rows start with their label
        columns.insert(0, "")
    markup = macro(
        _TEMPLATE,
        "document",
        _css(),
        _segments(item.pre_text, numbers) if item.pre_text else [],
        columns,
        [[_cell(str(c), numbers) for c in row] for row in item.table_rows],
        bool(item.table_rows or item.table_columns),
        _segments(item.post_text, numbers) if item.post_text else [],
    )
    return str(markup)


def _css() -> Markup:
    """The panes' stylesheet (``views/static/triage.css``)."""
    return Markup(static_text("triage.css"))


def _item_parts(item: TriageItem) -> tuple[Any, ...]:
    a = item.annotation
    annotation = (a.get("category"), a.get("annotator"), a.get("event_id")) if a else None
    flags = [
        (category_label(str(category)), rule, f"{float(confidence):.2f}", evidence)
        for category, rule, confidence, evidence in item.flags
    ]
    conversation = [(int(turn), question, gold, predicted) for turn, question, gold, predicted in item.conversation]
    show_predicted = item.key.system is not None or item.predicted_trace is not None
    return annotation, conversation, show_predicted, flags


def head_html(item: TriageItem) -> str:
    """What the analyst decides on, short enough for the first screen: the key, an earlier
    annotation, the question, the gold and predicted answers and the verdict; escaped."""
    annotation, _conversation, _show, _flags = _item_parts(item)
    return str(macro(_TEMPLATE, "head", _css(), item, int(item.key.turn), annotation))


def details_html(item: TriageItem) -> str:
    """What supports the decision, shown below the actions: automatic flags, both programs with
    their traces, the conversation so far; escaped."""
    _annotation, conversation, show_predicted, flags = _item_parts(item)
    return str(macro(_TEMPLATE, "details", _css(), item, conversation, show_predicted, flags))


def item_html(item: TriageItem) -> str:
    """Everything about ``item`` but the document: key, earlier annotation, conversation so far,
    question, answers and verdict, programs with traces, automatic flags; escaped.

    Examples
    --------
    >>> from workbench.annotations.session import QueueItem, TraceView, TriageItem
    >>> trace = TraceView(program="add(1, 2)", status="ok", value="3", steps=("#0 add(1, 2) = 3",), message="")
    >>> item = TriageItem(key=QueueItem("r<1>", 0, None), question="<script>x</script>", gold_answer="3",
    ...     gold_executed="3", predicted_answer=None, answer_graded=None, correct=None, reason=None, detail=None,
    ...     error_type=None, conversation=(), gold_trace=trace, predicted_trace=None, flags=(), pre_text="",
    ...     post_text="", table_columns=(), table_rows=(), numbers_used=frozenset({1.0, 2.0}), annotation=None)
    >>> "&lt;script&gt;x&lt;/script&gt;" in item_html(item), "<script>" in item_html(item)
    (True, False)
    """
    return head_html(item) + details_html(item)


# --------------------------------------------------------------------------- the view
def _reported(method: F) -> F:
    """Wrap a handler so that any exception is shown (Output widget, status label) and logged,
    never raised into the widget event loop."""

    @functools.wraps(method)
    def wrapper(self: TriageView, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:  # shown in the view and logged: a handler must not lose an error
            self._report(method.__name__, exc)
            return None

    return wrapper  # type: ignore[return-value]


def _optional(text: str) -> str | None:
    text = text.strip()
    return text or None


class TriageView:
    """A triage view over ``session``: render its current item, write through ``session.submit``.

    Parameters
    ----------
    session
        The :class:`~workbench.annotations.session.AnnotationSession` (queue, cursor, undo).
    wait_for_page
        Take the first item (and its lease) only when a page shows the view (the name box reports
        it, after the name the browser remembers): a kernel Voila starts ahead of its page holds
        nothing until an analyst is there. False: show the first item now (a script, a test).

    Attributes
    ----------
    widget
        The ``VBox`` to display (displaying the view displays it).
    progress, status
        Labels: "N of M done · item k of M" (and how many items other analysts have open), and
        the last action's outcome ("saved #12", "nothing selected", an error).
    errors
        ``Output`` widget holding every exception a handler raised.
    item_pane, detail_pane, document_pane
        The rendered item (key, question, answers, verdict: above the actions), its details
        (flags, programs with traces, conversation: below them) and the document (HTML).
    category_buttons
        One button per :data:`~workbench.schema.ANNOTATION_CATEGORIES`, keys 1-7.
    corrected_answer, corrected_program, note, exclude
        The form.

    Examples
    --------
    >>> import tempfile, workbench
    >>> from workbench.config import project_root
    >>> fixtures = project_root() / "tests" / "fixtures"
    >>> run = workbench.grade_run(workbench.config.resolve(
    ...     dataset=fixtures / "convfinqa" / "dev_small.json",
    ...     predictions=[fixtures / "predictions" / "zarifaziz_dev_small.jsonl"]))
    >>> store = open_store(Path(tempfile.mkdtemp()) / "a.sqlite")
    >>> view = triage(session_for(store, run, annotator="doc", queue="checks"))
    >>> view.progress.value
    '0 of 2 done · item 1 of 2'
    >>> view.on_key({"type": "keydown", "key": "2"}); view.save() is not None
    True
    >>> view.status.value.startswith("saved #"), view.progress.value
    (True, '1 of 2 done · item 2 of 2')
    >>> store.close()
    """

    def __init__(self, session: AnnotationSession, *, wait_for_page: bool = False) -> None:
        from ipyevents import Event

        self.session = session
        self._selected: str | None = None
        self._item: TriageItem | None = None
        #: Who annotates: asked here (and remembered by the browser) until a name is set.
        self.analyst = AnalystName(session.annotator or "")
        self.analyst.on_name(self._named)

        self.progress = widgets.Label()
        self.progress.add_class("wb-progress")
        self.status = widgets.Label(value="")
        self.item_pane = widgets.HTML()
        self.detail_pane = widgets.HTML()
        self.document_pane = widgets.HTML()
        self.errors = widgets.Output(layout=widgets.Layout(max_height="240px", overflow="auto"))

        self.category_buttons: dict[str, widgets.Button] = {}
        for number, category in enumerate(ANNOTATION_CATEGORIES, start=1):
            button = widgets.Button(
                description=f"{number} {category_label(category)}",
                tooltip=f"{category_label(category)} (key {number})",
                layout=widgets.Layout(width="auto", margin="2px"),
            )
            button.on_click(functools.partial(self._clicked_category, category))
            self.category_buttons[category] = button

        full = widgets.Layout(width="100%", margin="2px 0")
        wide = {"description_width": "70px"}
        self.corrected_answer = widgets.Text(
            description="Answer", placeholder="corrected gold answer (optional)", layout=full, style=wide
        )
        self.corrected_program = widgets.Text(
            description="Program",
            placeholder="corrected gold program, e.g. subtract(60.94, 25.14), divide(#0, 25.14) (optional)",
            layout=full,
            style=wide,
        )
        self.note = widgets.Textarea(description="Note", placeholder="why (optional)", rows=2, layout=full, style=wide)
        self.exclude = widgets.ToggleButton(
            value=False,
            description="Exclude conversation",
            tooltip="drop this conversation from the cleaned dataset",
            layout=widgets.Layout(width="auto", margin="2px"),
        )

        auto = {"layout": widgets.Layout(width="auto", margin="2px")}
        self.save_button = widgets.Button(description="Save (Enter)", button_style="success", **auto)
        self.skip_button = widgets.Button(description="Skip (s, →)", **auto)
        self.back_button = widgets.Button(description="Back (←)", **auto)
        self.undo_button = widgets.Button(description="Undo (u, ctrl+z)", **auto)
        self.save_button.on_click(lambda _b: self.save())
        self.skip_button.on_click(lambda _b: self.skip())
        self.back_button.on_click(lambda _b: self.back())
        self.undo_button.on_click(lambda _b: self.undo())

        wrap = widgets.Layout(flex_flow="row wrap", align_items="center")
        categories = widgets.HBox(list(self.category_buttons.values()), layout=wrap)
        actions = widgets.HBox(
            [self.save_button, self.skip_button, self.back_button, self.undo_button, self.exclude], layout=wrap
        )
        reading = widgets.VBox([self.item_pane, categories])
        form = widgets.VBox([self.corrected_answer, self.corrected_program, self.note])
        # Keys are watched over the item, the document and the buttons only: ipyevents takes every key
        # press while the mouse is over a watched widget, so the form (where the analyst types) is left out.
        self._key_areas: tuple[widgets.DOMWidget, ...] = (reading, actions, self.document_pane, self.detail_pane)
        self._key_events = [Event(source=area, watched_events=["keydown"]) for area in self._key_areas]
        for event in self._key_events:
            event.on_dom_event(self.on_key)

        help_line = widgets.HTML(str(macro(_TEMPLATE, "key_help", KEY_HELP)))
        # Left: what is decided and how (question, answers, verdict, every action) in the first
        # screen, then flags, traces and the conversation; right: the document, scrolling on its own.
        decide = widgets.VBox(
            [reading, form, actions, help_line, self.detail_pane],
            layout=widgets.Layout(flex="1 1 460px", min_width="340px", max_width="760px", margin="0 8px 0 0"),
        )
        document = widgets.VBox([self.document_pane], layout=widgets.Layout(flex="1 1 380px", min_width="300px"))
        self.widget = widgets.VBox(
            [
                self.analyst,
                widgets.HBox(
                    [self.progress, self.status],
                    layout=widgets.Layout(justify_content="space-between", flex_flow="row wrap"),
                ),
                widgets.HBox([decide, document], layout=widgets.Layout(flex_flow="row wrap", align_items="flex-start")),
                self.errors,
            ],
            layout=widgets.Layout(width="100%"),
        )
        self.widget.add_class("wb-triage-view")
        if wait_for_page and not session.started:
            self._render_waiting()
            self.analyst.on_page(self._render_guarded)
        else:
            self._render_guarded()

    # ----------------------------------------------------------------------- display
    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    # ----------------------------------------------------------------------- handlers
    @_reported
    def _named(self, name: str) -> None:
        self.session.set_annotator(name)
        self.status.value = f"annotating as {name}"

    @_reported
    def select_category(self, name: str) -> None:
        """Select category ``name`` (one of :data:`~workbench.schema.ANNOTATION_CATEGORIES`)."""
        if name not in self.category_buttons:
            raise UsageError(f"unknown category {name!r}. Fix: use one of {', '.join(ANNOTATION_CATEGORIES)}")
        if name == "model_error" and not (self._item is not None and self._item.model_error_allowed):
            self.status.value = (
                "Model error is for a system's answer graded wrong; this one was not: pick a data problem"
            )
            return
        self._selected = name
        self._show_selection()
        self.status.value = f"selected: {category_label(name)}"
        if not self.session.touch():  # the lease is renewed while the analyst works on the item
            self.status.value += " (note: another analyst has this item open too; your lease had expired)"

    @_reported
    def save(self) -> int | None:
        """Submit the form for the current item with the selected category; show the next item.

        Returns the new event's id, or ``None`` when nothing was saved (see the status label)."""
        if self.session.current() is None:
            self.status.value = "nothing to save: no item is shown"
            return None
        if self._selected is None:
            self.status.value = "nothing selected: pick a category (keys 1-7) before saving"
            return None
        if self.session.annotator is None:
            self.status.value = "nothing saved: type your name in the 'Your name' box above first"
            return None
        event_id = self.session.submit(
            category=self._selected,
            corrected_answer=_optional(self.corrected_answer.value),
            corrected_program=_optional(self.corrected_program.value),
            note=_optional(self.note.value),
            exclude=bool(self.exclude.value),
        )
        self._render_after(f"saved #{event_id}")
        return event_id

    @_reported
    def skip(self) -> None:
        """Leave the current item unannotated and show the next one."""
        if self.session.current() is None:
            self.status.value = "nothing to skip"
            return
        self.session.skip()
        self._render()
        self.status.value = "skipped"

    @_reported
    def back(self) -> None:
        """Show the previous item."""
        if self.session.position <= 0:
            self.status.value = "already at the first item"
            return
        self.session.previous()
        self._render()
        self.status.value = "back"

    @_reported
    def undo(self) -> int | None:
        """Take back this session's last save (a retraction event) and show that item again."""
        undone = self.session.undo()
        if undone is None:
            self.status.value = "nothing to undo"
            return None
        self._render_after(f"undone (retraction #{undone})")
        return undone

    @_reported
    def on_key(self, event: Mapping[str, Any]) -> None:
        """Handle an ipyevents ``keydown`` event (a dict with ``key``, ``ctrlKey``...)."""
        if event.get("type", "keydown") != "keydown":
            return
        key = str(event.get("key", ""))
        command = bool(event.get("ctrlKey") or event.get("metaKey"))
        if command and key.lower() == "z":
            self.undo()
        elif command or event.get("altKey"):
            return
        elif key.isdigit() and 1 <= int(key) <= len(ANNOTATION_CATEGORIES):
            self.select_category(ANNOTATION_CATEGORIES[int(key) - 1])
        elif key == "Enter":
            self.save()
        elif key in ("s", "S", "ArrowRight"):
            self.skip()
        elif key == "ArrowLeft":
            self.back()
        elif key in ("u", "U"):
            self.undo()

    def _clicked_category(self, name: str, _button: widgets.Button) -> None:
        self.select_category(name)

    # ----------------------------------------------------------------------- rendering
    def _report(self, where: str, exc: Exception, *, done: str = "") -> None:
        """Show ``exc`` in the Output widget and the status label (after ``done``, what did work), and log it."""
        if isinstance(exc, WorkbenchError):
            logger.warning("triage %s: %s", where, exc)
            text = f"{where}: {type(exc).__name__}: {exc}\n"
        else:
            logger.error("triage %s failed", where, exc_info=exc)
            text = f"{where}: " + "".join(traceback.format_exception(exc))
        self.errors.append_stderr(text)
        self.status.value = f"{done}; error: {exc}" if done else f"error: {exc}"

    def _render_after(self, done: str) -> None:
        """Render after a write that worked; a failure to show the next item must not hide that it worked."""
        try:
            self._render()
        except Exception as exc:  # shown with ``done`` in the status label, and logged
            self._report("showing the next item", exc, done=done)
            return
        self.status.value = done

    def _show_selection(self) -> None:
        for category, button in self.category_buttons.items():
            button.button_style = "primary" if category == self._selected else ""

    def _clear_form(self) -> None:
        self._selected = None
        self.corrected_answer.value = ""
        self.corrected_program.value = ""
        self.note.value = ""
        self.exclude.value = False

    def _progress_text(self) -> str:
        """ "3 of 84 done · item 4 of 84", and how many items other analysts have on screen."""
        total, done = self.session.total, self.session.n_done
        if total == 0:
            return "nothing to triage: the queue is empty"
        where = "end of the queue" if self.session.current() is None else f"item {self.session.position + 1} of {total}"
        held = self.session.n_held
        others = f" · {held} open by other analysts" if held else ""
        return f"{done} of {total} done · {where}{others}"

    @_reported
    def _render_guarded(self) -> None:
        self._render()

    def _render_waiting(self) -> None:
        """Before a page shows the view: no item taken (the session is not started), nothing to act on."""
        for button in (*self.category_buttons.values(), self.save_button, self.skip_button):
            button.disabled = True
        self.item_pane.value = str(
            macro(_TEMPLATE, "message", _css(), "Connecting: the first item is taken when this page shows.")
        )
        self.progress.value = f"{self.session.total} items in the queue · waiting for the page"

    def _render(self) -> None:
        """Show ``session.item()``: the panes, the form (pre-filled from an active annotation)."""
        self._clear_form()
        item = self.session.item()
        self._item = item
        shown = item is not None
        for button in (*self.category_buttons.values(), self.save_button, self.skip_button):
            button.disabled = not shown
        model_error = self.category_buttons["model_error"]
        model_error.disabled = not (item is not None and item.model_error_allowed)
        model_error.tooltip = (
            "Model error (key 6): the system's answer was graded wrong"
            if not model_error.disabled
            else "Model error: only for a system's answer graded wrong (this one is not)"
        )
        if item is None:
            if self.session.total == 0:
                message = "Nothing to triage: the queue is empty."
            else:  # what is annotated and why the rest is still open (workbench.widgets.queue_end)
                message = f"{end_of_queue(self.session.tally())} {BACK_AND_UNDO}"
            self.item_pane.value = str(macro(_TEMPLATE, "message", _css(), message))
            self.detail_pane.value = ""
            self.document_pane.value = ""
        else:
            self.item_pane.value = head_html(item)
            self.detail_pane.value = details_html(item)
            self.document_pane.value = document_html(item)
            if item.annotation:
                a = item.annotation
                self._selected = a.get("category") if a.get("category") in self.category_buttons else None
                self.corrected_answer.value = a.get("corrected_answer") or ""
                self.corrected_program.value = a.get("corrected_program") or ""
                self.note.value = a.get("note") or ""
                self.exclude.value = bool(a.get("exclude"))
        self._show_selection()
        self.progress.value = self._progress_text()
        if item is not None and self.session.adjudicate:  # the adjudicator sees both ratings
            said = self.session.disputes().get((item.key.record_id, item.key.turn, None), [])
            self.progress.value += " · to adjudicate: " + ", ".join(f"{a} said {category_label(c)}" for a, c in said)


def triage(session: AnnotationSession, *, wait_for_page: bool = False) -> TriageView:
    """Build a :class:`TriageView` over ``session`` (display it as the last line of a cell);
    with ``wait_for_page`` it takes its first item when a page shows it (the triage template).

    Examples
    --------
    >>> import tempfile, workbench
    >>> from workbench.annotations import AnnotationSession
    >>> from workbench.config import project_root
    >>> fixtures = project_root() / "tests" / "fixtures"
    >>> run = workbench.grade_run(workbench.config.resolve(
    ...     dataset=fixtures / "convfinqa" / "dev_small.json",
    ...     predictions=[fixtures / "predictions" / "zarifaziz_dev_small.jsonl"]))
    >>> with open_store(Path(tempfile.mkdtemp()) / "a.sqlite") as store:
    ...     triage(AnnotationSession(store, run, [], annotator="ana")).progress.value
    'nothing to triage: the queue is empty'
    >>> import time
    >>> from workbench.annotations import leases
    >>> def held(store): return len(leases.held_by_others(store, owner="nobody", now=time.time()))
    >>> with open_store(Path(tempfile.mkdtemp()) / "a.sqlite") as store:
    ...     waiting = triage(session_for(store, run, annotator="ana", queue="checks"), wait_for_page=True)
    ...     before = waiting.progress.value, held(store)
    ...     waiting.analyst._message(waiting.analyst, {"kind": "page"}, [])  # a page shows the view
    ...     before, (waiting.progress.value, held(store))
    (('2 items in the queue · waiting for the page', 0), ('0 of 2 done · item 1 of 2', 1))
    """
    return TriageView(session, wait_for_page=wait_for_page)
