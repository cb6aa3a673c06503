"""Atomic writes and folder swaps: a failure at any step leaves the previous file, set or folder."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

import workbench.io.atomic as atomic
from workbench.io.atomic import (
    fsync_tree,
    make_staging,
    parquet_writer,
    recover_interrupted,
    swap_in,
    write_atomic,
    write_atomic_set,
)


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def text(content: str) -> Callable[[Path], int]:
    return lambda tmp: tmp.write_text(content, encoding="utf-8")


def failing(tmp: Path) -> None:
    tmp.write_text("half", encoding="utf-8")
    raise OSError(28, "No space left on device")


def test_write_atomic_replaces_the_file_or_leaves_it(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "a.txt"
    assert write_atomic(path, text("one")) == path
    write_atomic(path, text("two"))
    assert files(path.parent) == {"a.txt": b"two"}
    with pytest.raises(OSError, match="No space left"):
        write_atomic(path, failing)
    assert files(path.parent) == {"a.txt": b"two"}  # no temporary file left either


def test_parquet_writer_writes_the_bytes_polars_writes(tmp_path: Path) -> None:
    frame = pl.DataFrame({"a": [1, 2, 3], "b": ["x", None, "z"]})
    buffer = io.BytesIO()
    frame.write_parquet(buffer, compression="zstd", statistics=True)
    path = write_atomic(tmp_path / "f.parquet", parquet_writer(frame, compression="zstd", statistics=True))
    assert path.read_bytes() == buffer.getvalue()


@pytest.mark.parametrize("k", [1, 2, 3])
def test_a_set_is_written_whole_or_not_at_all(tmp_path: Path, k: int) -> None:
    names = ["a.txt", "b.txt", "c.txt"]
    write_atomic_set([(tmp_path / n, text(f"old {n}")) for n in names])
    before = files(tmp_path)
    items = [(tmp_path / n, failing if i == k - 1 else text(f"new {n}")) for i, n in enumerate(names)]
    with pytest.raises(OSError, match="No space left") as info:
        write_atomic_set(items)
    assert info.value.filename == str(tmp_path / names[k - 1])
    assert files(tmp_path) == before
    write_atomic_set([(tmp_path / n, text(f"new {n}")) for n in names])
    assert files(tmp_path) == {n: f"new {n}".encode() for n in names}


def test_a_failed_set_removes_the_folders_it_made(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        write_atomic_set([(tmp_path / "new" / "deeper" / "a.txt", text("a")), (tmp_path / "new" / "b.txt", failing)])
    assert list(tmp_path.iterdir()) == []


def a_staged_folder(out: Path, content: str) -> Path:
    staging = make_staging(out, None)
    (staging / "data.txt").write_text(content, encoding="utf-8")
    fsync_tree(staging)
    return staging


@pytest.mark.parametrize("exchange", [True, False], ids=["atomic-exchange", "two-renames"])
def test_swap_in_replaces_the_folder_or_puts_it_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: bool
) -> None:
    if not exchange:
        monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    out = tmp_path / "OUT"
    swap_in(a_staged_folder(out, "first"), out, lambda moved: None)
    assert files(out) == {"data.txt": b"first"}
    seen: list[dict[str, bytes]] = []

    def refuse(moved: Path) -> OSError:
        seen.append(files(moved))
        return OSError("not ours")

    with pytest.raises(OSError, match="not ours"):
        swap_in(a_staged_folder(out, "second"), out, refuse)
    assert seen == [{"data.txt": b"first"}]  # the refusal saw what was moved aside
    assert files(out) == {"data.txt": b"first"}
    staged = a_staged_folder(out, "third")
    swap_in(staged, out, lambda moved: None)
    assert files(out) == {"data.txt": b"third"}
    assert not staged.exists()
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name != "OUT")
    assert len(leftovers) == 1 and ".OUT.export-" in leftovers[0]  # the refused staging folder
    monkeypatch.setattr(atomic, "_pid_alive", lambda pid: False)
    recover_interrupted(out)  # removes what a dead writer left
    assert [p.name for p in tmp_path.iterdir()] == ["OUT"]


def test_recover_interrupted_puts_back_a_folder_moved_aside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "OUT"
    moved = tmp_path / ".OUT.previous-12345-20260101T000000000000Z"
    moved.mkdir()
    (moved / "data.txt").write_text("previous", encoding="utf-8")
    monkeypatch.setattr(atomic, "_pid_alive", lambda pid: pid == 12345)
    recover_interrupted(out)
    assert moved.exists() and not out.exists()  # its writer still runs: left alone
    monkeypatch.setattr(atomic, "_pid_alive", lambda pid: False)
    recover_interrupted(out)
    assert files(out) == {"data.txt": b"previous"} and [p.name for p in tmp_path.iterdir()] == ["OUT"]
