"""Load gold datasets into the tidy gold ``turns`` and ``documents`` tables.

Layouts recognised from the file's shape, one reader module each (tried in the order of
:data:`workbench.io.gold.registry.READERS`):

* ConvFinQA reformatted: ``{"dev"|"train"|...: [{id, doc, dialogue, features}]}``
  (:mod:`~workbench.io.gold.convfinqa_reformatted`);
* ConvFinQA original (czyssrs): ``[{id, pre_text, post_text, table, annotation, qa...}]``,
  including the public test file that holds questions only (:mod:`~workbench.io.gold.convfinqa_original`);
* gold that travels inside ghchen99-style outputs:
  ``[{id, financial_report, conversation: [{question, expected_program, expected_answer}]}]``
  (:mod:`~workbench.io.gold.ghchen99_embedded`);
* GSM8K JSON Lines ``{question, answer}``, the answer ending ``#### <final answer>``
  (:mod:`~workbench.io.gold.gsm8k_jsonl`);
* MATH-style problems, a JSON list or JSON Lines of ``{problem, solution, [level], [type],
  [unique_id | id]}``, the final answer in the solution's last ``\\boxed{...}``
  (:mod:`~workbench.io.gold.math_problems`);
* a plain table (CSV, TSV, JSON Lines, JSON list or Parquet) with columns
  ``record_id, turn, question, gold_answer`` and optionally ``gold_program``, ``gold_solution``;
  without ``turn`` it is single-turn, every row turn 0 (:mod:`~workbench.io.gold.plain_table`).

What the readers share is in :mod:`~workbench.io.gold.base` (the dataset, the source, field
access), :mod:`~workbench.io.gold.answers` (a final answer as text and number) and
:mod:`~workbench.io.gold.conversations` (the ConvFinQA record).

Each dataset says which ``benchmark`` it is: ``convfinqa``, ``gsm8k``, ``math`` or ``table``.
Datasets without documents (all but ConvFinQA) have an empty ``documents`` table and a null
``doc_id``.
"""

from __future__ import annotations

from workbench.io.gold.answers import executed_text, gold_value, gsm8k_final_answer, plain_number
from workbench.io.gold.base import Benchmark, GoldDataset, Layout, check_finite, document_table
from workbench.io.gold.registry import load_gold

__all__ = [
    "document_table",
    "GoldDataset",
    "Layout",
    "Benchmark",
    "load_gold",
    "gsm8k_final_answer",
    "plain_number",
    "executed_text",
    "gold_value",
    "check_finite",
]
