"""`Environment.generate(batch)`: an environment that plays its episodes itself and hands back, per actor, the
token ids and rewards to train on (the shape the Actors library's environments have).

The runtime's side (`play_generated`, called by acting.py for a class that overrides `generate`):

    batch = GenerateBatch(rows, groups, samples, actors)      one entry per episode, groups contiguous
    out = asyncio.run(env.generate(batch))                    {actor: [Sample | None] * len(batch)}
    each Sample becomes the actor's view of that episode:    prompt ids (context, own = 0)
                                                              completion ids (own = 1: the loss targets,
                                                              with the sampler's log-probs when given)
    its reward becomes the episode's reward for the actor     (component "environment", or its own names)

So the learner trains on exactly the ids `generate` returned: nothing is re-tokenised or re-rendered. An actor
of the environment without a Sample in an episode trains on nothing there (an empty view, reward 0).
`batch.actors[name].generate(prompts)` samples with the run's engine of that actor (its current weights and
sampling settings) and returns the ids and log-probs, so an environment that samples with it gets on-policy
log-probs for free; ids an environment made any other way train too, with zero sampler log-probs (only
truncated importance sampling reads those, and it is off unless `algorithm.tisCap` is set).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:
    from .collaborative import Episode
    from .environment_api import Environment
    from ..models.tokenizer import Tokenizer


@dataclass(frozen=True)
class Generation:
    """What an actor's engine sampled for one prompt."""

    prompt_ids: list[int]
    completion_ids: list[int]  # EOS included when drawn
    logprobs: list[float]  # the sampler's, one per completion id
    text: str  # the completion, decoded
    ended: bool  # an end-of-sequence was drawn (False: cut off at maxNewTokens)


@dataclass(frozen=True)
class Sample:
    """One actor's share of one episode: what it trains on and its reward (a number, component "environment",
    or {component: number}, added up with weight 1)."""

    prompt_ids: Sequence[int]
    completion_ids: Sequence[int]
    reward: float | Mapping[str, float]
    logprobs: Sequence[float] | None = None
    text: str | None = None  # shown in the transcript (default: the completion decoded)
    ended: bool = True

    @classmethod
    def of(cls, generation: Generation, reward: float | Mapping[str, float]) -> Sample:
        """A Sample of exactly what the engine sampled (ids, log-probs, text, whether it ended)."""
        return cls(generation.prompt_ids, generation.completion_ids, reward, generation.logprobs, generation.text, generation.ended)


class ActorEngine:
    """An actor of the run as `generate` sees it: its rollout engine, tokenizer and sampling settings."""

    def __init__(self, name: str, engine: Any, tokenizer: "Tokenizer", sampling: Mapping[str, Any], seconds: dict[str, float]) -> None:
        self.name, self.engine, self.tokenizer, self.sampling, self._seconds = name, engine, tokenizer, dict(sampling), seconds

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, False))

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.tokenizer.decode(list(ids)))

    async def generate(self, prompts: Sequence[str | Sequence[int]], max_new_tokens: int | None = None) -> list[Generation]:
        """One completion per prompt (text, encoded without special tokens, or token ids), sampled as one batch.
        Synchronous inside: the engine is the run's and is not shared between threads."""
        from ..engines.rollout import EnginePrompt  # `import troupe` stays torch-free (the engines import torch)

        ids = [self.encode(p) if isinstance(p, str) else [int(t) for t in p] for p in prompts]
        sampling = {**self.sampling, **({"maxNewTokens": int(max_new_tokens)} if max_new_tokens else {})}
        t0 = time.monotonic()
        rollout = self.engine.generate([EnginePrompt(p) for p in ids], sampling)
        self._seconds[self.name] = self._seconds.get(self.name, 0.0) + time.monotonic() - t0
        out = []
        for k, prompt in enumerate(ids):
            n = int(rollout.completion_mask[k].sum())
            ended = bool(rollout.ended[k]) if rollout.ended is not None else True
            out.append(Generation(prompt, rollout.completion_ids[k, :n].tolist(), rollout.sampler_logprobs[k, :n].tolist(), rollout.texts[k], ended))
        return out


