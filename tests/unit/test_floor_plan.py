"""The floor plan holds (README "Layout"): a small top level, no module over 700 lines, no import
cycle, and the import-layer contract of pyproject.toml (the same one `make lint` checks)."""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest
from importlinter.application.use_cases import lint_imports
from importlinter.configuration import configure

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "workbench"
MAX_TOP_LEVEL_MODULES = 8
MAX_LINES = 700


def _sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "lm_eval_tasks" not in p.parts)


def test_at_most_eight_modules_sit_directly_in_the_package() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def test_no_module_is_over_700_lines() -> None:
    lengths = {str(p.relative_to(REPO)): len(p.read_text().splitlines()) for p in _sources()}
    too_long = {path: n for path, n in lengths.items() if n > MAX_LINES}
    assert not too_long, too_long
    assert len(lengths) > 40  # the walk found the package


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle() -> None:
    graph = grimp.build_graph("workbench", cache_dir=None)
    assert "workbench.grading.compare" in graph.modules
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for name in ("a", "a.x", "a.y", "a.z"):
        graph.add_module(name)
    graph.add_import(importer="a.x", imported="a.y")
    graph.add_import(importer="a.y", imported="a.x")
    graph.add_import(importer="a.z", imported="a.x")
    assert _cycles(graph) == [["a.x", "a.y"]]


def test_the_import_contract_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    configure()
    assert lint_imports(config_filename=str(REPO / "pyproject.toml"), cache_dir=None, no_logo=True) is True
