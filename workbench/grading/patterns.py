"""Every regular expression the workbench uses, defined once and named.

Other modules refer to these by name; none of them compiles a pattern of its own.
"""

from __future__ import annotations

import re

__all__ = [
    "MINUS_CHARS",
    "UNICODE_MINUS",
    "ZERO_WIDTH",
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
    "ANSI_ESCAPE",
    "HASH_ANSWER",
    "ANSWER_IS",
    "ANSWER_LINE",
    "BOXED_OPEN",
    "BOXED_BARE",
    "SOLUTION_BLOCK",
    "TEXT_NUMBER",
    "INLINE_MATH",
    "NUMBER_WITH_UNIT",
    "PERCENT_CUE",
    "RATIO_CUE",
    "CHOICE_LETTER",
    "MATH_MARKUP",
    "PLAIN_NUMBER",
    "CURRENCY",
    "SCALE_WORD",
    "APPROX_PREFIX",
    "FINANCE_AMOUNT",
    "DECIMAL_COMMA_LITERAL",
    "DECIMAL_COMMA_AMOUNT",
    "TRAILING_PERCENT",
    "SCALE_CUE",
    "BRACE_TOKEN",
    "DOCUMENT_NUMBER",
    "NEGATIVE_AMOUNT_CUE",
    "HOPE_CORRECT",
    "ANSWER_MARKER_PREFIX",
    "ANSWER_SUBJECT_IS",
    "DOUBLED_BACKSLASH_COMMAND",
    "FENCED_CODE",
    "BARE_ANSWER_WORDS",
    "PLAIN_WORD",
    "FORMULA_LIST_SEPARATOR",
    "NUMBER_TIMES_VARIABLE",
    "PLAIN_SQRT",
    "SPACED_THOUSANDS",
    "MIXED_NUMBER",
    "UNESCAPED_DOLLAR",
    "BOX_LIST_GAP",
    "DIGITS_APART",
    "ARITHMETIC",
    "COLON_NUMBER",
    "TEXT_COLON_NUMBER",
    "PROGRAM_IDENTIFIER",
    "CHOICE_AT_START",
    "CHOICE_STANDING",
    "NUMBERS_WITH_UNITS",
    "LATEX_SPACING",
    "NEGATIVE_SPACE",
    "THIN_SPACED_COMMA",
    "TEXT_WRAPPED",
    "MATH_DELIMITER",
    "LIST_WORD",
    "SENTENCE_END",
    "SPAN_SEPARATOR",
    "PLUS_MINUS",
    "THOUSANDS_COMMA",
    "FAST_TEXT",
    "FAST_NUMBER",
    "TEXT_NUMBER_AFTER",
    "FAST_NUMBER_UNSAFE",
    "NUMBER_CHAR",
    "FAST_SCALE_WORD",
    "FAST_BOX",
    "FAST_ANSWER",
    "FAST_NUMBER_WORDS",
    "FAST_FENCED_CODE",
]

#: Characters that people and models use for a minus sign: U+2212 MINUS SIGN, the dashes
#: U+2012-U+2015, U+FE63 SMALL HYPHEN-MINUS, U+FF0D FULLWIDTH HYPHEN-MINUS.
MINUS_CHARS = "\u2212\u2012\u2013\u2014\u2015\ufe63\uff0d"
UNICODE_MINUS = re.compile(f"[{MINUS_CHARS}]")

#: Invisible characters that can sit inside a number (``1\u200b2``): zero-width space,
#: non-joiner, joiner, word joiner, byte-order mark. Normalisation removes them.
ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")

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

#: Markdown bold or italic markers around an answer: ``**14.1%**``. A marker between two
#: operands is an operator, not markup, and stays: ``2*3``, ``9**9``, ``2**-3``, ``x__1``.
BOLD_MARKERS = re.compile(
    r"(?<![^\W_])(?<![)}*])(?:\*{1,2}|__)"  # not after a letter, digit, ')', '}' or another '*'
    r"|(?:\*{1,2}|__)(?![^\W_])(?![-+({\\*])"  # or not before a letter, digit, sign, '(', '{', '\', '*'
)

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
MAP_TURN_BASE = re.compile(r"\A(?P<column>.+?):(?P<base>[01])\Z", re.DOTALL)  # any column name, newlines too

