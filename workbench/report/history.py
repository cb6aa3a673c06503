"""History: the runs of a ledger (:mod:`workbench.pipeline.ledger`) over time, as tables.

* :func:`over_runs`: accuracy of every system and slice group in every run, with a 95%
  bootstrap interval clustered by conversation (:func:`workbench.analysis.stats.slice_intervals`);
* :func:`run_changes`: for every run and system, the items newly failing and newly passing since
  that system's previous run, and the groups where the run differs from it: a paired McNemar
  test on the items both answered (the regression gate's test,
  :func:`workbench.report.gate.compare_rows`), Holm-adjusted across every group of every run
  shown for the system, a group the items of a stronger difference explain folded into it
  (:func:`workbench.report.gate.fold`).

A run is numbered from 1 in the order the ledger holds them (oldest first).

The ``05-history`` template opens a reports folder's ledgers with :func:`open_history` (one line,
no traceback, when there is none), shows its title (:func:`title`), the tables above as charts
(:mod:`workbench.views.history`) and one row per run and system (:func:`runs`), each linked to
the run's report.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import polars as pl
from IPython.display import Markdown

from workbench.analysis import formats
from workbench.analysis.comparison import holm
from workbench.analysis.stats import slice_intervals
from workbench.config import project_root
from workbench.errors import InputError
from workbench.io.paths import shown_path
from workbench.pipeline.ledger import LEDGER_NAME, LedgerRow, read_ledger
from workbench.report.gate import ALPHA, compare_rows, fold, group_words, paired_items, previous_row
from workbench.views.history import p_text

__all__ = ["History", "open_history", "title", "runs", "lineage", "over_runs", "run_changes", "ledger_files", "when"]

#: What the page says when the project's reports folder has no ledger yet.
_NOTHING_YET = (
    "No run ledger in {folder} yet: every 'workbench report ... --out FOLDER' and 'workbench grade ... --out "
    "FOLDER' adds its runs to FOLDER/ledger.sqlite; show one with -p folder=FOLDER."
)

#: Where ``workbench report --template 05-history`` writes its page without ``--out``, below the
#: project: the folder the page's links to each run's report start from unless told otherwise.
_DEFAULT_PAGE_FOLDER = ("reports", "05-history")


@dataclass(frozen=True)
class History:
    """The runs of one template in a reports folder's ledgers, oldest first, with the link from
    the page to each run's report.

    Attributes
    ----------
    rows
        The ledger rows shown (with their verdicts), oldest first.
    template
        The template whose runs they are (``""``: runs of ``workbench grade --out``).
    folder
        The reports folder (or ledger) as the page names it.
    links
        Each run's report, as a link from the page's folder (a run without a report has none).
    others
        The other templates the ledgers hold runs of (not shown).
    missing
        Why there is nothing to show (no ledger yet), or ``""``.
    """

    rows: tuple[LedgerRow, ...]
    template: str
    folder: str
    links: Mapping[str, str] = field(default_factory=dict)
    others: tuple[str, ...] = ()
    missing: str = ""


def ledger_files(folder: str | Path) -> list[Path]:
    """The ledgers of a reports folder: its own ``ledger.sqlite`` and those of its template folders
    (``reports/01-overview/ledger.sqlite``); ``folder`` itself when it is a file."""
    path = Path(folder)
    if path.is_file():
        return [path]
    return [p for p in [path / LEDGER_NAME, *sorted(path.glob(f"*/{LEDGER_NAME}"))] if p.is_file()]


def _href(target: Path, page_folder: Path) -> str:
    """A relative link from a page in ``page_folder`` to ``target`` (URL-quoted)."""
    return quote(Path(os.path.relpath(target.absolute(), page_folder.absolute())).as_posix())


def open_history(folder: str = "", *, template: str = "", page_folder: str = "") -> History:
    """The runs in the ledgers of the reports folder ``folder`` (default: the project's
    ``reports/``; see :func:`ledger_files`), of ``template`` (default: the newest run's).

    ``page_folder`` is where the page goes, which its links to each run's report start from
    (default: ``reports/05-history`` of the project, where ``workbench report --template
    05-history`` writes it without ``--out``).

    The project's ``reports/`` without a ledger (nothing run yet) is an empty history, whose page
    says so in one sentence (:attr:`History.missing`); a folder given that holds none is an error.

    Raises
    ------
    InputError
        When ``folder`` is given and there is no ledger there (one line saying how to make one), a
        ledger cannot be read, or ``template`` has no run in them.
    """
    root = project_root()
    where = Path(folder).expanduser() if str(folder).strip() else root / "reports"
    shown = shown_path(where.absolute(), root)
    files = ledger_files(where)
    if not files and not str(folder).strip():
        return History(rows=(), template=template, folder=shown, missing=_NOTHING_YET.format(folder=shown))
    if not files:
        raise InputError(
            shown,
            f"no run ledger here ({LEDGER_NAME} in the folder or in its template folders)",
            fix="run 'workbench report ... --out FOLDER' (or 'workbench grade ... --out FOLDER') first, "
            "then show that FOLDER (-p folder=FOLDER)",
        )
    page = Path(page_folder).expanduser() if str(page_folder).strip() else root.joinpath(*_DEFAULT_PAGE_FOLDER)
    found: list[tuple[LedgerRow, Path]] = []
    for path in files:
        found += [(row, path.parent) for row in read_ledger(path, with_verdicts=True)]
    found.sort(key=lambda pair: pair[0].created_at)  # stable: each ledger's order within a time
    if not found:
        raise InputError(shown, "the run ledger holds no run yet", fix="run 'workbench report ... --out FOLDER' first")
    templates = list(dict.fromkeys(row.template for row, _ in found))
    chosen = template if template else found[-1][0].template
    if chosen not in templates:
        raise InputError(
            shown,
            f"no run of the template '{chosen}' in the ledger",
            field="template",
            fix=f"use one of {', '.join(repr(t) for t in templates)} (empty: the newest run's)",
        )
    mine = [(row, home) for row, home in found if row.template == chosen]
    links = {row.run_id: _href(home / row.report, page) for row, home in mine if row.report}
    return History(
        rows=tuple(row for row, _ in mine),
        template=chosen,
        folder=shown,
        links=links,
        others=tuple(t for t in templates if t != chosen),
    )


def title(history: History) -> Markdown:
    """The page's heading and one paragraph: which runs it shows, from when to when, and how a
    run is marked."""
    rows = history.rows
    if not rows:
        return Markdown(f"# History\n\n{_md(history.missing)}")
    numbered = _numbered(rows)
    what = f"template {_md(history.template)}" if history.template else "workbench grade --out"
    systems = list(dict.fromkeys(lineage(rows)))
    others = (
        f" The ledger also holds runs of {', '.join(_md(t) or 'workbench grade' for t in history.others)} "
        "(the template parameter chooses)."
        if history.others
        else ""
    )
    return Markdown(
        f"# History of {_md(history.folder)}\n\n"
        f"{len(numbered)} runs of {what}, {when(rows[0].created_at)} to {when(rows[-1].created_at)}; "
        f"{len(systems)} system{'s' if len(systems) != 1 else ''}: {', '.join(_md(s) for s in systems)}. "
        "Each point is a run's accuracy with its 95% interval (conversations resampled); a ringed point "
        "differs from the system's run before on the items both answered (paired McNemar test, p < 0.05 "
        f"after Holm's adjustment across every group and run shown). A click on a run's point, or on its number in the "
        f"table, opens its report.{others}"
    )


def when(created_at: str) -> str:
    """A run's time as the page shows it: to the minute, in UTC.

    Examples
    --------
    >>> when("2026-11-09T02:00:00+00:00"), when("2026-11-09T03:00:59+01:00"), when("an earlier run")
    ('2026-11-09 02:00 UTC', '2026-11-09 02:00 UTC', 'an earlier run')
    """
    try:
        moment = datetime.fromisoformat(created_at.replace("Z", "+00:00"))
    except ValueError:
        return created_at
    return (moment.astimezone(UTC) if moment.tzinfo else moment).strftime("%Y-%m-%d %H:%M UTC")


def _md(text: str) -> str:
    r"""Text from the data with the characters Markdown reads as markup escaped.

    Examples
    --------
    >>> _md("a_b*[c]")
    'a\\_b\\*\\[c\\]'
    """
    return "".join(f"\\{c}" if c in "\\`*_{}[]<>()#+!|$~" else c for c in text)


#: The columns of :func:`runs`.
_RUNS_SCHEMA = {
    "run": pl.Int32,
    "date": pl.String,
    "system": pl.String,
    "accuracy": pl.Float64,
    "low": pl.Float64,
    "high": pl.Float64,
    "n_turns": pl.Int64,
    "change": pl.Float64,
    "newly_failing": pl.Int64,
    "newly_passing": pl.Int64,
    "differs": pl.String,
    "href": pl.String,
}


def runs(history: History, over: pl.DataFrame, items: pl.DataFrame, marks: pl.DataFrame) -> pl.DataFrame:
    """One row per run and system, newest first: ``run, date, system, accuracy, low, high,
    n_turns, change, newly_failing, newly_passing, differs, href`` (``differs``: the
    groups where the run differs from the one before, in words; ``href``: its report)."""
    if over.is_empty():
        return pl.DataFrame(schema=_RUNS_SCHEMA)
    overall = over.filter(pl.col("slice") == "overall").sort("run", "system")
    said: dict[tuple[int, str], list[str]] = {}
    for mark in marks.iter_rows(named=True):
        also = f"; also {mark['also']}" if mark["also"] else ""
        said.setdefault((mark["run"], mark["system"]), []).append(
            f"{group_words(mark['slice'], mark['group'])}: {formats.percent(mark['accuracy_before'])} -> "
            f"{formats.percent(mark['accuracy_now'])}, {p_text(mark['p_holm'])}{also}"
        )
    run_ids = dict(zip(over["run"].to_list(), over["run_id"].to_list(), strict=True))
    table = overall.join(items, on=["run", "system"], how="left").with_columns(
        (pl.col("accuracy") - pl.col("accuracy").shift(1).over("system", order_by="run")).alias("change")
    )
    return (
        table.with_columns(
            pl.col("created_at").map_elements(when, return_dtype=pl.String).alias("date"),
            pl.struct("run", "system")
            .map_elements(lambda key: "; ".join(said.get((key["run"], key["system"]), [])), return_dtype=pl.String)
            .alias("differs"),
            pl.col("run")
            .replace_strict(
                {run: history.links.get(run_id, "") for run, run_id in run_ids.items()}, return_dtype=pl.String
            )
            .alias("href"),
        )
        .select(
            "run",
            "date",
            "system",
            "accuracy",
            "low",
            "high",
            "n_turns",
            "change",
            "newly_failing",
            "newly_passing",
            "differs",
            "href",
        )
        .sort(["run", "system"], descending=[True, False])
    )


def _numbered(rows: Sequence[LedgerRow]) -> dict[str, int]:
    return {run_id: i for i, run_id in enumerate(dict.fromkeys(r.run_id for r in rows), start=1)}


def lineage(rows: Sequence[LedgerRow]) -> list[str]:
    """The name each row is shown under: the name of the first row of its line of runs (each row
    linked to its previous run as the gate links them, :func:`workbench.report.gate.previous_row`),
    so a nightly system whose name carries a run-folder timestamp is one line over time."""
    names: list[str] = []
    for position, row in enumerate(rows):
        before = previous_row(rows[:position], row)
        earlier = next((i for i, r in enumerate(rows) if r is before), None)
        names.append(names[earlier] if earlier is not None else row.system)
    return names


#: The columns of :func:`over_runs` (its empty table's too).
_OVER_SCHEMA = {
    "run": pl.Int32,
    "run_id": pl.String,
    "created_at": pl.String,
    "report": pl.String,
    "system": pl.String,
    "slice": pl.String,
    "group": pl.String,
    "n_turns": pl.Int64,
    "accuracy": pl.Float64,
    "low": pl.Float64,
    "high": pl.Float64,
}


def over_runs(rows: Sequence[LedgerRow], *, n_boot: int = 1000, seed: int = 0) -> pl.DataFrame:
    """``run, run_id, created_at, report, system, slice, group, n_turns, accuracy, low, high``:
    one row per run, system and slice group (``system`` as :func:`lineage` names it)."""
    number = _numbered(rows)
    parts = []
    for row, name in zip(rows, lineage(rows), strict=True):
        long = row.verdicts.with_columns(pl.lit(name).alias("system"))
        table = slice_intervals(long, n_boot=n_boot, seed=seed)
        parts.append(
            table.select(
                pl.lit(number[row.run_id]).alias("run"),
                pl.lit(row.run_id).alias("run_id"),
                pl.lit(row.created_at).alias("created_at"),
                pl.lit(row.report).alias("report"),
                "system",
                "slice",
                "group",
                "n_turns",
                "accuracy",
                "low",
                "high",
            )
        )
    return pl.concat(parts) if parts else pl.DataFrame(schema=_OVER_SCHEMA)


def run_changes(rows: Sequence[LedgerRow]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The changes of each run against the system's previous run.

    Returns
    -------
    (items, marks)
        ``items``: ``run, system, newly_failing, newly_passing`` (items both runs answered);
        ``marks``: ``run, system, slice, group, n_turns, accuracy_before, accuracy_now,
        mcnemar_p, p_holm, also``: the groups where the run differs (McNemar p < 0.05 after
        Holm's adjustment across all the system's runs and groups), with the groups the same
        items explain.
    """
    number = _numbered(rows)
    names = lineage(rows)
    counts: list[dict[str, object]] = []
    marks: list[dict[str, object]] = []
    tested: list[tuple[int, str, pl.DataFrame, pl.DataFrame]] = []
    for position, now in enumerate(rows):
        before = previous_row(rows[:position], now)
        if before is None:
            continue
        run, system = number[now.run_id], names[position]
        items = paired_items(before, now)
        overall = items.filter(pl.col("slice") == "overall")
        counts.append(
            {
                "run": run,
                "system": system,
                "newly_failing": overall.filter(pl.col("before") & ~pl.col("now")).height,
                "newly_passing": overall.filter(~pl.col("before") & pl.col("now")).height,
            }
        )
        table = compare_rows(before, now)
        if not table.is_empty():
            tested.append((run, system, items, table))
    # Holm across every group of every run shown for the system: the family the page shows
    for system in dict.fromkeys(name for _, name, _, _ in tested):
        mine = [entry for entry in tested if entry[1] == system]
        adjusted = iter(holm([p for *_, table in mine for p in table["mcnemar_p"].to_list()]))
        for run, _, items, table in mine:
            table = table.with_columns(p_holm=pl.Series([next(adjusted) for _ in range(table.height)]))
            for found, also in fold(items, table.filter(pl.col("p_holm") < ALPHA), 0.0):
                marks.append({"run": run, "system": system, **found, "also": ", ".join(also)})
    items_schema = {"run": pl.Int64, "system": pl.String, "newly_failing": pl.Int64, "newly_passing": pl.Int64}
    marks_schema = {
        "run": pl.Int64,
        "system": pl.String,
        "slice": pl.String,
        "group": pl.String,
        "n_turns": pl.Int64,
        "accuracy_before": pl.Float64,
        "accuracy_now": pl.Float64,
        "mcnemar_p": pl.Float64,
        "p_holm": pl.Float64,
        "also": pl.String,
    }
    return pl.DataFrame(counts, schema=items_schema), pl.DataFrame(marks, schema=marks_schema)
