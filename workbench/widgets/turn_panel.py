"""The failed-turn panel in the notebook: one turn of a run in full, and annotating it.

The interactive grid (:mod:`workbench.widgets.grid`) shows the panel under itself and calls
:meth:`TurnPanel.show` when a row is selected. The interface it uses::

    panel = TurnPanel(run, store=None, annotator="")  # "": JUPYTERHUB_USER, else the panel asks
    panel.widget     # the root widget (a VBox), hidden until show() is called
    panel.navigate   # None, or a callable the grid sets: Previous calls navigate(-1), Next navigate(+1);
                     # both buttons are disabled while it is None
    panel.show(key)  # key: (system, record_id, turn) of a row of run.turns
    panel.clear()    # hide the panel again

``show`` also takes ``position=(index, count)`` (0-based row of the grid's current order, and how
many rows it has): the bar then says "row 4 of 252" and Previous or Next is disabled at either end.
Neither ``show`` nor a button raises: a key that is not a turn of the run, or anything that fails,
becomes one line in the panel's status line (and the log); an unexpected error's traceback also
goes to the :attr:`TurnPanel.errors` Output widget.

What it shows is the content of the exported page's panel (the same data,
:func:`workbench.views.turn_detail.detail_data`, which ``static/sortable.js`` builds the page's
panel from): the question, the gold and predicted answers, the verdict and the grader's reason in
words; every grading policy's verdict; the conversation so far; both programs with their step
traces; the data-quality flags with their evidence; the document with the numbers the programs
use marked; the gold solution; the full raw output. For a run of single problems (GSM8K, MATH:
:attr:`~workbench.pipeline.run.Run.item` is ``"problem"``) it says "problem", not "turn", and
leaves out what does not apply (turn number, document, programs).

The "Annotate" part records a category (:data:`~workbench.schema.ANNOTATION_CATEGORIES`, labelled
as in the triage), a corrected answer, a corrected program (runs with gold programs only), a note
and the exclusion of the conversation, through :meth:`AnnotationStore.annotate
<workbench.annotations.store.AnnotationStore.annotate>`: the call the triage's
``session.submit`` makes, so validation and the event are the same, under the panel's annotator:
the name resolved as the triage resolves it (:mod:`workbench.annotations.names`:
``JUPYTERHUB_USER``, else the name given, else asked in the panel's "Your name" box, which the
browser remembers); an empty or shared default name (``analyst``) is never saved under.
"Model error" is taken only for a system's answer graded wrong, and always records the system.
An annotation is about the gold turn (``system`` null: the cleaning applies its corrected answer,
program and exclusion) or about the system's output (``system`` set: a model error; the cleaning
leaves the gold as it is); picking a category sets the default (``model_error``: the system's
output; any other: the gold turn), which the analyst may change. The panel lists the annotations
in force for the turn, both kinds, and lists them again after a save.

Every string from the data reaches an HTML widget through the package's autoescaping renderer
(the macros of ``templates/panel.html.j2``), inside an element of class ``tex2jax_ignore
mathjax_ignore``: JupyterLab 4's MathJax 3 skips ``mathjax_ignore`` (its default
``ignoreHtmlClass``), MathJax 2 and the classic notebook ``tex2jax_ignore``, so "$821,000 ...
$824,000" stays text. The status line is an HTML widget for the same reason (a ``Label`` is typeset).

Examples
--------
>>> import tempfile, workbench
>>> from workbench.config import project_root
>>> fixtures = project_root() / "tests" / "fixtures"
>>> run = workbench.grade_run(workbench.config.resolve(
...     dataset=fixtures / "convfinqa" / "dev_small.json",
...     predictions=[fixtures / "predictions" / "zarifaziz_dev_small.jsonl"]))
>>> store = AnnotationStore(Path(tempfile.mkdtemp()) / "a.sqlite")
>>> panel = TurnPanel(run, store=store, annotator="ana")
>>> system, record_id, turn = run.turns.filter(~pl.col("correct")).select("system", "record_id", "turn").row(0)
>>> panel.show((system, record_id, turn))
>>> panel.widget.layout.display is None, record_id in panel.title_pane.value
(True, True)
>>> panel.category.value = "model_error"
>>> panel.save() is not None, panel.status_text()
(True, 'Saved annotation #1: Model error, about the system’s output, by ana.')
>>> store.close()
"""