#: A directory named after a run timestamp: ``2026-05-04T06-35-00Z``.
RUN_TIMESTAMP_DIR = re.compile(r"^\d{4}-\d{2}-\d{2}T[\d-]+Z?$")

#: Terminal colour codes in kernel tracebacks and streams (removed from reports).
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

# --------------------------------------------------------------------------- answer extraction
#: ``#### 18`` (GSM8K's answer line); the answer runs to the end of the line.
HASH_ANSWER = re.compile(r"####\s*(?P<answer>[^\n]*)")

#: "The answer is 18", "The final answer is $\boxed{3}$", "Final answer: 18".
ANSWER_IS = re.compile(
    r"(?:the\s+)?(?P<final>final\s+)?answer\s*(?:is|:)\s*:?\s*(?P<answer>[^\n]*)",
    re.IGNORECASE,
)

#: An answer line as in OpenAI's GSM8K model solutions: ``A: 18`` at the start of a line.
ANSWER_LINE = re.compile(r"(?m)^\s*A:\s*(?P<answer>[^\n]+)$")

#: ``\boxed{`` or ``\fbox{`` opening; the content is read by brace matching, not by regex.
BOXED_OPEN = re.compile(r"\\(?:boxed|fbox)\s*\{")

#: What brace matching looks at: an escaped character (``\{`` is not a brace) or a brace.
BRACE_TOKEN = re.compile(r"\\.|[{}]", re.DOTALL)

#: ``\boxed 5`` without braces.
BOXED_BARE = re.compile(r"\\boxed\s+(?P<answer>[^\s$]+)")

#: The answer block of reasoning models: ``<|begin_of_solution|> ... <|end_of_solution|>``.
SOLUTION_BLOCK = re.compile(r"<\|begin_of_solution\|>(?P<answer>.*?)(?:<\|end_of_solution\|>|$)", re.DOTALL)

#: Any number in running text, for the flexible rule: ``-1,234.5``, ``$18``, ``.5``, ``3/4``,
#: ``1e-05``; the minus may be a look-alike (``\u221212``). A digit right after ``^`` is an exponent
#: (``15 cm^2``, ``2^3``), not a number of its own (issue 31).
TEXT_NUMBER = re.compile(
    rf"(?<![\w.^])(?P<number>[-{MINUS_CHARS}]?(?:\$ ?)?(?:\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)?"
    rf"(?:[eE][-+]?\d+)?(?: ?/ ?\d+(?!\.\d))?%?|[-{MINUS_CHARS}]?\.\d+%?)"
)

#: Inline mathematics: ``$...$``, ``\(...\)``, ``\[...\]``.
INLINE_MATH = re.compile(r"\$\$(?P<a>.+?)\$\$|\$(?P<b>[^$]+?)\$|\\\((?P<c>.+?)\\\)|\\\[(?P<d>.+?)\\\]", re.DOTALL)


#: A number followed by a short unit word: ``15.97 ml``, ``18 dollars``, ``3 cm^2``, ``5 km/h``.
NUMBER_WITH_UNIT = re.compile(
    rf"^(?P<number>[-+]?\s*\$?\s*(?:{NUMBER_LITERAL})\s*%?)\s*(?P<unit>[a-z][a-z .^2-3/]{{0,24}})$",
    re.IGNORECASE,
)

# --------------------------------------------------------------------------- question cues
#: A question asking for a percentage: "what percentage", "percent change", "growth rate", "%".
PERCENT_CUE = re.compile(r"%|\bpercent(?:age)?s?\b|\bpct\b|\bgrowth rate\b|\brate of (?:change|growth|return)\b", re.I)

#: A question asking for a ratio or decimal: "what is the ratio", "as a decimal", "how many times".
#: (This and PERCENT_CUE also run in polars, on FAST_TEXT questions: keep them Rust-regex compatible.)
RATIO_CUE = re.compile(r"\bratio\b|\bdecimal\b|\bfraction\b|\bhow many times\b|\btimes (?:as|larger|bigger)\b", re.I)

