"""Answer extraction: one case per rule on real outputs, a regression table over the bundled
GSM8K runs, and properties of the extractor."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from workbench.grading import patterns
from workbench.grading.compare import read_number
from workbench.grading.extract import MAX_OUTPUT_CHARS, Extraction, clean_answer_text, extract_answer, last_boxed
from workbench.grading.policies import POLICIES, grade_answer, select_answer
from workbench.grading.status import ExtractionRule, ExtractionStatus, GradeStatus, MatchReason
from workbench.grading.turn import grade_turn

OPENAI_SYSTEMS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")


def _lines(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="module")
def tora_rows(gsm8k_runs: dict[str, Path]) -> list[dict]:
    return _lines(gsm8k_runs["tora-70b"])


@pytest.fixture(scope="module")
def openai_rows(gsm8k_runs: dict[str, Path]) -> list[dict]:
    return _lines(gsm8k_runs["openai"])


@pytest.fixture(scope="module")
def gsm8k_rows(gsm8k_path: Path) -> list[dict]:
    return _lines(gsm8k_path)


# --------------------------------------------------------------------------- one case per rule
def _body(solution: str) -> str:
    """A GSM8K reference solution without its ``#### n`` line."""
    return solution.rsplit("####", 1)[0].strip()


def _snippets(tora: list[dict], openai: list[dict], gsm8k: list[dict]) -> dict[str, str]:
    """Real outputs, by the name the cases below use. Where no bundled output uses a marker
    (no file says "The final answer is", none has a solution block), a real GSM8K reference
    solution is given that marker in place of its ``#### n`` line."""
    return {
        # ToRA-70B, GSM8K test line 1: code, its output, then "Janet makes $\boxed{18}$ dollars ..."
        "tora_boxed": tora[0]["code"][0],
        # ToRA-70B, line 882: "The answer is $\boxed{6}$ years." -- the box inside the phrase wins
        "tora_answer_is_boxed": tora[881]["code"][0],
        # GSM8K test line 1, the reference solution: "... every day at the farmer's market.\n#### 18"
        "gsm8k_hashes": gsm8k[0]["answer"],
        "gsm8k_final_answer_is": _body(gsm8k[0]["answer"]) + "\nThe final answer is 18.",
        "gsm8k_answer_is": _body(gsm8k[0]["answer"]) + "\nThe answer is 18.",
        # a reasoning model's layout around the same solution: no marker inside the block, so the
        # block's last number; the thought before it and text after it are not read
        "solution_block": "<|begin_of_thought|>16 - 3 - 4 = 9 eggs, 9 * 2 = 18. Check: 20?<|end_of_thought|>\n"
        f"<|begin_of_solution|>{_body(gsm8k[0]['answer'])}<|end_of_solution|>\nThat took 3 steps.",
        # OpenAI 6B fine-tuned, GSM8K test line 1: "... she makes 13 * 2 = $<<13*2=26>>26\nA: 26"
        "openai_answer_line": openai[0]["6b_finetuning"]["solution"],
        # OpenAI 6B fine-tuned, line 937: cut off mid-sentence ("... = <<1411900+20170=1432070>>1432070
        # pesos for an"), no "A:" line
        "openai_truncated": openai[936]["6b_finetuning"]["solution"],
        # GSM8K test line 2's solution closed by an inline formula after its last number
        "gsm8k_formula": _body(gsm8k[1]["answer"]) + "\nSo the robe takes $\\frac{6}{2}$ bolts.",
    }


