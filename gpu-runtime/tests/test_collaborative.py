"""Collaborative environments: round-spec schedules, per-actor views and loss masks, frozen actors, events."""

import copy
from pathlib import Path

import numpy as np
import pytest
import torch
from collab_helpers import secret_digit_spec
from runtime_helpers import check_protocol
from test_hf_models import hf_folder  # noqa: F401  (fixture: a byte-level BPE Llama saved like a Hub checkpoint)

from troupe.spec.runspec_types import Reward
from troupe import EventWriter, run_spec
from troupe.envs.collaborative import actor_batch, build_collaborative, run_turns, schedule_seed
from troupe.envs.data import Dataset
from troupe.algorithms.grpo import policy_loss
from troupe.models.loading import build_tiny, load_actor_model
from troupe.engines.train.policy import completion_logprobs
from troupe.rewards.builtin import bind_reward
from troupe.schedule import sample as dsl_sample

SAMPLING = {"temperature": 1.0, "topP": 1.0, "topK": 0, "maxNewTokens": 4}


def test_schedule_seed_is_a_documented_pure_function():
    import hashlib

    expected = int.from_bytes(hashlib.sha256(b"7:secret:3:1:2").digest()[:8], "little")
    assert schedule_seed(7, "secret", 3, 1, 2) == expected
    seeds = {schedule_seed(7, "secret", step, g, s) for step in (1, 2) for g in range(3) for s in range(4)}
    assert len(seeds) == 24  # every episode its own draw


def _two_actor_episodes(hf_path: Path, n: int = 3):
    """Alice (byte-level BPE Llama) and Bob (tiny char model) alternate twice; real tokenisers, real sampling."""
    torch.manual_seed(0)
    alice = load_actor_model({"model": {"source": "local", "path": str(hf_path)}}, 0, hf_path)
    bob = build_tiny("tiny-char-2l")
    rows = [{"prompt": "count with me", "digit": str(i)} for i in range(n)]
    dataset = Dataset("rows", rows, list(range(n)), [])
    env_spec = {
        "name": "chat",
        "kind": "collaborative",
        "dataset": "rows",
        "actors": ["Alice", "Bob"],
        "roundSpec": "(Alice -> Bob)*2",
        "prompt": {"field": "prompt", "applyChatTemplate": False},
        "systemPrompts": {"Alice": "You hold {{ digit }}.", "Bob": "Listen."},
        "rewards": [{"reward": "r", "weight": 1}],
        "maxTurns": 16,
    }
    reward = bind_reward(Reward.from_dict({"name": "r", "source": {"kind": "builtin", "name": "letter_match", "params": {"field": "digit"}}}))
    env = build_collaborative(env_spec, 0, {"rows": dataset}, {"r": reward}, np.random.default_rng(0))
    tokenizers = {"Alice": alice.tokenizer, "Bob": bob.tokenizer}
    episodes = [
        env.new_episode(rows[i], i, i, 0, dsl_sample(env.node, schedule_seed(0, "chat", 1, i, 0), env.actors, 16), tokenizers)
        for i in range(n)
    ]
    run_turns(episodes, {"Alice": alice.model, "Bob": bob.model}, tokenizers, {"Alice": SAMPLING, "Bob": SAMPLING})
    return alice, episodes


def test_an_actor_is_trained_only_on_its_own_sampled_tokens(hf_folder):  # noqa: F811
    alice, episodes = _two_actor_episodes(hf_folder)
    assert all([m.actor for m in e.messages] == ["Alice", "Bob", "Alice", "Bob"] for e in episodes)
    batch = actor_batch([e.views["Alice"] for e in episodes], alice.tokenizer.pad_token_id, torch.device("cpu"))
    rollout, loss_mask = batch.rollout, batch.loss_mask

    for i, e in enumerate(episodes):
        # The loss targets are exactly Alice's sampled ids, in order (never re-tokenised text) ...
        targets = rollout.completion_ids[i][loss_mask[i].bool()].tolist()
        assert targets == [t for m in e.messages if m.actor == "Alice" for t in m.ids]
        # ... and Bob's message, re-encoded with Alice's tokenizer, sits in the attended context, unmasked.
        bob_ids = alice.tokenizer.encode(e.messages[1].text, False)
        row = rollout.completion_ids[i][rollout.completion_mask[i].bool()].tolist()
        own = loss_mask[i][rollout.completion_mask[i].bool()].tolist()
        header = alice.tokenizer.encode("Bob:", False)
        start = next(k for k in range(len(row)) if row[k : k + len(header)] == header) + len(header)
        assert row[start : start + len(bob_ids)] == bob_ids and not any(own[start : start + len(bob_ids)])

    # The trainer sees the same contexts the sampler saw: log-probs agree on every own token.
    logp, _ = completion_logprobs(alice.model, rollout, 1.0)
    gap = ((rollout.sampler_logprobs - logp.detach()).abs() * loss_mask).max()
    assert float(gap) < 1e-4

    # The loss gradient reaches only Alice's tokens: d loss / d logp is 0 wherever loss_mask is 0.
    logp = logp.detach().requires_grad_(True)
    advantages = torch.tensor([1.0, -0.5, 0.25])
    loss, _ = policy_loss(logp, logp.detach(), advantages, loss_mask)
    loss.backward()
    assert torch.all(logp.grad[loss_mask == 0] == 0)
    assert torch.all(logp.grad[loss_mask == 1] != 0)



