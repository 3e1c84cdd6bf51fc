"""Environments that act: between actor turns the environment itself speaks (a tool result, a
program's output, a game state, a judge's verdict).

The public face is `troupe.Environment` (environment_api.py); this module is the runtime side:
`ActingEnvironment` wraps one instance of an `Environment` subclass with the spec's dataset,
prompt, rewards and sampler, and `play` runs a step's episodes:

    for each turn (at most maxTurns actor turns per episode):
        every live episode names its next speaker (`next_speaker`; None ends it)
        each speaker samples one batch over the episodes it speaks in
        each episode gets the message and `step(episode, message)` answers: its reply enters the
        conversation as an environment message (`Message.role == "environment"`)

Episodes, views, loss masks and transcripts are the collaborative ones (collaborative.py): an
environment message is appended to each actor's view as context (`own = 0`), so it is attended but
never trained on, and transcripts show it with `role: "environment"`, `trained: false`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from .collaborative import CollaborativeEnvironment, Episode, Message, View, append_message, speak, SEPARATOR
from .acting_kinds import ACTING_IMPLS
from .environment_api import Environment, Reply
from .environment_generate import play_generated
from ..rewards.builtin import combine_rewards
from ..models.tokenizer import Tokenizer

# Environment kinds played by an `Environment` object (this module; each kind's object: acting_kinds.py).
ACTING_KINDS = tuple(ACTING_IMPLS)


@dataclass
class ActingEnvironment(CollaborativeEnvironment):
    """A spec environment whose turns an `Environment` object takes part in."""

    impl: Environment = field(default_factory=Environment)

    def user_text(self, row: dict[str, Any], row_index: int) -> str:
        """The spec's prompt; empty where a python environment's dataset has no such column (its
        `reset` writes the opening)."""
        prompt = self.section.prompt
        if prompt.template is None and prompt.field not in row:
            return ""
        return super().user_text(row, row_index)

    def close(self) -> None:
        self.impl.close()

    def metrics(self, episodes: list[Episode]) -> dict[str, float]:
        """The `Environment` object's own metrics of the step's episodes (e.g. a game's win rates)."""
        return self.impl.metrics(episodes)

    def bind(self, handles: dict[str, Any], log: Any = None) -> None:
        """Give the environment its actor handles and the run's log, then let it set up."""
        self.impl.handles = {a: h for a, h in handles.items()}
        if log is not None:
            self.impl.log_sink = log
        self.impl.setup()

    def new_episode(
        self, row: dict[str, Any], row_index: int, group: int, sample_index: int, schedule: list[list[str]], tokenizers: dict[str, Tokenizer | None]
    ) -> Episode:
        user = self.user_text(row, row_index)
        systems = {a: s for a in self.roles if (s := self.system_text(a, row, row_index)) is not None}
        e = Episode(row_index, group, sample_index, schedule, user, systems, {}, visibility=self.visibility, row=dict(row))
        opening = self.impl.reset(e)
        # A list: the opening, then environment messages that follow it (a game's opponent moving first).
        opening, *said = opening if isinstance(opening, list) else [opening]
        if opening is not None:
            e.user = str(opening)
        for actor in self.roles:
            if tokenizers.get(actor) is None:
                continue
            view = View()
            prefix = (e.systems[actor] + SEPARATOR if actor in e.systems else "") + (e.user + SEPARATOR if e.user else "")
            view.extend(tokenizers[actor].encode(prefix, False) if prefix else [])  # type: ignore[union-attr]
            e.views[actor] = view
        for r in _replies(said):
            append_message(e, Message(r.speaker or self.impl.speaker, r.text, [], [], role="environment", to=r.to), tokenizers)
        return e

    def play(
        self,
        episodes: list[Episode],
        models: dict[str, Any],
        tokenizers: dict[str, Tokenizer | None],
        samplings: dict[str, dict[str, Any]],
    ) -> dict[str, float]:
        """Play the step's episodes to their end; rollout seconds per actor (each samples with its engine, where its
        actor is placed)."""
        if self.impl.generates():  # the environment plays them itself (environment_generate.py)
            return play_generated(self.impl, episodes, models, tokenizers, samplings)
        seconds: dict[str, float] = {}
        turns: dict[int, int] = {id(e): 0 for e in episodes}
        max_turns = int(self.section.max_turns)
        while True:
            speakers: dict[str, list[Episode]] = {}
            for e in episodes:
                if e.done:
                    continue
                who = self.impl.next_speaker(e, turns[id(e)]) if turns[id(e)] < max_turns else None
                if who is None:
                    e.done = True
                    continue
                if who not in self.roles:
                    raise RuntimeError(f'environment "{self.name}": next_speaker returned "{who}", who is not one of its actors ({", ".join(self.roles)})')
                speakers.setdefault(who, []).append(e)
            if not speakers:
                return seconds
            spoke: list[tuple[Episode, Message]] = []
            for actor, batch in speakers.items():
                for e, m in zip(batch, speak(actor, batch, models, tokenizers, samplings, seconds)):
                    append_message(e, m, tokenizers)
                    turns[id(e)] += 1
                    spoke.append((e, m))
            for (e, m), reply in zip(spoke, self.impl.step_many([(e, m) for e, m in spoke])):
                for r in _replies(reply):
                    append_message(e, Message(r.speaker or self.impl.speaker, r.text, [], [], role="environment", to=r.to), tokenizers)

    def score_all(self, episodes: list[Episode]) -> None:
        """The spec's rewards (weighted, as in collaborative environments) plus the environment's own:
        `score(episode)` per actor, each component added with weight 1."""
        if self.rewards:
            super().score_all(episodes)
        else:
            for e in episodes:
                for actor in self.roles:
                    e.components[actor], e.rewards[actor] = {}, 0.0
        for e in episodes:
            given = self.impl.score(e) or {}
            for actor, value in given.items():
                if actor not in self.roles:
                    raise RuntimeError(f'environment "{self.name}": score() gave a reward to "{actor}", who is not one of its actors')
                e.env_rewards[actor] = env_components(value)
            for actor, components in e.env_rewards.items():
                e.components[actor] = {**e.components.get(actor, {}), **components}
                e.rewards[actor] = e.rewards.get(actor, 0.0) + combine_rewards(components, {k: 1.0 for k in components})


def environment_metrics(conversations: Sequence[Any], actor: str) -> dict[str, float]:
    """The `metrics` of every acting environment `actor` played in this step (their mean where two
    environments report the same name). A name `<area>/<an actor of the environment>/<what>` is that
    actor's own: reported for it alone, as `<area>/<what>` (e.g. each player's win rate in a game).

    In an environment with `roles` (roles.py) the roles stay apart, one scheme for every per-role metric:
    `role/<role>/<area>/<what>` for each role the actor plays (`role/X/game/win`), and `role/<role>/reward`, the
    mean reward of that role's episodes."""
    reported: dict[str, list[float]] = {}
    for conv in conversations:
        if actor not in conv.env.actors:
            continue
        mapped = getattr(conv.env, "role_actor", None) or {}
        own_roles = [r for r, a in mapped.items() if a == actor]
        for name, value in conv.env.metrics(conv.episodes).items():
            parts = name.split("/")
            if len(parts) == 3 and parts[1] in mapped:
                if parts[1] not in own_roles:
                    continue
                name = f"role/{parts[1]}/{parts[0]}/{parts[2]}"
            elif len(parts) == 3 and parts[1] in conv.env.actors:
                if parts[1] != actor:
                    continue
                name = f"{parts[0]}/{parts[2]}"
            reported.setdefault(name, []).append(float(value))
        for role in own_roles:
            rewards = [float(e.rewards[role]) for e in conv.episodes if role in e.rewards]
            if rewards:
                reported.setdefault(f"role/{role}/reward", []).append(sum(rewards) / len(rewards))
    return {name: sum(values) / len(values) for name, values in reported.items()}


def env_components(value: float | dict[str, float]) -> dict[str, float]:
    """An environment's reward for one actor as components: a plain number is "environment"."""
    return {k: float(v) for k, v in value.items()} if isinstance(value, dict) else {"environment": float(value)}


def _replies(reply: str | Reply | list[Reply] | None) -> list[Reply]:
    if reply is None:
        return []
    if isinstance(reply, str):
        return [Reply(reply)]
    if isinstance(reply, Reply):
        return [reply]
    return [r if isinstance(r, Reply) else Reply(str(r)) for r in reply]
