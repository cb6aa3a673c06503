"""Load model outputs into the canonical predictions table.

Canonical columns: ``record_id, turn (0-based), system, predicted_answer,
predicted_program, raw_output`` (see :data:`workbench.schema.PREDICTIONS`); only the keys
and one of answer/program are required. Files may be JSON Lines, JSON, CSV or Parquet.

Shapes recognised without a map, one module each (adapters tried in the order of
:data:`workbench.io.predictions.registry.READERS`, then the column shapes of
:data:`~workbench.io.predictions.registry.SHAPES`):

* canonical: columns named as above (``turn`` 0-based; :mod:`~workbench.io.predictions.canonical`);
* zarifaziz/convfinqa runs: ``record_id, turn_idx, predicted_answer, predicted_calculation,
  predicted_reasoning`` (the calculation is read as the program, the reasoning as raw output;
  :mod:`~workbench.io.predictions.zarifaziz`);
* ghchen99/ConvFinQA-llm-eval predictions: ``[{id, conversation: [{predicted_program,
  predicted_answer}]}]`` (:mod:`~workbench.io.predictions.ghchen99_predictions`);
* ghchen99 evaluation results: ``{"results": [{question_id: "<record id>-<turn>", ...}]}``
  (:mod:`~workbench.io.predictions.ghchen99_results`);
* OpenAI grade-school-math ``example_model_solutions.jsonl``: four systems a line
  (:mod:`~workbench.io.predictions.openai_gsm8k`);
* ToRA outputs ``{idx, question, gt, gt_cot, code: [...], pred: [...]}``
  (:mod:`~workbench.io.predictions.tora`);
* Program-of-thoughts outputs ``{question, answer, executed, generated}``, few-shot prompt
  lines skipped with a warning (:mod:`~workbench.io.predictions.program_of_thoughts`);
* lm-evaluation-harness ``samples_<task>_<date>.jsonl`` logs, one row per ``doc_id``
  (:mod:`~workbench.io.predictions.lm_eval_samples`);
* Inspect AI logs (``.eval``, or ``.json`` with an ``eval`` header), one row per sample and
  epoch, read through ``inspect_ai.log`` (extra ``inspect``; :mod:`~workbench.io.predictions.inspect_log`).

Gold that travels inside the outputs fills ``question``, ``gold_answer``, ``gold_solution``, and
the upstream grader's verdict ``upstream_correct``. Rows of GSM8K files without ids (OpenAI,
program-of-thoughts) keep a null ``record_id``; :func:`workbench.io.link.attach_record_ids` links
them to gold by their question text. Their ``turn`` is 0 (GSM8K has one turn a record).

Canonical columns without a turn (``record_id`` and an answer) are single-turn rows: every row
is turn 0 (:func:`read_predictions` says so), and a record id may not repeat.

Anything else takes a :class:`ColumnMap` (``--map record_id=COL,turn=COL:1,...``; without
``turn=`` the rows are single-turn).

:mod:`~workbench.io.predictions.table` turns the rows into the canonical table
(:func:`load_predictions`); what the readers share is in :mod:`~workbench.io.predictions.base`,
the column map in :mod:`~workbench.io.predictions.columnmap`.
"""

from __future__ import annotations

from workbench.io.predictions.columnmap import ColumnMap, parse_column_map
from workbench.io.predictions.table import PredictionFile, default_system_name, load_predictions, read_predictions

__all__ = [
    "ColumnMap",
    "parse_column_map",
    "load_predictions",
    "read_predictions",
    "PredictionFile",
    "default_system_name",
]