def test_schedules_are_reproducible_from_the_run_seed(tmp_path):
    spec = secret_digit_spec(tmp_path, steps=2)
    spec["environments"][0]["roundSpec"] = "Alice -> (Bob / Alice -> Bob)"
    runs = [run_spec(copy.deepcopy(spec), events=EventWriter(keep=True), work_dir=tmp_path) for _ in range(2)]
    speakers = [[[m["actor"] for m in e["messages"]] for e in r.events if e["type"] == "episode"] for r in runs]
    assert speakers[0] == speakers[1]
    assert runs[0].metrics("reward/mean") == runs[1].metrics("reward/mean")


def test_collaborative_run_with_a_frozen_actor(tmp_path, events_validator):
    spec = secret_digit_spec(tmp_path, steps=2, bob_trainable=False)
    spec["trainer"]["checkpointEvery"] = 2
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    metric_actors = {e.get("actor") for e in result.events if e["type"] == "metric"}
    assert metric_actors == {"Alice"}  # the frozen actor has no optimizer and no metrics
    assert {e["actor"] for e in result.events if e["type"] == "checkpoint"} == {"Alice"}
    episode = next(e for e in result.events if e["type"] == "episode")
    assert [(m["actor"], m["role"], m["trained"]) for m in episode["messages"]] == [
        ("Alice", "system", False),
        ("digits", "user", False),
        ("Alice", "assistant", True),
        ("Bob", "assistant", False),
    ]
    assert episode["messages"][0]["content"].startswith("secret ")
    assert set(episode["rewardComponents"]) == {"said"} and "advantage" in episode


def test_frozen_actor_weights_never_change(tmp_path):
    from troupe import actors as train_module  # where actors are loaded

    seen = {}
    original = train_module.load_actor_model

    def spy(actor, index, work_dir):
        loaded = original(actor, index, work_dir)
        seen[actor["name"]] = (loaded, {k: v.clone() for k, v in loaded.model.state_dict().items()})
        return loaded

    train_module.load_actor_model = spy
    try:
        result = run_spec(secret_digit_spec(tmp_path, steps=2, bob_trainable=False), events=EventWriter(keep=True), work_dir=tmp_path)
    finally:
        train_module.load_actor_model = original
    assert result.state == "succeeded", result.message
    for name, changed in (("Bob", False), ("Alice", True)):
        loaded, initial = seen[name]
        same = all(torch.equal(v, initial[k]) for k, v in loaded.model.state_dict().items())
        assert same is not changed, name