# (snippet, policy, answer, rule, status, text the span covers)
RULE_CASES = [
    ("tora_boxed", "strict", "18", "boxed", "found", "\\boxed{18}"),
    ("tora_boxed", "flex", "18", "boxed", "found", "\\boxed{18}"),
    ("tora_answer_is_boxed", "strict", "6", "boxed", "found", "\\boxed{6}"),
    ("gsm8k_hashes", "strict", "18", "hashes", "found", "#### 18"),
    ("gsm8k_hashes", "flex", "18", "hashes", "found", "#### 18"),
    ("gsm8k_final_answer_is", "strict", "18", "final_answer_is", "found", "The final answer is 18."),
    ("gsm8k_answer_is", "strict", "18", "answer_is", "found", "The answer is 18."),
    ("gsm8k_answer_is", "flex", "18", "answer_is", "found", "The answer is 18."),
    ("solution_block", "strict", "18", "solution_block", "found", "18"),
    ("solution_block", "flex", "18", "solution_block", "found", "18"),
    ("openai_answer_line", "strict", "26", "answer_line", "found", "A: 26"),
    ("openai_answer_line", "flex", "26", "answer_line", "found", "A: 26"),
    # the lenient rules: strict finds nothing, flex takes the last number or formula
    ("openai_truncated", "strict", None, "none", "not_found", None),
    ("openai_truncated", "flex", "1432070", "last_number", "found", "1432070"),
    ("gsm8k_formula", "strict", None, "none", "not_found", None),
    ("gsm8k_formula", "flex", "\\frac{6}{2}", "last_formula", "found", "$\\frac{6}{2}$"),
]


@pytest.mark.parametrize(("name", "policy", "answer", "rule", "status", "matched"), RULE_CASES)
def test_each_rule_on_real_outputs(
    tora_rows: list[dict],
    openai_rows: list[dict],
    gsm8k_rows: list[dict],
    name: str,
    policy: str,
    answer: str | None,
    rule: str,
    status: str,
    matched: str | None,
) -> None:
    text = _snippets(tora_rows, openai_rows, gsm8k_rows)[name]
    e = extract_answer(text, policy=policy)  # type: ignore[arg-type]
    assert (e.answer, e.rule, e.status, e.policy) == (
        answer,
        ExtractionRule(rule),
        ExtractionStatus(status),
        policy,
    )
    if matched is None:
        assert e.span is None
    else:
        assert e.span is not None
        assert text[e.span[0] : e.span[1]] == matched
        assert answer is not None and answer in text[e.span[0] : e.span[1]]


# The rules that read what a gold asks for (issue 31), written here: (output, expect, answer, rule)
EXPECT_RULE_CASES = [
    # Math-Verify tests/test_string_extraction.py: the letter that stands as the answer
    ("A. Because B is not valid", "choice", "A", "choice_letter"),
    ("Because B is valid", "choice", "B", "choice_letter"),
    # a short last line is a text-span answer (DROP)
    ("The passage says the touchdown was scored by\nMike Tolbert", "span", "Mike Tolbert", "last_line"),
]


@pytest.mark.parametrize(("text", "expect", "answer", "rule"), EXPECT_RULE_CASES)
def test_each_rule_of_an_expectation(text: str, expect: str, answer: str, rule: str) -> None:
    e = extract_answer(text, expect=expect)  # type: ignore[arg-type]
    assert (e.answer, e.rule, e.status) == (answer, ExtractionRule(rule), ExtractionStatus.FOUND)
    assert e.span is not None and answer in text[e.span[0] : e.span[1]]


def test_every_rule_has_a_case() -> None:
    covered = {ExtractionRule(case[3]) for case in (*RULE_CASES, *EXPECT_RULE_CASES)} | {ExtractionRule.NONE}
    assert covered == set(ExtractionRule)


def test_solution_block_narrows_the_search(gsm8k_rows: list[dict]) -> None:
    # a marker inside the block wins over the block's last number; text after the block is not read
    text = f"<|begin_of_solution|>{_body(gsm8k_rows[0]['answer'])}\nThe final answer is 18<|end_of_solution|> then 99"
    e = extract_answer(text, policy="strict")
    assert (e.answer, e.rule) == ("18", ExtractionRule.FINAL_ANSWER_IS)
    assert e.span is not None and text[e.span[0] : e.span[1]] == "The final answer is 18"


def test_last_boxed_takes_the_last_and_keeps_nested_braces(tora_rows: list[dict]) -> None:
    assert last_boxed(tora_rows[0]["code"][0]) == "18"
    # ToRA-70B, GSM8K test line 141: "$\boxed{20\%}$" -- the escaped percent stays
    assert last_boxed(tora_rows[140]["code"][0]) == "20\\%"
    assert last_boxed(r"first \boxed{1}, then \boxed{\frac{3}{7}}") == r"\frac{3}{7}"


