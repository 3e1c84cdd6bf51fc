"""The `math_answer` builtin reward: extraction (\\boxed{}, #### n, last number) and equality
(numbers, fractions, sympy expressions)."""

import pytest

from troupe.spec.runspec_types import Reward
from troupe.rewards.math_answer import answers_equal, extract_answer, last_boxed
from troupe.rewards.builtin import bind_reward

REWARD = bind_reward(Reward.from_dict({"name": "m", "source": {"kind": "builtin", "name": "math_answer", "params": {"field": "answer"}}}))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("so the answer is \\boxed{42}.", "42"),
        ("first \\boxed{1} then \\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
        ("nested \\boxed{x^{2}+1} done", "x^{2}+1"),
        ("Natalia sold 48/2 = 24 clips.\n#### 72", "72"),
        ("#### 1,000", "1,000"),
        ("I think 3 then 5 then -7.5", "-7.5"),
        ("no number here", None),
        ("unbalanced \\boxed{12", "12"),  # no closed box: falls back to the last number
    ],
)
def test_extracts_the_final_answer(text, expected):
    assert extract_answer(text) == expected


def test_last_boxed_balances_braces():
    assert last_boxed("\\boxed{\\frac{a}{b}}") == "\\frac{a}{b}"
    assert last_boxed("none") is None


@pytest.mark.parametrize(
    "got, expected, equal",
    [
        ("72", "72", True),
        ("1,000", "1000", True),
        ("0.75", "3/4", True),
        ("\\frac{3}{4}", "0.75", True),
        ("72.0", "72", True),
        ("71", "72", False),
        ("x/2", "\\frac{1}{2}x", True),
        ("2\\sqrt{2}", "sqrt(8)", True),
        ("(x+1)^2", "x^2+2x+1", True),
        ("x+2", "x+1", False),
        ("banana", "72", False),
    ],
)
def test_equal_as_numbers_fractions_or_expressions(got, expected, equal):
    assert answers_equal(got, expected) is equal


def test_scores_completions_against_the_dataset_field():
    assert REWARD("q", "The total is \\boxed{18}", {"answer": "18"}) == 1.0
    assert REWARD("q", "The total is 17", {"answer": "She pays 9*2 = 18.\n#### 18"}) == 0.0
    assert REWARD("q", "Janet makes 18 dollars.", {"answer": "She pays 9*2 = 18.\n#### 18"}) == 1.0
    assert REWARD("q", "answer: \\boxed{\\frac{1}{2}}", {"answer": "0.5"}) == 1.0
    assert REWARD("q", "I don't know", {"answer": "3"}) == 0.0
    assert REWARD.fields == ["answer"]


def test_usable_at_conversation_scope():
    conv = bind_reward(Reward.from_dict({"name": "m", "scope": "conversation", "source": {"kind": "builtin", "name": "math_answer", "params": {"field": "answer"}}}))
    conversation = [{"actor": "user", "content": "2+2?"}, {"actor": "Alice", "content": "maybe 5"}, {"actor": "Bob", "content": "#### 4"}]
    assert conv.score_conversation(conversation, "Alice", {"answer": "4"}) == 1.0
