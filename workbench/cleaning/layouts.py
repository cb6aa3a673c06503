"""Write a cleaned dataset back in its input's own layout.

:func:`dataset_writers` reads the original file's records and applies a cleaning
:class:`~workbench.cleaning.plan.Plan` to them, changing only what the plan says (every other
field and value, and the record order, stay as they were), and gives a writer of the cleaned
dataset and, with a split, of its train and test parts:

* ConvFinQA reformatted JSON (``{"dev": [records]}``): a corrected answer sets
  ``dialogue.conv_answers[turn]`` (the text as given) and ``dialogue.executed_answers[turn]``
  (:func:`~workbench.cleaning.plan.executed_value`), a corrected program
  ``dialogue.turn_program[turn]``;
* GSM8K JSON Lines: the answer's final ``#### n`` line is rewritten; blank and untouched lines
  are kept byte for byte;
* a plain gold table (CSV, TSV, Parquet, JSON Lines or a JSON list): ``gold_answer`` and
  ``gold_program`` are set.

With ``keep_excluded`` an excluded record stays, marked (``"workbench": {"excluded": true,
"excluded_turns": [...]}`` in JSON records, an ``excluded`` column in tables).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from workbench.cleaning.plan import Correction, Plan, executed_value, rewrite_final_answer
from workbench.errors import InputError
from workbench.grading.compare import answer_text
from workbench.io.atomic import parquet_writer
from workbench.io.csvsafe import count_formula_cells, write_csv
from workbench.io.gold import GoldDataset
from workbench.io.jsonfiles import read_json, read_text

__all__ = ["SUPPORTED_LAYOUTS", "CsvFile", "Writer", "dataset_writers", "text_writer"]

#: Layouts :func:`workbench.cleaning.export.export_cleaned` can write back.
SUPPORTED_LAYOUTS = ("convfinqa-reformatted", "gsm8k-jsonl", "plain-table")

#: Writes one file of an export into the temporary path it is given.
Writer = Callable[[Path], None]


@dataclass(frozen=True)
class _Unit:
    """One item of the input file in file order: a record, a line, or a table row (one turn)."""

    record_id: str
    payload: Any


@dataclass(frozen=True)
class CsvFile:
    """Writes ``frame`` as CSV (TSV with ``separator="\\t"``), formula-looking cells quoted
    (:func:`workbench.io.csvsafe.write_csv`)."""

    frame: pl.DataFrame
    separator: str = ","

    def __call__(self, tmp: Path) -> None:
        write_csv(self.frame, tmp, separator=self.separator)

    @property
    def quoted(self) -> int:
        """How many cells (and column names) the file has quoted."""
        return count_formula_cells(self.frame)


def _json_text(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _dump_like(line: str, original: Any, obj: Any) -> str:
    """Write ``obj`` as one JSON line in the style ``line`` wrote ``original`` (compact or spaced,
    escaped or raw non-ASCII)."""
    ascii_only = line.isascii()
    compact = json.dumps(original, ensure_ascii=ascii_only, separators=(",", ":")) == line.strip()
    return json.dumps(obj, ensure_ascii=ascii_only, separators=(",", ":") if compact else None)


def text_writer(text: str) -> Writer:
    """Writes ``text`` as UTF-8, its line ends as they are."""
    return lambda tmp: tmp.write_text(text, encoding="utf-8", newline="")


class _Reformatted:
    """ConvFinQA reformatted: ``{"dev": [records]}``; a unit is a record (a conversation)."""

    def __init__(self, path: Path) -> None:
        self.data: dict[str, list[dict[str, Any]]] = read_json(path)
        self.units: list[_Unit] = []
        self.keys: list[str] = []
        for key, records in self.data.items():
            for record in records:
                self.units.append(_Unit(str(record.get("id", f"#{len(self.units)}")), record))
                self.keys.append(key)

    def edit(self, unit: _Unit, corrections: Mapping[int, Correction], marker: Sequence[int] | None) -> _Unit:
        """Apply the record's corrections; ``marker``: the excluded turns, for a kept record."""
        record = copy.deepcopy(unit.payload)
        dialogue = record["dialogue"]
        for turn, correction in corrections.items():
            if correction.answer is not None:
                dialogue["conv_answers"][turn] = correction.answer
                dialogue["executed_answers"][turn] = executed_value(correction.answer)
            if correction.program is not None:
                dialogue["turn_program"][turn] = correction.program
        if marker is not None:
            record["workbench"] = {"excluded": True, "excluded_turns": list(marker)}
        return _Unit(unit.record_id, record)

    def render(self, kept: Sequence[int], units: Sequence[_Unit], name: str | None) -> Writer:
        if name is not None:
            return text_writer(_json_text({name: [units[i].payload for i in kept]}))
        out: dict[str, list[Any]] = {key: [] for key in self.data}
        for i in kept:
            out[self.keys[i]].append(units[i].payload)
        return text_writer(_json_text(out))


