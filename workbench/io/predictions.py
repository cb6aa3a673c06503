"""Load model outputs into the canonical predictions table.

Canonical columns: ``record_id, turn (0-based), system, predicted_answer,
predicted_program, raw_output`` (see :data:`workbench.schema.PREDICTIONS`); only the keys
and one of answer/program are required. Files may be JSON Lines, JSON, CSV or Parquet.

Shapes recognised without a map:

* canonical: columns named as above (``turn`` 0-based);
* zarifaziz/convfinqa runs: ``record_id, turn_idx, predicted_answer, predicted_calculation,
  predicted_reasoning`` (the calculation is read as the program, the reasoning as raw output);
* ghchen99/ConvFinQA-llm-eval predictions: ``[{id, conversation: [{predicted_program,
  predicted_answer}]}]``;
* ghchen99 evaluation results: ``{"results": [{question_id: "<record id>-<turn>", ...}]}``;
* OpenAI grade-school-math ``example_model_solutions.jsonl``: four systems a line
  (:func:`_openai_gsm8k`);
* ToRA outputs ``{idx, question, gt, gt_cot, code: [...], pred: [...]}`` (:func:`_tora`);
* Program-of-thoughts outputs ``{question, answer, executed, generated}``, few-shot prompt
  lines skipped with a warning (:func:`_program_of_thoughts`);
* lm-evaluation-harness ``samples_<task>_<date>.jsonl`` logs, one row per ``doc_id``
  (:func:`_lm_eval_samples`).

Gold that travels inside the outputs fills ``question``, ``gold_answer``, ``gold_solution``, and
the upstream grader's verdict ``upstream_correct``. Rows of GSM8K files without ids (OpenAI,
program-of-thoughts) keep a null ``record_id``; :func:`workbench.io.link.attach_record_ids` links
them to gold by their question text. Their ``turn`` is 0 (GSM8K has one turn a record).

Anything else takes a :class:`ColumnMap` (``--map record_id=COL,turn=COL:1,...``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from workbench.errors import InputError, UsageError
from workbench.grading import patterns
from workbench.grading.compare import answer_text, non_finite
from workbench.grading.extract import last_boxed
from workbench.io.gold import gsm8k_final_answer
from workbench.io.jsonfiles import iter_json_lines, read_csv, read_json, read_parquet, require_object
from workbench.schema import PREDICTION_TARGETS, PREDICTIONS

__all__ = ["ColumnMap", "parse_column_map", "load_predictions", "default_system_name"]

_GENERIC_STEMS = frozenset({"predictions", "prediction", "outputs", "output", "samples", "results"})
#: Gold columns ghchen99's files carry, as canonical names.
_GHCHEN99_GOLD = ["question", "gold_answer"]


@dataclass(frozen=True)
class ColumnMap:
    """Which source column fills each canonical column, and how turns are counted.

    Attributes
    ----------
    columns
        Canonical name to source column, e.g. ``{"record_id": "report_id_x"}``.
    turn_base
        0 when the source's first turn is 0, 1 when it is 1.
    """

    columns: Mapping[str, str] = field(default_factory=dict)
    turn_base: int = 0


def parse_column_map(spec: str) -> ColumnMap:
    """Parse ``record_id=COL,turn=COL:1,predicted_answer=COL,...``.

    The turn column must say whether it counts from 0 or from 1 (``turn=q_order:1``).

    Raises
    ------
    UsageError
        For an unknown canonical name, a missing ``=``, or a turn without its base.

    Examples
    --------
    >>> parse_column_map("record_id=report_id_x,turn=q_order:1,predicted_answer=ans")
    ColumnMap(columns={'record_id': 'report_id_x', 'turn': 'q_order', 'predicted_answer': 'ans'}, turn_base=1)
    """
    columns: dict[str, str] = {}
    base = 0
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        target, sep, source = part.partition("=")
        target, source = target.strip(), source.strip()
        if not sep or not source:
            raise UsageError(f"--map: '{part}' is not NAME=COLUMN. Fix: write e.g. record_id=report_id_x")
        if target not in PREDICTION_TARGETS:
            raise UsageError(f"--map: unknown name '{target}'. Fix: use one of {', '.join(PREDICTION_TARGETS)}")
        if target == "turn":
            match = patterns.MAP_TURN_BASE.match(source)
            if match is None:
                raise UsageError(
                    f"--map: say whether '{source}' counts turns from 0 or 1. "
                    f"Fix: write turn={source}:0 or turn={source}:1"
                )
            source, base = match.group("column"), int(match.group("base"))
        columns[target] = source
    return ColumnMap(columns=columns, turn_base=base)


def default_system_name(path: Path) -> str:
    """Name a system after its file: the stem, or the folder for generic names.

    Examples
    --------
    >>> default_system_name(Path("runs/gpt4/outputs.csv"))
    'gpt4'
    >>> default_system_name(Path("zarifaziz-claude-sonnet-4-6/2026-05-04T06-35-00Z/predictions.jsonl"))
    'zarifaziz-claude-sonnet-4-6@2026-05-04T06-35-00Z'
    >>> default_system_name(Path("tora-70b.jsonl"))
    'tora-70b'
    >>> default_system_name(Path("out/meta-llama__Llama-2-7b-hf/samples_gsm8k_2024-05-01T10-00-00.jsonl"))
    'meta-llama__Llama-2-7b-hf'
    """
    is_lm_eval_log = path.stem.lower().startswith("samples_") and bool(path.parent.name)
    if path.stem.lower() not in _GENERIC_STEMS and not is_lm_eval_log:
        return path.stem
    parent = path.parent.name or path.stem
    if patterns.RUN_TIMESTAMP_DIR.match(parent) and path.parent.parent.name:
        return f"{path.parent.parent.name}@{parent}"
    return parent


# --------------------------------------------------------------------------- reading
@dataclass
class _Rows:
    """Raw rows of a file with where each came from.

    ``by_question``: rows may lack a record id and are linked to gold by question text later.
    ``system_suffix``: each row names its system, and a name the caller gives is a prefix.
    """

    records: list[Mapping[str, Any]]
    locations: list[str]
    columns: list[str]
    by_question: bool = False
    system_suffix: bool = False


def _read_rows(path: Path) -> _Rows | pl.DataFrame:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return _json_lines_rows(path, list(iter_json_lines(path)))
    if suffix == ".json":
        data = read_json(path)
        return _json_rows(path, data)
    if suffix in (".csv", ".tsv"):
        frame, locations = read_csv(path)
        return _Rows(frame.to_dicts(), locations, frame.columns)
    if suffix == ".parquet":
        return read_parquet(path)
    raise InputError(
        str(path),
        f"unknown file type '{suffix or '(none)'}'",
        fix="give a .jsonl, .json, .csv or .parquet file",
    )


def _union_keys(objects: Iterable[Mapping[str, Any]]) -> list[str]:
    keys: dict[str, None] = {}
    for obj in objects:
        keys.update(dict.fromkeys(obj))
    return list(keys)


def _json_rows(path: Path, data: Any) -> _Rows:
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        return _ghchen99_results(path, data["results"])
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(lists) == 1:
            data = lists[0]
    if not isinstance(data, list):
        raise InputError(
            str(path),
            "expected a list of records",
            location="top level",
            fix="give a JSON list of objects, or JSON Lines",
        )
    for index, obj in enumerate(data):
        require_object(path, obj, f"record {index}")
    if data and "conversation" in data[0] and "id" in data[0]:
        return _ghchen99_predictions(path, data)
    locations = [f"record {i}" for i in range(len(data))]
    _check_one_shape(path, data, locations)
    return _Rows(data, locations, _union_keys(data))


#: Shapes of plain prediction records, by the keys that identify them.
_SHAPES = {"zarifaziz": ("record_id", "turn_idx"), "canonical": ("record_id", "turn")}


def _shape(keys: Iterable[str]) -> str | None:
    present = set(keys)
    return next((name for name, needed in _SHAPES.items() if set(needed) <= present), None)


def _check_one_shape(path: Path, objects: Sequence[Mapping[str, Any]], locations: Sequence[str]) -> None:
    """Raise :class:`InputError` at the first record whose shape differs from the first record's."""
    if not objects:
        return
    first = _shape(objects[0])
    if first is None:
        return
    for obj, location in zip(objects, locations, strict=True):
        shape = _shape(obj)
        if shape != first:
            missing = next(k for k in _SHAPES[first] if k not in obj)
            raise InputError(
                str(path),
                f"the file mixes two schemas: this record has the {shape or 'unrecognised'} shape "
                f"(keys {', '.join(list(obj)[:8])}) but {locations[0]} has the {first} shape "
                f"(keys {', '.join(list(objects[0])[:8])})",
                location=location,
                field=missing,
                fix="give each schema its own file, or convert these records to one shape",
            )


