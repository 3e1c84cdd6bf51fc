"""`Environment.generate(batch)`: an environment that samples its actor itself (through `batch.actors[name]`,
the run's engine) and returns per-actor token ids and rewards; Troupe trains on exactly those.

The learning task is the demo's (`say k:`, k one of 8 letters), but the reward is this test's and lives in the
environment: the share of the completion's characters equal to k. A random policy over the ~100-character
vocabulary scores about 0.01; a policy blind to the prompt (always one letter) averages at most 1/8. Required:
the mean of the last 15 steps at least 0.15 above the first 15 (learning happened) and at least 2/8 (above any
prompt-blind policy), and the last 5 steps' mean still above 2/8 (it holds)."""

from __future__ import annotations

import pytest
from runtime_helpers import TEST_THREADS

from troupe import Actor, Data, Environment, EventWriter, PythonEnvironment, Sample, TrainCfg, from_spec, train
from troupe.envs.collaborative import actor_batch
from troupe.envs.environment_generate import GenerateBatch, checked_samples

PROMPT_BLIND_BEST = 1 / 8
SEEN: list[dict] = []  # what generate() returned, for the test that checks the learner got exactly it

def letter_share(text: str, letter: str) -> float:
    return sum(c == letter for c in text) / len(text) if text else 0.0

class SayTheLetter(Environment):
    """Samples `say k:` with the actor's own engine and scores it here; nothing of the spec's rewards."""

    async def generate(self, batch: GenerateBatch) -> dict[str, list[Sample]]:
        student = batch.actors["student"]
        said = await student.generate(batch["prompt"])
        samples = [Sample.of(g, reward={"letter": letter_share(g.text, k)}) for g, k in zip(said, batch["letter"])]
        SEEN.append({"prompts": [s.prompt_ids for s in samples], "completions": [s.completion_ids for s in samples], "rewards": [s.reward for s in samples]})
        return {"student": samples}

def environment(steps: int) -> tuple[PythonEnvironment, dict]:
    student = Actor(name="student", model="tiny:tiny-char-2l", training=TrainCfg(learning_rate=3e-3, extra={"maxGradNorm": 1.0}), sampling={"temperature": 1.0, "maxNewTokens": 8})

    env = PythonEnvironment(environment=SayTheLetter, actors=[student], train_data=Data.builtin("echo_letter", 256), name="say", max_turns=1,
                            apply_chat_template=False)
    settings = dict(steps=steps, seed=1234, group_size=8, prompts_per_step=8, trainer={"episodesPerStep": 4, "cpuThreads": TEST_THREADS, "device": "cpu"})
    return env, settings

def test_the_spec_names_the_class_and_reads_back():
    env, settings = environment(3)
    spec = env.to_spec(**settings)
    assert spec["environments"][0]["kind"] == "python"
    assert spec["environments"][0]["entrypoint"] == f"{__name__}:SayTheLetter"
    assert from_spec(spec).to_spec() == spec

def test_the_learner_trains_on_exactly_the_ids_and_rewards_generate_returned(tmp_path, monkeypatch):
    """The learner's shares (what `on_policy` turns into advantages and a loss) hold generate()'s prompt and
    completion ids, its rewards, and a loss mask on the completion ids only, episode for episode."""
    import troupe.algorithms.on_policy as on_policy

    learned: list = []
    real = on_policy.actor_shares

    def spy(*args, **kwargs):
        shares = real(*args, **kwargs)
        learned.append(shares)
        return shares

    monkeypatch.setattr(on_policy, "actor_shares", spy)
    SEEN.clear()
    env, settings = environment(2)
    result = train(env, work_dir=tmp_path, events=EventWriter(keep=True), **settings)
    assert result.state == "succeeded", result.message
    assert len(SEEN) == 2 and len(learned) == 2
    for seen, shares in zip(SEEN, learned):
        (share,) = shares
        assert share.rewards == [r["letter"] for r in seen["rewards"]]
        for k, (prompt, completion) in enumerate(zip(seen["prompts"], seen["completions"])):
            r = share.rollout
            assert r.prompt_ids[k][r.prompt_mask[k].bool()].tolist() == list(prompt)
            assert r.completion_ids[k][share.loss_mask[k].bool()].tolist() == list(completion)
            assert int(share.loss_mask[k].sum()) == len(completion) == int(r.completion_mask[k].sum())
    episodes = [e for e in result.events if e["type"] == "episode"]
    assert episodes and all(m["trained"] for e in episodes for m in e["messages"] if m["role"] == "assistant")


