"""Every bad file of the catalogue gives a clear error, is counted as unmatched, or loads as the
clean file does (see :mod:`badfile_cases`): never a raw traceback, a silent skip or a silent dedupe."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from badfile_cases import CASES, KINDS, SOURCES, Case, Error, Same, Source, Unmatched

from workbench.annotations.csv_import import import_csv
from workbench.annotations.store import AnnotationStore
from workbench.errors import InputError
from workbench.io.gold import load_gold
from workbench.io.link import attach_record_ids, unlinked_rows
from workbench.io.predictions import load_predictions
from workbench.pipeline.grade import unmatched_message, unmatched_rows
from workbench.report.batch import load_batch

LOADERS = ("gold", "predictions", "annotations", "batch")


def _load(source: Source, path: Path, store_path: Path) -> Any:
    """Read ``path`` with the loader of ``source``; the value to compare with the clean file's."""
    if source.loader == "gold":
        gold = load_gold(path)
        return (gold.layout, gold.turns, gold.documents)
    if source.loader == "predictions":
        return load_predictions(path).drop("source_file")
    if source.loader == "annotations":
        with AnnotationStore(store_path) as store:
            import_csv(store, path)
            return store.events().drop("event_id", "created_at")
    if source.loader == "batch":
        return load_batch(path)
    raise AssertionError(source.loader)


def _write(folder: Path, source: Source, data: bytes) -> Path:
    folder = folder / "run"  # the same folder name for the bad and the clean copy: systems are named after it
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / source.filename
    path.write_bytes(data)
    return path


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, pl.DataFrame):
        return a.equals(b)
    return a == b


def test_the_catalogue_covers_every_kind_and_loader() -> None:
    by_kind = Counter(case.kind.split(" BOM")[0] if "BOM" in case.kind else case.kind for case in CASES)
    table = Counter((case.kind, case.source.loader) for case in CASES)
    kinds = sorted({case.kind for case in CASES})
    lines = [f"{'kind':<18}" + "".join(f"{loader:>13}" for loader in LOADERS)]
    for kind in kinds:
        lines.append(f"{kind:<18}" + "".join(f"{table[(kind, loader)]:>13}" for loader in LOADERS))
    lines.append(f"{'total':<18}" + "".join(f"{sum(table[(k, lo)] for k in kinds):>13}" for lo in LOADERS))
    print("\n".join(lines))
    print(f"{len(CASES)} bad files tried")
    assert len({case.id for case in CASES}) == len(CASES), "case ids must be unique"
    assert len(KINDS) == 12 and len(by_kind) >= 12
    for loader in LOADERS:  # each loader meets most kinds
        assert len({case.kind for case in CASES if case.source.loader == loader}) >= 7, loader
    assert len(CASES) >= 200


@pytest.mark.parametrize("source", list(SOURCES.values()), ids=lambda s: s.name)
def test_clean_sources_load_and_match_their_gold(tmp_path: Path, source: Source) -> None:
    path = _write(tmp_path / "clean", source, source.clean())
    _load(source, path, tmp_path / "store.sqlite")
    if source.gold is not None:
        gold = load_gold(source.gold)
        assert unmatched_rows(gold, attach_record_ids(load_predictions(path), gold)).height == 0


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bad_file(tmp_path: Path, case: Case) -> None:
    source = case.source
    path = _write(tmp_path / "bad", source, case.make())
    store_path = tmp_path / "store.sqlite"
    expect = case.expect
    if isinstance(expect, Same):
        clean = _write(tmp_path / "clean", source, source.clean())
        assert _same(_load(source, path, store_path), _load(source, clean, tmp_path / "clean.sqlite"))
    elif isinstance(expect, Error):
        with pytest.raises(InputError) as info:
            _load(source, path, store_path)
        err = info.value
        message = str(err)
        assert "\n" not in message, message
        assert err.file == str(path), message
        if expect.location is not None:
            assert err.location.startswith(expect.location), message
            rest = err.location[len(expect.location) :]
            assert not rest[:1].isdigit(), message  # 'line 3' is not 'line 30'
        assert err.field == (expect.field or ""), message
        assert err.fix.strip(), message
        for word in expect.words:
            assert word.lower() in err.problem.lower(), f"{word!r} not in {message}"
        if source.loader == "annotations" and store_path.exists():
            with AnnotationStore(store_path) as store:
                assert store.events().height == 0, "nothing is written when a row is bad"
    elif isinstance(expect, Unmatched):
        assert source.gold is not None
        gold = load_gold(source.gold)
        linked = attach_record_ids(load_predictions(path), gold)
        unmatched = unmatched_rows(gold, linked)
        assert unmatched.height == expect.n
        reasons = set(unmatched["why"].to_list()) | set(unlinked_rows(linked)["reason"].to_list())
        assert any(expect.why in reason for reason in reasons), reasons
        shown = unmatched_message(unmatched)
        assert len(shown) == 1
        assert shown[0].startswith(f"{path}: {expect.n} prediction row{'s' if expect.n != 1 else ''} match")
    else:  # pragma: no cover
        raise AssertionError(expect)