#: A multiple-choice answer: ``A``, ``(b)``, ``C.``, ``Option D``.
CHOICE_LETTER = re.compile(r"^(?:option\s+|choice\s+)?\(?(?P<letter>[a-e])\)?[.:]?$", re.I)

#: Signs that a gold answer is mathematics rather than prose: LaTeX commands, braces,
#: operators, or a lone variable.
MATH_MARKUP = re.compile(r"[\\{}^_=<>]|\d\s*[-+*/]\s*\d|^[a-z]$|\d[a-z]\b|[a-z]\s*[-+*/^]", re.I)

#: A gold answer that is just a number: optional sign, thousands separators, decimals,
#: exponent (``70,000``, ``-3``, ``0.5``, ``1e-05``); ``\frac{1}{2}`` and ``10,\!080`` are not.
PLAIN_NUMBER = re.compile(rf"^\s*(?P<sign>[-+])?(?P<num>{NUMBER_LITERAL})\s*$")

# --------------------------------------------------------------------------- finance amounts (issue 19)
#: A currency before or after an amount: a symbol (``$``, ``€``, ``£``, ``¥``) or an ISO code or
#: word, as finance outputs write them (``USD 12``, ``12 EUR``, ``$ 12``, ``12 dollars``).
CURRENCY = r"(?:us\$|[$\u20ac\u00a3\u00a5]|usd|eur|gbp|jpy|cny|rmb|chf|cad|aud|dollars?|euros?)"

#: A word or abbreviation that scales the amount before it: ``48.7 million``, ``$48.7m``,
#: ``(245) thousand``, ``1.2bn``. Read on lower-cased text; which abbreviations count is decided
#: by :func:`workbench.grading.normalize.parse_number` (``m`` alone may be metres).
SCALE_WORD = r"(?:thousands?|millions?|billions?|trillions?|k|mm|mn|m|bn|b)"

#: "approx. 12", "~12", "≈ 12": a hedge before an answer, dropped when reading the number.
APPROX_PREFIX = re.compile(r"^(?:approx(?:imately|\.)?|~|\u2248)\s*")

#: An amount as finance outputs write it, on normalised (lower-case) text: sign, currency before
#: or after, accounting parentheses around the number or the whole amount (``$(245)``,
#: ``($ 245)``, ``(245) thousand``), a scale word, and ``%``/``percent``/``pct``. Whether the
#: parentheses balance is checked by the parser.
FINANCE_AMOUNT = re.compile(
    rf"^(?P<sign>[-+])?\s*(?P<open>\()?\s*(?P<cur>{CURRENCY})?\s*(?P<sign2>[-+])?\s*(?P<open2>\()?\s*"
    rf"(?P<sign3>[-+])?\s*(?P<num>{NUMBER_LITERAL})\s*(?P<close>\))?\s*(?P<scale>{SCALE_WORD})?\.?\s*"
    rf"(?P<close2>\))?\s*(?P<cur2>{CURRENCY})?\s*(?P<pct>%|percent|pct)?$"
)

#: A number written with a decimal comma (issue 19): ``12,75``, ``3,1415``, ``1.234,56``,
#: ``4.294.967.295,000``. Without dot groups the comma must be followed by 1, 2 or 4+ digits
#: (``1,234`` stays a thousands separator); after dot groups of three, by any number of digits.
DECIMAL_COMMA_LITERAL = r"(?:[1-9]\d{0,2}(?:\.\d{3})+,\d+|\d+,(?:\d{1,2}|\d{4,}))"

#: An amount with a decimal comma, on normalised text: sign, currency before or after (``12,75 €``,
#: ``€12,75``, ``eur 12,75``), ``%``. Whether the comma may be read as a decimal comma without a
#: currency, percent or dot groups is decided by :func:`workbench.grading.normalize.parse_decimal_comma`.
DECIMAL_COMMA_AMOUNT = re.compile(
    rf"^(?P<sign>[-+])?\s*(?P<cur>{CURRENCY})?\s*(?P<sign2>[-+])?\s*(?P<num>{DECIMAL_COMMA_LITERAL})"
    rf"\s*(?P<cur2>{CURRENCY})?\s*(?P<pct>%|percent|pct)?$"
)

