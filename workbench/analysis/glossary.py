"""The grading words a report uses, defined once: every page ends with the entries that concern
its benchmark (rendered by the page template, :mod:`workbench.report.runner`).

The metrics' own definitions are their records' (:data:`workbench.analysis.metrics.METRICS`);
the other words are defined here.

A GSM8K or MATH page counts problems, not turns: its glossary defines "Problem" and "Accuracy"
instead of "Turn" and "Turn execution accuracy", and its definitions say "problem" where a
ConvFinQA page's say "turn" (``{item}`` in a definition).

Examples
--------
>>> terms = [entry.term for entry in glossary("gsm8k")]
>>> "Problem" in terms, "Turn" in terms, "Conversation" in terms, "BLEU and ROUGE" in terms
(True, False, False, True)
>>> next(e for e in glossary("convfinqa") if e.term == "Turn execution accuracy").definition
'Share of turns whose answer is correct.'
>>> next(e for e in glossary("math") if e.term == "Verdict").definition
"Our grader's decision that a problem's answer is right or wrong, with its reason: the rule that decided it."

A plain gold table graded without ``--benchmark`` (``"table"``) is no benchmark: its page's words
name none, for single questions (``item="problem"``) or for records of several turns.

>>> [(e.term, e.definition) for e in glossary("table", "problem")][:1]
[('Problem', 'One question of the gold table and its answer.')]
>>> any("ConvFinQA" in e.definition for e in glossary("table", "turn") + glossary("table", "problem"))
False
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from workbench.analysis.metrics import METRICS

__all__ = ["Entry", "GLOSSARY", "glossary"]

#: A plain gold table of single questions, and one whose records have several turns (a table names no benchmark).
_TABLE, _TABLE_TURNS = "table", "table-turns"
_ALL = ("convfinqa", "gsm8k", "math", _TABLE, _TABLE_TURNS)
#: The benchmarks whose items are single problems, not turns of a conversation.
_SINGLE = ("gsm8k", "math", _TABLE)
#: Words for turns of a conversation that name no benchmark: ConvFinQA's, and a plain table's of several turns.
_TURNS = ("convfinqa", _TABLE_TURNS)


@dataclass(frozen=True)
class Entry:
    """One word of the glossary, its definition, and the benchmarks whose reports use it."""

    term: str
    definition: str
    benchmarks: tuple[str, ...] = _ALL


def _metric(key: str, term: str, benchmarks: tuple[str, ...] = _ALL) -> Entry:
    return Entry(term, METRICS[key].definition, benchmarks)


#: Every entry, in the order pages list them.
GLOSSARY: tuple[Entry, ...] = (
    Entry(
        "Turn",
        "One question of a ConvFinQA conversation and its answer.",
        ("convfinqa",),
    ),
    Entry("Turn", "One question of a record of the gold table and its answer.", (_TABLE_TURNS,)),
    Entry("Problem", "One GSM8K or MATH question and its answer.", ("gsm8k", "math")),
    Entry("Problem", "One question of the gold table and its answer.", (_TABLE,)),
    Entry(
        "Conversation",
        "A ConvFinQA record: a financial document and a sequence of questions about it, later ones building on "
        "earlier answers.",
        ("convfinqa",),
    ),
    Entry(
        "Conversation",
        "A record of the gold table: a sequence of questions, later ones building on earlier answers.",
        (_TABLE_TURNS,),
    ),
    Entry(
        "Verdict",
        "Our grader's decision that a {item}'s answer is right or wrong, with its reason: the rule that decided it.",
    ),
    Entry(
        "Grading policy",
        "A named set of rules for comparing an answer with the gold one. The report uses the main policy, "
        "'symbolic', unless a table says otherwise; the others are shown beside it for comparison.",
    ),
    Entry(
        "Numeric match ('cascade')",
        "Numbers compared after reading signs, percent signs and scale words (million, %), equal within 0.1% "
        "or at the precision the model wrote them.",
    ),
    Entry(
        "Symbolic match ('symbolic')",
        "The numeric match, then SymPy (a computer-algebra library) for answers written as formulas or LaTeX, "
        "such as 1/2 against \\frac{1}{2}. The main policy.",
    ),
    Entry("Upstream verdict", "The verdict the prediction file brought from the grader that made it."),
    Entry(
        "Program",
        "The calculation behind an answer, such as subtract(60.94, 25.14), divide(#0, 25.14); its operation is "
        "its last step, and a lookup reads a number from the document without calculating.",
        _TURNS,
    ),
    _metric("turn_execution_accuracy", "Turn execution accuracy", _TURNS),
    Entry("Accuracy", "Share of problems whose answer is correct.", _SINGLE),
    _metric("conversation_execution_accuracy", "Conversation execution accuracy", _TURNS),
    _metric("all_turns_correct_rate", "All turns correct", _TURNS),
    _metric("turn_program_accuracy", "Program accuracy", _TURNS),
    Entry(
        "Error type",
        "The kind of mistake in a wrong {item}: sign, scale (thousands against millions), percent (0.05 against 5%), "
        "wrong operator or operand, arithmetic slip (right calculation, wrong result), carried error (built on an "
        "earlier wrong answer), extraction failure (no answer found), or wrong value when nothing more specific "
        "applies.",
    ),
    Entry(
        "Data-quality flag",
        "An automatic hint that the gold data itself may be wrong (a number missing from the document, a unit or "
        "sign that disagrees, a gold answer its own program does not give), with the evidence; a candidate for a "
        "person to check, not a verdict.",
        (*_TURNS, _TABLE),
    ),
    Entry(
        "Type-2 conversation",
        "A ConvFinQA conversation joined from two questions of the original FinQA data; its second half asks "
        "about something else.",
        ("convfinqa",),
    ),
    Entry(
        "95% interval",
        "The range the accuracy would likely fall in on other data like this, from resampling "
        "{clusters} 1,000 times; a group of fewer than 20 {item}s is marked too small to read.",
    ),
    Entry("Points", "A difference between two percentages: from 83.1% to 81.9% is -1.2 points."),
    Entry(
        "McNemar test (p)",
        "How likely two systems graded on the same {item}s would differ this much by chance if they were equally "
        "good; below 0.05 is usually taken as a real difference.",
    ),
    Entry(
        "Holm adjustment",
        "A correction of the McNemar p-values when several pairs of systems are compared: among many comparisons "
        "some look different by chance alone, so each p-value is raised (the smallest times the number of pairs, "
        "the next times one fewer, and so on). Read the adjusted p-value when more than two systems are compared.",
    ),
    Entry(
        "BLEU and ROUGE",
        "Word overlap (0 to 100) between a model's whole written solution and the reference solution: they "
        "measure how alike the wording is, not whether the answer is right.",
        ("gsm8k", "math"),
    ),
)


def glossary(benchmark: str = "", item: str = "turn") -> tuple[Entry, ...]:
    """The entries a report on ``benchmark`` uses (every entry for an unknown or empty one, in a
    ConvFinQA page's words), each definition in the words of what the benchmark counts; a plain
    gold table's (``"table"``) by what its run counts, ``item`` (``"problem"``: single questions)."""
    if benchmark == _TABLE and item != "problem":
        benchmark = _TABLE_TURNS
    if benchmark not in _ALL:  # every benchmark's entries (a plain table's own words are for its page only)
        named = ("convfinqa", "gsm8k", "math")
        benchmark, entries = "convfinqa", tuple(e for e in GLOSSARY if any(b in named for b in e.benchmarks))
    else:
        entries = tuple(entry for entry in GLOSSARY if benchmark in entry.benchmarks)
    single = benchmark in _SINGLE
    fill = {"{item}": "problem" if single else "turn", "{clusters}": "problems" if single else "whole conversations"}

    def worded(text: str) -> str:  # not str.format: definitions hold braces (\\frac{1}{2})
        for key, value in fill.items():
            text = text.replace(key, value)
        return text

    return tuple(replace(entry, definition=worded(entry.definition)) for entry in entries)
