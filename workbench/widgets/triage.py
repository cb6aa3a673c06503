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

Every string from the data (document, questions, answers, programs, evidence) reaches an HTML
widget through the package's one autoescaping renderer (:mod:`workbench.views.html`, the
macros of ``templates/triage.html.j2``), so it shows as text.
"""

from __future__ import annotations

import functools
import logging
import math
import traceback
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import ipywidgets as widgets

from workbench.annotations.session import session_for
from workbench.annotations.store import AnnotationStore
from workbench.config import annotation_store_path
from workbench.errors import UsageError, WorkbenchError
from workbench.grading import patterns
from workbench.grading.normalize import parse_cell_number
from workbench.schema import ANNOTATION_CATEGORIES
from workbench.views.html import Markup, macro, static_text

if TYPE_CHECKING:
    from workbench.annotations.session import AnnotationSession, TriageItem
    from workbench.annotations.store import AnnotationStore

__all__ = [
    "TriageView",
    "triage",
    "session_for",
    "open_store",
    "category_label",
    "highlight_numbers",
    "document_html",
    "item_html",
    "KEY_HELP",
]

logger = logging.getLogger(__name__)

#: The queues the template can open: flagged gold turns, or failed turns (of a slice group).
QueueName = Literal["checks", "failed"]

#: Relative tolerance when matching a document's number to a number a program uses.
NUMBER_REL_TOL = 1e-6

#: What each key does; shown under the buttons.
KEY_HELP = "Keys (mouse over the item, the document or the buttons): 1-7 category, Enter save, s or → skip, ← back, u or ctrl+z undo"

#: The template of the panes.
_TEMPLATE = "triage.html.j2"

F = TypeVar("F", bound=Callable[..., Any])


# --------------------------------------------------------------------------- store and session
def open_store(path: str | Path = "") -> AnnotationStore:
    """Open (or create, with its directory) the annotation store at ``path`` (empty: the default,
    :func:`workbench.config.annotation_store_path`).

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

    return AnnotationStore(annotation_store_path(path))


# --------------------------------------------------------------------------- rendering (pure)
def category_label(category: str) -> str:
    """A readable label for an annotation category.

    Examples
    --------
    >>> category_label("unit_inconsistency")
    'Unit inconsistency'
    """
    return category.replace("_", " ").capitalize()


def _is_used(value: float, numbers: Iterable[float]) -> bool:
    """Whether ``value`` (or ``value`` as a percent, divided by 100) is one of ``numbers``,
    signs ignored (running text carries no sign), within :data:`NUMBER_REL_TOL`."""
    candidates = (abs(value), abs(value) / 100.0)
    return any(math.isclose(c, abs(n), rel_tol=NUMBER_REL_TOL, abs_tol=1e-12) for n in numbers for c in candidates)


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


def _segments(text: str, numbers: tuple[float, ...]) -> list[tuple[str, bool]]:
    """``text`` cut into ``(part, marked)`` pieces, marked where a number is one of ``numbers``."""
    out: list[tuple[str, bool]] = []
    last = 0
    for match in patterns.DOCUMENT_NUMBER.finditer(text):
        literal = match.group("num")
        value = float(literal.replace(",", ""))
        if not (math.isfinite(value) and _is_used(value, numbers)):
            continue
        out.append((text[last : match.start()], False))
        out.append((literal, True))
        last = match.end()
    out.append((text[last:], False))
    return out