def _ghchen99_predictions(path: Path, data: list[dict[str, Any]]) -> _Rows:
    records, locations = [], []
    for index, obj in enumerate(data):
        conversation = obj.get("conversation")
        if not isinstance(conversation, list):
            raise InputError(
                str(path),
                "expected a list of turns",
                location=f"record {index} (id '{obj.get('id')}')",
                field="conversation",
                fix="give each record a 'conversation' list",
            )
        for turn, item in enumerate(conversation):
            item = item if isinstance(item, dict) else {}
            records.append(
                {
                    "record_id": obj.get("id"),
                    "turn": turn,
                    "predicted_answer": item.get("predicted_answer"),
                    "predicted_program": item.get("predicted_program"),
                    "question": item.get("question"),
                    "gold_answer": item.get("expected_answer"),
                }
            )
            locations.append(f"record {index} (id '{obj.get('id')}'), turn {turn}")
    return _Rows(records, locations, ["record_id", "turn", "predicted_answer", "predicted_program", *_GHCHEN99_GOLD])


def _ghchen99_results(path: Path, results: list[Any]) -> _Rows:
    records, locations = [], []
    for index, obj in enumerate(results):
        location = f"results[{index}]"
        qid = obj.get("question_id") if isinstance(obj, dict) else None
        record_id, sep, turn = str(qid).rpartition("-")
        if not isinstance(qid, str) or not sep or not turn.isdigit():
            raise InputError(
                str(path),
                f"question_id {qid!r} is not '<record id>-<turn>'",
                location=location,
                field="question_id",
                fix="write question_id as the record id, a hyphen, and the 0-based turn",
            )
        records.append(
            {
                "record_id": record_id,
                "turn": int(turn),
                "predicted_answer": obj.get("predicted_answer"),
                "predicted_program": obj.get("predicted_program"),
                "question": obj.get("question"),
                "gold_answer": obj.get("expected_answer"),
                "upstream_correct": obj.get("answer_correct"),
            }
        )
        locations.append(f"{location} (question_id '{qid}')")
    columns = ["record_id", "turn", "predicted_answer", "predicted_program", *_GHCHEN99_GOLD, "upstream_correct"]
    return _Rows(records, locations, columns)


