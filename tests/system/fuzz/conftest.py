"""Hypothesis profiles of the fuzz suite, and the count of inputs it tried.

Profiles (both without a deadline: time limits are asserted per call, against
:mod:`workbench.grading.limits`):

* ``ci`` (default): bounded and derandomized, so CI is reproducible; the whole directory runs in
  well under 90 s on one core;
* ``fuzz``: 20,000 examples per property (``WORKBENCH_FUZZ_EXAMPLES`` overrides), random, selected
  by ``WORKBENCH_FUZZ=1`` or ``--hypothesis-profile=fuzz``.

The profiles are applied per property (:func:`fuzzkit.fuzz_settings`), never loaded globally, so
collecting this directory with the rest of the suite changes no other test's settings.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).resolve().parent))  # fuzzkit, for every import mode

import fuzzkit  # noqa: E402

_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile(
    "ci",
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=_SUPPRESSED,
)
settings.register_profile(
    "fuzz",
    max_examples=int(os.environ.get("WORKBENCH_FUZZ_EXAMPLES", "20000")),
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=_SUPPRESSED,
)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # type: ignore[no-untyped-def]
    """Print how many inputs the properties tried: ``fuzz: N inputs tried across K properties``."""
    counts = fuzzkit.COUNTS
    if not counts:
        return
    terminalreporter.write_sep("-", f"fuzz profile: {fuzzkit.active_profile()}")
    for name, n in sorted(counts.items()):
        terminalreporter.write_line(f"  {name}: {n}")
    terminalreporter.write_line(f"fuzz: {sum(counts.values())} inputs tried across {len(counts)} properties")