class _Objects:
    """One JSON object a turn, as JSON Lines (blank lines and untouched lines kept byte for byte)
    or as a JSON list: GSM8K ``{question, answer}`` or a plain gold table."""

    def __init__(self, path: Path, gold: GoldDataset) -> None:
        self.gold = gold
        self.lines: list[str] | None = None
        self.newline = "\n"
        self.trailing = True
        if path.suffix.lower() in (".jsonl", ".ndjson"):
            objects = None
        else:
            try:
                objects = read_json(path)
            except InputError:  # a .json file that holds JSON Lines, as load_gold allows
                objects = None
        items: list[tuple[str | None, dict[str, Any]]]
        if isinstance(objects, list):
            items = [(None, obj) for obj in objects]
        else:
            text = read_text(path)
            self.newline = "\r\n" if "\r\n" in text else "\n"
            self.trailing = text.endswith(("\n", "\r"))
            self.lines = text.splitlines()
            items = [(line, json.loads(line)) for line in self.lines if line.strip()]
        ids = gold.turns["record_id"].to_list()
        self.units = [_Unit(ids[i], item) for i, item in enumerate(items)]

    def edit(self, unit: _Unit, corrections: Mapping[int, Correction], marker: Sequence[int] | None) -> _Unit:
        """Apply the unit's own correction; ``marker``: the excluded turns, for a kept record."""
        line, obj = unit.payload
        obj = copy.deepcopy(obj)
        gsm8k = self.gold.benchmark == "gsm8k"
        for correction in corrections.values():
            if correction.answer is not None:
                if gsm8k:
                    obj["answer"] = rewrite_final_answer(obj["answer"], correction.answer)
                else:
                    obj["gold_answer"] = correction.answer
            if correction.program is not None:  # never for GSM8K: plan_annotations refuses it
                obj["gold_program"] = correction.program
        if marker is not None:
            if gsm8k:
                obj["workbench"] = {"excluded": True, "excluded_turns": list(marker)}
            else:
                obj["excluded"] = bool(marker)
        if line is not None:
            line = _dump_like(line, unit.payload[1], obj)
        return _Unit(unit.record_id, (line, obj))

    def render(self, kept: Sequence[int], units: Sequence[_Unit], name: str | None) -> Writer:
        if self.lines is None:
            return text_writer(_json_text([units[i].payload[1] for i in kept]))
        if name is not None:
            lines = [units[i].payload[0] for i in kept]
        else:
            keep = set(kept)
            lines, index = [], 0
            for line in self.lines:
                if not line.strip():
                    lines.append(line)
                    continue
                if index in keep:
                    lines.append(units[index].payload[0])
                index += 1
        text = self.newline.join(lines) + (self.newline if self.trailing or name is not None else "")
        return text_writer(text)


