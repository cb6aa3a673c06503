"""Leases across processes: two processes asking for the same items at the same moment never both
get one, and an item one process leases is skipped by a session in another until it is released.
Time is injected (no clocks)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import workbench
from workbench.annotations import AnnotationSession, AnnotationStore, leases

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures"
NOW = 1_000_000.0

#: A process that tries to lease every key (in the order given) and prints the ones it got.
CLAIMER = """
import json, sys
from workbench.annotations import AnnotationStore, leases
path, owner, order = sys.argv[1], sys.argv[2], sys.argv[3]
keys = [("r", turn, None) for turn in range(60)]
if order == "backwards":
    keys.reverse()
with AnnotationStore(path) as store:
    print("ready", flush=True)
    sys.stdin.readline()  # start together
    got = [key[1] for key in keys if leases.acquire(store, key, owner=owner, annotator=owner, now=float(sys.argv[4]))]
print(json.dumps(got))
"""


def _claimer(store: Path, owner: str, order: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CLAIMER, str(store), owner, order, str(NOW)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )


def test_two_processes_never_lease_the_same_item(tmp_path: Path) -> None:
    store = tmp_path / "annotations.sqlite"
    AnnotationStore(store).close()
    claimers = [_claimer(store, "one", "forwards"), _claimer(store, "two", "backwards")]
    for claimer in claimers:  # both imported and connected
        assert claimer.stdout is not None and claimer.stdout.readline().strip() == "ready"
    for claimer in claimers:
        assert claimer.stdin is not None
        claimer.stdin.write("go\n")
        claimer.stdin.flush()
    results = []
    for claimer in claimers:
        out, err = claimer.communicate(timeout=300)
        assert claimer.returncode == 0, err
        results.append(set(json.loads(out.strip().splitlines()[-1])))
    one, two = results
    assert not one & two, f"both processes hold {sorted(one & two)}"
    assert one | two == set(range(60))  # every item went to exactly one of them
    print(f"leases across two processes: {len(one)} + {len(two)} of 60 items, none shared")


def test_a_session_skips_what_another_process_leases(tmp_path: Path) -> None:
    run = workbench.grade_run(
        workbench.config.resolve(
            dataset=FIXTURES / "convfinqa" / "dev_small.json",
            predictions=[str(FIXTURES / "predictions" / "zarifaziz_dev_small.jsonl")],
        )
    )
    store_path = tmp_path / "annotations.sqlite"
    with AnnotationStore(store_path) as store:
        probe = AnnotationSession.from_slice(store, run, annotator="probe", failed_only=False, clock=lambda: NOW)
        first = probe.queue[0]
        probe.close()
    key = json.dumps([first.record_id, first.turn, first.system])
    hold = (
        "import json, sys\n"
        "from workbench.annotations import AnnotationStore, leases\n"
        "with AnnotationStore(sys.argv[1]) as store:\n"
        f"    print(leases.acquire(store, tuple(json.loads(sys.argv[2])), owner='other', annotator='bo', now={NOW}))\n"
    )
    done = subprocess.run([sys.executable, "-c", hold, str(store_path), key], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stderr
    with AnnotationStore(store_path) as store:
        clock = [NOW + 1]
        ana = AnnotationSession.from_slice(store, run, annotator="ana", failed_only=False, clock=lambda: clock[0])
        assert ana.position == 1 and ana.n_held == 1  # item 1 is on bo's screen, in another process
        assert leases.holder(store, (first.record_id, first.turn, first.system), now=clock[0]) == "bo"
        clock[0] = NOW + leases.LEASE_SECONDS + 1  # bo's lease runs out: item 1 comes back
        ana.close()
        again = AnnotationSession.from_slice(store, run, annotator="ana", failed_only=False, clock=lambda: clock[0])
        assert again.position == 0 and again.n_held == 0