@dataclass(frozen=True)
class GenerateBatch:
    """A step's episodes of one environment: `rows[i]` is episode i's dataset row (each row `groupSize` times,
    groups contiguous, `groups[i]` and `samples[i]` say which), `actors` the environment's actors.
    `batch["column"]` is that column over the episodes, as in the Actors library."""

    rows: list[dict[str, Any]]
    groups: list[int]
    samples: list[int]
    actors: Mapping[str, ActorEngine] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, column: str) -> list[Any]:
        missing = [i for i, row in enumerate(self.rows) if column not in row]
        if missing:
            raise KeyError(f'no column "{column}" in row {missing[0]} of the batch')
        return [row[column] for row in self.rows]


def checked_samples(env_name: str, actors: Sequence[str], out: Any, n: int) -> dict[str, list[Sample | None]]:
    """`generate`'s answer, checked: a mapping of this environment's actors to n Samples (or None) each."""
    where = f'environment "{env_name}": generate()'
    if not isinstance(out, Mapping):
        raise TypeError(f"{where} returned {type(out).__name__}, not {{actor: [Sample, ...]}}")
    checked: dict[str, list[Sample | None]] = {}
    for actor, samples in out.items():
        if actor not in actors:
            raise ValueError(f'{where} returned samples for "{actor}", who is not one of its actors ({", ".join(actors)})')
        samples = list(samples)
        if len(samples) != n:
            raise ValueError(f'{where} returned {len(samples)} samples for "{actor}"; the batch has {n} episodes (one each, None to skip)')
        for i, s in enumerate(samples):
            if s is None:
                continue
            if not isinstance(s, Sample):
                raise TypeError(f'{where}: "{actor}"[{i}] is {type(s).__name__}, not troupe.Sample')
            if not s.completion_ids:
                raise ValueError(f'{where}: "{actor}"[{i}] has no completion ids (nothing to train on: return None instead)')
            if s.logprobs is not None and len(s.logprobs) != len(s.completion_ids):
                raise ValueError(f'{where}: "{actor}"[{i}] has {len(s.logprobs)} log-probs for {len(s.completion_ids)} completion ids')
        checked[actor] = samples
    return checked


def run_coroutine(coroutine: Any) -> Any:
    """`asyncio.run`, or, where this thread already runs an event loop (a notebook calling `troupe.train`), the
    same on a helper thread while this one waits (so the engine is still used by one thread at a time)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def play_generated(
    env: "Environment",
    episodes: list["Episode"],
    models: dict[str, Any],
    tokenizers: dict[str, "Tokenizer | None"],
    samplings: dict[str, dict[str, Any]],
) -> dict[str, float]:
    """Runs `env.generate` over the step's episodes and stores each Sample as the actor's view (ids, loss mask,
    log-probs), message (for the transcript) and reward of its episode. Rollout seconds per actor."""
    from .collaborative import Message, View, engine_for  # `import troupe` stays torch-free (collaborative imports torch)

    seconds: dict[str, float] = {}
    engines = {
        a: ActorEngine(a, engine_for(models[a], tok), tok, samplings[a], seconds) for a, tok in tokenizers.items() if tok is not None and a in models
    }
    batch = GenerateBatch([e.row for e in episodes], [e.group for e in episodes], [e.sample for e in episodes], engines)
    out = checked_samples(env.name, env.actors, run_coroutine(env.generate(batch)), len(episodes))
    for i, e in enumerate(episodes):
        e.views = {a: View() for a in e.views}
        rewards: dict[str, float | Mapping[str, float]] = {}
        for actor, samples in out.items():
            s = samples[i]
            if s is None:
                continue
            view = View()
            view.extend([int(t) for t in s.prompt_ids])
            view.extend([int(t) for t in s.completion_ids], own=True, logprobs=[float(x) for x in s.logprobs] if s.logprobs is not None else None)
            e.views[actor] = view
            tok = tokenizers.get(actor)
            text = s.text if s.text is not None else (str(tok.decode(list(s.completion_ids))) if tok is not None else "")
            e.messages.append(Message(actor, text, list(s.completion_ids), list(view.sampler_logprobs[len(s.prompt_ids):]), s.ended))
            rewards[actor] = s.reward
        e.finish(rewards)
    return seconds
