"""The cleaning plan: what a corrected answer stands for. (What the annotations change in the
gold is tested against the exported file in test_export.py.)"""

from __future__ import annotations

import pytest

from workbench.cleaning.plan import executed_value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("18770", 18770.0),  # Single_CDNS/2018/page_31.pdf-1 turn 2, the executed answer
        ("14.1%", 0.141),  # percent text becomes its fraction, exactly
        ("-21.1%", -0.211),  # Double_HII/2017/page_104.pdf turn 1 display answer
        ("3.47%", 0.0347),
        ("1,234.5", 1234.5),
        (".0751", 0.0751),  # Single_BLK/2014/page_119.pdf-1 turn 1 display answer
        ("yes", "yes"),  # greater() turns execute to yes/no
        (" no ", "no"),
        ("$ 5", "$ 5"),  # not a plain number: kept as text
    ],
)
def test_executed_value(text: str, expected: float | str) -> None:
    assert executed_value(text) == expected
    assert type(executed_value(text)) is type(expected)
