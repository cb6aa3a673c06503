"""What a report page says about its run's benchmark: its title, each section's heading and
text, and which sections have something to show.

A template is the same notebook for ConvFinQA, GSM8K and MATH; the page must not be a
ConvFinQA report with holes. Each section is a record of :data:`SECTIONS` (heading, text per
benchmark, what it needs from the run, and the sentence that replaces it when the run lacks
that); a template shows a heading with :func:`heading` and passes a chart or table through
:func:`shown`, which drops it when the run lacks what it needs. The notebook keeps one call
per cell and no branches.

Examples
--------
>>> [need for need in NEEDS]
['conversations', 'programs', 'type2', 'flags', 'upstream', 'text', 'groups']
>>> benchmark_name("gsm8k"), benchmark_name("math"), benchmark_name("")
('GSM8K', 'MATH', 'ConvFinQA')

A plain gold table graded without ``--benchmark`` (``"table"``) is no benchmark: its page names
none, and each sentence that would has its own wording for it (the ``"table"`` texts).

>>> benchmark_name("table")
''
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

import polars as pl
from IPython.display import Markdown

from workbench.analysis import formats, words
from workbench.analysis.metrics import HEADLINE_METRICS, MetricSpec, for_items, upstream_disagreements
from workbench.views import tables

if TYPE_CHECKING:
    from workbench.pipeline.run import Run

__all__ = [
    "BENCHMARK_NAMES",
    "NEEDS",
    "SECTIONS",
    "Section",
    "benchmark_name",
    "report_title",
    "title",
    "heading",
    "shown",
    "headline_metrics",
    "relevant",
    "text_scores",
    "upstream_table",
]

T = TypeVar("T")

#: How a page names each benchmark.
BENCHMARK_NAMES: Mapping[str, str] = MappingProxyType({"convfinqa": "ConvFinQA", "gsm8k": "GSM8K", "math": "MATH"})


def benchmark_name(benchmark: str) -> str:
    """The benchmark as a page names it: ConvFinQA when none is said (the workbench's first), none
    (empty) for a gold set of no benchmark (a plain table, ``"table"``)."""
    return BENCHMARK_NAMES.get(benchmark, "" if benchmark else "ConvFinQA")


def _any(run: Run, column: str) -> bool:
    turns = run.turns
    return column in turns.columns and bool(turns[column].is_not_null().any())


def _drill_groups(run: Run) -> bool:
    """Whether the error-slices page's drill-downs have a group to open: the failed turns by
    operation (gold programs), by data-quality flag (flags), or where the policies disagree."""
    turns = run.turns
    disagree = "graders_disagree" in turns.columns and bool((~turns["correct"] & turns["graders_disagree"]).any())
    return disagree or NEEDS["programs"](run) or (NEEDS["flags"](run) and bool(run.checks.height))


#: What a section can need from a run, each a test of the run.
NEEDS: Mapping[str, Callable[[Run], bool]] = MappingProxyType(
    {
        "conversations": lambda run: run.multi_turn,
        "programs": lambda run: _any(run, "operation"),
        "type2": lambda run: "has_type2_question" in run.turns.columns and bool(run.turns["has_type2_question"].any()),
        "flags": lambda run: run.gold.benchmark == "convfinqa" or bool(run.checks.height),
        "upstream": lambda run: _any(run, "upstream_correct"),
        "text": lambda run: any("text" in values for values in run.summary.values()),
        "groups": lambda run: _drill_groups(run),
    }
)


@dataclass(frozen=True)
class Section:
    """One section of a report page.

    Attributes
    ----------
    title
        Its heading; ``{item}`` reads "turn" (ConvFinQA) or "problem" (single questions).
    text
        What it shows, by benchmark (``""``: any other; ``"table"``: a plain gold table, which
        names no benchmark); ``{benchmark}``, ``{item}`` and ``{items}`` are filled in.
    needs
        What it needs from the run (keys of :data:`NEEDS`), else it is replaced by ``why_not``.
    why_not
        The sentence that replaces the text when the run lacks what it needs, one for every
        benchmark or by benchmark as ``text`` (empty: the section is left out whole).
    benchmarks
        The benchmarks whose pages show the section at all (empty: every one).
    """

    title: str
    text: Mapping[str, str]
    needs: tuple[str, ...] = ()
    why_not: str | Mapping[str, str] = ""
    benchmarks: tuple[str, ...] = ()


def _for(texts: str | Mapping[str, str], benchmark: str) -> str:
    """The text of ``texts`` for ``benchmark``: its own, else the one for any other (``""``)."""
    return texts if isinstance(texts, str) else texts.get(benchmark, texts.get("", ""))


_SINGLE = MappingProxyType(
    {
        "": "{benchmark} problems are single questions, so there is no turn index to follow.",
        "table": "The gold table's problems are single questions, so there is no turn index to follow.",
    }
)
#: What the "operation" of a turn is (the overview and the comparison say it the same way).
_OPERATION = "The operation is the last step of the gold program; a lookup reads a number from the document."
_NO_PROGRAMS = MappingProxyType(
    {
        "": "{benchmark} gold answers come without programs, so there is no operation to group {items} by.",
        "table": "The gold table has no programs, so there is no operation to group {items} by.",
    }
)

#: Every section the templates show, by key.
SECTIONS: Mapping[str, Section] = MappingProxyType(
    {
        "headline": Section(
            "Headline metrics",
            {
                "convfinqa": "Turn execution accuracy counts every turn; conversation execution accuracy counts "
                "each conversation's final answer; all turns correct is the stricter figure per conversation. Program accuracy appears where the outputs carry programs.",
                "": "Accuracy is the share of the {items} whose final answer is correct.",
            },
        ),
        "text": Section(
            "Wording of the solutions (BLEU and ROUGE)",
            {
                "": "How closely each model's whole written solution follows the reference solution, word by "
                "word (0 to 100). They measure wording, not correctness: a right answer reached another way "
                "scores low."
            },
            needs=("text",),
            why_not="The outputs carry no written solutions to compare with the reference ones, so BLEU and ROUGE "
            "are not computed.",
            benchmarks=("gsm8k", "math"),
        ),
        "policies": Section(
            "Grading policies side by side",
            {
                "": "The same outputs graded under each grading policy (see the glossary), from exact text match "
                "to symbolic match, the main policy, which the rest of this page uses. A large gap between two "
                "policies means answers that are right but written another way."
            },
        ),
        "by_turn": Section(
            "Accuracy by turn index",
            {"": "A falling line shows errors carried from earlier turns into later ones."},
            needs=("conversations",),
            why_not=_SINGLE,
        ),
        "by_operation": Section(
            "Accuracy by operation",
            {"": _OPERATION},
            needs=("programs",),
            why_not=_NO_PROGRAMS,
        ),
        "failed": Section(
            "Failed {item}s",
            {
                "convfinqa": "Every turn graded wrong, with the gold answer (as written and as its program "
                "computes it), the prediction, and the grader's reason.",
                "": "Every problem graded wrong, with the gold answer, the prediction, and the grader's reason.",
            },
        ),
        "upstream": Section(
            "Where our verdict differs from the upstream one",
            {
                "": "Every {item} where the verdict the prediction file brought from its own grader (the upstream "
                "verdict) differs from ours, with our reason and the grader's detail: where to look first when "
                "our accuracy and the published one differ."
            },
            needs=("upstream",),
        ),
        "slices": Section(
            "Accuracy by slice",
            {
                "convfinqa": "Each point is a group's accuracy, its line the 95% interval (conversations resampled, so "
                "the turns of one conversation move together). A group whose interval overlaps the overall "
                "figure is not clearly different; a group of fewer than 20 turns is marked too small to read.",
                "": "Each point is a group's accuracy, its line the 95% interval (problems resampled). A group whose "
                "interval overlaps the overall figure is not clearly different; a group of fewer than 20 "
                "problems is marked too small to read. Slices by operation, turn and type-2 conversation need "
                "gold programs or conversations, which {benchmark} does not have, and are left out.",
                "table": "Each point is a group's accuracy, its line the 95% interval (resampled by "
                "record). A group whose interval overlaps the overall figure is not "
                "clearly different; a group of fewer than 20 {items} is marked too small to read. A slice the gold "
                "table cannot give is left out: by operation without gold programs, by turn without records of "
                "several turns.",
            },
        ),
        "propagation": Section(
            "Error propagation",
            {
                "": "Accuracy by turn index per system: a falling line means errors carry from earlier turns into later "
                "ones (the carried error type below)."
            },
            needs=("conversations",),
            why_not=_SINGLE,
        ),
        "error_types": Section(
            "Error types",
            {
                "convfinqa": "Each wrong turn gets one error type (see the glossary). The chart counts them by the "
                "gold program's operation; the tables list the wrong turns of each type.",
                "": "Each wrong problem gets one error type (see the glossary). {benchmark} has no gold programs "
                "to cross them with, so the tables list the wrong problems of each type.",
                "table": "Each wrong {item} gets one error type (see the glossary); the tables list the wrong {items} of "
                "each type.",
            },
        ),
        "flags": Section(
            "Data-quality flags",
            {
                "": "Automatic flags on the gold data, each with its evidence and a confidence: a number the gold "
                "program uses that is not in the document, a unit or sign that disagrees, or a gold answer that is "
                "not what its program computes (or that several systems agree against). They are candidates for a "
                "person to check, not verdicts."
            },
            needs=("flags",),
            why_not={
                "": "The data-quality checks read document tables and gold programs, which {benchmark} problems do "
                "not have, and compare several systems' answers, so with these outputs nothing is flagged.",
                "table": "Nothing is flagged here. The data-quality checks read document tables (which a gold table "
                "does not have) and gold programs, and compare several systems' answers; this table and these outputs "
                "gave them nothing to flag.",
            },
        ),
        "drilldown": Section(
            "Drill-down",
            {
                "": "The failed {items} of each group of a slice. Open a group to see every failed {item} with the gold "
                "answer, the prediction, the grader's reason and error type, and any data-quality flag."
            },
            needs=("groups",),
            why_not={
                "": "No group of failed {items} to open here: {benchmark} has no gold programs to group them by "
                "operation, no data-quality flag was raised, and the grading policies agree on every failed {item}. "
                "Every failed {item} is in the error-type tables above.",
                "table": "No group of failed {items} to open here: the gold table has no programs to group them by "
                "operation, no data-quality flag was raised, and the grading policies agree on every failed {item}. "
                "Every failed {item} is in the error-type tables above.",
            },
        ),
        "cleaning": Section(
            "Before and after cleaning",
            {
                "": "The same predictions graded against the gold with the analysts' corrections applied and "
                "excluded {items} removed (annotations from the triage notebook or `workbench annotations import`)."
            },
        ),
    }
)

#: The subtitle of each template's page, by template.
_PAGES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "01-overview": (
            "overview",
            "Grades saved model outputs against the gold answers and shows where they fail. Every verdict carries "
            "the rule that decided it (its reason); the failed {items} are listed at the end.",
        ),
        "02-error-slices": (
            "error slices, error types and data-quality flags",
            "Where and why each system fails, and which failures are the data's fault: accuracy per group of "
            "{items} with 95% intervals, one error type per wrong {item}, and automatic flags on gold data that "
            "looks wrong, with the evidence.",
        ),
        "04-compare-systems": ("systems compared", ""),
        "05-history": ("history of runs", ""),
    }
)


def _words(run: Run) -> dict[str, str]:
    item = run.item
    return {"benchmark": benchmark_name(run.gold.benchmark), "item": item, "items": f"{item}s"}


#: Templates whose page spans runs of any benchmark (their title names none).
_ACROSS_RUNS = frozenset({"05-history"})


def report_title(benchmark: str, template: str) -> str:
    """The title of a template's page on ``benchmark`` (the runner's ``<title>``).

    Examples
    --------
    >>> report_title("gsm8k", "01-overview"), report_title("convfinqa", "04-compare-systems")
    ('GSM8K error report: overview', 'ConvFinQA error report: systems compared')
    >>> report_title("math", "05-new-template")
    'MATH error report: 05-new-template'

    A gold set of no benchmark (a plain table of questions and answers, ``"table"``, graded
    without ``--benchmark``) is not named after one:

    >>> report_title("table", "01-overview")
    'Error report: overview'

    A page across runs (05-history reads ledgers of any benchmark) is named after none:

    >>> report_title("", "05-history")
    'Error reports: history of runs'
    """
    page = _PAGES.get(template, (template, ""))[0]
    if template in _ACROSS_RUNS:
        return f"Error reports: {page}"
    if benchmark and benchmark not in BENCHMARK_NAMES:
        return f"Error report: {page}"
    return f"{benchmark_name(benchmark)} error report: {page}"


def title(run: Run, template: str) -> Markdown:
    """The page's heading (level 1) and what the page shows, for the run's benchmark."""
    words = _words(run)
    text = _PAGES.get(template, (template, ""))[1].format(**words)
    return Markdown(f"# {report_title(run.gold.benchmark, template)}\n\n{text}")


def _applies(run: Run, needs: tuple[str, ...]) -> bool:
    return all(NEEDS[need](run) for need in needs)


def heading(run: Run, key: str) -> Markdown | None:
    """A section's heading and text for the run's benchmark; its ``why_not`` sentence when the
    run lacks what it needs; nothing when it has no such sentence."""
    section = SECTIONS[key]
    words = _words(run)
    if section.benchmarks and run.gold.benchmark not in section.benchmarks:
        return None
    if not _applies(run, section.needs):
        if not section.why_not:
            return None
        text = _for(section.why_not, run.gold.benchmark)
    else:
        text = _for(section.text, run.gold.benchmark)
    return Markdown(f"## {section.title.format(**words)}\n\n{text.format(**words)}")


def shown(run: Run, need: str | tuple[str, ...], output: T) -> T | None:
    """``output`` (a chart or table) when the run has what it needs (:data:`NEEDS`), else nothing."""
    return output if _applies(run, (need,) if isinstance(need, str) else need) else None


#: What a slice of :data:`workbench.analysis.slices.SLICES` needs from a run (others: nothing).
_SLICE_NEEDS: Mapping[str, str] = MappingProxyType(
    {
        "operation": "programs",
        "rare_operation": "programs",
        "turn_index": "conversations",
        "n_turns": "conversations",
        "qa_split": "conversations",
        "dependency_distance": "conversations",
        "type2": "type2",
        "dq_category": "flags",
    }
)


def relevant(run: Run, by_slice: pl.DataFrame) -> pl.DataFrame:
    """The rows of a slice table (``slice`` column) whose slice the run has what it needs for:
    no turn index for single questions, no operation without gold programs."""
    keep = [
        name
        for name in by_slice["slice"].unique(maintain_order=True).to_list()
        if _applies(run, (_SLICE_NEEDS[name],) if name in _SLICE_NEEDS else ())
    ]
    return by_slice.filter(pl.col("slice").is_in(keep))


def headline_metrics(run: Run) -> tuple[MetricSpec, ...]:
    """The headline table's metrics for the run: those some system has (no program accuracy
    without programs), without the conversation-level ones when every item is a single
    question (they would repeat the turn-level figure), named for problems rather than turns
    there ("Accuracy", "Problems"): :func:`workbench.analysis.metrics.for_items`."""
    return tuple(
        spec
        for spec in for_items(HEADLINE_METRICS, run.item)
        if any(spec.key in values for values in run.summary.values())
    )


#: The text scores ``summary.json`` keeps per system (``text``), by key, with their column names.
_TEXT_SCORES: Mapping[str, str] = MappingProxyType(
    {"bleu": "BLEU", "rouge1": "ROUGE-1", "rouge2": "ROUGE-2", "rougeL": "ROUGE-L", "n": "solutions scored"}
)


def text_scores(run: Run) -> tables.HtmlBlock | None:
    """BLEU and ROUGE of each system's written solutions against the reference ones, as
    ``summary.json`` records them (nothing when none were computed)."""
    rows = [
        {"system": system, **{label: values["text"].get(key) for key, label in _TEXT_SCORES.items()}}
        for system, values in run.summary.items()
        if "text" in values
    ]
    if not rows:
        return None
    frame = pl.DataFrame(rows, infer_schema_length=None)
    one_decimal: Callable[[Any], str] = lambda v: formats.MISSING if v is None else f"{v:.1f}"  # noqa: E731
    shown_as = {label: one_decimal for key, label in _TEXT_SCORES.items() if key != "n"}
    return tables.html_table(frame, caption="BLEU and ROUGE (0 to 100)", formats_by_column=shown_as, keys=1)


#: The columns of the disagreements table, in order, with their headings.
_UPSTREAM_COLUMNS: Mapping[str, str] = MappingProxyType(
    {
        "system": "system",
        "record_id": "record id",
        "turn": "turn",
        "upstream": "upstream verdict",
        "ours": "our verdict",
        "reason": "our reason",
        "gold_answer": "gold answer",
        "answer": "answer graded",
        "detail": "grader's detail",
        "question": "question",
    }
)


def upstream_table(run: Run) -> tables.HtmlBlock | None:
    """Every turn where our verdict differs from the upstream grader's, with our reason
    (:func:`workbench.analysis.metrics.upstream_disagreements`); nothing without upstream verdicts."""
    if not NEEDS["upstream"](run):
        return None
    verdict = {True: "right", False: "wrong"}
    differ = upstream_disagreements(run.turns).sort("system", "record_id", "turn")
    columns = {c: name for c, name in _UPSTREAM_COLUMNS.items() if c != "turn" or run.multi_turn}
    frame = differ.with_columns(
        pl.col("upstream_correct").replace_strict(verdict, return_dtype=pl.String).alias("upstream"),
        pl.col("correct").replace_strict(verdict, return_dtype=pl.String).alias("ours"),
    ).select(
        (
            pl.col(c)
            .cast(pl.String)
            .replace({v: words.plain(v) for v in differ[c].cast(pl.String).unique().drop_nulls()})
            if c == "reason"
            else pl.col(c).cast(pl.String)
        ).alias(name)
        for c, name in columns.items()
    )
    verdicts = "verdict differs" if frame.height == 1 else "verdicts differ"
    caption = f"{formats.count(frame.height)} {verdicts} from the upstream grader's"
    return tables.html_table(frame, caption=caption, sortable=True, keys=2)


#: The analysts' agreement figures as the page shows them: three decimals, as the CLI prints them.
_THREE_PLACES: Callable[[Any], str] = lambda v: formats.MISSING if v is None else f"{v:.3f}"  # noqa: E731


def annotator_agreement(annotations: str) -> tables.HtmlBlock | None:
    """The analysts' agreement in the store the before/after scores read (``annotations``: a
    SQLite file or a ``postgresql://`` URL), per category with n and a 95% interval: the figures
    and labels ``workbench annotations agreement`` prints
    (:func:`workbench.annotations.agreement.summarise`), then how many turns await adjudication.
    One line when no turn was decided by two analysts; nothing without a store.

    Examples
    --------
    >>> annotator_agreement("") is None
    True
    """
    from workbench.annotations.agreement import summary_at
    from workbench.annotations.backends import store_location
    from workbench.views.html import macro

    if not str(annotations).strip():
        return None
    summary = summary_at(store_location(annotations))
    notes = []
    if summary.status == "measured":
        if summary.table["value"].is_null().any():
            notes.append(
                f"{formats.MISSING}: the analysts' decisions did not vary there, so the statistic is undefined."
            )
    else:
        notes.append(summary.reason)
    if summary.awaiting:
        notes.append(
            f"{words.counted(summary.awaiting, 'turn')} {'awaits' if summary.awaiting == 1 else 'await'} adjudication: "
            "the first two analysts decided differently and no third analyst has ruled yet (the triage's "
            'queue = "adjudicate").'
        )
    lines = "".join(str(macro("tables.html.j2", "note", note)) for note in notes)
    if summary.status != "measured":
        return tables.HtmlBlock(lines)
    table = tables.html_table(
        summary.table.drop("statistic", "analysts"),  # the same in every row: said in the caption
        caption=f"Agreement between analysts: {summary.reason}, per category (that category or not) and over all, "
        "with a 95% bootstrap interval (low to high)",
        css_class="wb-table wb-agreement",
        formats_by_column=dict.fromkeys(("value", "low", "high"), _THREE_PLACES),
        keys=1,
    )
    return tables.HtmlBlock(table.markup + lines, (table.notebook or table.markup) + lines)


__all__ += ["annotator_agreement"]

__all__ += ["COMPARE_SECTIONS", "compare_title", "compare_heading"]

#: The sections of the 04-compare-systems page, by key (as :data:`SECTIONS`; shown by :func:`compare_heading`).
COMPARE_SECTIONS: Mapping[str, Section] = MappingProxyType(
    {
        "systems": Section(
            "Systems side by side",
            {
                "convfinqa": "Each system's accuracy with its 95% interval, one row per system in the order given: "
                "per conversation (its final turn's answer, and its program where the outputs carry programs), "
                "then per turn.",
                "": "Each system's share of {items} answered correctly, with its 95% interval, one row per system in "
                "the order given. {benchmark} problems are single questions, so there are no conversation-level "
                "figures.",
                "table": "Each system's share of {items} answered correctly, with its 95% interval, one row per system "
                "in the order given.",
            },
        ),
        "pairs": Section(
            "Every pair of systems",
            {
                "": "Each pair is compared on the {items} both systems answered. The difference is the first "
                "system's accuracy minus the second's, in points, with its 95% interval: an interval that does not "
                "include 0 is a clear difference. Only the {items} exactly one of the two got right tell them apart; "
                "the p-value (McNemar test) is how likely so uneven a split would be if the two were equally good. "
                "With several pairs, some look different by chance alone, so each p-value is also adjusted for the "
                "number of pairs (Holm adjustment): read the adjusted one. The matrix shows the same differences, "
                "row minus column: blue where the row's system is better, red where it is worse."
            },
        ),
        "one_pair": Section(
            "One pair, group by group",
            {
                "": "One pair (by default the first two systems given; the report parameters `system_a` and "
                "`system_b` choose another) compared within each group of {items}: the difference in points with "
                "its 95% interval and its p-value (not adjusted). {Items} only one of the two answered are counted "
                "as unpaired and left out."
            },
        ),
        "by_turn": Section(
            "Accuracy by turn index, every system",
            {"": "One line per system: a line that falls with the turn index shows errors carried from earlier turns."},
            needs=("conversations",),
            why_not=_SINGLE,
        ),
        "by_operation": Section(
            "Accuracy by operation, every system",
            {"": _OPERATION},
            needs=("programs",),
            why_not=_NO_PROGRAMS,
        ),
        "by_format": Section(
            "Accuracy by answer format, every system",
            {
                "": "The {items} grouped by the kind of answer the gold is: a plain number, a ratio, a percent, or yes/no."
            },
        ),
        "failures": Section(
            "Where the systems fail",
            {
                "convfinqa": "The wrong turns of all systems together, counted by error type and by the gold "
                "program's operation (see the glossary); then each grading policy's accuracy side by side.",
                "": "Each grading policy's accuracy side by side (see the glossary): a large gap between two policies "
                "means answers that are right but written another way. {benchmark} gold answers come without "
                "programs, so wrong {items} are not counted by operation.",
                "table": "Each grading policy's accuracy side by side (see the glossary): a large gap between two "
                "policies means answers that are right but written another way.",
            },
        ),
    }
)


def compare_title(run: Run) -> Markdown:
    """The 04-compare-systems page's heading (it names the benchmark, :func:`title`) and what it shows."""
    words = _words(run)
    n = len(run.turns["system"].unique())
    graded_on = " ".join(w for w in (words["benchmark"], words["items"]) if w)  # a plain table names no benchmark
    text = (
        f"{formats.count(n)} systems graded on the same {graded_on}, listed and paired in "
        "the order they were given (file order, then the order within a file). Each pair is compared on the "
        f"{words['items']} both systems answered: how many points apart their accuracies are, with a 95% interval, "
        "and how likely a gap that size is by chance (the McNemar test and the Holm adjustment in the glossary)."
    )
    return Markdown(f"{title(run, '04-compare-systems').data.rstrip()}\n\n{text}")


def compare_heading(run: Run, key: str) -> Markdown | None:
    """A section of the 04-compare-systems page (:data:`COMPARE_SECTIONS`), as :func:`heading` shows one."""
    section = COMPARE_SECTIONS[key]
    words = {**_words(run), "Items": _words(run)["items"].capitalize()}
    text = _for(section.text, run.gold.benchmark)
    if not _applies(run, section.needs):
        text = _for(section.why_not, run.gold.benchmark)
    return Markdown(f"## {section.title.format(**words)}\n\n{text.format(**words)}")
