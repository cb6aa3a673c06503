"""The same inputs get the same verdicts on an idle machine and on a busy one (issue 15, item 4).

Heavy-but-finite SymPy comparisons are graded under a reduced limit twice: once as the machine is,
once with six CPU hogs (``python -c "while True: pass"``) competing for the cores, each run from
fresh workers and cold caches. The limit counts the worker's CPU time, so the verdicts are equal.

The items are chosen far from the limit on either side: the finite ones need about 0.2-1.0 s of
CPU (measured when the test was written, warm or cold), under a 2.5 s limit; the infinite one (a
power tower SymPy tries to evaluate) never finishes. Under a wall-clock limit the heavy ones fail
under load: with six hogs on two cores a worker gets about a quarter of a core, so 1 s of CPU takes
about 4 s of wall time. The test asserts verdicts, never times.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from workbench.grading import memo
from workbench.grading.limits import shutdown_workers
from workbench.grading.status import GradeStatus
from workbench.grading.symbolic import latex_equivalent

#: The reduced limit (CPU seconds); the product's default is 2.0, a slower machine may need more.
LIMIT = 2.5
HOGS = 6

#: (prediction, gold, expected status): finite ones first, then the one that must time out.
ITEMS = (
    (r"(x+1)^{10}", r"\sum_{k=0}^{10} \binom{10}{k} x^k", GradeStatus.OK),  # ~1.0 s of CPU
    (r"(x+1)^{15}", r"\sum_{k=0}^{15} \binom{15}{k} x^k", GradeStatus.OK),  # ~1.0 s
    (r"(x+1)^{20}", r"\sum_{k=0}^{20} \binom{20}{k} x^k", GradeStatus.OK),  # ~1.0 s
    (r"(x+y+z)^{12}", r"x^{12} + y^{12} + z^{12}", GradeStatus.OK),  # ~0.3 s
    (r"\frac{1}{x-1}-\frac{1}{x+1}", r"\frac{2}{x^2-1}", GradeStatus.OK),  # ~0.4 s cold, less warm
    (r"10^{10^{10^{10}}}", "1", GradeStatus.TIMEOUT),  # never finishes
)


def _verdicts() -> list[tuple[str, bool, str]]:
    """Every item graded from fresh workers and cold caches."""
    memo.clear()
    shutdown_workers()
    out = []
    for pred, gold, _ in ITEMS:
        verdict = latex_equivalent(pred, gold, time_limit=LIMIT)
        out.append((verdict.status.value, verdict.equivalent, verdict.detail))
    shutdown_workers()
    return out


@pytest.fixture
def cpu_hogs() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Six busy processes for the duration of a test, killed (by their own ids) afterwards."""
    # each in a session of its own, like another user's job: Linux's scheduler shares the CPU
    # between sessions (autogroups) first, so six hogs in the test's own session would slow the
    # worker (which has its own session) no more than one
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True) for _ in range(HOGS)]
    try:
        yield hogs
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()


@pytest.mark.slow  # about 50 s on two shared cores: six hogs slow the busy run about fourfold
def test_verdicts_do_not_depend_on_machine_load(cpu_hogs: list[subprocess.Popen[bytes]]) -> None:
    for hog in cpu_hogs:  # pause the hogs for the idle run
        hog.send_signal(signal.SIGSTOP)
    idle = _verdicts()
    for hog in cpu_hogs:
        hog.send_signal(signal.SIGCONT)
    busy = _verdicts()
    assert all(hog.poll() is None for hog in cpu_hogs)  # they ran through the busy run
    assert [status for status, _, _ in idle] == [expected.value for _, _, expected in ITEMS], idle
    assert busy == idle