#: A percent sign after a fraction, a mixed number or LaTeX number (``\frac{3}{4}%`` once ``\%`` is
#: unescaped, ``3/4 percent``, ``4 4/9pct``, ``4 4/9 percentage``): it counts as a sign, as after a
#: plain number.
TRAILING_PERCENT = re.compile(r"\s*(?:%|percent(?:age)?|pct)\.?$")

#: A cue that states the unit of the amounts asked about: "(in millions)", "in thousands",
#: "in $ billions", "in millions of dollars", "$ in millions".
SCALE_CUE = re.compile(r"\bin\s+(?:\$\s*|us\s*\$\s*|usd\s+)?(?P<word>thousands|millions|billions|trillions)\b", re.I)

# --------------------------------------------------------------------------- data-quality checks
#: A number in a document's running text, read without a sign (a hyphen in ``2007-2008`` is no
#: minus): ``1,234.5``, ``.07``, the ``80`` of ``$ 80 million``, the ``13.4`` of ``13.4%``; not the
#: ``4`` of ``q4``.
DOCUMENT_NUMBER = re.compile(rf"(?<![\w.])(?P<num>{NUMBER_LITERAL})")

#: Words that make a negative table cell an amount asked about without its sign ("losses",
#: "cash used in", "less: ...", "debt assumed"): a sign convention, not a sign error.
NEGATIVE_AMOUNT_CUE = re.compile(
    r"\b(?:loss(?:es)?|less|used|spent|assumed|deficit|outflows?|decrease[sd]?|declines?|repurchases?|"
    r"payments?|paid|expenses?|charges?|deductions?)\b",
    re.IGNORECASE,
)

# --------------------------------------------------------------------------- MATH answers (issue 19)
#: The Minerva sign-off after a final answer: "I hope it is correct.", also glued ("Ihopeitiscorrect").
HOPE_CORRECT = re.compile(r"[.\s]*I\s*hope\s*it\s*is\s*correct[.!\s]*$", re.IGNORECASE)

#: An answer marker at the start of an answer phrase, as in Minerva's "Final Answer: The final
#: answer is $9$": the inner marker goes, the answer stays.
ANSWER_MARKER_PREFIX = re.compile(r"^(?:\s*(?:the\s+)?(?:final\s+)?answer\s*(?:is|:)\s*:?\s*)+", re.IGNORECASE)

#: "the smallest $k$ is 12": a short noun phrase naming the answer, then "is" and the answer.
ANSWER_SUBJECT_IS = re.compile(
    r"^(?:the|our|its|their)\s+[^.=<>]{1,60}?\s+(?:is|are|equals)\s+(?P<answer>[^\s].*)$", re.IGNORECASE
)

#: A doubled backslash before a LaTeX command (``\\frac``), as some models write LaTeX.
DOUBLED_BACKSLASH_COMMAND = re.compile(r"\\\\(?=[A-Za-z{}$%])")

#: A fenced block (``` ... ```) and its info string: flexible extraction never mines a code block
#: for a number; an ``output`` block (a tool's printed result) is not code.
FENCED_CODE = re.compile(r"```(?P<info>[^\n`]*)\n.*?(?:```|$)", re.DOTALL)

#: Letters words allowed in an output that is an answer by itself (``1 + sqrt(2)``, ``x = 1 and x = 4``).
BARE_ANSWER_WORDS = frozenset(
    {"and", "or", "sqrt", "pi", "ln", "log", "sin", "cos", "tan", "cot", "sec", "csc", "exp", "oo", "inf", "infty"}
)

#: A run of two or more letters not preceded by a backslash (a word, not a LaTeX command).
PLAIN_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")

#: Several formulas joined as one answer: "$1$ and $4$", "$2$, $4$ or $6$".
FORMULA_LIST_SEPARATOR = re.compile(r"^\s*(?:,\s*(?:and|or)?|and|or|&)\s*$", re.IGNORECASE)

#: A number glued to one letter, which in mathematics is a product: ``2k``, ``-3x``.
NUMBER_TIMES_VARIABLE = re.compile(r"^\s*[-+]?\d+(?:\.\d+)?[A-Za-z]\s*$")

#: ``sqrt(`` written as a plain-text function call (not ``\sqrt``).
PLAIN_SQRT = re.compile(r"(?<![\\A-Za-z])sqrt\(")

