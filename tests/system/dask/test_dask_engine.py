"""The dask engine grades like the local engine (issue 7), on a ``distributed.LocalCluster``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest

from workbench.cli import main
from workbench.config import project_root, resolve
from workbench.errors import UsageError
from workbench.pipeline import engines
from workbench.pipeline.engines import grade_dask, grade_on_engine, local_cluster
from workbench.pipeline.grade import GradedRun, grade_predictions
from workbench.pipeline.run import Run, grade_run
from workbench.schema import KEY_DTYPE

distributed = pytest.importorskip("distributed")

ROOT = project_root()
DEV = ROOT / "data/convfinqa/dev.json"
CLAUDE = ROOT / "data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6"
CLAUDE_RUNS = [CLAUDE / "2026-05-04T06-35-00Z/predictions.jsonl", CLAUDE / "2026-05-04T12-48-44Z/predictions.jsonl"]
GSM8K = ROOT / "tests/fixtures/gsm8k/test_first_20.jsonl"
TORA = ROOT / "tests/fixtures/predictions/gsm8k/tora-70b_first_20.jsonl"
POT = ROOT / "tests/fixtures/predictions/gsm8k/pot_zeroshot_first_20.jsonl"

CASES = {
    "convfinqa-dev-two-runs": {"dataset": DEV, "predictions": CLAUDE_RUNS, "systems": ["run-a", "run-b"]},
    "gsm8k-gold-in-outputs": {"dataset": None, "predictions": [TORA]},
    "gsm8k-two-systems": {"dataset": GSM8K, "predictions": [TORA, POT]},
}


@pytest.fixture(scope="module")
def cluster():
    with local_cluster() as cluster:
        yield cluster


@pytest.fixture(scope="module")
def client(cluster):
    with distributed.Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def local_runs() -> dict[str, Run]:
    return {name: grade_run(resolve(**case)) for name, case in CASES.items()}


def assert_same(dask: GradedRun, local: GradedRun) -> None:
    assert dask.turns.columns == local.turns.columns
    assert dask.turns.schema == local.turns.schema
    assert dask.turns.equals(local.turns)
    assert dask.policy_grades.equals(local.policy_grades)
    assert dask.checks.equals(local.checks)
    assert dask.unmatched.equals(local.unmatched)
    assert dask.systems == local.systems
    assert dask.policy == local.policy


@pytest.mark.parametrize("name", list(CASES))
def test_dask_engine_equals_local(name: str, cluster, local_runs: dict[str, Run]) -> None:
    run = grade_run(resolve(**CASES[name]), engine="dask", scheduler=cluster.scheduler_address)
    assert run.turns.height > 0
    assert_same(run.graded, local_runs[name].graded)


def test_parts_without_a_system_and_unmatched_rows(client, local_runs: dict[str, Run]) -> None:
    """A system that answers only some conversations still gets every gold turn; rows that
    match no gold turn are reported once, in the order given."""
    run = local_runs["convfinqa-dev-two-runs"]
    a, b = run.predictions
    some = b["record_id"].unique(maintain_order=True).head(5).to_list()
    stray = a.head(3).with_columns(pl.format("{}-not-in-gold", pl.col("record_id")).cast(KEY_DTYPE).alias("record_id"))
    late = a.head(2).with_columns(pl.col("turn") + 40)
    frames = [pl.concat([stray, a, late]), b.filter(pl.col("record_id").is_in(some))]
    options = {"policy": run.config.policy, "kind": run.kind, "benchmark": run.gold.benchmark}
    local = grade_predictions(run.gold, frames, **options)
    dask = grade_dask(run.gold, frames, client=client, n_partitions=7, **options)
    assert local.unmatched.height == 5
    assert_same(dask, local)


def _grade_cli(args: list[str], out: Path) -> None:
    assert main(["grade", *args, "--out", str(out)]) == 0


def test_cli_dask_engine_writes_the_same_turns(cluster, tmp_path: Path) -> None:
    args = [str(DEV), *map(str, CLAUDE_RUNS), "--system", "run-a", "--system", "run-b"]
    _grade_cli(args, tmp_path / "local")
    _grade_cli([*args, "--engine", "dask", "--scheduler", cluster.scheduler_address], tmp_path / "dask")
    for name in ("turns", "policy_inputs", "checks", "unmatched", "conversations"):
        local, dask = (pl.read_parquet(tmp_path / side / f"{name}.parquet") for side in ("local", "dask"))
        assert dask.equals(local), name
    assert (tmp_path / "dask/turns.parquet").read_bytes() == (tmp_path / "local/turns.parquet").read_bytes()


def test_cli_dask_engine_starts_its_own_cluster(tmp_path: Path) -> None:
    _grade_cli(["--dataset", "none", str(TORA)], tmp_path / "local")
    _grade_cli(["--dataset", "none", str(TORA), "--engine", "dask"], tmp_path / "dask")
    assert (tmp_path / "dask/turns.parquet").read_bytes() == (tmp_path / "local/turns.parquet").read_bytes()


def test_unreachable_scheduler_is_a_clear_error() -> None:
    with pytest.raises(UsageError, match=r"cannot reach the Dask scheduler at 'tcp://127\.0\.0\.1:9'"):
        grade_run(resolve(dataset=None, predictions=[TORA]), engine="dask", scheduler="tcp://127.0.0.1:9")


def test_scheduler_needs_the_dask_engine(local_runs: dict[str, Run]) -> None:
    run = local_runs["gsm8k-gold-in-outputs"]
    with pytest.raises(UsageError, match="--engine dask"):
        grade_on_engine(run.gold, run.predictions, scheduler="tcp://127.0.0.1:9")


def test_parts_whose_gold_shows_no_display_answers(client, local_runs: dict[str, Run]) -> None:
    """Some checks run only when the gold set shows display answers; a part without any
    is lent a conversation that does, so its checks match the whole set's. (On the dev set
    the question_unit flags fall on conversations that show display answers themselves, so
    this exercises the lending without depending on it.)"""
    run = local_runs["convfinqa-dev-two-runs"]
    differs = pl.col("gold_answer") != pl.col("gold_executed")
    plain = run.gold.turns.group_by("record_id", maintain_order=True).agg(differs.any().alias("d"))
    ids = [*plain.filter(~pl.col("d"))["record_id"].head(30), *plain.filter(pl.col("d"))["record_id"].head(2)]
    gold = replace(run.gold, turns=run.gold.turns.filter(pl.col("record_id").is_in(ids)))
    frames = [f.filter(pl.col("record_id").is_in(ids)) for f in run.predictions]
    options = {"policy": run.config.policy, "kind": run.kind, "benchmark": run.gold.benchmark}
    local = grade_predictions(gold, frames, **options)
    assert_same(grade_dask(gold, frames, client=client, n_partitions=40, **options), local)


def _sockets() -> set[tuple[str, int]]:
    """The (ip, port) this process and its children listen on (psutil)."""
    psutil = pytest.importorskip("psutil")
    me = psutil.Process()
    return {
        (c.laddr.ip, c.laddr.port)
        for proc in [me, *me.children(recursive=True)]
        for c in proc.net_connections(kind="inet")
        if c.status == psutil.CONN_LISTEN
    }


def _listening(cluster, before: set[tuple[str, int]]) -> dict[str, set[str]]:  # type: ignore[no-untyped-def]
    """Where ``cluster``'s servers listen: ``{"scheduler"|"dashboard"|"workers": {"ip:port"}}``,
    read from the operating system's sockets (psutil), not from what dask says its links are
    (``dashboard_link`` says 127.0.0.1 even for a dashboard bound to every interface). Sockets
    listening ``before`` the cluster started are not its own: one of them may have the same port
    on another address (127.0.0.1:46003 beside a dashboard on 127.0.0.2:46003)."""
    listening = _sockets() - before
    by_port = {port: f"{ip}:{port}" for ip, port in listening}

    def port(address: str) -> int:
        return int(address.rstrip("/").rsplit(":", 1)[1].split("/")[0])

    dashboard = port(cluster.dashboard_link.removesuffix("/status"))
    workers = [port(w.worker_address) for w in cluster.workers.values()]
    nannies = [port(w.address) for w in cluster.workers.values()]
    return {
        "scheduler": {by_port.get(port(cluster.scheduler_address), "not listening")},
        "dashboard": {by_port.get(dashboard, "not listening")},
        "workers": {by_port.get(p, "not listening") for p in [*workers, *nannies]},
        "all": {f"{ip}:{p}" for ip, p in listening},
    }


def _recording_clusters(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, set[str]]]:
    """Make the engine's own local clusters record where they listen when started."""
    seen: list[dict[str, set[str]]] = []
    start = engines.local_cluster

    def recorded(*args, **kwargs):  # type: ignore[no-untyped-def]
        before = _sockets()
        cluster = start(*args, **kwargs)
        seen.append(_listening(cluster, before))
        return cluster

    monkeypatch.setattr(engines, "local_cluster", recorded)
    return seen


