"""Environments that act: environment messages between actor turns, masked out of every actor's
loss (real tokenisation), shown as the environment's in transcripts; Python environment classes."""

from pathlib import Path

import numpy as np
import pytest
import torch
from runtime_helpers import TEST_THREADS, check_protocol
from test_hf_models import hf_folder  # noqa: F401  (fixture: a byte-level BPE Llama saved like a Hub checkpoint)

from troupe import Environment, EventWriter, run_spec
from troupe.envs.acting_build import build_acting
from troupe.envs.collaborative import actor_batch
from troupe.envs.data import Dataset
from troupe.algorithms.grpo import policy_loss
from troupe.models.loading import build_tiny, load_actor_model
from troupe.engines.train.policy import completion_logprobs
from troupe.sandbox import Limits

SAMPLING = {"temperature": 1.0, "topP": 1.0, "topK": 0, "maxNewTokens": 4}


class Referee(Environment):
    """Alice, Bob, Alice; after each message the referee says something long, in real words."""

    speaker = "referee"

    def next_speaker(self, episode, turn):
        return ["Alice", "Bob", "Alice"][turn] if turn < 3 else None

    def step(self, episode, message):
        return f"noted {len(episode.messages)}: the referee's verdict is final"

    def score(self, episode):
        return {"Alice": 1.0, "Bob": {"spoke": float(len(episode.own_messages("Bob")))}}


def test_environment_messages_are_context_never_targets_on_real_tokenisation(hf_folder, tmp_path):  # noqa: F811
    torch.manual_seed(0)
    alice = load_actor_model({"model": {"source": "local", "path": str(hf_folder)}}, 0, hf_folder)
    bob = build_tiny("tiny-char-2l")
    rows = [{"prompt": "play fair"} for _ in range(3)]
    env_spec = {
        "name": "refereed", "kind": "python", "entrypoint": "x:Referee", "dataset": "rows", "actors": ["Alice", "Bob"],
        "prompt": {"field": "prompt", "applyChatTemplate": False}, "systemPrompts": {}, "rewards": [], "maxTurns": 8,
    }
    import troupe.envs.acting_build as ab

    original = ab.environment_impl
    ab.environment_impl = lambda spec, index, work_dir: Referee()
    try:
        env = build_acting(env_spec, 0, {"rows": Dataset("rows", rows, [0, 1, 2], [])}, {}, np.random.default_rng(0), tmp_path, Limits())
    finally:
        ab.environment_impl = original
    env.bind({})
    tokenizers = {"Alice": alice.tokenizer, "Bob": bob.tokenizer}
    episodes = [env.new_episode(rows[i], i, i, 0, [], tokenizers) for i in range(3)]
    env.play(episodes, {"Alice": alice.model, "Bob": bob.model}, tokenizers, {"Alice": SAMPLING, "Bob": SAMPLING})
    for e in episodes:
        assert [(m.actor, m.role) for m in e.messages] == [
            ("Alice", "assistant"), ("referee", "environment"), ("Bob", "assistant"), ("referee", "environment"), ("Alice", "assistant"), ("referee", "environment"),
        ]
    env.score_all(episodes)
    assert episodes[0].rewards == {"Alice": 1.0, "Bob": 1.0} and episodes[0].components["Bob"] == {"spoke": 1.0}

    batch = actor_batch([e.views["Alice"] for e in episodes], alice.tokenizer.pad_token_id, torch.device("cpu"))
    rollout, loss_mask = batch.rollout, batch.loss_mask
    for i, e in enumerate(episodes):
        # The targets are exactly Alice's sampled ids ...
        assert rollout.completion_ids[i][loss_mask[i].bool()].tolist() == [t for m in e.own_messages("Alice") for t in m.ids]
        # ... and every environment message, encoded by the real BPE tokenizer, is attended with mask 0.
        row = rollout.completion_ids[i][rollout.completion_mask[i].bool()].tolist()
        own = loss_mask[i][rollout.completion_mask[i].bool()].tolist()
        found = 0
        for m in [m for m in e.messages if m.role == "environment"]:
            span = alice.tokenizer.encode(f"{m.actor}:", False) + alice.tokenizer.encode(m.text, False)
            assert len(span) > 10  # multi-token, real words
            starts = [k for k in range(len(row)) if row[k : k + len(span)] == span]
            assert starts, "environment message not in Alice's context"
            for k in starts:
                assert not any(own[k : k + len(span)])
                found += 1
        assert found >= 3
    # The loss gradient never reaches an environment token.
    logp, _ = completion_logprobs(alice.model, rollout, 1.0)
    logp = logp.detach().requires_grad_(True)
    loss, _ = policy_loss(logp, logp.detach(), torch.tensor([1.0, -0.5, 0.25]), loss_mask)
    loss.backward()
    assert torch.all(logp.grad[loss_mask == 0] == 0) and torch.all(logp.grad[loss_mask == 1] != 0)


