"""`majority_vote` and `summary` environments (envs/majority_vote.py, envs/summary.py): who speaks, who sees
whom, each actor's reward from the outcome with its weights, the metrics, and a short run through the runtime."""

from pathlib import Path

import numpy as np
import pytest
from vote_helpers import vote_spec

from troupe import EventWriter, run_spec
from troupe.envs.collaborative import Message, append_message
from troupe.envs.data import Dataset
from troupe.envs.environment_kinds import build_any_environment
from troupe.spec import SpecError, validate_spec

ROW = {"prompt": "2+3=", "answer": "5"}


def build(folder: Path, kind: str, weights: dict, rows=(ROW,), **settings):
    spec = validate_spec(vote_spec(folder, kind, weights=weights))
    env_spec = spec["environments"][0]
    field = "majorityVote" if kind == "majority_vote" else "summary"
    env_spec[field] = {**env_spec[field], **settings}
    dataset = Dataset("sums", list(rows), list(range(len(rows))), [])
    return build_any_environment(env_spec, 0, {"sums": dataset}, {}, np.random.default_rng(0), spec, folder)


def play_by_hand(env, said: dict[str, str]):
    """One episode where each actor says `said[actor]`, in the order the environment asks for."""
    e = env.new_episode(ROW, 0, 0, 0, [], {})
    turn = 0
    while (who := env.impl.next_speaker(e, turn)) is not None:
        append_message(e, Message(who, said[who], [], []), {})
        turn += 1
    return e


def test_majority_vote_scores_each_actor_by_the_vote_and_its_own_answer(tmp_path):
    env = build(tmp_path, "majority_vote", {"outcome": 1, "own": 0.5})
    right = play_by_hand(env, {"s1": "5", "s2": "it is 5", "s3": "7"})
    env.score_all([right])
    assert right.rewards == {"s1": 1.5, "s2": 1.5, "s3": 1.0}
    assert right.components["s3"] == {"outcome": 1.0, "own": 0.0}
    wrong = play_by_hand(env, {"s1": "7", "s2": "7", "s3": "5"})
    tie = play_by_hand(env, {"s1": "5", "s2": "7", "s3": "x"})  # s3 casts no vote: 1 against 1 decides nothing
    env.score_all([wrong, tie])
    assert wrong.rewards == {"s1": 0.0, "s2": 0.0, "s3": 0.5}
    assert tie.rewards == {"s1": 0.5, "s2": 0.0, "s3": 0.0}
    metrics = env.impl.metrics([right, wrong, tie])
    assert metrics["vote/accuracy"] == pytest.approx(1 / 3)
    assert metrics["vote/tie_rate"] == pytest.approx(1 / 3)
    assert metrics["vote/agreement"] == pytest.approx((2 / 3 + 2 / 3 + 1 / 3) / 3)
    assert metrics["vote/s1/own_accuracy"] == pytest.approx(2 / 3)
    assert metrics["vote/s3/own_accuracy"] == pytest.approx(1 / 3)
    assert metrics["vote/best_agent_accuracy"] == pytest.approx(2 / 3)


def test_voters_see_only_the_prompt_and_their_own_answer(tmp_path):
    env = build(tmp_path, "majority_vote", {"outcome": 1, "own": 0})
    e = play_by_hand(env, {"s1": "5", "s2": "6", "s3": "7"})
    assert [e.sees("s2", a) for a in ("s1", "s2", "s3")] == [False, True, False]


def test_summary_follows_the_summariser_who_reads_every_answer(tmp_path):
    env = build(tmp_path, "summary", {"outcome": 1, "own": 1})
    assert [env.impl.next_speaker(env.new_episode(ROW, 0, 0, 0, [], {}), t) for t in range(5)] == ["s1", "s2", "s3", "lead", None]
    e = play_by_hand(env, {"s1": "5", "s2": "7", "s3": "7", "lead": "5"})
    assert all(e.sees("lead", a) for a in ("s1", "s2", "s3")) and not e.sees("s1", "s2")
    env.score_all([e])
    # The summary is right although the vote (7) is wrong; the summariser's own answer is the summary.
    assert e.rewards == {"s1": 2.0, "s2": 1.0, "s3": 1.0, "lead": 2.0}
    metrics = env.impl.metrics([e])
    assert (metrics["summary/accuracy"], metrics["summary/vote_accuracy"]) == (1.0, 0.0)
    assert metrics["summary/s1/own_accuracy"] == 1.0 and "summary/lead/own_accuracy" not in metrics


def test_a_named_summariser_speaks_last(tmp_path):
    env = build(tmp_path, "summary", {"outcome": 1, "own": 0}, summariser="s1")
    e = env.new_episode(ROW, 0, 0, 0, [], {})
    assert [env.impl.next_speaker(e, t) for t in range(4)] == ["s2", "s3", "lead", "s1"]


def test_a_missing_answer_column_is_refused_by_its_field(tmp_path):
    with pytest.raises(SpecError) as caught:
        build(tmp_path, "majority_vote", {"outcome": 1, "own": 0}, answerField="solution")
    assert caught.value.issues[0].path == "environments.0.majorityVote.answerField"


@pytest.mark.parametrize("kind, area", [("majority_vote", "vote"), ("summary", "summary")])
def test_a_short_run_reports_the_outcome_metrics_and_rewards(tmp_path, kind, area):
    spec = vote_spec(tmp_path, kind, steps=2)
    spec["trainer"]["episodesPerStep"] = 4
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    answerers = ["s1", "s2", "s3"]
    for actor in answerers:
        assert len(result.metrics(f"{area}/own_accuracy", actor=actor)) == 2
        assert len(result.metrics(f"{area}/accuracy", actor=actor)) == 2
    episodes = [e for e in result.events if e["type"] == "episode"]
    assert episodes
    for episode in episodes:
        said = [m["actor"] for m in episode["messages"] if m["role"] == "assistant"]
        assert said == answerers + (["lead"] if kind == "summary" else [])
        components = episode["rewardComponents"]
        for actor in answerers:  # weights outcome 1, own 1: each term is 0 or 1
            assert components[f"{actor}/outcome"] in (0.0, 1.0) and components[f"{actor}/own"] in (0.0, 1.0)
