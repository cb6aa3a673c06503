"""What the fuzz suite shares: the active hypothesis profile, the input counter, and strategies
for hostile text.

Hostile text is what real outputs and files contain on a bad day: look-alike digits (fullwidth
``１２``, Arabic-Indic ``٣``, superscripts), look-alike minus signs (U+2212, U+2012-U+2015,
U+FE63, U+FF0D), zero-width characters, no-break and thin spaces, LaTeX fragments, answer
markers, very long numbers and deep nesting.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import TypeVar

from hypothesis import settings
from hypothesis import strategies as st

from workbench.grading.limits import DEFAULT_TIME_LIMIT

T = TypeVar("T")

#: CPU seconds one SymPy comparison may take (the product's default limit, from limits.py). The
#: fuzz suite asserts what an input gets (a status, a verdict), never how long it took: what hostile
#: inputs cost is printed by bench/hostile_inputs.py and bench/pathological_batch.py.
LIMIT: float = DEFAULT_TIME_LIMIT

#: Inputs tried per property in this process (summed and printed by conftest.py).
COUNTS: Counter[str] = Counter()


def tried(name: str) -> None:
    """Count one input tried by property ``name``."""
    COUNTS[name] += 1


def active_profile() -> str:
    """``fuzz`` when ``WORKBENCH_FUZZ=1`` or ``--hypothesis-profile=fuzz``, else ``ci``."""
    if os.environ.get("WORKBENCH_FUZZ") == "1":
        return "fuzz"
    return "fuzz" if settings.get_current_profile_name() == "fuzz" else "ci"


def fuzz_settings(ci_examples: int = 100, fuzz_share: float = 1.0) -> settings:
    """The settings of a property: the ``ci`` profile with ``ci_examples`` examples, or the
    ``fuzz`` profile with ``fuzz_share`` of its ``max_examples`` (properties whose examples may
    each cost a SymPy time limit and a worker restart run a share, so a long run ends in hours,
    not days)."""
    if active_profile() == "fuzz":
        profile = settings.get_profile("fuzz")
        return settings(profile, max_examples=max(ci_examples, int(profile.max_examples * fuzz_share)))
    return settings(settings.get_profile("ci"), max_examples=ci_examples)


# --------------------------------------------------------------------------- characters
ASCII_DIGITS = "0123456789"
FULLWIDTH_DIGITS = "".join(chr(0xFF10 + i) for i in range(10))
ARABIC_INDIC_DIGITS = "".join(chr(0x0660 + i) for i in range(10))
SUPERSCRIPT_DIGITS = "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079"
MINUS_SIGNS = ("-", "\u2212", "\u2012", "\u2013", "\u2014", "\u2015", "\ufe63", "\uff0d")
LOOKALIKE_MINUS = MINUS_SIGNS[1:]
INVISIBLES = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
SPACES = (" ", "\u00a0", "\u2009", "\u202f", "\t", "\n")

LATEX_FRAGMENTS = (
    "\\frac{",
    "\\dfrac{",
    "}",
    "{",
    "}{",
    "\\boxed{",
    "\\fbox{",
    "\\left(",
    "\\right)",
    "^",
    "^{",
    "_",
    "\\sqrt{",
    "\\infty",
    "\\text{",
    "$",
    "$$",
    "\\(",
    "\\)",
    "\\[",
    "\\]",
    "\\%",
    "\\$",
    "\\cdot",
    "\\times",
    "10^{100}",
    "\\pi",
    "x",
    "=",
    ",",
    "{,}",
    "\\!",
    "\\,",
    "(",
    ")",
    "[",
    "]",
    "\\{",
    "\\}",
    "\\begin{pmatrix}",
    "\\end{pmatrix}",
    "&",
    "\\\\",
)
MARKERS = (
    "#### ",
    "The answer is ",
    "The final answer is ",
    "Final answer: ",
    "\nA: ",
    "<|begin_of_solution|>",
    "<|end_of_solution|>",
    "**",
    "__",
    ". ",
    "N/A",
    "yes",
    "no",
    "nan",
    "inf",
    "-inf",
    "1e309",
    "%",
    " percent",
    "$",
    "€",
    "£",
)

digit = st.sampled_from(ASCII_DIGITS + FULLWIDTH_DIGITS + ARABIC_INDIC_DIGITS + SUPERSCRIPT_DIGITS)
ascii_digits = st.text(alphabet=ASCII_DIGITS, min_size=1, max_size=12)


@st.composite
def number_words(draw: st.DrawFn) -> str:
    """A number as hostile text: look-alike digits and signs, separators, invisibles, exponents."""
    sign = draw(st.sampled_from(("", "", "+", *MINUS_SIGNS)))
    body = draw(st.text(alphabet=st.one_of(digit, st.sampled_from((",", ".", *INVISIBLES, *SPACES))), max_size=20))
    head = draw(digit)
    tail = draw(st.sampled_from(("", "", "%", " percent", "e309", "e-5", "E+2", ".0", "\\%")))
    return f"{sign}{head}{body}{tail}"


long_numbers = st.integers(min_value=0, max_value=10**400).map(str)
nested_parens = st.integers(min_value=0, max_value=400).map(lambda n: "(" * n + "1" + ")" * n)
nested_fracs = st.integers(min_value=0, max_value=60).map(lambda n: "\\frac{" * n + "1" + "}{2}" * n)

hostile_token = st.one_of(
    st.sampled_from(LATEX_FRAGMENTS),
    st.sampled_from(MARKERS),
    st.sampled_from((*MINUS_SIGNS, *INVISIBLES, *SPACES)),
    number_words(),
    st.text(max_size=8),
)

#: Hostile text: up to 40 tokens of markers, LaTeX, look-alike characters and numbers.
hostile_text = st.one_of(
    st.lists(hostile_token, max_size=40).map("".join),
    st.text(max_size=200),
    long_numbers,
    nested_parens,
    nested_fracs,
)


@st.composite
def formatted_numbers(draw: st.DrawFn) -> tuple[str, float]:
    """A number written plainly (``1234.5``, ``-0.07``) and its value."""
    whole = draw(st.integers(min_value=0, max_value=10**9))
    places = draw(st.integers(min_value=0, max_value=4))
    frac = draw(st.integers(min_value=0, max_value=10**places - 1)) if places else 0
    negative = draw(st.booleans())
    text = f"{whole}.{frac:0{places}d}" if places else str(whole)
    text = ("-" if negative else "") + text
    return text, float(text)


def with_thousands(plain: str) -> str:
    """``-1234567.5`` written ``-1,234,567.5``."""
    sign = "-" if plain.startswith("-") else ""
    whole, _, frac = plain.lstrip("-").partition(".")
    grouped = f"{int(whole):,}"
    return sign + grouped + (f".{frac}" if frac else "")
