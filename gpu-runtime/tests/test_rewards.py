import pytest

from troupe.spec.runspec_types import Reward
from troupe.rewards.builtin import BUILTIN_REWARDS, bind_reward, combine_rewards, exact_match, length_penalty, letter_match, param_issues


def test_letter_match_is_the_fraction_of_matching_characters():
    p = {"field": "letter"}
    assert letter_match("say k:", "kkkk", {"letter": "k"}, p) == 1.0
    assert letter_match("say k:", "kkab", {"letter": "k"}, p) == 0.5
    assert letter_match("say k:", "K k ", {"letter": "k"}, p) == 0.25
    assert letter_match("say k:", "", {"letter": "k"}, p) == 0.0
    # Conditional on the row: the same completion scores differently for another letter.
    assert letter_match("say a:", "kkkk", {"letter": "a"}, p) == 0.0


def test_exact_match_strips_and_respects_case():
    p = {"field": "answer", "caseSensitive": True}
    assert exact_match("", " cba\n", {"answer": "cba"}, p) == 1.0
    assert exact_match("", "CBA", {"answer": "cba"}, p) == 0.0
    assert exact_match("", "CBA", {"answer": "cba"}, {**p, "caseSensitive": False}) == 1.0
    assert exact_match("", "cb", {"answer": "cba"}, p) == 0.0


def test_length_penalty_from_params():
    assert length_penalty("", "abc", {}, {"target": 5, "scale": 0.1}) == 0.0
    assert length_penalty("", "abcdefgh", {}, {"target": 5, "scale": 0.1}) == pytest.approx(-0.3)


def test_bound_reward_fills_default_params():
    r = bind_reward(Reward.from_dict({"name": "short", "source": {"kind": "builtin", "name": "length_penalty", "params": {"target": 2}}}))
    assert r.params == {"target": 2, "scale": 0.01}
    assert r("", "abcd", {}) == pytest.approx(-0.02)
    assert bind_reward(Reward.from_dict({"name": "m", "source": {"kind": "builtin", "name": "letter_match", "params": {}}})).fields == ["letter"]


def test_param_issues_name_the_param():
    issues = param_issues("length_penalty", {"target": -1, "scale": "big", "x": 1}, "rewards.2.source.params")
    by_path = {i.path: i.message for i in issues}
    assert by_path["rewards.2.source.params.target"] == "must be >= 0"
    assert by_path["rewards.2.source.params.scale"] == "must be a number"
    assert "unknown parameter" in by_path["rewards.2.source.params.x"]
    assert param_issues("exact_match", {"caseSensitive": 1}, "p")[0].message == "must be a boolean"
    assert {"letter_match", "exact_match", "length_penalty", "majority_vote", "debate_verdict"} <= set(BUILTIN_REWARDS)


def test_combine_rewards_uses_weights():
    assert combine_rewards({"a": 1.0, "b": -0.5}, {"a": 2.0, "b": 1.0}) == 1.5