ENV_FILE = '''
from troupe import Environment, Reply


class Relay(Environment):
    """Alice speaks, the environment tells Bob how many 'a's she wrote, Bob answers; both are
    rewarded by the 'a's in Bob's answer."""

    def reset(self, episode):
        episode.state["said"] = 0
        return "relay"

    def next_speaker(self, episode, turn):
        return ("Alice", "Bob")[turn] if turn < 2 else None

    def step(self, episode, message):
        if message.actor == "Alice":
            return Reply(f"count {message.text.count('a')}", to=["Bob"])
        episode.finish()
        return None

    def score(self, episode):
        bob = episode.own_messages("Bob")[-1].text
        share = bob.count("a") / max(len(bob), 1)
        return {"Alice": share, "Bob": {"as": share}}
'''


def relay_spec(folder: Path, steps: int = 2) -> dict:
    (folder / "relay_env.py").write_text(ENV_FILE)
    (folder / "rows.jsonl").write_text("".join('{"prompt": "go"}\n' for _ in range(8)))
    actor = lambda name: {"name": name, "model": {"source": "tiny", "preset": "tiny-char-2l"}, "trainable": True,  # noqa: E731
                          "training": {"learningRate": 3e-3}, "sampling": {"temperature": 1.0, "maxNewTokens": 3}}
    return {
        "specVersion": 1, "name": "relay", "seed": 3,
        "actors": [actor("Alice"), actor("Bob")],
        "datasets": [{"name": "rows", "source": {"kind": "file", "path": "rows.jsonl", "format": "jsonl"}}],
        "rewards": [{"name": "short", "scope": "conversation", "source": {"kind": "builtin", "name": "length_penalty", "params": {"target": 100}}}],
        "environments": [{"name": "relay", "kind": "python", "entrypoint": "relay_env.py:Relay", "dataset": "rows", "actors": ["Alice", "Bob"], "rewards": [{"reward": "short"}]}],
        "algorithm": {"name": "grpo", "groupSize": 4},
        "trainer": {"steps": steps, "promptsPerStep": 2, "episodesPerStep": 2, "cpuThreads": TEST_THREADS},
    }


def test_a_python_environment_class_from_a_file_trains_two_actors(tmp_path, events_validator):
    spec = relay_spec(tmp_path)
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    events = result.events
    check_protocol(events, events_validator)
    assert result.state == "succeeded", [e for e in events if e["type"] in ("error", "log")]
    metrics = [e for e in events if e["type"] == "metric"]
    assert {e["actor"] for e in metrics} == {"Alice", "Bob"}
    assert all("reward/as" in e["values"] for e in metrics if e["actor"] == "Bob")
    episode = next(e for e in events if e["type"] == "episode")
    roles = [(m["actor"], m["role"], m["trained"]) for m in episode["messages"]]
    assert roles[0] == ("rows", "user", False)
    assert roles[1][0] == "Alice" and roles[1][2] and roles[2] == ("environment", "environment", False) and roles[3][0] == "Bob"
    assert episode["messages"][2]["content"].startswith("count ")


def test_python_environment_entrypoint_is_refused_by_field(tmp_path):
    from troupe import SpecError, validate_spec

    spec = relay_spec(tmp_path)
    spec["environments"][0]["entrypoint"] = "relay_env.py:Nope"
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "failed" and "environments.0.entrypoint" in result.message, result.message
    assert 'no class "Nope"' in result.message
    del spec["environments"][0]["entrypoint"]
    with pytest.raises(SpecError) as info:
        validate_spec(spec)
    assert any(i.path == "environments.0.entrypoint" for i in info.value.issues)


def test_the_readme_example_runs_as_written(tmp_path, monkeypatch):
    """The README's Python environment example (under 60 lines) is complete: written out and run, both actors train."""
    import re
    import runpy

    readme = (Path(__file__).parents[1] / "README.md").read_text()
    section = readme[readme.index("A complete example (`my_envs.py` and the run"):]
    env_code, run_code = re.findall(r"```python\n(.*?)```", section, re.DOTALL)[:2]
    assert env_code.startswith("# my_envs.py") and len((env_code + run_code).splitlines()) < 60
    (tmp_path / "my_envs.py").write_text(env_code)
    (tmp_path / "run_guess.py").write_text(run_code.replace('"trainer": {"steps": 2, "promptsPerStep": 2}', f'"trainer": {{"steps": 2, "promptsPerStep": 2, "cpuThreads": {TEST_THREADS}}}'))
    monkeypatch.chdir(tmp_path)
    result = runpy.run_path(str(tmp_path / "run_guess.py"))["result"]
    assert result.state == "succeeded", result.message
    assert {e["actor"] for e in result.events if e["type"] == "metric"} == {"Hinter", "Guesser"}
