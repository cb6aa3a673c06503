"""Hooks of the ``workbench_gsm8k`` task, which lm-eval loads by file path (``!function process.NAME``).

The logic lives in :mod:`workbench.integrations.lm_eval`; this module only names it.
"""

from workbench.integrations.lm_eval import WorkbenchExtraction, corpus_bleu, load_docs, process_results

__all__ = ["WorkbenchExtraction", "corpus_bleu", "load_docs", "process_results"]