def test_samples_become_views_whose_loss_mask_is_the_completion():
    """What the learner reads (actor_batch over the episodes' views) is prompt ids then completion ids, the loss
    mask 1 on the completion only, the sampler's log-probs beside it."""
    from troupe.envs.collaborative import Episode
    from troupe.envs.environment_generate import play_generated

    class Fixed(Environment):
        name, actors = "fixed", ["a", "b"]

        async def generate(self, batch):
            return {"a": [Sample([5, 6], [7, 8, 9], 1.0, [-0.1, -0.2, -0.3]), None], "b": [None, Sample([1], [2], {"x": 0.5})]}

    episodes = [Episode(0, 0, s, [], "", {}, {"a": None, "b": None}, row={"q": s}) for s in range(2)]  # type: ignore[dict-item]
    play_generated(Fixed(), episodes, {}, {"a": None, "b": None}, {})  # type: ignore[arg-type]
    import torch

    a = actor_batch([e.views["a"] for e in episodes], 0, torch.device("cpu"))
    assert a.rollout.prompt_ids[0].tolist() == [5, 6] and a.rollout.completion_ids[0].tolist() == [7, 8, 9]
    assert a.loss_mask.tolist() == [[1, 1, 1], [0, 0, 0]]
    assert a.rollout.sampler_logprobs[0].tolist() == pytest.approx([-0.1, -0.2, -0.3])
    assert episodes[0].env_rewards == {"a": {"environment": 1.0}} and episodes[1].env_rewards == {"b": {"x": 0.5}}

def test_a_wrong_answer_from_generate_is_refused_by_what_is_wrong():
    with pytest.raises(ValueError, match='"carol", who is not one of its actors'):
        checked_samples("e", ["a"], {"carol": []}, 1)
    with pytest.raises(ValueError, match="returned 1 samples for \"a\"; the batch has 2 episodes"):
        checked_samples("e", ["a"], {"a": [Sample([1], [2], 0.0)]}, 2)
    with pytest.raises(ValueError, match="2 log-probs for 1 completion ids"):
        checked_samples("e", ["a"], {"a": [Sample([1], [2], 0.0, [0.0, 0.0])]}, 1)
    with pytest.raises(TypeError, match="not troupe.Sample"):
        checked_samples("e", ["a"], {"a": [(1, 2)]}, 1)

@pytest.mark.slow
def test_reward_rises_when_trained_on_its_own_generations(tmp_path):
    env, settings = environment(80)
    result = train(env, work_dir=tmp_path, events=EventWriter(keep=True), **settings)
    assert result.state == "succeeded", result.message
    rewards = result.metrics("reward/mean")
    assert len(rewards) == 80
    head, tail, last = sum(rewards[:15]) / 15, sum(rewards[-15:]) / 15, sum(rewards[-5:]) / 5
    print(f"generate(): reward first 15 steps {head:.3f}, last 15 {tail:.3f}, last 5 {last:.3f} (chance ~0.01, prompt-blind best {PROMPT_BLIND_BEST})")
    assert tail - head >= 0.15, (head, tail)
    assert tail >= 2 * PROMPT_BLIND_BEST and last >= 2 * PROMPT_BLIND_BEST, (tail, last)


def test_generate_runs_inside_a_running_event_loop_too():
    """A notebook calls `troupe.train` with its own loop running: the coroutine runs on a helper thread."""
    import asyncio

    from troupe.envs.environment_generate import run_coroutine

    async def answer():
        return 42

    async def notebook_cell():
        return run_coroutine(answer())

    assert run_coroutine(answer()) == 42 and asyncio.run(notebook_cell()) == 42
