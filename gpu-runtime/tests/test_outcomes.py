"""Debate and majority vote: the outcome decides each actor's reward (outcomes.py, builtin rewards)."""

import pytest

from troupe.spec.runspec_types import Reward
from troupe.rewards.outcomes import debate_rewards, extract_answer, majority, majority_vote_rewards, verdict
from troupe.rewards.builtin import bind_reward, param_issues
from troupe.spec import validate_spec
from troupe.spec.support import support_issues

from runtime_helpers import demo_input


def conv(*messages: tuple[str, str]) -> list[dict[str, str]]:
    return [{"actor": "user", "content": "What is 6 * 7?"}] + [{"actor": a, "content": c} for a, c in messages]


def test_extract_answer_modes():
    assert extract_answer("  The answer is\n 42 ", "text") == "the answer is 42"
    assert extract_answer("I think 1,000 or maybe 42.0", "last_number") == "42"
    assert extract_answer("about 3.50 dollars", "last_number") == "3.5"
    assert extract_answer("no digits", "last_number") is None
    assert extract_answer("  (b) because", "letter") == "B"
    assert extract_answer("", "text") is None
    with pytest.raises(ValueError):
        extract_answer("x", "regex")


def test_majority_needs_a_strict_winner():
    assert majority({"A": "1", "B": "1", "C": "2"}) == "1"
    assert majority({"A": "1", "B": "2"}) is None
    assert majority({}) is None


def test_vote_agree_rewards_the_majority_and_only_last_answers_count():
    c = conv(("A", "41"), ("A", "42"), ("B", "42"), ("C", "7"), ("D", "no idea"))
    # A's first answer was replaced by its last; D gives no number: no vote, reward 0.
    assert majority_vote_rewards(c, {}, "", "last_number", "agree") == {"A": 1.0, "B": 1.0, "C": 0.0, "D": 0.0}
    tie = conv(("A", "1"), ("B", "2"))
    assert majority_vote_rewards(tie, {}, "", "last_number", "agree") == {"A": 0.0, "B": 0.0}


def test_vote_team_follows_whether_the_majority_is_right():
    c = conv(("A", "42"), ("B", "42"), ("C", "7"))
    assert majority_vote_rewards(c, {"answer": "42"}, "answer", "last_number", "team") == {"A": 1.0, "B": 1.0, "C": 1.0}
    assert majority_vote_rewards(c, {"answer": 7}, "answer", "last_number", "team") == {"A": 0.0, "B": 0.0, "C": 0.0}


def test_environment_messages_do_not_vote():
    c = conv(("A", "42"), ("B", "7")) + [{"actor": "env", "content": "7", "role": "environment"}]
    assert majority_vote_rewards(c, {}, "", "last_number", "agree") == {"A": 0.0, "B": 0.0}


def test_verdict_is_the_first_debater_named_whole_word():
    assert verdict("Winner: bob. Alice was wrong", ["Alice", "Bob"]) == "Bob"
    assert verdict("Bobby wins", ["Alice", "Bob"]) is None
    assert verdict("no one", ["Alice", "Bob"]) is None


def test_debate_winner_takes_the_reward_and_the_judge_is_scored_by_the_truth():
    c = conv(("Alice", "It is 42"), ("Bob", "It is 48"), ("Alice", "6*7 = 42, surely"), ("Judge", "Alice"))
    assert debate_rewards(c, {"answer": "42"}, "Judge", "answer", "last_number") == {"Alice": 1.0, "Bob": 0.0, "Judge": 1.0}
    wrong = c[:-1] + [{"actor": "Judge", "content": "Bob"}]
    assert debate_rewards(wrong, {"answer": "42"}, "Judge", "answer", "last_number") == {"Alice": 0.0, "Bob": 1.0, "Judge": 0.0}
    undecided = c[:-1] + [{"actor": "Judge", "content": "hmm"}]
    assert debate_rewards(undecided, {"answer": "42"}, "Judge", "answer", "last_number") == {"Alice": 0.0, "Bob": 0.0, "Judge": 0.0}
    assert debate_rewards(c, {}, "Judge", "", "last_number")["Judge"] == 0.0  # no labels: nothing true to learn


def test_builtin_rewards_score_each_actor_of_the_conversation():
    vote = bind_reward(Reward.from_dict({"name": "v", "scope": "conversation", "source": {"kind": "builtin", "name": "majority_vote", "params": {"extract": "last_number"}}}))
    c = conv(("A", "42"), ("B", "42"), ("C", "7"))
    calls = [{"conversation": c, "actor_name": a} for a in "ABC"]
    assert vote.score_many(calls, [{}, {}, {}]) == [1.0, 1.0, 0.0]
    judge = bind_reward(Reward.from_dict({"name": "d", "scope": "conversation", "source": {"kind": "builtin", "name": "debate_verdict", "params": {"field": "answer", "extract": "last_number"}}}))
    assert judge.fields == ["answer"]
    d = conv(("Pro", "42"), ("Con", "41"), ("Judge", "Pro wins"))
    assert judge.score_many([{"conversation": d, "actor_name": a} for a in ("Pro", "Con", "Judge")], [{"answer": "42"}] * 3) == [1.0, 0.0, 1.0]


def test_params_are_checked_with_their_path():
    assert param_issues("majority_vote", {"mode": "team"}, "p")[0].message == 'mode "team" needs field: the dataset column holding the right answer'
    assert "extract must be one of" in param_issues("debate_verdict", {"extract": "regex"}, "p")[0].message
    assert param_issues("majority_vote", {"mode": "team", "field": "answer"}, "p") == []


def test_completion_scope_is_refused_before_the_run():
    doc = demo_input()
    doc["rewards"][0] = {"name": doc["rewards"][0]["name"], "source": {"kind": "builtin", "name": "majority_vote", "params": {}}}
    spec = validate_spec(doc)
    issues = {i.path: i.message for i in support_issues(spec, cuda_available=False)}
    assert issues["rewards.0.scope"] == 'majority_vote scores a whole conversation per actor: give it scope "conversation"'
