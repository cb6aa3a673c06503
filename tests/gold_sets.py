"""Gold sets of every layout the workbench reads, for tests that check a result holds on each
(paths relative to the repository root)."""

from __future__ import annotations

#: ConvFinQA dev (reformatted) and the original train layout, GSM8K test, MATH-500 and Hendrycks MATH.
EVERY_LAYOUT = (
    "data/convfinqa/dev.json",
    "tests/fixtures/convfinqa/original_train_subset_50.json",
    "data/gsm8k/test.jsonl",
    "tests/fixtures/math/math500_test_7.json",
    "tests/fixtures/math/hendrycks_math_test_8.jsonl",
)