def _cell(cell: str, numbers: tuple[float, ...]) -> tuple[str, bool]:
    """A document table's cell, and whether it is a number one of ``numbers`` is."""
    value = parse_cell_number(cell) if cell else None
    return cell, value is not None and _is_used(value, numbers)


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
    a = item.annotation
    annotation = (a.get("category"), a.get("annotator"), a.get("event_id")) if a else None
    flags = [
        (category_label(str(category)), rule, f"{float(confidence):.2f}", evidence)
        for category, rule, confidence, evidence in item.flags
    ]
    markup = macro(
        _TEMPLATE,
        "item",
        _css(),
        item,
        int(item.key.turn),
        annotation,
        [(int(turn), question, gold, predicted) for turn, question, gold, predicted in item.conversation],
        item.key.system is not None or item.predicted_trace is not None,
        flags,
    )
    return str(markup)


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

    Attributes
    ----------
    widget
        The ``VBox`` to display (displaying the view displays it).
    progress, status
        Labels: "done N / in queue M (item k of M)", and the last action's outcome
        ("saved #12", "nothing selected", an error).
    errors
        ``Output`` widget holding every exception a handler raised.
    item_pane, document_pane
        The rendered item and document (HTML).
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
    'done 0 / in queue 2 (item 1 of 2)'
    >>> view.on_key({"type": "keydown", "key": "2"}); view.save() is not None
    True
    >>> view.status.value.startswith("saved #"), view.progress.value
    (True, 'done 1 / in queue 2 (item 2 of 2)')
    >>> store.close()
    """

    def __init__(self, session: AnnotationSession) -> None:
        from ipyevents import Event

        self.session = session
        self._selected: str | None = None

        self.progress = widgets.Label()
        self.status = widgets.Label(value="")
        self.item_pane = widgets.HTML()
        self.document_pane = widgets.HTML()
        self.errors = widgets.Output(layout=widgets.Layout(max_height="240px", overflow="auto"))

        self.category_buttons: dict[str, widgets.Button] = {}
        for number, category in enumerate(ANNOTATION_CATEGORIES, start=1):
            button = widgets.Button(
                description=f"{number} {category_label(category)}",
                tooltip=f"{category_label(category)} (key {number})",
                layout=widgets.Layout(width="auto"),
            )
            button.on_click(functools.partial(self._clicked_category, category))
            self.category_buttons[category] = button

        self.corrected_answer = widgets.Text(
            description="Answer", placeholder="corrected gold answer (optional)", layout=widgets.Layout(width="60%")
        )
        self.corrected_program = widgets.Text(
            description="Program",
            placeholder="corrected gold program, e.g. subtract(60.94, 25.14), divide(#0, 25.14) (optional)",
            layout=widgets.Layout(width="60%"),
        )
        self.note = widgets.Textarea(
            description="Note", placeholder="why (optional)", layout=widgets.Layout(width="60%")
        )
        self.exclude = widgets.ToggleButton(
            value=False, description="Exclude conversation", tooltip="drop this conversation from the cleaned dataset"
        )

        self.save_button = widgets.Button(description="Save (Enter)", button_style="success")
        self.skip_button = widgets.Button(description="Skip (s / →)")
        self.back_button = widgets.Button(description="Back (←)")
        self.undo_button = widgets.Button(description="Undo (u / ctrl+z)")
        self.save_button.on_click(lambda _b: self.save())
        self.skip_button.on_click(lambda _b: self.skip())
        self.back_button.on_click(lambda _b: self.back())
        self.undo_button.on_click(lambda _b: self.undo())

        categories = widgets.HBox(list(self.category_buttons.values()), layout=widgets.Layout(flex_flow="row wrap"))
        actions = widgets.HBox([self.save_button, self.skip_button, self.back_button, self.undo_button])
        reading = widgets.VBox([self.item_pane, categories])
        form = widgets.VBox([self.corrected_answer, self.corrected_program, self.note, self.exclude])
        # Keys are watched over the item, the document and the buttons only: ipyevents takes every key
        # press while the mouse is over a watched widget, so the form (where the analyst types) is left out.
        self._key_areas: tuple[widgets.DOMWidget, ...] = (reading, actions, self.document_pane)
        self._key_events = [Event(source=area, watched_events=["keydown"]) for area in self._key_areas]
        for event in self._key_events:
            event.on_dom_event(self.on_key)

        column = widgets.Layout(flex="1 1 0", min_width="380px")
        help_line = widgets.HTML(str(macro(_TEMPLATE, "key_help", KEY_HELP)))
        self.widget = widgets.VBox(
            [
                widgets.HBox([self.progress, self.status], layout=widgets.Layout(justify_content="space-between")),
                widgets.HBox(
                    [
                        widgets.VBox([reading, form, actions, help_line], layout=column),
                        widgets.VBox([self.document_pane], layout=column),
                    ],
                    layout=widgets.Layout(flex_flow="row wrap"),
                ),
                self.errors,
            ]
        )
        self.widget.add_class("wb-triage-view")
        self._render_guarded()

    # ----------------------------------------------------------------------- display
    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    # ----------------------------------------------------------------------- handlers
    @_reported
    def select_category(self, name: str) -> None:
        """Select category ``name`` (one of :data:`~workbench.schema.ANNOTATION_CATEGORIES`)."""
        if name not in self.category_buttons:
            raise UsageError(f"unknown category {name!r}. Fix: use one of {', '.join(ANNOTATION_CATEGORIES)}")
        self._selected = name
        self._show_selection()
        self.status.value = f"selected: {category_label(name)}"

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
            button.icon = "check" if category == self._selected else ""

    def _clear_form(self) -> None:
        self._selected = None
        self.corrected_answer.value = ""
        self.corrected_program.value = ""
        self.note.value = ""
        self.exclude.value = False

    def _progress_text(self) -> str:
        total, done = self.session.total, self.session.n_done
        if total == 0:
            return "nothing to triage: the queue is empty"
        if self.session.current() is None:
            return f"done {done} / in queue {total} (end of the queue)"
        return f"done {done} / in queue {total} (item {self.session.position + 1} of {total})"

    @_reported
    def _render_guarded(self) -> None:
        self._render()

    def _render(self) -> None:
        """Show ``session.item()``: the panes, the form (pre-filled from an active annotation)."""
        self._clear_form()
        item = self.session.item()
        shown = item is not None
        for button in (*self.category_buttons.values(), self.save_button, self.skip_button):
            button.disabled = not shown
        if item is None:
            total, done = self.session.total, self.session.n_done
            if total == 0:
                message = "Nothing to triage: the queue is empty."
            else:
                message = (
                    f"All {total} items done ({done} annotated). Back (←) shows the last item again; "
                    "Undo takes back the last save."
                )
            self.item_pane.value = str(macro(_TEMPLATE, "message", _css(), message))
            self.document_pane.value = ""
        else:
            self.item_pane.value = item_html(item)
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


def triage(session: AnnotationSession) -> TriageView:
    """Build a :class:`TriageView` over ``session`` (display it as the last line of a cell).

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
    """
    return TriageView(session)
