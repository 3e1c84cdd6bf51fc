"""A single-turn environment's share of a step: draw its prompts and sample a group of completions
for each, score them (with DAPO's overlong penalty when asked for), and DAPO's dynamic sampling, which
replaces groups whose completions all scored the same."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from ..algorithms.dapo import apply_overlong_penalty, group_rows, zero_variance_groups
from ..engines.rollout.sampling import Rollout, concat_rollouts, select_rows
from ..engines.rollout import EnginePrompt
from ..engines.rollout.colocate import engine_of
from ..spec.runspec_types import to_dict

if TYPE_CHECKING:
    from ..actors import Actor
    from .environments import RenderedPrompt, SingleTurnEnvironment
    from .protocol import Players, StepShares


@dataclass
class EnvRollout:
    """One environment's share of a step: G completions for each of its prompts (groups contiguous)."""

    env: SingleTurnEnvironment
    row_indices: list[int]
    prompts: list[RenderedPrompt]
    rollout: Rollout
    rewards: list[float] = field(default_factory=list)
    components: list[dict[str, float]] = field(default_factory=list)
    advantages: list[float] = field(default_factory=list)

    def score(self, players: Players) -> None:
        """The protocol's scoring (protocol.py): the environment's rewards, DAPO's overlong penalty when asked for."""
        max_new_tokens = int(players.actors[self.env.actor].section.sampling.max_new_tokens)
        score_single_turn(self, players.group_size, dict(players.overlong), max_new_tokens)

    def add_to(self, step: StepShares) -> None:
        step.add_single_turn(self)


def draw_single_turn(env: SingleTurnEnvironment, actor: Actor, n_prompts: int, group_size: int) -> EnvRollout:
    """Draws the environment's next `n_prompts` rows and samples `group_size` completions of each."""
    tokenizer = actor.loaded.tokenizer
    row_indices = env.sampler.take(n_prompts)
    prompts = [env.render(env.dataset.rows[r], r, tokenizer) for r in row_indices]
    prompt_ids = [tokenizer.encode(p.text, p.add_special_tokens) for p in prompts for _ in range(group_size)]
    rollout = engine_of(actor).generate([EnginePrompt(ids) for ids in prompt_ids], to_dict(actor.section.sampling))
    return EnvRollout(env, row_indices, prompts, rollout)


def score_single_turn(part: EnvRollout, group_size: int, overlong: dict[str, Any], max_new_tokens: int) -> None:
    """Rewards and components of each completion, with DAPO's overlong penalty when asked for."""
    ks = range(len(part.rollout.texts))
    scored = part.env.score_batch(
        [part.prompts[k // group_size].user for k in ks],
        part.rollout.texts,
        [part.env.dataset.rows[part.row_indices[k // group_size]] for k in ks],
    )
    part.rewards = [total for total, _ in scored]
    part.components = [components for _, components in scored]
    if overlong["mode"] == "penalty" and part.rollout.ended is not None:
        part.rewards, part.components = apply_overlong_penalty(
            part.rewards, part.components, part.rollout.lengths, part.rollout.ended, max_new_tokens, overlong
        )


def keep_groups(part: EnvRollout, groups: list[int], group_size: int) -> EnvRollout:
    rows = group_rows(groups, group_size)
    return EnvRollout(
        part.env,
        [part.row_indices[g] for g in groups],
        [part.prompts[g] for g in groups],
        select_rows(part.rollout, rows),
        [part.rewards[i] for i in rows],
        [part.components[i] for i in rows],
    )


def refill_groups(
    part: EnvRollout, actor: Actor, group_size: int, max_rounds: int, overlong: dict[str, Any]
) -> tuple[EnvRollout, dict[str, float]]:
    """DAPO dynamic sampling for one environment: drop zero-variance groups, draw new prompts in
    their place (up to `max_rounds` more rounds), train on the informative groups found.

    If none is found the original batch is kept (zero advantages: only the KL term acts), so the
    step still reports; `kept_groups` = 0 says so."""
    target = len(part.row_indices)
    max_new = int(actor.section.sampling.max_new_tokens)
    pad = actor.loaded.tokenizer.pad_token_id

    def informative(p: EnvRollout) -> EnvRollout:
        flat = zero_variance_groups(torch.tensor(p.rewards), group_size).tolist()
        return keep_groups(p, [g for g, zero in enumerate(flat) if not zero], group_size)

    kept = informative(part)
    dropped, resampled, rounds, seconds = target - len(kept.row_indices), 0, 0, 0.0
    while len(kept.row_indices) < target and rounds < max_rounds:
        missing = target - len(kept.row_indices)
        t0 = time.monotonic()
        extra = draw_single_turn(part.env, actor, missing, group_size)
        seconds += time.monotonic() - t0
        score_single_turn(extra, group_size, overlong, max_new)
        rounds, resampled = rounds + 1, resampled + missing
        good = informative(extra)
        dropped += missing - len(good.row_indices)
        kept = EnvRollout(
            part.env,
            kept.row_indices + good.row_indices,
            kept.prompts + good.prompts,
            concat_rollouts([kept.rollout, good.rollout], pad),
            kept.rewards + good.rewards,
            kept.components + good.components,
        )
    counts = {"dropped_groups": float(dropped), "resampled_groups": float(resampled), "rounds": float(rounds), "kept_groups": float(len(kept.row_indices)), "seconds": seconds}
    return (kept if kept.row_indices else part), counts
