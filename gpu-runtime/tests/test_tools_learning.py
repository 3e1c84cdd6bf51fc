"""Learning check of issue 17: a tiny model learns to call the calculator instead of answering directly.

The task and the model are in tools_task.py. Stage 1 is a real `sft` run on warm-up rows in which 30%
of the questions are solved with the calculator and 70% answered with a guess (never right). Stage 2 is
a real `grpo` run in the `tools` environment, starting from stage 1's checkpoint
(`model: {source: "run"}`, the runs side by side under one runs root), rewarded by the builtin
`math_answer` on the final answer. A direct answer scores 0, so every point of reward comes from a
call whose result the actor copied into its answer; GRPO can only raise the reward by calling more
(and calling and copying more reliably).

Bars, fixed before the run from the task's meaning (K = 8 steps = 256 episodes at each end):
  * the share of episodes with a successful calculator call rises by at least 0.25 from the first K
    steps to the last K. The warm-up set it near 0.3 (the share of tool rows); 0.25 is more than 5
    standard errors of a difference of two means over 256 episodes each (sqrt(2 * 0.25 / 256) ~ 0.044,
    counted as if episodes were independent; group mates share a question, which the margin covers);
  * the last K steps' share is above 0.5: the policy now calls more often than not, which no
    warm-up row taught it (7 in 10 of them answer directly);
  * the mean reward rises by at least 0.2 over the same steps (a reward of 1 needs a successful call,
    so it moves with the call rate times the share of calls answered right; 0.2 is over 4 standard
    errors by the same count);
  * every episode the run shows with reward 1 called the tool, and none that answered directly scored:
    the reward is tool use, not a lucky guess.
"""

from __future__ import annotations

import time

import pytest
from runtime_helpers import TEST_THREADS
from tools_task import ACTOR, EOS, MAX_TURNS, TOOLS, build_model_folder, questions, turn_contexts, write_rl_rows, write_sft_rows

from troupe import EventWriter, run_spec
from troupe.sandbox import sandbox_status

needs_sandbox = pytest.mark.skipif(not sandbox_status().usable, reason="the tools environment needs bubblewrap (scripts/setup.sh installs it)")

SEED = 17
TOOL_SHARE = 0.3
SFT_STEPS = 250
RL_STEPS = 40
K = 8
MIN_CALL_RISE = 0.25
MIN_LAST_CALL_RATE = 0.5
MIN_REWARD_RISE = 0.2


def sft_spec(base: str) -> dict:
    return {
        "specVersion": 1, "name": "tool-use warm-up", "seed": SEED,
        "actors": [{"name": ACTOR, "model": {"source": "local", "path": base}, "trainable": True,
                    "training": {"learningRate": 3e-3, "maxGradNorm": 1.0}, "sampling": {"temperature": 1.0, "maxNewTokens": 40}}],
        "datasets": [{"name": "warmup", "source": {"kind": "file", "path": "warmup.jsonl", "format": "jsonl"}}],
        "rewards": [],
        "environments": [{"name": "warmup", "kind": "single_turn", "dataset": "warmup", "actors": [ACTOR],
                          "prompt": {"field": "prompt", "applyChatTemplate": False}, "rewards": [], "completionField": "completion"}],
        "algorithm": {"name": "sft"},
        "trainer": {"steps": SFT_STEPS, "promptsPerStep": 32, "checkpointEvery": SFT_STEPS, "cpuThreads": TEST_THREADS},
    }


def rl_spec(warmup_run: str) -> dict:
    return {
        "specVersion": 1, "name": "tool use", "seed": SEED,
        "actors": [{"name": ACTOR, "model": {"source": "run", "runId": warmup_run, "step": SFT_STEPS}, "trainable": True,
                    "training": {"learningRate": 5e-4, "maxGradNorm": 1.0}, "sampling": {"temperature": 1.0, "maxNewTokens": 40}}],
        "datasets": [{"name": "products", "source": {"kind": "file", "path": "products.jsonl", "format": "jsonl"}}],
        "rewards": [{"name": "correct", "source": {"kind": "builtin", "name": "math_answer", "params": {"field": "answer"}}}],
        "environments": [{"name": "calc", "kind": "tools", "dataset": "products", "actors": [ACTOR],
                          "prompt": {"field": "prompt", "applyChatTemplate": False}, "tools": TOOLS,
                          "rewards": [{"reward": "correct"}], "maxTurns": MAX_TURNS}],
        "algorithm": {"name": "grpo", "groupSize": 8},
        "trainer": {"steps": RL_STEPS, "promptsPerStep": 4, "episodesPerStep": 8, "cpuThreads": TEST_THREADS},
    }


