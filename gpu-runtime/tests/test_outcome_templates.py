"""The debate and majority-vote templates (packages/contracts/src/templates.ts, exported as fixtures) run
through the runtime, and each actor's reward in every transcript is the one its outcome decides."""

import json

import pytest

from runtime_helpers import FIXTURES, TEST_THREADS

from troupe.spec.runspec_types import Reward
from troupe import EventWriter, run_spec
from troupe.rewards.outcomes import debate_rewards, majority_vote_rewards
from troupe.spec import validate_spec
from troupe.spec.support import support_issues


def template(name: str) -> dict:
    spec = json.loads((FIXTURES / f"template.{name}.json").read_text())
    spec["trainer"].update({"steps": 2, "promptsPerStep": 2, "episodesPerStep": 8, "cpuThreads": TEST_THREADS})
    spec["algorithm"]["groupSize"] = 4
    return spec


def conversation_of(episode: dict) -> list[dict[str, str]]:
    user = next(m["content"] for m in episode["messages"] if m["role"] == "user")
    return [{"actor": "user", "content": user}] + [{"actor": m["actor"], "content": m["content"]} for m in episode["messages"] if m["role"] == "assistant"]


@pytest.mark.parametrize("name", ["majority_vote", "debate"])
def test_template_is_supported_here(name):
    assert support_issues(validate_spec(template(name)), cuda_available=False) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", ["majority_vote", "debate"])
def test_template_runs_and_rewards_follow_the_outcome(tmp_path, name):
    spec = template(name)
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    episodes = [e for e in result.events if e["type"] == "episode"]
    assert len(episodes) == 2 * 8
    reward = spec["rewards"][0]
    params = reward["source"]["params"]
    trained = [a["name"] for a in spec["actors"] if a["trainable"]]
    for episode in episodes:
        user = next(m["content"] for m in episode["messages"] if m["role"] == "user")
        row = {"answer": user.removeprefix("reverse ").removesuffix(":")[::-1]}
        conversation = conversation_of(episode)
        if name == "majority_vote":
            expected = majority_vote_rewards(conversation, row, params["field"], params["extract"], params["mode"])
        else:
            expected = debate_rewards(conversation, row, params["judge"], params["field"], params["extract"])
        got = {a: episode["rewardComponents"][f"{a}/{reward['name']}"] for a in trained}
        assert got == {a: expected.get(a, 0.0) for a in trained}
    # Every trainable actor reports its own reward.
    for actor in trained:
        assert len(result.metrics("reward/mean", actor=actor)) == 2


@pytest.mark.parametrize(
    "name, said, expected",
    [
        ("majority_vote", [("s1", "cba"), ("s2", " CBA "), ("s3", "abc")], {"s1": 1.0, "s2": 1.0, "s3": 1.0}),
        ("majority_vote", [("s1", "cba"), ("s2", "xyz"), ("s3", "xyz")], {"s1": 0.0, "s2": 0.0, "s3": 0.0}),
        ("debate", [("pro", "cba"), ("con", "abc"), ("pro", "cba!"), ("con", "no"), ("judge", "con")], {"pro": 0.0, "con": 1.0, "judge": 0.0}),
        ("debate", [("pro", "cba"), ("con", "abc"), ("pro", "x"), ("con", "cba"), ("judge", "con")], {"pro": 0.0, "con": 1.0, "judge": 1.0}),
    ],
)
def test_template_environment_scores_each_actor_by_the_outcome(name, said, expected):
    """The template's environment as the runtime builds it, scoring conversations written by hand."""
    import numpy as np

    from troupe.envs.collaborative import Message, build_collaborative
    from troupe.envs.data import Dataset
    from troupe.rewards.builtin import bind_reward

    spec = validate_spec(template(name))
    env_spec = spec["environments"][0]
    row = {"prompt": "reverse abc:", "word": "abc", "answer": "cba"}
    dataset = Dataset(env_spec["dataset"], [row], [0], [])
    rewards = {r["name"]: bind_reward(Reward.from_dict(r)) for r in spec["rewards"]}
    env = build_collaborative(env_spec, 0, {env_spec["dataset"]: dataset}, rewards, np.random.default_rng(0))
    episode = env.new_episode(row, 0, 0, 0, [], {a: None for a in env.actors})
    episode.messages = [Message(a, text, [], []) for a, text in said]
    env.score_all([episode])
    assert episode.rewards == expected