#: A number with spaces between groups of three digits: ``25 000``, ``1 234 567.5``.
SPACED_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(?: \d{3})+(?:\.\d+)?$")

#: A mixed number in plain text: ``2 3/8``, ``-2 3/8``, ``1 000 4/9`` (a whole part with spaced thousands).
MIXED_NUMBER = re.compile(r"^(?P<sign>[-+])?(?P<whole>\d{1,3}(?: \d{3})+|\d+) +(?P<top>\d+)/(?P<bottom>\d+)$")

#: A ``$`` that is a math delimiter, not the escaped dollar sign ``\$``.
UNESCAPED_DOLLAR = re.compile(r"(?<!\\)\$")

#: What separates several boxed answers given together: ``$\boxed{1}$ and $\boxed{4}$``, ``\boxed{2}, \boxed{4}``.
BOX_LIST_GAP = re.compile(r"^[\s$,]*(?:(?:and|or)[\s$,]*)?(?:[A-Za-z]\s*=\s*)?$", re.IGNORECASE)

#: Two numbers side by side with only spaces between them (``9 0``, ``3.5 0``).
DIGITS_APART = re.compile(r"\d\s+[-+]?\.?\d")

# --------------------------------------------------------------------------- answer shapes (issue 31)
#: An operation between two numbers: ``11 + 4/9``, ``2*3``, ``6 ÷ 2`` (an answer that is an expression).
ARITHMETIC = re.compile(r"\d\s*[-+*/\u00d7\u00f7]\s*\.?\d")

#: A time or a ratio written with colons: ``12:00``, ``3:2``, ``1 : 2 : 3``, ``09:05:30``. Its parts
#: are compared one by one; the colon is never a division.
COLON_NUMBER = re.compile(r"^\s*(?P<parts>\d+(?:\s*:\s*\d+)+)\s*$")

#: A time or ratio in running text, no spaces inside: ``12:00``, ``3:2``, ``09:05:30`` (what the last
#: number of "the meeting is at 12:00" belongs to).
TEXT_COLON_NUMBER = re.compile(r"(?<![\w.:])\d+(?::\d+)+(?![\w:]|\.\d)")

#: A program's variable name, perhaps after ``return``: ``return Jerry_cherries``, ``total_cost``,
#: ``n_apples2``. Whether it is a name or a subscripted variable (``x_1``, ``a_b``) is decided by
#: :func:`workbench.grading.symbolic.program_identifier` (a part of two letters or more).
PROGRAM_IDENTIFIER = re.compile(r"^\s*(?:return\s+)?(?P<name>[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)\s*;?\s*$")

#: A choice letter that opens an answer: ``A. Because B is not valid``, ``(C) since``, ``B) 12``,
#: ``D:``. Upper case only: a lone ``a`` opening a sentence is an article.
CHOICE_AT_START = re.compile(r"^\s*(?:\*\*)?(?:\((?P<paren>[A-E])\)|(?P<letter>[A-E])(?:[.:)]|\*\*|$))(?:\s|$)")

#: A choice letter standing alone in a text: ``Because B is valid``, ``so (C)``, ``\text{(E)}``.
#: An ``A`` followed by a lower-case word is the article ("A train leaves"), not a choice
#: (:func:`workbench.grading.compare.choice_letter` checks that).
CHOICE_STANDING = re.compile(r"(?<![\w\\])\(?(?P<letter>[A-E])\)?(?![\w])")

#: Numbers with their units, one or several, as a whole answer: ``15 cm^2``, ``864 inches^2``,
#: ``200 ml and 400 ml``, ``3 kg, 5 kg``. Each unit is at most three words of letters (``/``, ``.``
#: and a ``^2``/``^3`` inside).
_UNIT = r"[A-Za-z][A-Za-z./]*(?:\^\{?[23]\}?)?(?: [A-Za-z][A-Za-z./]*(?:\^\{?[23]\}?)?){0,2}"
_AMOUNT = rf"[-+]?\$?(?:\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)? ?{_UNIT}"
NUMBERS_WITH_UNITS = re.compile(rf"^\s*{_AMOUNT}(?:\s*(?:,\s*(?:and\s+)?|\s(?:and|or)\s)\s*{_AMOUNT})*\s*\.?\s*$")