def test_warm_up_rows_are_token_for_token_what_the_tools_environment_shows_the_actor(tmp_path):
    """SFT trains the turns RL samples only if its prompts are the environment's token view exactly,
    the EOS the actor sampled after its call included (the tokenizer reads its text as the token)."""
    from transformers import AutoTokenizer

    from troupe.envs.acting import ActingEnvironment
    from troupe.envs.collaborative import Message, append_message
    from troupe.models.tokenizer import HFTokenizer
    from troupe.envs.tools_env import ToolsEnvironment

    folder = build_model_folder(tmp_path / "base", seed=SEED)
    tok = HFTokenizer(AutoTokenizer.from_pretrained(str(folder)))  # loaded back as the runtime loads it
    impl = ToolsEnvironment(TOOLS)
    impl.name, impl.actors, impl.max_turns = "calc", [ACTOR], MAX_TURNS
    env = ActingEnvironment(0, {"name": "calc", "prompt": {"field": "prompt"}, "systemPrompts": {}}, None, [ACTOR], [], None, None, impl=impl)  # type: ignore[arg-type]
    tokenizers = {ACTOR: tok}
    header = tok.encode(f"{ACTOR}:", False)  # collaborative.speak puts it before each turn
    for q in ("37*58", "91*19"):
        first, call, second = turn_contexts(q)
        e = env.new_episode({"prompt": q}, 0, 0, 0, [], tokenizers)
        assert e.views[ACTOR].ids + header == tok.encode(first)
        ids = tok.encode(call, False) + tok.eos_token_ids  # the call as SFT trains it, and as sampled
        said = Message(ACTOR, call, ids, [0.0] * len(ids))
        append_message(e, said, tokenizers)
        reply = impl.step(e, said)
        append_message(e, Message(impl.speaker, reply, [], [], role="environment"), tokenizers)
        assert e.views[ACTOR].ids + header == tok.encode(second)
        assert tok.encode(EOS, False) == tok.eos_token_ids
    # The format is a few tokens, the digits one each: what makes the copies learnable (module docstring).
    assert len(tok.encode(turn_contexts("37*58")[1], False)) == 27


@needs_sandbox
@pytest.mark.slow
def test_sft_then_grpo_teaches_a_tiny_model_to_call_the_calculator(tmp_path):
    root = tmp_path / "runs"
    warmup, rl = root / "warmup", root / "rl"
    warmup.mkdir(parents=True)
    rl.mkdir()
    base = build_model_folder(tmp_path / "base", seed=SEED)
    seen = questions(600, seed=1)
    counts = write_sft_rows(warmup / "warmup.jsonl", seen, TOOL_SHARE, seed=2)
    write_rl_rows(rl / "products.jsonl", questions(200, seed=3, exclude=frozenset(seen)))  # questions the warm-up never showed

    started = time.monotonic()
    result = run_spec(sft_spec(str(base)), events=EventWriter(keep=True), work_dir=warmup)
    assert result.state == "succeeded", result.message
    sft_seconds = time.monotonic() - started

    started = time.monotonic()
    result = run_spec(rl_spec("warmup"), events=EventWriter(keep=True), work_dir=rl)
    assert result.state == "succeeded", result.message
    rl_seconds = time.monotonic() - started

    calls, rewards = result.metrics("tools/success_rate"), result.metrics("reward/mean")
    assert len(calls) == len(rewards) == RL_STEPS
    head = lambda xs: sum(xs[:K]) / K  # noqa: E731
    tail = lambda xs: sum(xs[-K:]) / K  # noqa: E731
    print(
        f"tools: warm-up {counts} in {sft_seconds:.0f}s, GRPO {rl_seconds:.0f}s; successful calls first {K} steps {head(calls):.2f}, "
        f"last {tail(calls):.2f}; reward {head(rewards):.2f} -> {tail(rewards):.2f}"
    )
    assert tail(calls) - head(calls) >= MIN_CALL_RISE, calls
    assert tail(calls) > MIN_LAST_CALL_RATE, calls
    assert tail(rewards) - head(rewards) >= MIN_REWARD_RISE, rewards

    episodes = [e for e in result.events if e["type"] == "episode"]
    called = lambda e: any(m["role"] == "environment" and "<tool_response>" in m["content"] for m in e["messages"])  # noqa: E731
    assert episodes and any(e["reward"] == 1.0 for e in episodes)
    assert all(called(e) for e in episodes if e["reward"] == 1.0)
    assert all(e["reward"] == 0.0 for e in episodes if not called(e))
