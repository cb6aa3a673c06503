"""Every regular expression the workbench uses, defined once and named.

Other modules refer to these by name; none of them compiles a pattern of its own.
"""

from __future__ import annotations

import re

__all__ = [
    "UNICODE_MINUS",
    "NUMBER_LITERAL",
    "WHOLE_NUMBER_ANSWER",
    "FIRST_NUMBER",
    "WHITESPACE",
    "BOLD_MARKERS",
    "NO_ANSWER_TEXT",
    "YES_NO",
    "STEP_REFERENCE",
    "CONST_NAME",
    "PROGRAM_NUMBER",
    "PROGRAM_TOKEN",
    "MAP_TURN_BASE",
    "RUN_TIMESTAMP_DIR",
]

#: Characters that people and models use for a minus sign.
UNICODE_MINUS = re.compile("[\u2212\u2012\u2013\u2014\ufe63\uff0d]")

#: A decimal literal with optional thousands separators and exponent: ``1,234.5``, ``.07``, ``1e-05``.
NUMBER_LITERAL = r"(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"

#: An answer that is a single number, possibly signed, with currency and percent:
#: ``-14.1%``, ``$ 1,234``, ``+3``. Parenthesised negatives are handled by the parser.
WHOLE_NUMBER_ANSWER = re.compile(
    r"^(?P<sign>[-+])?\s*(?:[$\u20ac\u00a3]\s*)?(?P<sign2>[-+])?\s*"
    rf"(?P<num>{NUMBER_LITERAL})\s*(?P<pct>%|percent)?$",
    re.IGNORECASE,
)

#: The first signed number in a string (table cells such as ``-1299 ( 1299 )`` or ``$ 78.25``).
FIRST_NUMBER = re.compile(rf"(?P<sign>[-+])?\s*(?:[$\u20ac\u00a3]\s*)?(?P<num>{NUMBER_LITERAL})(?P<pct>\s*%)?")

WHITESPACE = re.compile(r"\s+")

#: Markdown bold or italic markers around an answer: ``**14.1%**``.
BOLD_MARKERS = re.compile(r"\*{1,2}|__")

#: Outputs that say there is no answer: ``N/A``, ``<UNKNOWN>``, ``none``, empty.
NO_ANSWER_TEXT = re.compile(
    r"^(?:|n/?a(?:\s*[-:(].*)?|<?unknown>?|none|null|nan|-|\?|no answer|cannot (?:be )?determined?)$",
    re.IGNORECASE,
)

#: Boolean answers.
YES_NO = re.compile(r"^(?P<word>yes|no|true|false)$", re.IGNORECASE)

#: A reference to an earlier step of a FinQA program: ``#0``.
STEP_REFERENCE = re.compile(r"^#(?P<index>\d+)$")

#: A named constant of the FinQA DSL: ``const_100``, ``const_m1``.
CONST_NAME = re.compile(r"^const_(?P<neg>m)?(?P<digits>\d+(?:\.\d+)?)$", re.IGNORECASE)

#: A number inside a program: no thousands separators, so ``add(100,200)`` has two arguments.
PROGRAM_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"

#: Tokens of the program language: names (ops, constants, table row labels are quoted
#: elsewhere), numbers with optional percent, step references, punctuation.
PROGRAM_TOKEN = re.compile(
    r"\s*(?:"
    rf"(?P<number>{PROGRAM_NUMBER}%?)"
    r"|(?P<ref>#\d+)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<punct>\*\*|[-+*/^(),])"
    r")"
)

#: ``turn=COL:1`` in a column map: the column and whether it counts from 0 or 1.
MAP_TURN_BASE = re.compile(r"^(?P<column>.+?):(?P<base>[01])$")

#: A directory named after a run timestamp: ``2026-05-04T06-35-00Z``.
RUN_TIMESTAMP_DIR = re.compile(r"^\d{4}-\d{2}-\d{2}T[\d-]+Z?$")