from __future__ import annotations

import functools
import logging
import math
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

import ipywidgets as widgets
import polars as pl

from workbench.annotations.names import resolve_name
from workbench.annotations.store import AnnotationStore
from workbench.errors import UsageError, WorkbenchError
from workbench.pipeline.run import Run
from workbench.schema import ANNOTATION_CATEGORIES
from workbench.views.html import Markup, macro, static_text
from workbench.views.turn_detail import detail_data, turn_key
from workbench.widgets.analyst import AnalystName
from workbench.widgets.triage import _optional, category_label, open_store

__all__ = ["TurnPanel", "TurnKey", "ABOUT_GOLD", "ABOUT_SYSTEM"]

logger = logging.getLogger(__name__)

#: A turn as the grid names it: ``(system, record_id, turn)`` of a row of ``run.turns``.
TurnKey = tuple[str | None, str, int]

#: What an annotation is about: the gold turn (``system`` null) or the system's output.
About = Literal["gold", "system"]
ABOUT_GOLD: About = "gold"
ABOUT_SYSTEM: About = "system"
#: The category whose default is the system's output; every other one is about the gold.
_SYSTEM_CATEGORIES = frozenset({"model_error"})

_TEMPLATE = "panel.html.j2"
#: The category menu's first entry: nothing picked yet.
_NO_CATEGORY = "pick a category"

F = TypeVar("F", bound=Callable[..., Any])


def _css() -> Markup:
    """The panel's stylesheet (``views/static/panel.css``)."""
    return Markup(static_text("panel.css"))


def _one_line(text: str) -> str:
    """``text`` on one line (an error's message may hold a newline)."""
    return " ".join(str(text).split())


# --------------------------------------------------------------------------- the document, marked
def _mark_class(gold: bool, predicted: bool) -> str | None:
    if gold and predicted:
        return "wb-mark-both"
    if gold:
        return "wb-mark-gold"
    return "wb-mark-pred" if predicted else None


def _marked_pieces(pieces: list[str], gold: list[int], predicted: list[int]) -> list[tuple[str, str | None]]:
    return [(piece, _mark_class(i in gold, i in predicted)) for i, piece in enumerate(pieces) if piece]


def _document(doc: Mapping[str, Any] | None, turn: Mapping[str, Any]) -> dict[str, Any] | None:
    """The document of ``turn`` as the template shows it: text pieces and cells with their mark
    class (gold program, predicted program, both), and the marked numbers, each once, in reading order."""
    if doc is None:
        return None
    empty: dict[str, list[Any]] = {"pre": [], "post": [], "cells": []}
    gold, predicted = turn.get("gold_marks") or empty, turn.get("predicted_marks") or empty
    gold_cells = {tuple(rc) for rc in gold["cells"]}
    predicted_cells = {tuple(rc) for rc in predicted["cells"]}
    columns = list(doc["columns"])
    if any(len(row) > len(columns) for row in doc["rows"]):  # the rows start with their label
        columns.insert(0, "")
    rows = [
        [(cell, _mark_class((r, c) in gold_cells, (r, c) in predicted_cells)) for c, cell in enumerate(row)]
        for r, row in enumerate(doc["rows"])
    ]
    pre = _marked_pieces(doc["pre"], gold["pre"], predicted["pre"]) if "".join(doc["pre"]) else []
    post = _marked_pieces(doc["post"], gold["post"], predicted["post"]) if "".join(doc["post"]) else []
    found: list[str] = []
    for text, mark in [*pre, *(cell for row in rows for cell in row), *post]:
        if mark and text not in found:
            found.append(text)
    return {
        "pre": pre,
        "post": post,
        "columns": columns,
        "rows": rows,
        "has_table": bool(doc["rows"] or doc["columns"]),
        "found": found,
    }