# --------------------------------------------------------------------------- GSM8K adapters
def _json_lines_rows(path: Path, pairs: list[tuple[int, dict[str, Any]]]) -> _Rows:
    """Recognise the JSON Lines shapes that need an adapter; anything else is read as it is."""
    objects = [o for _, o in pairs]
    keys = set(_union_keys(objects))
    first = objects[0] if objects else {}
    if {"question", "ground_truth"} <= set(first) and any(_is_solution(v) for v in first.values()):
        return _openai_gsm8k(path, pairs)
    for name, needed in _ADAPTER_KEYS.items():
        if set(needed) <= keys:
            _check_adapter_lines(path, pairs, name, needed)
            if name == "ToRA":
                return _tora(pairs)
            if name == "program-of-thoughts":
                return _program_of_thoughts(path, pairs)
            return _lm_eval_samples(path, pairs)
    locations = [f"line {n}" for n, _ in pairs]
    _check_one_shape(path, objects, locations)
    return _Rows(objects, locations, _union_keys(objects))


#: JSON Lines shapes read by an adapter, by the keys every line of them has.
_ADAPTER_KEYS = {
    "ToRA": ("idx", "question", "gt", "pred", "code"),
    "program-of-thoughts": ("question", "answer", "executed", "generated"),
    "lm-eval samples": ("doc_id", "doc", "resps"),
}


