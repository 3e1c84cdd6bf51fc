"""`environments[].roles`: one policy in several roles (envs/roles.py). Self-play is one actor in both seats: its
engine plays X and O, its one update trains on both roles' moves, and metrics and transcripts keep the roles apart."""

import copy
import json
from pathlib import Path

import pytest
from runtime_helpers import TEST_THREADS

from troupe import EventWriter, run_spec
import troupe.algorithms.on_policy as on_policy

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "role_rules.cases.json").read_text())


def selfplay_spec(steps: int = 2) -> dict:
    spec = copy.deepcopy(FIXTURE["selfplay"])  # tic-tac-toe, roles {X: policy, O: policy}, grpo with rae
    spec["trainer"].update(steps=steps, cpuThreads=TEST_THREADS)
    return spec


@pytest.fixture(scope="module")
def selfplay(tmp_path_factory):
    calls: list[tuple[str, list[str], list[int]]] = []
    real = on_policy.actor_shares

    def spy(name, *args, **kwargs):
        shares = real(name, *args, **kwargs)
        calls.append((name, [sh.seat for sh in shares], [int(sh.loss_mask.sum()) for sh in shares]))
        return shares

    on_policy.actor_shares = spy
    try:
        result = run_spec(selfplay_spec(), events=EventWriter(keep=True), work_dir=tmp_path_factory.mktemp("selfplay"))
    finally:
        on_policy.actor_shares = real
    assert result.state == "succeeded", result.message
    return result, calls


def test_one_actor_gets_one_share_per_role_in_one_update(selfplay):
    result, calls = selfplay
    # Two steps, one actor: the learner asked for its shares once a step, and got X's and O's.
    assert [(name, seats) for name, seats, _ in calls] == [("policy", ["ttt/X", "ttt/O"])] * 2
    # X always moves; O only after a legal first move, which the untrained model rarely makes (its O share may be empty,
    # which test_both_roles_tokens_train_the_one_actor covers with episodes built by hand).
    assert all(tokens[0] > 0 for _, _, tokens in calls)
    updates = [e for e in result.events if e["type"] == "metric" and "loss" in e["values"]]
    assert [e["actor"] for e in updates] == ["policy", "policy"]  # one update a step, of the one actor


def test_metrics_keep_the_roles_apart(selfplay):
    result, _ = selfplay
    values = next(e["values"] for e in result.events if e["type"] == "metric" and "reward/mean" in e["values"])
    for role in ("X", "O"):
        assert f"role/{role}/reward" in values
        assert f"role/{role}/game/win" in values and f"role/{role}/game/forfeit" in values
    assert "game/X/win" not in values and "game/win" not in values  # one scheme: role/<role>/...
    # Zero-sum, forfeits aside: X's win rate is at most O's loss rate.
    assert values["role/X/game/win"] <= values["role/O/game/loss"] + 1e-9


def test_transcripts_label_the_speakers_by_role(selfplay):
    result, _ = selfplay
    episodes = [e for e in result.events if e["type"] == "episode"]
    assert episodes
    for e in episodes:
        assert e["messages"][0]["content"].startswith("tic_tac_toe (1-9, row by row): X is X, O is O.")
        spoke = [m for m in e["messages"] if m["role"] == "assistant"]
        assert [m["actor"] for m in spoke] == (["X", "O"] * 5)[: len(spoke)]
        assert all(m["trained"] for m in spoke)
        assert set(e["rewardComponents"]) == {"X/game", "O/game"}


def test_both_roles_tokens_train_the_one_actor_in_one_update(tmp_path, monkeypatch):
    """The secret-digit conversation with one policy in both roles: Alice's and Bob's turns are the same actor's,
    and its one update a step holds both roles' sampled tokens."""
    from collab_helpers import secret_digit_spec

    spec = secret_digit_spec(tmp_path, steps=1)
    spec["actors"] = [{**spec["actors"][0], "name": "policy"}]
    env = spec["environments"][0]
    env["actors"], env["roles"] = ["policy"], {"Alice": "policy", "Bob": "policy"}  # systemPrompts stay keyed by role
    shares_seen: list[tuple[list[str], list[int]]] = []
    updated: list[tuple[str, int]] = []
    real_shares, real_update = on_policy.actor_shares, on_policy.OnPolicyLearner.update

    def spy_shares(name, *args, **kwargs):
        shares = real_shares(name, *args, **kwargs)
        shares_seen.append(([sh.seat for sh in shares], [int(sh.loss_mask.sum()) for sh in shares]))
        return shares

    def spy_update(self, step, name, actor, shares, rows, mask, *args, **kwargs):
        updated.append((name, int(mask.sum())))
        return real_update(self, step, name, actor, shares, rows, mask, *args, **kwargs)

    monkeypatch.setattr(on_policy, "actor_shares", spy_shares)
    monkeypatch.setattr(on_policy.OnPolicyLearner, "update", spy_update)
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    [(seats, tokens)] = shares_seen
    assert seats == ["secret/Alice", "secret/Bob"] and all(t > 0 for t in tokens)
    assert updated == [("policy", sum(tokens))]  # one update of the one actor over both roles' tokens
    episode = next(e for e in result.events if e["type"] == "episode")
    assert [m["actor"] for m in episode["messages"] if m["role"] == "assistant"] == ["Alice", "Bob"]
    assert [m["actor"] for m in episode["messages"] if m["role"] == "system"] == ["Alice"]  # Alice's secret, by role


def test_turn_metrics_follow_the_actor_into_its_roles(selfplay):
    result, _ = selfplay
    values = next(e["values"] for e in result.events if e["type"] == "metric" and e["actor"] == "policy" and "reward/mean" in e["values"])
    # X moves at turn 0 of every game, so the one actor playing X and O spoke at turn 0 in all of them.
    assert values["turns/0/share"] == 1.0
    assert values["turns/0/tokens"] >= 1


def test_evaluation_plays_the_roles(tmp_path):
    """Held-out rows of the self-play environment are evaluated with the one actor in both seats: its eval metrics,
    and X's and O's apart (evaluation.py keys episodes by role, as training does)."""
    spec = selfplay_spec(steps=1)
    spec["trainer"]["evalEvery"] = 1
    spec["datasets"][0]["evalFraction"] = 0.25
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    evals = [e for e in result.events if e["type"] == "metric" and "eval/reward/mean" in e["values"]]
    assert [e["actor"] for e in evals] == ["policy"]
    values = evals[0]["values"]
    env = spec["environments"][0]["name"]
    held_out = values[f"eval/{env}/samples"]
    # Every held-out row is one game, scored for X and for O: twice as many samples as rows, half of them each role's.
    assert held_out >= 2 and values[f"eval/{env}/role/X/samples"] == values[f"eval/{env}/role/O/samples"] == held_out / 2
    assert -1.0 <= values[f"eval/{env}/role/X/reward/mean"] <= 1.2 and -1.0 <= values[f"eval/{env}/role/O/reward/mean"] <= 1.2
