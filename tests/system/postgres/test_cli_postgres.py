"""The command line with a PostgreSQL store: --store and --annotations take a URL (never a folder
named postgresql:), `annotations copy` moves a store to the server and back, and no password is
ever printed or written to a manifest."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pg_harness import PASSWORD, Cluster

from workbench.cli import main
from workbench.io.gold import load_gold

REPO = Path(__file__).resolve().parents[3]
SMALL = REPO / "tests" / "fixtures" / "convfinqa" / "dev_small.json"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_store_urls_end_to_end_without_a_folder_or_a_password(
    pg_cluster: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    turns = load_gold(SMALL).turns
    first, second = turns.row(0, named=True), turns.row(5, named=True)
    csv = tmp_path / "notes.csv"
    csv.write_text(
        "record_id,turn,category,corrected_answer,note,exclude\n"
        f"{first['record_id']},{first['turn']},mislabel,12345,- missing value,\n"
        f"{second['record_id']},{second['turn']},ambiguous_question,,@alice please check,true\n",
        encoding="utf-8",
    )
    url = pg_cluster.tcp_url(pg_cluster.new_database()).replace("postgres@", f"postgres:{PASSWORD}@")
    code, out, err = _run(capsys, "annotations", "import", str(csv), "--store", url, "--annotator", "ann")
    assert code == 0, err
    assert "imported 2 annotations" in out and "postgres:***@" in out and PASSWORD not in out
    assert not any(p.name.startswith("postgres") for p in tmp_path.iterdir())  # no folder postgresql:/
    code, out, err = _run(capsys, "annotations", "list", "--store", url)
    assert code == 0 and "'- missing value" in out  # stored as written, neutralised on CSV output
    code, out, err = _run(capsys, "annotations", "backup", "--store", url)
    assert code == 2 and "pg_dump" in err and PASSWORD not in err and err.count("\n") == 1

    # SQLite -> PostgreSQL -> SQLite: the same annotations and event count; a second copy adds nothing
    local = tmp_path / "copy.sqlite"
    code, out, err = _run(capsys, "annotations", "copy", url, str(local))
    assert code == 0, err
    assert "2 events added" in out and PASSWORD not in out
    other = pg_cluster.url(pg_cluster.new_database())
    assert _run(capsys, "annotations", "copy", str(local), other)[0] == 0
    code, out, err = _run(capsys, "annotations", "copy", other, str(local))
    assert code == 0 and "0 events added" in out and "2 already there" in out
    lists = [_run(capsys, "annotations", "list", "--all", "--store", s)[1] for s in (url, str(local), other)]
    assert lists[0] == lists[1] == lists[2]

    out_dir = tmp_path / "clean"
    code, out, err = _run(capsys, "export", "--dataset", str(SMALL), "--annotations", url, "--out", str(out_dir))
    assert code == 0, err
    manifest = (out_dir / "manifest.json").read_text(encoding="utf-8")
    assert PASSWORD not in manifest
    assert json.loads(manifest)["annotations"]["snapshot"]["path"].startswith("postgresql://postgres:***@127.0.0.1")


def test_a_wrong_url_is_one_line_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for url, says in [
        ("postgresql://ana:hunter2@127.0.0.1:1/triage", "server is running"),
        ("mysql://ana:hunter2@db/triage", "unknown kind"),
    ]:
        code, _out, err = _run(capsys, "annotations", "list", "--store", url)
        assert code == 2 and says in err and "hunter2" not in err and err.count("\n") == 1
    assert os.listdir(tmp_path) == []