def test_two_trainable_actors_report_their_own_metrics(tmp_path, events_validator):
    result = run_spec(secret_digit_spec(tmp_path, steps=2), events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    by_actor = {}
    for e in result.events:
        if e["type"] == "metric":
            by_actor.setdefault(e["actor"], []).append(e["values"])
    assert set(by_actor) == {"Alice", "Bob"} and all(len(v) == 2 for v in by_actor.values())
    updates = [(e["step"], e.get("actor")) for e in result.events if e["type"] == "memory" and e["phase"] == "update"]
    assert updates == [(1, "Alice"), (1, "Bob"), (2, "Alice"), (2, "Bob")]
    for values in by_actor.values():
        assert {"reward/mean", "reward/said", "loss", "grad_norm", "logprob_gap", "completion_len"} <= set(values[0])
        assert max(v["logprob_gap"] for v in values) < 1e-4
    episode = next(e for e in result.events if e["type"] == "episode")
    assert set(episode["rewardComponents"]) == {"Alice/said", "Bob/said"}
    assert all(m["trained"] for m in episode["messages"] if m["role"] == "assistant")


@pytest.mark.parametrize("round_spec", ["Alice -> Bob*(0..1)", "Alice -> (Alice & Bob)"])
def test_optional_and_simultaneous_turns(tmp_path, round_spec):
    spec = secret_digit_spec(tmp_path, steps=3)
    spec["environments"][0]["roundSpec"] = round_spec
    spec["algorithm"]["groupSize"] = 2
    spec["trainer"]["promptsPerStep"] = 1
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    assert set(result.metrics("reward/mean")) is not None


def test_single_turn_and_collaborative_environments_mixed_by_weight(tmp_path, events_validator):
    spec = secret_digit_spec(tmp_path, steps=2)
    spec["datasets"].append({"name": "letters", "source": {"kind": "builtin", "name": "echo_letter", "size": 32}})
    spec["rewards"].append({"name": "echo", "source": {"kind": "builtin", "name": "letter_match"}})
    spec["environments"][0]["weight"] = 3
    spec["environments"].append({"name": "solo", "dataset": "letters", "actors": ["Alice"], "rewards": [{"reward": "echo"}], "weight": 1})
    spec["trainer"].update(promptsPerStep=4, episodesPerStep=64)
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    step1 = [e for e in result.events if e["type"] == "episode" and e["step"] == 1]
    groups = {(e["environment"], e["group"]) for e in step1}
    assert sorted(env for env, _ in groups) == ["secret"] * 3 + ["solo"]  # 4 prompts split 3:1 by weight
    alice = next(e["values"] for e in result.events if e["type"] == "metric" and e["actor"] == "Alice")
    assert {"reward/said", "reward/echo"} <= set(alice)  # one update over both environments' samples
    bob = next(e["values"] for e in result.events if e["type"] == "metric" and e["actor"] == "Bob")
    assert "reward/echo" not in bob


def test_visibility_hides_messages_from_a_reader(hf_folder):  # noqa: F811
    import troupe.envs.collaborative as collab

    alice = load_actor_model({"model": {"source": "local", "path": str(hf_folder)}}, 0, hf_folder)
    bob = build_tiny("tiny-char-2l")
    rows = [{"prompt": "hi", "digit": "1"}]
    env_spec = {
        "name": "chat", "kind": "collaborative", "dataset": "rows", "actors": ["Alice", "Bob"], "roundSpec": "Alice -> Bob -> Alice",
        "prompt": {"field": "prompt", "applyChatTemplate": False}, "systemPrompts": {}, "visibility": {"Bob": []},
        "rewards": [{"reward": "r", "weight": 1}], "maxTurns": 16,
    }
    reward = bind_reward(Reward.from_dict({"name": "r", "source": {"kind": "builtin", "name": "letter_match", "params": {"field": "digit"}}}))
    env = collab.build_collaborative(env_spec, 0, {"rows": Dataset("rows", rows, [0], [])}, {"r": reward}, np.random.default_rng(0))
    tokenizers = {"Alice": alice.tokenizer, "Bob": bob.tokenizer}
    episode = env.new_episode(rows[0], 0, 0, 0, [["Alice"], ["Bob"], ["Alice"]], tokenizers)
    run_turns([episode], {"Alice": alice.model, "Bob": bob.model}, tokenizers, {"Alice": SAMPLING, "Bob": SAMPLING})
    bob_reads = bob.tokenizer.decode(episode.views["Bob"].ids)
    assert "Alice:" not in bob_reads and bob_reads.startswith("hi\nBob:")
    alice_reads = alice.tokenizer.decode(episode.views["Alice"].ids)
    assert "Bob:" in alice_reads  # Alice is not listed: she sees everyone


def test_adversarial_environment_trains_the_attacker_against_a_frozen_defender(tmp_path, events_validator):
    spec = secret_digit_spec(tmp_path, steps=2, bob_trainable=False)
    env = spec["environments"][0]
    env["kind"] = "adversarial"
    del env["roundSpec"]  # defaults to "Alice -> Bob": the attacker speaks, the defender answers
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    assert {e.get("actor") for e in result.events if e["type"] == "metric"} == {"Alice"}
    episode = next(e for e in result.events if e["type"] == "episode")
    assert [(m["actor"], m["trained"]) for m in episode["messages"] if m["role"] == "assistant"] == [("Alice", True), ("Bob", False)]


def test_adversarial_environment_needs_a_trainable_attacker_then_a_frozen_defender(tmp_path):
    spec = secret_digit_spec(tmp_path, steps=1)  # both trainable
    spec["environments"][0]["kind"] = "adversarial"
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.exit_code == 2
    assert next(e for e in result.events if e["type"] == "error")["field"] == "environments.0.actors"