def test_flex_answer_has_no_leading_newline(tora_rows: list[dict]) -> None:
    """A number at the start of a line is read without the newline before it (a bug once)."""
    text = tora_rows[14]["code"][0]
    assert text.endswith("```\n60% of the students enrolled in hip-hop dance.")
    e = extract_answer(text, policy="flex")
    assert e.answer == "60%"
    assert e.span is not None and text[e.span[0] : e.span[1]] == "60%"


def test_empty_box_in_a_formula_is_not_an_answer() -> None:
    """``$\\boxed{}$`` holds no answer, so nothing is found (a bug once: found, with answer '')."""
    e = extract_answer("So the answer is $\\boxed{}$.", policy="flex")
    assert not e.found and e.answer is None


# --------------------------------------------------------------------------- no answer, no credit
NO_ANSWER_OUTPUTS = [
    "",
    "   \n\t",
    "She sells the remainder at the farmers' market daily.",
    "I don't know how to solve this.",
    # markers with nothing after them
    "The answer is",
    "####",
    "A: ",
    "\\boxed{}",
    "<|begin_of_solution|>I cannot tell.<|end_of_solution|>",
    # a ToRA-style run whose code failed, with no number in the traceback
    "```output\nNameError: name 'eggs' is not defined\n```",
    # markers followed by a statement that there is no answer
    "The answer is unknown.",
    "A: N/A",
    "Final answer: cannot be determined",
    "So the answer is $\\boxed{}$.",
]


@pytest.mark.parametrize("text", NO_ANSWER_OUTPUTS)
def test_a_lenient_rule_never_gives_credit_to_an_output_with_no_answer(text: str) -> None:
    for name in ("strict", "flex"):
        policy = POLICIES[name]
        answer, source, extraction = select_answer(policy, predicted_answer=None, raw_output=text)
        assert source == name and extraction is not None
        verdict = grade_answer(policy, answer, "18")
        assert not verdict.correct and verdict.reason.value == "no_answer", (name, answer, verdict)


@pytest.mark.parametrize(
    "text", ["", "   ", "She sells the remainder at the farmers' market daily.", "The answer is", "A: "]
)
def test_no_number_is_not_found_under_either_policy(text: str) -> None:
    for policy in ("strict", "flex"):
        e = extract_answer(text, policy=policy)  # type: ignore[arg-type]
        assert not e.found and e.answer is None and e.span is None and e.rule is ExtractionRule.NONE
        assert e.status is (ExtractionStatus.EMPTY if not text.strip() else ExtractionStatus.NOT_FOUND)


def test_unknown_policy_is_an_error() -> None:
    with pytest.raises(ValueError, match="'strict' or 'flex'"):
        extract_answer("#### 18", policy="lenient")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- regression
_A_LINE = re.compile(r"(?m)^A:[ \t]*(?P<answer>\S[^\n]*)$")
_FIRST_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def _a_line_number(solution: str) -> str | None:
    """The number on the last ``A:`` line of an OpenAI solution, as written (``90,000``)."""
    lines = _A_LINE.findall(solution)
    match = _FIRST_NUMBER.search(lines[-1]) if lines else None
    return match.group(0) if match else None


def _value(text: str | None) -> float | None:
    number = read_number(text) if text is not None else None
    return None if number is None else number.fraction


def _counts(pairs: list[tuple[str, str | None]]) -> dict[str, tuple[int, int, int]]:
    """Per policy: (answers found, found and equal to the reference as text, ... as a number)."""
    out = {}
    for policy in ("strict", "flex"):
        found = same_text = same_number = 0
        for text, reference in pairs:
            e = extract_answer(text, policy=policy)  # type: ignore[arg-type]
            if not e.found:
                continue
            found += 1
            same_text += e.answer == reference
            same_number += (
                reference is not None and _value(e.answer) is not None and _value(e.answer) == _value(reference)
            )
        out[policy] = (found, same_text, same_number)
    return out