# --------------------------------------------------------------------------- handlers
def _reported(method: F) -> F:
    """Wrap a handler so that any exception becomes one line in the status line (and the log;
    an unexpected one's traceback also in the ``errors`` Output), never raised into the event loop."""

    @functools.wraps(method)
    def wrapper(self: TurnPanel, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:  # shown in the panel and logged: a handler must not lose an error
            self._report(method.__name__, exc)
            return None

    return wrapper  # type: ignore[return-value]


class TurnPanel:
    """The panel of one turn of ``run``, shown under the grid, with an "Annotate" part.

    Parameters
    ----------
    run
        The graded run whose turns the grid lists.
    store
        Where annotations go: an open :class:`~workbench.annotations.store.AnnotationStore`, or a
        path (empty or None: the triage's default store,
        :func:`workbench.config.annotation_store_path`), opened as the triage opens it.
    annotator
        The analyst's name, carried by every event the panel writes. ``JUPYTERHUB_USER`` when
        set; empty or a shared default (``analyst``): the panel asks before the first save.

    Attributes
    ----------
    widget
        The root ``VBox`` (hidden until :meth:`show`).
    key
        The turn shown (None before :meth:`show` and after :meth:`clear`).
    title_pane, head_pane, detail_pane, evidence_pane, annotations_pane, status
        HTML widgets: the bar's title; the question, answers and verdict; the policies,
        conversation, programs and flags; the document and raw output; the annotations in force;
        the outcome of the last action (one line).
    previous_button, next_button
        Call :attr:`navigate` with -1 and +1.
    category, about, corrected_answer, corrected_program, note, exclude, save_button
        The Annotate form.
    errors
        ``Output`` widget holding the traceback of an unexpected error.
    """

    def __init__(
        self,
        run: Run,
        *,
        store: str | Path | AnnotationStore | None = None,
        annotator: str | None = "",
    ) -> None:
        self.run = run
        self.store = store if hasattr(store, "annotate") else open_store(store or "")
        self.annotator: str | None = resolve_name(annotator)
        self.analyst = AnalystName(self.annotator or "")
        self.analyst.on_name(self._named)
        self.key: TurnKey | None = None
        self._position: tuple[int, int] | None = None
        self._navigate: Callable[[int], None] | None = None
        self._item = run.item
        has_programs = "gold_program" in run.turns.columns and run.turns["gold_program"].null_count() < run.turns.height

        auto = widgets.Layout(width="auto", margin="2px")
        self.title_pane = widgets.HTML(layout=widgets.Layout(flex="1 1 auto"))
        self.previous_button = widgets.Button(description=f"‹ Previous {self._item}", layout=auto)
        self.next_button = widgets.Button(description=f"Next {self._item} ›", layout=auto)
        self.previous_button.on_click(lambda _b: self.previous())
        self.next_button.on_click(lambda _b: self.next())
        self.head_pane = widgets.HTML(layout=widgets.Layout(width="100%"))
        self.detail_pane = widgets.HTML(layout=widgets.Layout(width="100%"))
        self.evidence_pane = widgets.HTML(layout=widgets.Layout(width="100%"))
        self.annotations_pane = widgets.HTML(layout=widgets.Layout(width="100%"))
        self.status = widgets.HTML(layout=widgets.Layout(width="100%"))
        self._status_text = ""
        self.errors = widgets.Output(layout=widgets.Layout(max_height="200px", overflow="auto"))

        full = widgets.Layout(width="100%", margin="2px 0")
        wide = {"description_width": "130px"}
        self.category = widgets.Dropdown(
            options=[(_NO_CATEGORY, "")] + [(category_label(c), c) for c in ANNOTATION_CATEGORIES],
            value="",
            description="Category",
            layout=widgets.Layout(width="min(100%, 420px)", margin="2px 0"),
            style=wide,
        )
        self.category.observe(self._category_changed, names="value")
        self.about = widgets.ToggleButtons(
            options=[("the gold data", ABOUT_GOLD), ("the system’s output", ABOUT_SYSTEM)],
            value=ABOUT_GOLD,
            description="About",
            layout=widgets.Layout(width="100%", margin="2px 0"),
            tooltips=[
                "a data problem: the cleaned dataset applies its corrected answer, program and exclusion",
                "a model error: the cleaned dataset is not changed",
            ],
            style={**wide, "button_width": "auto"},
        )
        self.corrected_answer = widgets.Text(
            description="Corrected answer", placeholder="the right gold answer (optional)", layout=full, style=wide
        )
        self.corrected_program = widgets.Text(
            description="Corrected program",
            placeholder="the right gold program, e.g. subtract(60.94, 25.14), divide(#0, 25.14) (optional)",
            layout=full,
            style=wide,
        )
        self.note = widgets.Textarea(description="Note", placeholder="why (optional)", rows=2, layout=full, style=wide)
        excluded = "conversation" if self._item == "turn" else "problem"
        self.exclude = widgets.Checkbox(
            value=False,
            description=f"Exclude the {excluded}",
            tooltip=f"drop this {excluded} from the cleaned dataset (an annotation about the gold data)",
            indent=False,
            layout=widgets.Layout(width="auto", margin="2px 0 2px 134px"),
        )
        self.save_button = widgets.Button(
            description="Save annotation",
            button_style="success",
            layout=widgets.Layout(width="auto", margin="4px 0 2px 134px", align_self="flex-start"),
        )
        self.save_button.on_click(lambda _b: self.save())

        form = [self.category, self.about, self.corrected_answer]
        if has_programs:
            form.append(self.corrected_program)
        form += [self.note, self.exclude, self.save_button, self.status]
        self._hint = widgets.HTML(
            str(
                macro(
                    _TEMPLATE,
                    "hint",
                    _css(),
                    "Only an annotation about the gold data changes the cleaned dataset (its corrected answer, "
                    "program and exclusion); the annotation is saved under the name in the 'Your name' box.",
                )
            )
        )
        annotate = widgets.VBox(
            [
                widgets.HTML(str(macro(_TEMPLATE, "heading", _css(), "Annotate"))),
                self.analyst,
                *form,
                self._hint,
                self.annotations_pane,
                self.errors,
            ],
            layout=widgets.Layout(width="100%"),
        )
        annotate.add_class("wb-annotate")
        self.annotate_box = annotate

        bar = widgets.HBox([self.title_pane, self.previous_button, self.next_button], layout=_row())
        reading = widgets.VBox(
            [self.head_pane, annotate, self.detail_pane],
            layout=widgets.Layout(flex="1 1 420px", min_width="320px", margin="0 12px 0 0", overflow="hidden"),
        )
        evidence = widgets.VBox(
            [self.evidence_pane], layout=widgets.Layout(flex="1 1 380px", min_width="300px", overflow="hidden")
        )
        self.widget = widgets.VBox(
            [
                bar,
                widgets.HBox(
                    [reading, evidence], layout=widgets.Layout(flex_flow="row wrap", align_items="flex-start")
                ),
            ],
            layout=widgets.Layout(width="100%", display="none"),
        )
        self.widget.add_class("wb-turn-panel")
        self._update_buttons()

    # ----------------------------------------------------------------------- the grid's interface
    @property
    def navigate(self) -> Callable[[int], None] | None:
        """What Previous (``navigate(-1)``) and Next (``navigate(+1)``) call; set by the grid.
        While it is None both buttons are disabled."""
        return self._navigate

    @navigate.setter
    def navigate(self, value: Callable[[int], None] | None) -> None:
        if value is not None and not callable(value):
            raise UsageError(f"navigate must be a callable taking -1 or +1, or None; got {value!r}")
        self._navigate = value
        self._update_buttons()

    @_reported
    def show(self, key: TurnKey, *, position: tuple[int, int] | None = None) -> None:
        """Show the turn ``key`` = ``(system, record_id, turn)`` of ``run.turns``.

        ``position`` is ``(index, count)``: the row's 0-based place in the grid's current order and
        how many rows that order has (optional). A key that is no turn of the run is one line in
        the status line; nothing is raised.
        """
        system, record_id, turn = self._checked(key)
        rows = self._row(system, record_id, turn)
        if rows.height == 0:
            who = f"system {system!r}" if system is not None else "no system"
            raise UsageError(
                f"the run has no {self._item} {record_id!r}, turn {turn}, of {who}. "
                "Fix: give the (system, record_id, turn) of a row of run.turns"
            )
        data = detail_data(self.run, rows.head(1))
        detail = data["turns"][turn_key(system, record_id, turn)]
        document = _document(data["docs"].get(detail["doc"]) if detail.get("doc") else None, detail)
        self.key = (system, record_id, turn)
        self._position = position
        css = _css()
        self.title_pane.value = str(macro(_TEMPLATE, "title", css, record_id, turn, self._item, system, self._where()))
        self.head_pane.value = str(macro(_TEMPLATE, "head", css, detail))
        self.detail_pane.value = str(macro(_TEMPLATE, "details", css, detail, self._item))
        self.evidence_pane.value = str(macro(_TEMPLATE, "evidence", css, document, detail))
        self.about.layout.display = None if system is not None else "none"
        self._fill_form()
        self._show_annotations()
        self._set_status("", "")
        self.widget.layout.display = None
        self._update_buttons()

    @_reported
    def clear(self) -> None:
        """Hide the panel and forget the turn (the form is emptied)."""
        self.key = None
        self._position = None
        for pane in (self.title_pane, self.head_pane, self.detail_pane, self.evidence_pane, self.annotations_pane):
            pane.value = ""
        self._clear_form()
        self._set_status("", "")
        self.widget.layout.display = "none"
        self._update_buttons()

    # ----------------------------------------------------------------------- buttons
    @_reported
    def previous(self) -> None:
        """Ask the grid for the previous row (``navigate(-1)``)."""
        self._step(-1)

    @_reported
    def next(self) -> None:
        """Ask the grid for the next row (``navigate(+1)``)."""
        self._step(+1)

    def _step(self, delta: int) -> None:
        if self._navigate is None:
            self._set_status("Previous and Next need the grid: open a row of the grid instead", "error")
            return
        self._navigate(delta)

    @_reported
    def save(self) -> int | None:
        """Save the form as an annotation of the turn shown; return the event id (None: nothing
        saved, the status line says why)."""
        if self.key is None:
            self._set_status(f"Nothing to annotate: select a {self._item} in the grid first", "error")
            return None
        category = self.category.value or None
        if category is None:
            self._set_status("Nothing saved: pick a category before saving", "error")
            return None
        if self.annotator is None:
            self._set_status("Nothing saved: type your name in the 'Your name' box first", "error")
            return None
        system, record_id, turn = self.key
        about_gold = system is None or self.about.value == ABOUT_GOLD
        if category in _SYSTEM_CATEGORIES:  # only a system's answer graded wrong; always with the system
            graded = self._row(system, record_id, turn) if system is not None else None
            if graded is None or not graded.height or graded["correct"][0] is not False:
                self._set_status(
                    f"Nothing saved: Model error is for a system's answer graded wrong, and this {self._item}'s was not",
                    "error",
                )
                return None
            about_gold = False
        event_id = self.store.annotate(  # the call the triage's session.submit makes
            annotator=self.annotator,
            record_id=record_id,
            turn=turn,
            system=None if about_gold else system,
            category=category,
            corrected_answer=_optional(self.corrected_answer.value),
            corrected_program=_optional(self.corrected_program.value),
            note=_optional(self.note.value),
            exclude=bool(self.exclude.value),
        )
        about = "the gold data" if about_gold else "the system’s output"
        done = f"Saved annotation #{event_id}: {category_label(category)}, about {about}, by {self.annotator}."
        try:
            self._show_annotations()
        except Exception as exc:  # the save worked; say so beside the error of listing it
            self._report("listing the annotations", exc, done=done)
            return event_id
        self._set_status(done, "ok")
        return event_id

    def _named(self, name: str) -> None:
        self.annotator = name
        self._set_status(f"Annotating as {name}.", "ok")

    def status_text(self) -> str:
        """The status line's text (what the last action did)."""
        return self._status_text

    # ----------------------------------------------------------------------- display
    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    # ----------------------------------------------------------------------- internals
    def _checked(self, key: Any) -> TurnKey:
        if not isinstance(key, tuple | list) or len(key) != 3:
            raise UsageError(f"a turn key is (system, record_id, turn), got {key!r}. Fix: pass a row's three keys")
        system, record_id, turn = key
        if isinstance(turn, bool) or not isinstance(turn, int):
            if isinstance(turn, float) and math.isfinite(turn) and turn.is_integer():
                turn = int(turn)
            else:
                raise UsageError(f"a turn is a whole number, got {turn!r}. Fix: pass the row's turn")
        return (None if system is None else str(system), str(record_id), int(turn))

    def _row(self, system: str | None, record_id: str, turn: int) -> pl.DataFrame:
        turns = self.run.turns
        same_system = pl.col("system").is_null() if system is None else pl.col("system") == system
        return turns.filter(same_system & (pl.col("record_id") == record_id) & (pl.col("turn") == turn))

    def _where(self) -> str:
        if self._position is None:
            return ""
        index, count = self._position
        return f"row {index + 1:,} of {count:,}"

    def _update_buttons(self) -> None:
        off = self._navigate is None or self.key is None
        index, count = self._position if self._position is not None else (None, None)
        self.previous_button.disabled = off or (index is not None and index <= 0)
        self.next_button.disabled = off or (index is not None and count is not None and index >= count - 1)
        self.save_button.disabled = self.key is None

    def _active(self) -> list[dict[str, Any]]:
        """The annotations in force for the turn shown: about its gold turn, and about this system's output."""
        if self.key is None:
            return []
        system, record_id, turn = self.key
        active = self.store.active()
        mine = (pl.col("record_id") == record_id) & (pl.col("turn") == turn)
        about = (
            pl.col("system").is_null() if system is None else pl.col("system").is_null() | (pl.col("system") == system)
        )
        return active.filter(mine & about).sort("event_id").to_dicts()

    def _show_annotations(self) -> None:
        rows = [
            (
                "the gold data" if a["system"] is None else f"system {a['system']}’s output",
                category_label(str(a["category"])),
                a["corrected_answer"],
                a["corrected_program"],
                a["note"],
                bool(a["exclude"]),
                a["annotator"],
                a["event_id"],
                str(a["created_at"]),
            )
            for a in self._active()
        ]
        self.annotations_pane.value = str(macro(_TEMPLATE, "annotations", _css(), rows, self._item))

    def _clear_form(self) -> None:
        self.category.value = ""
        self.about.value = ABOUT_GOLD
        self.corrected_answer.value = ""
        self.corrected_program.value = ""
        self.note.value = ""
        self.exclude.value = False

    def _fill_form(self) -> None:
        """Empty the form, then fill it from the latest annotation in force for the turn (saving again replaces it)."""
        self._clear_form()
        active = self._active()
        if not active:
            return
        latest = active[-1]
        self.category.value = str(latest["category"])
        self.about.value = ABOUT_GOLD if latest["system"] is None else ABOUT_SYSTEM
        self.corrected_answer.value = latest["corrected_answer"] or ""
        self.corrected_program.value = latest["corrected_program"] or ""
        self.note.value = latest["note"] or ""
        self.exclude.value = bool(latest["exclude"])

    def _category_changed(self, change: Mapping[str, Any]) -> None:
        category = change.get("new")
        if category:
            self.about.value = ABOUT_SYSTEM if category in _SYSTEM_CATEGORIES else ABOUT_GOLD

    def _set_status(self, message: str, kind: str) -> None:
        self._status_text = _one_line(message)
        self.status.value = str(macro(_TEMPLATE, "status", _css(), self._status_text, kind))

    def _report(self, where: str, exc: Exception, *, done: str = "") -> None:
        """Show ``exc`` in one line (after ``done``, what did work) and log it; an unexpected error's
        traceback also goes to the ``errors`` Output."""
        if isinstance(exc, WorkbenchError):
            logger.warning("turn panel %s: %s", where, exc)
        else:
            logger.error("turn panel %s failed", where, exc_info=exc)
            self.errors.append_stderr(f"{where}: " + "".join(traceback.format_exception(exc)))
        message = f"{type(exc).__name__}: {exc}" if not isinstance(exc, WorkbenchError) else str(exc)
        self._set_status(f"{done} Error: {message}" if done else f"Error: {message}", "error")


def _row() -> widgets.Layout:
    return widgets.Layout(flex_flow="row wrap", align_items="center", width="100%")