def _hosts(addresses: set[str]) -> set[str]:
    return {a.rsplit(":", 1)[0] for a in addresses}


def test_the_engines_own_cluster_listens_on_127_0_0_1_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The LocalCluster ``--engine dask`` starts (no ``--scheduler``): scheduler, dashboard and
    workers on 127.0.0.1, and nothing this process tree opened with it on any other interface."""
    seen = _recording_clusters(monkeypatch)
    run = grade_run(resolve(dataset=None, predictions=[TORA]), engine="dask")
    assert run.turns.height == 20
    [where] = seen
    print({k: sorted(v) for k, v in where.items() if k != "all"})
    for server in ("scheduler", "dashboard", "workers"):
        assert _hosts(where[server]) == {"127.0.0.1"}, (server, where[server])
    assert _hosts(where["all"]) == {"127.0.0.1"}, where["all"]


def test_the_listening_host_is_an_explicit_option(monkeypatch: pytest.MonkeyPatch, local_runs: dict[str, Run]) -> None:
    """``host=`` moves every server of the engine's cluster (127.0.0.2: another loopback address,
    so the test offers nothing to the network)."""
    seen = _recording_clusters(monkeypatch)
    run = local_runs["gsm8k-gold-in-outputs"]
    options = {"policy": run.config.policy, "kind": run.kind, "benchmark": run.gold.benchmark}
    graded = grade_dask(run.gold, run.predictions, host="127.0.0.2", **options)
    assert_same(graded, grade_predictions(run.gold, run.predictions, **options))
    [where] = seen
    for server in ("scheduler", "dashboard", "workers"):
        assert _hosts(where[server]) == {"127.0.0.2"}, (server, where[server])


def test_cli_dask_host_moves_the_runs_cluster(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``workbench grade --engine dask --dask-host 127.0.0.2``: the run's own cluster listens
    there (the user asked), and the graded turns equal the local engine's."""
    seen = _recording_clusters(monkeypatch)
    _grade_cli(["--dataset", "none", str(TORA)], tmp_path / "local")
    _grade_cli(["--dataset", "none", str(TORA), "--engine", "dask", "--dask-host", "127.0.0.2"], tmp_path / "dask")
    [where] = seen
    for server in ("scheduler", "dashboard", "workers"):
        assert _hosts(where[server]) == {"127.0.0.2"}, (server, where[server])
    assert (tmp_path / "dask/turns.parquet").read_bytes() == (tmp_path / "local/turns.parquet").read_bytes()


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ([], "--dask-host was given with the local engine. Fix: add --engine dask, or drop --dask-host"),
        (
            ["--engine", "dask", "--scheduler", "tcp://127.0.0.1:9"],
            "--dask-host sets where a cluster started for the run listens, but --scheduler names a running one. "
            "Fix: drop one of them",
        ),
    ],
)
def test_dask_host_needs_a_cluster_of_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], expected: str
) -> None:
    args = ["grade", "--dataset", "none", str(TORA), "--dask-host", "127.0.0.2", *extra, "--out", str(tmp_path / "o")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err == f"workbench: error: {expected}\n"