#: Per system and policy: (answers found, equal to the reference as text, equal as a number),
#: out of 1,319 outputs. Computed once from the bundled files and written here on purpose.
#: The reference is ToRA's own ``pred[0]`` for ToRA-70B (``code[0]``), and the number on the
#: last ``A:`` line for the OpenAI systems (``solution``).
EXTRACTION_COUNTS: dict[str, dict[str, tuple[int, int, int]]] = {
    # ToRA-70B: 1,308 outputs box their answer. Text equality is low because ToRA's pred drops
    # ".0" ("160" for \boxed{160.0}) and the box keeps "\%" ("20\%" for 20); as numbers 1,289
    # agree. Without a box (11), flex takes the last number: right for "19 people were kicked
    # out", wrong for "5 cars ... in the first 15 minutes" (15). Line 146 is a code block and nothing
    # else (cut off before its output): flex read "4" from "legos_500 / 4" until code was no longer
    # mined for answers (issue 19); it finds nothing there now.
    "tora-70b": {"strict": (1308, 1046, 1289), "flex": (1318, 1050, 1294)},
    # OpenAI: strict finds exactly the outputs with an "A:" line; the rest were cut off by the
    # length limit, where flex takes whatever number came last (e.g. "0.0068181818...").
    # The one answer-line miss is "A: 1/5", whose first number (the reference) is 1.
    "6b_finetuning": {"strict": (1315, 1314, 1314), "flex": (1319, 1314, 1314)},
    "6b_verification": {"strict": (1318, 1318, 1318), "flex": (1319, 1318, 1318)},
    # "A: 10+John's age" and "A: 7/14" are the two whose answer is not the line's first number
    "175b_finetuning": {"strict": (1314, 1312, 1312), "flex": (1319, 1312, 1312)},
    "175b_verification": {"strict": (1318, 1318, 1318), "flex": (1319, 1318, 1318)},
}


def test_extraction_counts_on_the_bundled_runs(tora_rows: list[dict], openai_rows: list[dict]) -> None:
    assert len(tora_rows) == len(openai_rows) == 1319
    found = {"tora-70b": _counts([(r["code"][0], r["pred"][0]) for r in tora_rows])}
    for system in OPENAI_SYSTEMS:
        solutions = [r[system]["solution"] for r in openai_rows]
        found[system] = _counts([(s, _a_line_number(s)) for s in solutions])
    assert found == EXTRACTION_COUNTS


# --------------------------------------------------------------------------- properties
_WORDS = st.lists(
    st.sampled_from(["She", "makes", "9", "*", "2", "=", "eggs", "per", "day", "and", "sells", "3.5", "the", "rest"]),
    max_size=12,
).map(" ".join)
_INTEGERS = st.integers(min_value=-(10**12), max_value=10**12).map(str)
_DECIMALS = (
    st.integers(min_value=0, max_value=6)
    .flatmap(lambda places: st.decimals(min_value=-(10**6), max_value=10**6, places=places, allow_nan=False))
    .map(lambda d: f"{Decimal(d):f}")
)  # written plainly: no exponent
_NUMBERS = st.one_of(_INTEGERS, _DECIMALS)


@settings(max_examples=60, deadline=None)
@given(prefix=_WORDS, n=_NUMBERS)
def test_hash_answer_reads_back(prefix: str, n: str) -> None:
    for policy in ("strict", "flex"):
        e = extract_answer(f"{prefix}\n#### {n}", policy=policy)  # type: ignore[arg-type]
        assert (e.answer, e.rule) == (n, ExtractionRule.HASHES)


@settings(max_examples=60, deadline=None)
@given(prefix=_WORDS, n=_NUMBERS)
def test_boxed_answer_reads_back(prefix: str, n: str) -> None:
    text = f"{prefix} so \\boxed{{{n}}}."
    e = extract_answer(text, policy="strict")
    assert (e.answer, e.rule) == (n, ExtractionRule.BOXED)
    assert e.span is not None and text[e.span[0] : e.span[1]] == f"\\boxed{{{n}}}"


