"""README's "Inputs" section (issue 20): a table row for every format the readers recognise, and
the bundled files its commands name exist."""

from __future__ import annotations

import re
from pathlib import Path

from workbench.io.gold.registry import READERS as GOLD_READERS
from workbench.io.predictions.registry import READERS, SHAPES
from workbench.schema import PREDICTION_TARGETS

REPO = Path(__file__).resolve().parents[3]


def _section() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("### Inputs\n")
    return readme[start : readme.index("\n### ", start + 1)]


def _table_after(section: str, heading: str) -> list[list[str]]:
    """The body rows of the first Markdown table after ``heading``, as cells."""
    lines = section[section.index(heading) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


def test_every_recognised_format_has_a_row_with_its_detection_and_a_command() -> None:
    section = _section()
    gold, predictions = _table_after(section, "**Gold**"), _table_after(section, "**Predictions**")
    assert len(gold) == len(GOLD_READERS) + 1  # and gold carried in the outputs
    # every reader and column shape, a single-turn table and --map
    assert len(predictions) >= len(READERS) + len(SHAPES) + 2
    for row in gold + predictions:
        assert len(row) == 3 and all(row), row
        assert row[2].startswith("`workbench grade ") and "--out " in row[2], row


def test_the_bundled_files_the_commands_name_exist() -> None:
    named = re.findall(r"(?:data|tests/fixtures)/[\w./+-]+", _section())
    assert len(named) >= 6
    for path in named:
        assert (REPO / path.rstrip(".")).is_file(), path


def test_the_map_names_listed_are_those_accepted() -> None:
    listed = re.search(r"NAME is one of `([^`]*)`", _section())
    assert listed is not None
    assert " ".join(listed.group(1).split()).split(", ") == list(PREDICTION_TARGETS)
