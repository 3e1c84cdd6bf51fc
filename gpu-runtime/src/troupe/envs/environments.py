"""Environments: where prompts come from, who answers, and how answers are scored.

`single_turn`: one actor answers one prompt drawn from the dataset, and the environment's rewards score the
completion (the one-turn case of the environment protocol, protocol.py; its share of a step is single_turn.py's
`EnvRollout`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Mapping

import jinja2
import numpy as np

from .checks import bind_env_rewards, check_prompt_field
from .data import Dataset, RowSampler
from .protocol import Players
from .single_turn import EnvRollout, draw_single_turn
from ..rewards.builtin import BoundReward, combine_rewards
from ..spec import SpecError
from ..spec.runspec_types import Environment as EnvironmentSection, to_dict
from .sections import EnvironmentInput, environment_section
from ..models.tokenizer import Tokenizer

_JINJA = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


@dataclass
class RenderedPrompt:
    user: str  # what the dataset asked (shown in episodes)
    system: str | None
    text: str  # what the model reads (after the chat template, if any)
    add_special_tokens: bool


@dataclass
class SingleTurnEnvironment:
    index: int
    section: EnvironmentSection  # its typed section of the RunSpec
    dataset: Dataset
    actor: str
    rewards: list[tuple[BoundReward, float]]
    sampler: RowSampler
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # A document handed to the constructor (tests and notebooks build environments by hand) is read once, here;
        # what the object holds itself (its actor, its dataset) fills what a partial document leaves out.
        if isinstance(self.section, Mapping):
            known = {"actors": [self.actor], "dataset": getattr(self.dataset, "name", None) or ""}
            self.section = environment_section({**known, **self.section})

    @property
    def name(self) -> str:
        return self.section.name

    @cached_property
    def spec(self) -> dict[str, Any]:
        """The section as its JSON document, for the parts outside envs/ that still read a dict."""
        return to_dict(self.section)

    @property
    def actors(self) -> list[str]:
        """Who samples in it (the protocol's `actors`): its one actor."""
        return [self.actor]

    def bind(self, handles: dict[str, Any], log: Any = None) -> None:
        """Nothing to bind: only acting environments speak through the run's actors (acting.py)."""

    def close(self) -> None:
        """Nothing to release: acting environments close their `Environment` object (acting.py)."""

    def roll_out(self, players: Players, n_prompts: int, step: int, seconds: dict[str, float]) -> EnvRollout:
        """The one-turn case of the protocol (protocol.py): the actor samples a group of completions per row."""
        t0 = time.monotonic()
        part = draw_single_turn(self, players.actors[self.actor], n_prompts, players.group_size)
        seconds[self.actor] = seconds.get(self.actor, 0.0) + time.monotonic() - t0
        return part

    def user_text(self, row: dict[str, Any], row_index: int) -> str:
        prompt = self.section.prompt
        if prompt.template is not None:
            try:
                return _JINJA.from_string(prompt.template).render(**row)
            except jinja2.TemplateError as e:
                raise SpecError.at(
                    f"environments.{self.index}.prompt.template", f"cannot render dataset row {row_index}: {e}"
                ) from e
        return str(row[prompt.field])

    def render(self, row: dict[str, Any], row_index: int, tokenizer: Tokenizer) -> RenderedPrompt:
        user = self.user_text(row, row_index)
        system = self.section.system_prompts.get(self.actor)
        if self.section.prompt.apply_chat_template:
            messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": user}]
            templated = tokenizer.apply_chat_template(messages)
            if templated is not None:
                return RenderedPrompt(user, system, templated, add_special_tokens=False)
        text = f"{system}\n{user}" if system else user
        return RenderedPrompt(user, system, text, add_special_tokens=True)

    def score_batch(self, prompts: list[str], completions: list[str], rows: list[dict[str, Any]]) -> list[tuple[float, dict[str, float]]]:
        """(total, components) per completion; each reward scores the whole batch in one call."""
        weights = {reward.name: weight for reward, weight in self.rewards}
        per_reward = {}
        for reward, _ in self.rewards:
            if reward.scope == "conversation":
                calls = [{**row, "conversation": [{"actor": "user", "content": p}, {"actor": self.actor, "content": c}], "actor_name": self.actor}
                         for p, c, row in zip(prompts, completions, rows)]
            else:
                calls = [{**row, "prompt": p, "completion": c} for p, c, row in zip(prompts, completions, rows)]
            per_reward[reward.name] = reward.score_many(calls, rows)
        out = []
        for k in range(len(completions)):
            components = {name: scores[k] for name, scores in per_reward.items()}
            out.append((combine_rewards(components, weights), components))
        return out

    def score(self, prompt: str, completion: str, row: dict[str, Any]) -> tuple[float, dict[str, float]]:
        components = {reward.name: reward(prompt, completion, row) for reward, _ in self.rewards}
        weights = {reward.name: weight for reward, weight in self.rewards}
        return combine_rewards(components, weights), components


def build_environment(
    environment: EnvironmentInput,
    index: int,
    datasets: dict[str, Dataset],
    rewards: dict[str, BoundReward],
    rng: np.random.Generator,
) -> SingleTurnEnvironment:
    section = environment_section(environment)
    dataset = datasets[section.dataset]
    check_prompt_field(section, index, dataset)
    bound = bind_env_rewards(section, index, dataset, rewards)
    env = SingleTurnEnvironment(index, section, dataset, section.actors[0], bound, RowSampler(dataset.train_indices, rng))
    env.user_text(dataset.rows[dataset.train_indices[0]], dataset.train_indices[0])  # fail early on a bad template
    if section.round_spec:
        env.notes.append(f'environment "{env.name}": roundSpec is ignored by single_turn environments')
    return env


def allocate_prompts(total: int, weights: list[float]) -> list[int]:
    """Split `total` prompts across environments by weight (largest remainder; ties to the first). A weight of
    0 (an eval-only environment) gets none; all zero (an eval-only run) gets none anywhere."""
    s = sum(weights)
    if s <= 0:
        return [0] * len(weights)
    exact = [total * w / s for w in weights]
    counts = [int(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in order[: total - sum(counts)]:
        counts[i] += 1
    return counts