@settings(max_examples=60, deadline=None)
@given(prefix=_WORDS, n=_NUMBERS)
def test_flex_finds_the_last_number(prefix: str, n: str) -> None:
    text = f"{prefix} {n}"
    # an output that is one number written with spaces between thousands ("9 100", "25 000") is read
    # whole (issue 19), as the SI writes numbers
    assume(not patterns.SPACED_THOUSANDS.match(text.strip()))
    e = extract_answer(text, policy="flex")
    assert (e.answer, e.rule) == (n, ExtractionRule.LAST_NUMBER)
    assert e.span is not None and text[e.span[0] : e.span[1]].strip() == n
    assert not extract_answer(text, policy="strict").found


def _check_invariants(text: str, e: Extraction) -> None:
    assert (e.span is None) == (not e.found)
    assert (e.answer is None) == (not e.found)
    if e.span is not None:
        assert 0 <= e.span[0] <= e.span[1] <= len(text)
    if e.status is ExtractionStatus.EMPTY:
        assert not text.strip()


@settings(max_examples=150, deadline=None)
@given(
    text=st.one_of(
        st.text(),
        st.text(alphabet="#$\\{}boxedA: answeris0123456789.-%\n<|_>", max_size=60),
    )
)
def test_extraction_never_raises(text: str) -> None:
    for policy in ("strict", "flex"):
        e = extract_answer(text, policy=policy)  # type: ignore[arg-type]
        assert isinstance(e, Extraction) and e.policy == policy
        _check_invariants(text, e)