def _check_adapter_lines(path: Path, pairs: list[tuple[int, dict[str, Any]]], name: str, needed: Sequence[str]) -> None:
    """Raise :class:`InputError` at the first line that lacks the keys of the file's shape
    (program-of-thoughts' prompt-only lines excepted)."""
    for number, obj in pairs:
        missing = [k for k in needed if k not in obj]
        if set(obj) == {"prompt"} and name == "program-of-thoughts":
            continue
        # a line lacking a key or two is read as it is (the missing field is reported where needed)
        if missing and (_shape(obj) is not None or len(missing) > len(needed) // 2):
            raise InputError(
                str(path),
                f"the file mixes two schemas: this line has keys {', '.join(list(obj)[:8])} "
                f"but the file is {name} output (keys {', '.join(needed)})",
                location=f"line {number}",
                field=missing[0],
                fix="give each schema its own file, or remove the lines of the other shape",
            )


def _is_solution(value: object) -> bool:
    return isinstance(value, dict) and "solution" in value


def _first(value: Any) -> Any:
    """Element 0 of a list (``None`` for an empty list); anything else as it is."""
    if isinstance(value, list):
        return value[0] if value else None
    return value


#: Canonical columns the adapters below fill.
_ADAPTER_COLUMNS = [
    "record_id",
    "turn",
    "system",
    "predicted_answer",
    "predicted_program",
    "raw_output",
    "question",
    "gold_answer",
    "gold_solution",
    "upstream_correct",
    "upstream_answer",
]


def _openai_gsm8k(path: Path, pairs: list[tuple[int, dict[str, Any]]]) -> _Rows:
    """OpenAI grade-school-math ``example_model_solutions.jsonl``: one line a question.

    Each line holds ``question``, ``ground_truth`` (the gold solution, ending ``A: n``) and one
    key per system (``6b_finetuning``, ``6b_verification``, ``175b_finetuning``,
    ``175b_verification``), each ``{is_correct, solution}``. One row per system and line:
    ``system`` is the key, ``raw_output`` the solution (the grader extracts the answer),
    ``upstream_correct`` is ``is_correct``, ``gold_answer`` what follows the last ``A:`` line of
    the ground truth. There is no id: ``record_id`` stays null until linked by question.
    """
    records: list[dict[str, Any]] = []
    locations: list[str] = []
    for number, obj in pairs:
        truth = obj.get("ground_truth")
        finals = list(patterns.ANSWER_LINE.finditer(truth)) if isinstance(truth, str) else []
        gold = finals[-1].group("answer").strip() if finals else None
        systems = [(key, value) for key, value in obj.items() if _is_solution(value)]
        if not systems:
            raise InputError(
                str(path),
                "no system solutions on this line (expected keys such as '6b_finetuning': {is_correct, solution})",
                location=f"line {number}",
                fix="give every line the same systems as the first line",
            )
        for key, value in systems:
            records.append(
                {
                    "record_id": None,
                    "turn": 0,
                    "system": key,
                    "raw_output": value.get("solution"),
                    "upstream_correct": value.get("is_correct"),
                    "question": obj.get("question"),
                    "gold_answer": gold,
                    "gold_solution": truth,
                }
            )
            locations.append(f"line {number}, {key}")
    return _Rows(records, locations, _ADAPTER_COLUMNS, by_question=True, system_suffix=True)


def _tora(pairs: list[tuple[int, dict[str, Any]]]) -> _Rows:
    """ToRA outputs ``{idx, question, gt, gt_cot, code, pred, report}``.

    ``code`` and ``pred`` are lists (one entry per sampled trajectory); element 0 is taken, which
    is the only one in greedy runs such as the published GSM8K files. ``record_id`` is ``idx``
    (the GSM8K line index), ``raw_output`` the tool-integrated trajectory, ``upstream_answer``
    the answer ToRA's evaluation script extracted (the grader extracts its own from the
    trajectory), ``gold_answer`` ``gt`` and ``gold_solution`` ``gt_cot``.
    """
    records = [
        {
            "record_id": obj.get("idx"),
            "turn": 0,
            "upstream_answer": _first(obj.get("pred")),
            "raw_output": _first(obj.get("code")),
            "question": obj.get("question"),
            "gold_answer": obj.get("gt"),
            "gold_solution": obj.get("gt_cot"),
        }
        for _, obj in pairs
    ]
    return _Rows(records, [f"line {n}" for n, _ in pairs], _ADAPTER_COLUMNS)


def _program_of_thoughts(path: Path, pairs: list[tuple[int, dict[str, Any]]]) -> _Rows:
    """Program-of-thoughts outputs ``{question, answer, executed, generated}``.

    ``predicted_answer`` is ``executed`` (null stays null; a non-number such as ``(160, 300)``
    stays as its text), ``raw_output`` the generated program (a list is joined with newlines),
    ``gold_answer`` ``answer``. There is no id: ``record_id`` stays null until linked by question.
    Lines holding only a ``prompt`` (the few-shot file has two) are not predictions: they are
    skipped, and a warning names how many and which lines.
    """
    records: list[dict[str, Any]] = []
    locations: list[str] = []
    prompt_only: list[int] = []
    for number, obj in pairs:
        if set(obj) == {"prompt"}:
            prompt_only.append(number)
            continue
        generated = obj.get("generated")
        if isinstance(generated, list):
            generated = "\n".join(str(g) for g in generated)
        records.append(
            {
                "record_id": None,
                "turn": 0,
                "predicted_answer": obj.get("executed"),
                "raw_output": generated,
                "question": obj.get("question"),
                "gold_answer": obj.get("answer"),
            }
        )
        locations.append(f"line {number}")
    if prompt_only:
        shown = ", ".join(str(n) for n in prompt_only[:20]) + (", ..." if len(prompt_only) > 20 else "")
        warnings.warn(
            f"{path}: skipped {len(prompt_only)} prompt-only line{'s' if len(prompt_only) != 1 else ''} "
            f"(line{'s' if len(prompt_only) != 1 else ''} {shown}): they hold a few-shot prompt, not a prediction",
            UserWarning,
            stacklevel=5,  # the caller of load_predictions
        )
    return _Rows(records, locations, _ADAPTER_COLUMNS, by_question=True)


def _lm_eval_gold(doc: Mapping[str, Any], target: Any) -> tuple[str | None, str | None]:
    """``(gold_answer, gold_solution)`` of an lm-eval sample: the solution is ``doc.answer``
    (``doc.solution`` for MATH tasks) or the target; the answer follows its ``####``, else is its
    last ``\\boxed{}``, else the target itself."""
    target = _first(target)
    solution = doc.get("answer", doc.get("solution"))
    if not isinstance(solution, str):
        solution = target if isinstance(target, str) else None
    answer = None
    if solution is not None:
        answer = gsm8k_final_answer(solution) or last_boxed(solution)
    if answer is None and target is not None and target != solution:
        answer = _text(target)
    return answer, solution


def _lm_eval_samples(path: Path, pairs: list[tuple[int, dict[str, Any]]]) -> _Rows:
    """lm-evaluation-harness ``samples_<task>_<date>.jsonl`` (``--log_samples``).

    Each line is ``{doc_id, doc, target, arguments, resps, filtered_resps, filter, metrics,
    <metric>, ...}``, and the same ``doc_id`` comes once per filter (gsm8k: ``strict-match``,
    ``flexible-extract``). One row per ``doc_id``: ``raw_output`` is ``resps[0][0]`` (the model's
    text, before any filter), ``predicted_answer`` is left to the grader, ``upstream_correct`` and
    ``upstream_answer`` are the ``exact_match`` and ``filtered_resps`` of the ``flexible-extract``
    line if there is one, else of the first line.
    ``question`` is ``doc.question`` (``doc.problem``), gold as :func:`_lm_eval_gold` reads it,
    ``record_id`` the ``doc_id`` as text.
    """
    groups: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    seen: dict[tuple[str, str], int] = {}
    for number, obj in pairs:
        doc_id = obj.get("doc_id")
        if isinstance(doc_id, dict | list | bool):
            raise InputError(
                str(path),
                f"doc_id {_short(doc_id)} is a {type(doc_id).__name__}, not a number or text",
                location=f"line {number}",
                field="doc_id",
                fix="give each sample the doc_id of its document (a number)",
            )
        key = (str(doc_id), str(obj.get("filter")))
        if key in seen:
            raise InputError(
                str(path),
                f"duplicate (doc_id, filter) = ({key[0]}, '{key[1]}'); first at line {seen[key]}",
                location=f"line {number}",
                field="doc_id, filter",
                fix="keep one sample per document and filter (was the log appended to twice?)",
            )
        seen[key] = number
        groups.setdefault("" if doc_id is None else str(doc_id), []).append((number, obj))
    records: list[dict[str, Any]] = []
    locations: list[str] = []
    for doc_id, lines in groups.items():
        number, first = lines[0]
        chosen = next((o for _, o in lines if o.get("filter") == "flexible-extract"), first)
        doc = first.get("doc") if isinstance(first.get("doc"), dict) else {}
        gold_answer, gold_solution = _lm_eval_gold(doc, first.get("target"))
        records.append(
            {
                "record_id": doc_id or None,
                "turn": 0,
                "raw_output": _first(_first(first.get("resps"))),
                "upstream_correct": chosen.get("exact_match"),
                "upstream_answer": _first(chosen.get("filtered_resps")),
                "question": doc.get("question", doc.get("problem")),
                "gold_answer": gold_answer,
                "gold_solution": gold_solution,
            }
        )
        where = f"line {number}" if len(lines) == 1 else f"lines {', '.join(str(n) for n, _ in lines)}"
        locations.append(f"{where} (doc_id {doc_id})")
    return _Rows(records, locations, _ADAPTER_COLUMNS)


# --------------------------------------------------------------------------- shapes
_ZARIFAZIZ = ColumnMap(
    columns={
        "record_id": "record_id",
        "turn": "turn_idx",
        "predicted_answer": "predicted_answer",
        "predicted_program": "predicted_calculation",
        "raw_output": "predicted_reasoning",
        "question": "question",
        "gold_answer": "gold",
        "upstream_correct": "correct",
        "predicted_unit": "predicted_unit",
    },
    turn_base=0,
)


#: Columns of which a prediction file needs at least one: something to grade.
_ANSWER_COLUMNS = ("predicted_answer", "predicted_program", "raw_output")


def _detect_map(path: Path, columns: Sequence[str]) -> ColumnMap:
    present = set(columns)
    if {"record_id", "turn_idx", "predicted_answer"} <= present:
        return ColumnMap({k: v for k, v in _ZARIFAZIZ.columns.items() if v in present}, 0)
    if {"record_id", "turn"} <= present and present & set(_ANSWER_COLUMNS):
        return ColumnMap({k: k for k in PREDICTION_TARGETS if k in present}, 0)
    missing = [c for c in ("record_id", "turn") if c not in present]
    if not missing:
        missing = ["predicted_answer, predicted_program or raw_output"]
    raise InputError(
        str(path),
        f"missing column {', '.join(repr(m) for m in missing)} (columns found: "
        f"{', '.join(columns[:12])}{', ...' if len(columns) > 12 else ''})",
        field=missing[0],
        fix="rename the columns, or map them: --map record_id=COL,turn=COL:0,predicted_answer=COL",
    )


def _check_map(path: Path, column_map: ColumnMap, columns: Sequence[str]) -> None:
    for target, source in column_map.columns.items():
        if source not in columns:
            raise InputError(
                str(path),
                f"column '{source}' named by --map for {target} does not exist "
                f"(columns found: {', '.join(columns[:12])}{', ...' if len(columns) > 12 else ''})",
                field=source,
                fix="name one of the columns found in --map",
            )
    for required in ("record_id", "turn"):
        if required not in column_map.columns:
            raise InputError(
                str(path),
                f"--map does not say which column is {required}",
                field=required,
                fix=f"add {required}=COL to --map",
            )
    if not set(_ANSWER_COLUMNS) & set(column_map.columns):
        raise InputError(
            str(path),
            "--map names none of predicted_answer, predicted_program, raw_output",
            field="predicted_answer",
            fix="add predicted_answer=COL, predicted_program=COL or raw_output=COL",
        )


# --------------------------------------------------------------------------- values
def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    if isinstance(value, int) and not isinstance(value, bool) and non_finite(value):
        return str(value)  # past the float range: kept as written (graded as not a finite number)
    if isinstance(value, float | int | bool):
        return answer_text(value)
    return str(value)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _cell(path: Path, location: str, obj: Mapping[str, Any], column: str) -> str | None:
    """The text of ``obj[column]`` (``None`` when absent); a JSON object there is an error."""
    value = obj.get(column) if column else None
    if isinstance(value, dict):
        raise InputError(
            str(path),
            f"expected text or a number, found a JSON object {_short(value)}",
            location=location,
            field=column,
            fix="give the value as text or a number",
        )
    return _text(value)


def _flag(value: Any) -> bool | None:
    """An upstream verdict as a boolean: ``True``/``False``, 1/0, ``1.0``/``0.0``, ``"True"``/``"False"``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return None if math.isnan(value) else value != 0  # NaN (a missing verdict in pandas) is no verdict
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0", "1.0", "0.0", "yes", "no"):
        return value.strip().lower() in ("true", "1", "1.0", "yes")
    return None


def _turn(path: Path, location: str, value: Any, base: int, source: str) -> int:
    if isinstance(value, bool) or value is None:
        ok = False
    elif isinstance(value, int):
        ok = True
    elif isinstance(value, float) and value.is_integer():
        value, ok = int(value), True
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value, ok = int(value.strip()), True
    else:
        ok = False
    if not ok:
        raise InputError(
            str(path),
            f"turn {value!r} is not a whole number",
            location=location,
            field=source,
            fix="give the turn index as an integer",
        )
    if value < base:
        raise InputError(
            str(path),
            f"turn {value} is below {base}, the first turn this map says the file uses",
            location=location,
            field=source,
            fix=f"if turns count from 0, say turn={source}:0 in --map" if base == 1 else "turns start at 0",
        )
    return value - base


def load_predictions(
    path: str | Path, *, system: str | None = None, column_map: ColumnMap | None = None
) -> pl.DataFrame:
    """Load one prediction file into the canonical table.

    Parameters
    ----------
    path
        A ``.jsonl``, ``.json``, ``.csv`` or ``.parquet`` file.
    system
        The system's name; by default a ``system`` column, else :func:`default_system_name`.
        For files that hold several systems a line (OpenAI's GSM8K solutions) it is a prefix:
        ``"{system}/6b_finetuning"``.
    column_map
        How to read a file whose shape is not recognised.

    Returns
    -------
    polars.DataFrame
        The canonical table (:data:`workbench.schema.PREDICTIONS`). Rows of files without ids
        (OpenAI, program-of-thoughts) have a null ``record_id`` and their ``question``; link
        them with :func:`workbench.io.link.attach_record_ids`.

    Raises
    ------
    InputError
        For a missing column, invalid JSON on a line, a map naming a column that does not
        exist, a bad turn, a missing record id (and no question to link by), or a duplicate
        ``(record_id, turn)``.

    Warns
    -----
    UserWarning
        When lines that are not predictions (program-of-thoughts' prompt-only lines) are skipped.

    Examples
    --------
    >>> from workbench.config import project_root
    >>> tora = load_predictions(project_root() / "data/predictions/gsm8k/tora/tora-70b.jsonl")
    >>> tora.height, tora.row(0, named=True)["upstream_answer"], tora.row(0, named=True)["gold_answer"]
    (1319, '18', '18')
    """
    path = Path(path)
    raw = _read_rows(path)
    if isinstance(raw, pl.DataFrame):
        raw = _Rows(raw.to_dicts(), [f"row {i + 1}" for i in range(raw.height)], raw.columns)
    if not raw.records:
        raise InputError(str(path), "no predictions found", fix="give a file with at least one row")
    cmap = column_map if column_map is not None and column_map.columns else _detect_map(path, raw.columns)
    _check_map(path, cmap, raw.columns)
    name = system or default_system_name(path)
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, int], str] = {}
    rid_col, turn_col = cmap.columns["record_id"], cmap.columns["turn"]
    for obj, location in zip(raw.records, raw.locations, strict=True):
        given_id = obj.get(rid_col)
        if isinstance(given_id, dict | list | bool):
            raise InputError(
                str(path),
                f"record id {_short(given_id)} is a {type(given_id).__name__}, not text or a number",
                location=location,
                field=rid_col,
                fix="give the record id as text (e.g. 'Single_JKHY/2009/page_28.pdf-3') or a number",
            )
        record_id = _text(given_id)
        question = _cell(path, location, obj, cmap.columns.get("question", ""))
        if record_id is None or not record_id.strip():
            if not (raw.by_question and question and question.strip()):
                raise InputError(
                    str(path),
                    "empty record id" + (" and no question to link it by" if raw.by_question else ""),
                    location=location,
                    field=rid_col,
                    fix="give every row the id of the conversation it answers"
                    + (", or its question" if raw.by_question else ""),
                )
            record_id = None
        turn = _turn(path, location, obj.get(turn_col), cmap.turn_base, turn_col)
        row_system = _cell(path, location, obj, cmap.columns["system"]) if "system" in cmap.columns else None
        if raw.system_suffix and row_system:
            row_system = f"{system}/{row_system}" if system else row_system
        else:
            row_system = system or row_system or name
        if record_id is not None:
            key = (row_system, record_id, turn)
            if key in seen:
                raise InputError(
                    str(path),
                    f"duplicate (record_id, turn) = ('{key[1]}', {turn}); first at {seen[key]}",
                    location=location,
                    field=f"{rid_col}, {turn_col}",
                    fix="keep one prediction per turn, or split the runs into files, one system each",
                )
            seen[key] = location
        rows.append(
            {
                "record_id": record_id,
                "turn": turn,
                "system": row_system,
                "predicted_answer": _cell(path, location, obj, cmap.columns.get("predicted_answer", "")),
                "predicted_program": _cell(path, location, obj, cmap.columns.get("predicted_program", "")),
                "raw_output": _cell(path, location, obj, cmap.columns.get("raw_output", "")),
                "question": question,
                "gold_answer": _cell(path, location, obj, cmap.columns.get("gold_answer", "")),
                "gold_solution": _cell(path, location, obj, cmap.columns.get("gold_solution", "")),
                "upstream_correct": _flag(obj.get(cmap.columns.get("upstream_correct", ""))),
                "upstream_answer": _cell(path, location, obj, cmap.columns.get("upstream_answer", "")),
                "predicted_unit": _cell(path, location, obj, cmap.columns.get("predicted_unit", "")),
                "source_file": str(path),
                "source_location": location,
            }
        )
    return pl.DataFrame(rows, schema=PREDICTIONS)