#: LaTeX spacing commands (``\quad``, ``\qquad``, ``\,``, ``\;``, ``\:``, ``\ ``, ``~``): space between
#: items, nothing else. ``\quad`` may be glued to what follows (``\quadx_{2}``).
LATEX_SPACING = re.compile(r"\\q?quad|\\[,;: ]|~")

#: A comma followed by a thin space, ``\\!`` or ``\\,``, and any spaces: one thousands separator in a
#: LaTeX number (``11,\\! 111,\\! 100``).
THIN_SPACED_COMMA = re.compile(r",\s*\\[!,]\s*")

#: A negative thin space, ``\!``: nothing at all (``10,\!080`` is ``10,080``).
NEGATIVE_SPACE = re.compile(r"\\!")

#: A text wrapper (``\text{ and }``, ``\mbox{for part (a)}``, ``\textrm{or}``), its content in ``body``
#: (no braces inside).
TEXT_WRAPPED = re.compile(r"\\(?:text|textrm|textnormal|textbf|textit|mbox|mathrm)\s*\{(?P<body>[^{}]*)\}")

#: A math delimiter: ``$``, ``$$``, ``\(``, ``\)``, ``\[``, ``\]`` (not the escaped dollar ``\$``).
MATH_DELIMITER = re.compile(r"(?<!\\)\${1,2}|\\[()\[\]]")

#: A word that joins items of a list ("1 and -2", "x = 1 or x = 4"), or a separator in it.
LIST_WORD = re.compile(r"\b(?:and|or)\b|[,;]", re.IGNORECASE)

#: What separates the spans of a text answer (:func:`workbench.grading.spans.split_spans`): a comma or
#: semicolon and a space, or the word "and" ("Tom Brady and Peyton Manning").
SPAN_SEPARATOR = re.compile(r"\s*[,;]\s+|\s+and\s+", re.IGNORECASE)

#: The end of a sentence: a full stop, question or exclamation mark before a space or the end.
SENTENCE_END = re.compile(r"[.!?](?=\s|$)")

#: A plus-or-minus sign: ``\pm``, ``\mp``, ``±``, ``∓``.
PLUS_MINUS = re.compile(r"\\pm(?![A-Za-z])|\\mp(?![A-Za-z])|[\u00b1\u2213]")

#: A comma that separates thousands (``1,000``, ``12,000,023``; not ``-2,1`` or ``1, 000``): after a
#: digit, before exactly three digits.
THOUSANDS_COMMA = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")

# --------------------------------------------------------------------------- fast path (issue 21)
# Pattern *strings* for polars (Rust's regex engine: no lookaround, no backreferences), used by
# :mod:`workbench.pipeline.fastpath`. They decide which outputs and answers the vectorised path
# accepts; everything else falls through to the cascade above, so each one is narrower than the
# Python pattern it stands for, never wider.

#: Text the fast path reads at all: printable ASCII, tab, newline, carriage return, and the
#: typographic marks real outputs hold (quotes, dashes, the minus sign, ×, ÷, €, ¢), none of them a
#: letter, digit, space or mark. On it, Python's and Rust's ``\s``, ``\w``, ``\d`` and case folding
#: agree (elsewhere they do not: Python's ``\s`` takes ``\x1c``-``\x1f``, its ``\w`` takes ``¾``,
#: Rust's takes combining marks; ``ſ`` folds to ``s``), so the patterns below match alike.
FAST_TEXT = "^[\t\n\r\x20-\x7e\u2018\u2019\u201c\u201d\u2013\u2014\u2212\u20ac\u00d7\u00f7\u00a2]*$"

#: The digits of a plain number: thousands separated by commas or none, a decimal part or none.
_FAST_DIGITS = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"

#: An answer the fast path compares: a plain number, optionally negative, with a ``$`` before and
#: a ``%`` after (``-$1,234.5``, ``12.57%``), no exponent and no space: what
#: :data:`WHOLE_NUMBER_ANSWER` reads with nothing left for normalisation to change.
FAST_NUMBER = rf"^(?P<neg>-)?(?P<cur>\$)?(?P<num>{_FAST_DIGITS})(?P<pct>%)?$"