# --------------------------------------------------------------------------- size cap (issue 15)
def test_an_output_over_the_size_cap_is_not_read_and_the_turn_says_why() -> None:
    over = "#### 18 " * (MAX_OUTPUT_CHARS // 8 + 1)
    assert len(over) > MAX_OUTPUT_CHARS
    for policy in ("strict", "flex"):
        found = extract_answer(over, policy=policy)
        assert (found.status.value, found.answer, found.span) == ("too_long", None, None)
    grade = grade_turn(
        predicted_answer=None,
        predicted_program=None,
        raw_output=over,
        gold_executed="18",
        gold_program=None,
        policy=POLICIES["flex"],
        also=tuple(POLICIES.values()),
    )
    extracted = [each for each in grade.policies if each.answer_source in ("strict", "flex")]
    assert extracted
    for each in extracted:
        assert (each.verdict.status, each.verdict.reason, each.verdict.correct) == (
            GradeStatus.UNPARSEABLE,
            MatchReason.UNPARSEABLE,
            False,
        )
        assert "extract.MAX_OUTPUT_CHARS" in each.verdict.detail


def test_an_output_at_the_size_cap_is_read() -> None:
    at_cap = " " * (MAX_OUTPUT_CHARS - len("#### 18")) + "#### 18"
    assert len(at_cap) == MAX_OUTPUT_CHARS
    assert extract_answer(at_cap, policy="strict").answer == "18"


# --------------------------------------------------------------------------- issue 19: MATH outputs
MATH_RUNS = Path(__file__).resolve().parents[3] / "data" / "predictions" / "math"  # data/SOURCES.md
RHO_COT = MATH_RUNS / "microsoft-rho-math-7b" / "test_cot_-1_seed0_t0.0_s0_e-1.jsonl"
RHO_TORA = MATH_RUNS / "microsoft-rho-math-7b-interpreter" / "test_tora_-1_seed0_t0.0_s0_e-1.jsonl"


def _code(path: Path, idx: int) -> str:
    return json.loads(path.read_text(encoding="utf-8").splitlines()[idx])["code"][0]


# (output, policy, answer); the source of each case in a comment
MATH_EXTRACTIONS = [
    # the Minerva ending (lm-eval minerva_math utils; cot idx 3): the inner marker is not part of the answer
    (_code(RHO_COT, 3), "flex", "9"),
    (_code(RHO_COT, 3), "strict", "9"),
    (_code(RHO_COT, 4), "flex", "Evelyn"),  # cot idx 4: "The final answer is Evelyn. I hope it is correct."
    (_code(RHO_COT, 120), "flex", "even"),  # cot idx 120: '"even"'
    (_code(RHO_COT, 451), "strict", "15.975"),  # cot idx 451: "$15.975$ inches"
    # doubled backslashes (cot idx 0: "$(3, \\frac{\\pi}{2})$")
    (_code(RHO_COT, 0), "strict", "(3, \\frac{\\pi}{2})"),
    # "Final Answer: <subject> is X" (Math-Verify tests/test_all.py, Issue #7, its last line)
    ("Final Answer: The volume of $ABCDEFGH$ is 120. I hope it is correct.", "strict", "120"),
    # several boxes given together (interpreter idx 456): both are the answer
    (_code(RHO_TORA, 456), "strict", "-2, 1"),
    # a bare answer is not cut to its last number (issue 19, "Families": each example as written there)
    ("\\frac{7}{3}", "flex", "\\frac{7}{3}"),
    ("\\sqrt{2}+1", "flex", "\\sqrt{2}+1"),
    ("1 + sqrt(2)", "flex", "1 + sqrt(2)"),
    ("3½", "flex", "3½"),
    ("45°", "flex", "45°"),
    ("2 3/8", "flex", "2 3/8"),
    ("25 000", "flex", "25 000"),
    ("x = 1 and x = 4", "flex", "x = 1 and x = 4"),
    ("(1, 3), (5, 2)", "flex", "(1, 3), (5, 2)"),
    ("2, 4 or 6", "flex", "2, 4 or 6"),
    ("x = 7", "flex", "x = 7"),
    ("a = 3, b = 10", "flex", "a = 3, b = 10"),
    ("$\\frac{2}{5}.$", "flex", "\\frac{2}{5}"),
    # Math-Verify tests/test_all.py test_number_extraction and test_mixed_number_extraction.py
    ("1 000", "flex", "1 000"),
    ("4 4/9", "flex", "4 4/9"),
]


@pytest.mark.parametrize(("output", "policy", "answer"), MATH_EXTRACTIONS)
def test_math_extraction_families(output: str, policy: str, answer: str) -> None:
    assert extract_answer(output, policy=policy).answer == answer  # type: ignore[arg-type]


@pytest.mark.parametrize("idx", [150, 239, 339, 379])
def test_flexible_extraction_never_mines_code(idx: int) -> None:
    """Interpreter outputs without a box (idx 150, 239, 339, 379 of the Rho-Math-Interpreter run):
    today's answers came from numbers inside ```python blocks; no number inside a code block is read."""
    text = _code(RHO_TORA, idx)
    found = extract_answer(text, policy="flex")
    blocks = [m.span() for m in re.finditer(r"```python\n.*?```", text, re.DOTALL)]
    assert blocks
    assert found.span is None or not any(start <= found.span[0] < end for start, end in blocks)


def test_the_minerva_sign_off_goes_even_glued() -> None:
    # data README: 14 upstream preds end "Ihopeitiscorrect" ("Evelyn.Ihopeitiscorrect", the pred of cot idx 4)
    assert clean_answer_text("Evelyn.Ihopeitiscorrect") == "Evelyn"
    assert clean_answer_text("$9$. I hope it is correct.") == "9"  # lm-eval minerva_math's ending


@pytest.mark.parametrize(
    ("text", "answer", "rule"),
    [
        # found by test_flex_finds_the_last_number (hypothesis): "and"/"or" between plain numbers
        # shape no answer list; the whole output was taken and then cut to its first number ("9")
        ("9 and 0", "0", ExtractionRule.LAST_NUMBER),
        ("7 or 8", "8", ExtractionRule.LAST_NUMBER),
        # a list with a letter, a comma or LaTeX stays whole (issue 19)
        ("x = 1 and x = 4", "x = 1 and x = 4", ExtractionRule.LAST_FORMULA),
        ("2, 4 or 6", "2, 4 or 6", ExtractionRule.LAST_FORMULA),
    ],
)
def test_connectives_between_plain_numbers_end_a_sentence(text: str, answer: str, rule: ExtractionRule) -> None:
    e = extract_answer(text, policy="flex")
    assert (e.answer, e.rule) == (answer, rule)
