"""The ``math-verify`` policy (issue 19): Math-Verify's own verdict, computed in batches, with plain
numbers decided without SymPy only where Math-Verify's verdict is certain."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from workbench.grading import mathverify
from workbench.grading.mathverify import _math_verify_default, _plain_numbers, math_verify_grade, math_verify_prefetch
from workbench.grading.status import GradeStatus

# plain numbers as models and gold files write them: integers, decimals, negative, leading zeros, long
_DIGITS = st.text(alphabet="0123456789", min_size=1, max_size=17)
_PLAIN = st.builds(
    lambda sign, whole, frac: f"{sign}{whole}{'.' + frac if frac else ''}",
    st.sampled_from(["", "-"]),
    _DIGITS,
    st.one_of(st.just(""), _DIGITS),
)


def _near(text: str, data: st.DataObject) -> str:
    """Another spelling of ``text`` or a number within a few millionths of it."""
    value = Decimal(text)
    step = data.draw(st.sampled_from(["0", "0.0000001", "0.000001", "0.000004", "0.000005", "0.00001", "0.0001"]))
    sign = data.draw(st.sampled_from([1, -1]))
    moved = value + sign * Decimal(step)
    spelled = data.draw(st.sampled_from([f"{moved}", f"{moved:f}", f"{moved:.6f}", f"{moved:.7f}", f"{moved:.0f}"]))
    return spelled


@settings(max_examples=300, deadline=None)
@given(gold=_PLAIN, data=st.data())
@example(gold="12.0", data=None)  # type: ignore[arg-type]
def test_plain_numbers_are_decided_as_math_verify_decides_them(gold: str, data: st.DataObject | None) -> None:
    """Where the shortcut decides, Math-Verify (its parse and verify, in this process) agrees."""
    outputs = ["12", "12.00", "-0"] if data is None else [data.draw(_PLAIN), _near(gold, data)]
    for output in outputs:
        fast = _plain_numbers(output, gold)
        if fast is None:
            continue
        slow = _math_verify_default(output, gold)
        assert slow.status is GradeStatus.OK, slow.detail
        assert fast.equivalent is slow.equivalent, (output, gold, slow.detail)


# real pairs: the zarifaziz ConvFinQA answers in percent units against executed ratios (12.57 for
# 0.12574), and the boundary cases of Math-Verify's six-decimal rounding
REAL_PAIRS = [
    ("12.57", "0.12574", False),
    ("0.1082", "0.1082", True),
    ("14.1", "14.1", True),
    ("1877", "18770.0", False),
    ("12", "12.0", True),
    ("1.5", "1.50", True),
    ("-3.2", "3.2", False),
]


def test_real_pairs_decided_without_sympy_agree_with_math_verify() -> None:
    for output, gold, equal in REAL_PAIRS:
        fast = _plain_numbers(output, gold)
        assert fast is not None and fast.equivalent is equal
        assert _math_verify_default(output, gold).equivalent is equal


def test_close_numbers_and_long_ones_go_to_math_verify() -> None:
    """Math-Verify rounds floats to six decimals in binary: 0.1234565 is not 0.123457 there but
    0.1234575 is 0.123458; such pairs, and numbers beyond SymPy's 15 digits, are its to decide."""
    assert _plain_numbers("0.1234565", "0.123457") is None
    assert _plain_numbers("12", "12.0000001") is None
    assert _plain_numbers("1234567890123456.7", "1234567890123457.9") is None
    assert _plain_numbers("\\frac{1}{2}", "0.5") is None
    assert _plain_numbers("-01", "-1") is None  # Math-Verify finds no answer in "-01"


def test_a_prefetched_verdict_is_the_verdict_of_a_call_alone() -> None:
    """Batched in one worker call or graded alone, the same verdicts; each prefetched one is used once."""
    pairs = [
        ("so it is $\\boxed{\\frac{3}{4}}$.", "0.75"),
        ("The answer is $x = 7$", "7"),
        ("$(-\\infty, 0)$", "(-\\infty, 0]"),
        ("Final Answer: The final answer is $9$. I hope it is correct.", "9"),
    ]
    limit = 7.5  # a limit no other test uses: nothing memoised
    assert math_verify_prefetch(pairs, limit) == len(pairs)
    batched = [math_verify_grade(output, gold, limit) for output, gold in pairs]
    assert not mathverify._prefetched()
    alone = [_math_verify_default(output, gold) for output, gold in pairs]
    assert [(v.status, v.equivalent) for v in batched] == [(v.status, v.equivalent) for v in alone]
    assert [v.equivalent for v in batched] == [True, True, False, True]


def test_a_threads_prefetch_leaves_another_threads_verdicts() -> None:
    """Threads that grade rows side by side (``parallel.map_chunks``) each prefetch their own: one
    thread's prefetch does not drop what another computed ahead."""
    mine, theirs = [("so it is $\\boxed{\\frac{1}{8}}$.", "0.125")], [("The answer is $x = 5$", "5")]
    limit = 7.25  # a limit no other test uses: nothing memoised
    assert math_verify_prefetch(mine, limit) == 1
    other = threading.Thread(target=math_verify_prefetch, args=(theirs, limit))
    other.start()
    other.join()
    assert list(mathverify._prefetched()) == [(*mine[0], limit)]  # still here, theirs is not
    assert math_verify_grade(*mine[0], limit).equivalent
    assert not mathverify._prefetched()


def _bundled_pairs() -> list[tuple[str, str]]:
    """ToRA's GSM8K outputs (LaTeX, boxed answers, prose) and their gold, and OpenAI's (``#### n``),
    each output also against a gold it does not give: equal and unequal pairs."""
    from workbench.config import project_root
    from workbench.io.predictions import load_predictions

    root = project_root() / "data/predictions/gsm8k"
    pairs = []
    for name in ("tora/tora-70b.jsonl", "openai-gpt3/example_model_solutions.jsonl"):
        rows = load_predictions(root / name).head(60).select("raw_output", "gold_answer").rows()
        pairs += [(str(output), str(gold)) for output, gold in rows if output and gold]
        pairs += [(str(output), str(gold) + "1") for output, gold in rows[:20] if output and gold]
    return pairs


def test_remembered_extractions_give_math_verify_s_own_verdicts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Math-Verify's readings of regex matches, kept per distinct match and config
    (``_remember_extractions``), and its ``verify`` kept per gold and readings, give the verdicts of
    a fresh reading: each pair graded with an empty store, again from what was kept, and with
    Math-Verify's own ``extract_match`` and nothing kept."""
    from math_verify import parser

    pairs = _bundled_pairs()
    assert len(pairs) > 100
    mathverify._remember_extractions()
    mathverify._forget_readings()
    mathverify._parse_gold.cache_clear()  # type: ignore[attr-defined]
    first = [_math_verify_default(output, gold) for output, gold in pairs]
    assert mathverify._EXTRACTIONS and mathverify._VERIFIED  # kept
    again = [_math_verify_default(output, gold) for output, gold in pairs]
    monkeypatch.setattr(parser, "extract_match", parser.extract_match.__wrapped__)
    monkeypatch.setattr(mathverify, "_remember_extractions", lambda: None)
    mathverify._forget_readings()
    mathverify._parse_gold.cache_clear()  # type: ignore[attr-defined]
    fresh = [_math_verify_default(output, gold) for output, gold in pairs]
    assert first == again == fresh
    assert {v.equivalent for v in fresh} == {True, False}
