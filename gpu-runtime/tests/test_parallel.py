"""The `parallel` environment: drafters sample at once from one context, a combiner merges their drafts."""

import numpy as np
import pytest
import torch
from collab_helpers import secret_digit_spec
from runtime_helpers import check_protocol
from test_hf_models import hf_folder  # noqa: F401  (fixture: a byte-level BPE Llama saved like a Hub checkpoint)

from troupe.spec.runspec_types import Reward
from troupe import EventWriter, run_spec
from troupe.envs.collaborative import actor_batch, build_collaborative, effective_round_spec, run_turns, schedule_seed
from troupe.envs.data import Dataset
from troupe.models.loading import build_tiny, load_actor_model
from troupe.engines.train.policy import completion_logprobs
from troupe.rewards.builtin import bind_reward
from troupe.schedule import sample as dsl_sample

SAMPLING = {"temperature": 1.0, "topP": 1.0, "topK": 0, "maxNewTokens": 4}


def test_default_round_spec_drafts_in_parallel_then_combines():
    env = {"kind": "parallel", "actors": ["A", "B", "C"]}
    assert effective_round_spec(env) == "(A & B) -> C"
    assert effective_round_spec({"kind": "parallel", "actors": ["A", "C"]}) == "(A) -> C"
    assert effective_round_spec({**env, "roundSpec": "A -> C"}) == "A -> C"  # an explicit spec wins


def _parallel_episodes(hf_path, n=3):
    """Two drafters (byte-level BPE Llama, tiny char model) and a combiner (the Llama again); real tokenisers."""
    torch.manual_seed(0)
    llama = load_actor_model({"model": {"source": "local", "path": str(hf_path)}}, 0, hf_path)
    char = build_tiny("tiny-char-2l")
    rows = [{"prompt": "name a digit", "digit": str(i)} for i in range(n)]
    env_spec = {
        "name": "merge",
        "kind": "parallel",
        "dataset": "rows",
        "actors": ["Ann", "Bea", "Cal"],
        "prompt": {"field": "prompt", "applyChatTemplate": False},
        "systemPrompts": {},
        "rewards": [{"reward": "own", "weight": 1}],
        "maxTurns": 16,
    }
    reward = bind_reward(Reward.from_dict({"name": "own", "source": {"kind": "builtin", "name": "letter_match", "params": {"field": "digit"}}}))
    env = build_collaborative(env_spec, 0, {"rows": Dataset("rows", rows, list(range(n)), [])}, {"own": reward}, np.random.default_rng(0))
    models = {"Ann": llama.model, "Bea": char.model, "Cal": llama.model}
    tokenizers = {"Ann": llama.tokenizer, "Bea": char.tokenizer, "Cal": llama.tokenizer}
    episodes = [
        env.new_episode(rows[i], i, i, 0, dsl_sample(env.node, schedule_seed(0, "merge", 1, i, 0), env.actors, 16), tokenizers)
        for i in range(n)
    ]
    run_turns(episodes, models, tokenizers, {a: SAMPLING for a in env.actors})
    return env, episodes, tokenizers, models


def test_drafters_share_one_context_and_each_actor_trains_on_its_own_tokens(hf_folder):  # noqa: F811
    env, episodes, tokenizers, models = _parallel_episodes(hf_folder)
    for e in episodes:
        assert e.schedule == [["Ann", "Bea"], ["Cal"]]
        assert [m.actor for m in e.messages] == ["Ann", "Bea", "Cal"]
        # Drafters sampled before either draft existed: in each one's view its own draft comes first.
        ann_reads, bea_reads = tokenizers["Ann"].decode(e.views["Ann"].ids), tokenizers["Bea"].decode(e.views["Bea"].ids)
        assert ann_reads.index("Ann:") < ann_reads.index("Bea:")
        assert bea_reads.index("Bea:") < bea_reads.index("Ann:")
        # The combiner read both drafts before writing.
        combiner_reads = tokenizers["Cal"].decode(e.views["Cal"].ids)
        assert combiner_reads.index("Ann:") < combiner_reads.index("Cal:") and combiner_reads.index("Bea:") < combiner_reads.index("Cal:")
    for actor in env.actors:
        batch = actor_batch([e.views[actor] for e in episodes], tokenizers[actor].pad_token_id, torch.device("cpu"))
        for i, e in enumerate(episodes):
            # Loss targets are exactly the actor's sampled ids: one draft, or the combination.
            targets = batch.rollout.completion_ids[i][batch.loss_mask[i].bool()].tolist()
            assert targets == [t for m in e.messages if m.actor == actor for t in m.ids]
        # The trainer scores each actor's tokens in the context it sampled them from.
        logp, _ = completion_logprobs(models[actor], batch.rollout, 1.0)
        gap = ((batch.rollout.sampler_logprobs - logp.detach()).abs() * batch.loss_mask).max()
        assert float(gap) < 1e-4, (actor, float(gap))


def test_drafts_and_the_combination_are_scored_separately(hf_folder):  # noqa: F811
    env, episodes, _, _ = _parallel_episodes(hf_folder)
    env.score_all(episodes)
    for e in episodes:
        for actor in env.actors:
            own = next(m.text for m in e.messages if m.actor == actor)
            expected = sum(ch == str(e.row_index) for ch in own) / len(own) if own else 0.0
            assert e.components[actor]["own"] == pytest.approx(expected)


def test_a_parallel_run_trains_drafters_and_combiner(tmp_path, events_validator):
    spec = secret_digit_spec(tmp_path, steps=2)
    spec["actors"].append({**spec["actors"][0], "name": "Cal"})
    env = spec["environments"][0]
    env.update(kind="parallel", actors=["Alice", "Bob", "Cal"])
    del env["roundSpec"]
    env["rewards"] = [{"reward": "said"}]
    spec["rewards"] = [{"name": "said", "source": {"kind": "builtin", "name": "letter_match", "params": {"field": "digit"}}}]
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    assert {e.get("actor") for e in result.events if e["type"] == "metric"} == {"Alice", "Bob", "Cal"}
    episode = next(e for e in result.events if e["type"] == "episode")
    assert [m["actor"] for m in episode["messages"] if m["role"] == "assistant"] == ["Alice", "Bob", "Cal"]


def test_a_parallel_environment_needs_a_combiner(tmp_path):
    spec = secret_digit_spec(tmp_path, steps=1)
    env = spec["environments"][0]
    env.update(kind="parallel", actors=["Alice"])
    del env["roundSpec"]
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.exit_code == 2
    error = next(e for e in result.events if e["type"] == "error")
    assert error["field"] == "environments.0.actors" and "combiner" in error["message"]