#: :data:`TEXT_NUMBER` without its lookbehind and lookahead, for polars: the character before the
#: number (not a word character, ``.`` or ``^``) is matched instead of looked at, so the text is read with
#: one space in front. This reads what :data:`TEXT_NUMBER` reads except after a number that ends in
#: ``%`` (its character was taken) and where its lookahead (``3/4.5``) would apply: the fast path
#: sends texts with either (:data:`FAST_NUMBER_UNSAFE`) to the cascade.
TEXT_NUMBER_AFTER = (
    rf"[^\w.^](?P<number>[-{MINUS_CHARS}]?(?:\$ ?)?(?:\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)?"
    rf"(?:[eE][-+]?\d+)?(?: ?/ ?\d+)?%?|[-{MINUS_CHARS}]?\.\d+%?)"
)

#: Where :data:`TEXT_NUMBER_AFTER` and :data:`TEXT_NUMBER` may read differently: a ``%`` followed by
#: what can start a number (a digit, ``$``, ``.``, a hyphen or another minus sign: ``5%\u22126``
#: is ``5%`` and ``\u22126`` to Python, ``5%`` and ``6`` to polars), or a fraction followed by
#: decimals.
FAST_NUMBER_UNSAFE = rf"%[-{MINUS_CHARS}$.0-9]|/ ?\d+\.\d"

#: A character a match of :data:`TEXT_NUMBER` (or :data:`TEXT_NUMBER_AFTER`'s number) can hold, as
#: a regex class; no match of either holds any other (the fast path reads the two alike from one).
NUMBER_CHAR = f"[-{MINUS_CHARS}0-9,.eE+$ /%]"

#: What follows the only ``\boxed`` of an output when it is one balanced box whose content has no
#: brace and no backslash (the box the fast path reads; brace matching finds the same content).
FAST_BOX = r"^\s*\{(?P<content>[^{}\\]*)\}"

#: The scale words written out (:data:`~workbench.grading.normalize.SCALE_EXPONENTS` without the
#: abbreviations) that the fast path reads after an answer's number.
FAST_SCALE_WORD = r"thousand|million|billion|trillion"

#: A system's own answer the fast path compares (its answer field, its harness's answer): a
#: :data:`FAST_NUMBER` with whitespace (space, tab, newline, carriage return) around it, as
#: program-of-thoughts prints it (``'5\\n\\n'``), and ``%``, the word ``percent``/``pct`` or a scale
#: word (``thousand``, ``millions``...) after it (lower case, after one space or none): what
#: :data:`WHOLE_NUMBER_ANSWER` or :data:`FINANCE_AMOUNT` read as a percentage, or as an amount with
#: a scale, and whose normalised text (:func:`~workbench.grading.normalize.normalize_answer`) is the
#: answer without the whitespace around it.
FAST_ANSWER = (
    rf"^[ \t\n\r]*(?P<neg>-)?(?P<cur>\$)?(?P<num>{_FAST_DIGITS})"
    rf"(?:(?P<pct>%)|(?P<word> ?(?:percent|pct))|(?P<scale> ?(?:{FAST_SCALE_WORD})s?))?"
    r"[ \t\n\r]*$"
)

#: A marker's answer that is a :data:`FAST_NUMBER` followed by one space and words (letters and
#: spaces only: ``4 percent``, ``2.314 thousand``, ``18 dollars``): what
#: :func:`~workbench.grading.extract.clean_answer_text` cuts to the number (group ``number``).
FAST_NUMBER_WORDS = rf"^(?P<number>-?\$?{_FAST_DIGITS}%?) [A-Za-z][A-Za-z ]*$"

#: :data:`FENCED_CODE` for polars, on :data:`FAST_TEXT`: a block whose info string is ``output``
#: (around it only the whitespace that text can hold) is the group ``keep``; the other blocks are
#: code, which flexible extraction does not read. The blocks are the same as Python's except
#: that an unclosed block at the end of the text takes a final newline (Python's ``$`` stops
#: before it), which holds no number.
FAST_FENCED_CODE = r"(?s)(?P<keep>```[ \t\r]*output[ \t\r]*\n.*?(?:```|$))|```[^\n`]*\n.*?(?:```|$)"