def _read_frame(path: Path) -> pl.DataFrame:
    """A plain gold table read exactly as :func:`workbench.io.gold.load_gold` reads it."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return pl.read_parquet(path)
    return pl.read_csv(path, infer_schema=False, separator="\t" if suffix == ".tsv" else ",")


def _scatter_text(frame: pl.DataFrame, column: str, rows: Sequence[int], values: Sequence[str]) -> pl.DataFrame:
    """Set text cells; a missing column is added, a non-text one is written as text first."""
    if column not in frame.columns:
        series = pl.Series(column, [None] * frame.height, dtype=pl.String)
    elif frame[column].dtype in (pl.String, pl.Null):
        series = frame[column].cast(pl.String).clone()
    else:
        series = pl.Series(
            column, [None if v is None else answer_text(v) for v in frame[column].to_list()], dtype=pl.String
        )
    return frame.with_columns(series.scatter(list(rows), list(values)))


def _table_frame(
    path: Path, gold: GoldDataset, plan: Plan, *, keep_excluded: bool
) -> tuple[pl.DataFrame, pl.Series, Callable[[pl.DataFrame], Writer]]:
    """The cleaned table (all rows, corrections applied, ``excluded`` column when kept),
    the record id of each row, and the writer of a frame in the input's format."""
    frame = _read_frame(path)
    keys = gold.turns.select("record_id", "turn").with_row_index("row")
    index = {(r, t): i for i, r, t in keys.iter_rows()}
    for column, attribute in (("gold_answer", "answer"), ("gold_program", "program")):
        cells = [
            (index[key], getattr(c, attribute))
            for key, c in plan.corrections.items()
            if getattr(c, attribute) is not None
        ]
        if cells:
            frame = _scatter_text(frame, column, [r for r, _ in cells], [v for _, v in cells])
    record_ids = gold.turns["record_id"]
    if keep_excluded:
        frame = frame.with_columns(record_ids.is_in(list(plan.excluded)).alias("excluded"))
    suffix = path.suffix.lower()

    def writer(out: pl.DataFrame) -> Writer:
        if suffix == ".parquet":  # Parquet keeps every value verbatim
            return parquet_writer(out)
        return CsvFile(out, "\t" if suffix == ".tsv" else ",")

    return frame, record_ids, writer


def dataset_writers(
    path: Path, gold: GoldDataset, plan: Plan, *, keep_excluded: bool, assignment: pl.DataFrame | None
) -> dict[str, Writer]:
    """Writers of the cleaned dataset and, with an assignment, of its train and test parts."""
    split_of = dict(assignment.select("record_id", "split").iter_rows()) if assignment is not None else {}
    sides = ("train", "test") if assignment is not None else ()
    writers: dict[str, Writer] = {}
    if gold.layout == "plain-table" and path.suffix.lower() in (".csv", ".tsv", ".parquet"):
        frame, record_ids, writer = _table_frame(path, gold, plan, keep_excluded=keep_excluded)
        keep = pl.Series([keep_excluded or r not in plan.excluded for r in record_ids], dtype=pl.Boolean)
        writers["dataset"] = writer(frame.filter(keep))
        for side in sides:
            chosen = pl.Series([split_of.get(r) == side for r in record_ids], dtype=pl.Boolean)
            writers[side] = writer(frame.filter(chosen))
        return writers
    source: _Reformatted | _Objects = (
        _Reformatted(path) if gold.layout == "convfinqa-reformatted" else _Objects(path, gold)
    )
    by_record: dict[str, dict[int, Correction]] = {}
    for (record_id, turn), correction in plan.corrections.items():
        by_record.setdefault(record_id, {})[turn] = correction
    turn_of = gold.turns["turn"].to_list()
    table = gold.layout == "plain-table"
    units = list(source.units)
    for i, unit in enumerate(units):
        corrections = by_record.get(unit.record_id, {})
        if isinstance(source, _Objects):  # one object a turn: only that turn's correction
            corrections = {t: c for t, c in corrections.items() if t == turn_of[i]}
        marker = None
        if keep_excluded and (table or unit.record_id in plan.excluded):
            marker = plan.excluded.get(unit.record_id, ())
        if corrections or marker is not None:
            units[i] = source.edit(unit, corrections, marker)
    kept = [i for i, u in enumerate(units) if keep_excluded or u.record_id not in plan.excluded]
    writers["dataset"] = source.render(kept, units, None)
    for side in sides:
        writers[side] = source.render(
            [i for i, u in enumerate(units) if split_of.get(u.record_id) == side], units, side
        )
    return writers
