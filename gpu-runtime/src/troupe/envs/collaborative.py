"""Collaborative environments: several actors take turns by a round spec on one conversation.

Each actor keeps its own view of the conversation as token ids (its own tokenizer), built
append-only, so the context an actor sampled from is always a prefix of the sequence it is
trained on:

    [system prompt of the actor]\n[user prompt]\n  then, per message,  [Name:][body]\n

The body of the actor's own messages is the sampler's token ids (EOS included when drawn; never
re-tokenised); others' messages are their decoded text encoded with the viewer's tokenizer. The
loss mask of an actor is 1 exactly on its own sampled bodies: the header, the prompt and every
other actor's tokens are context (attended, never a target).

The schedule of each episode is drawn by `troupe.schedule.sample` with `schedule_seed` below.
Chat templates are not applied to collaborative transcripts (plain `Name:` lines).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Mapping, Sequence

import jinja2
import numpy as np
import torch

from .. import schedule as dsl
from .checks import bind_env_rewards, check_prompt_field
from .data import Dataset, RowSampler
from .protocol import Players, StepShares
from .roles import player_names, role_map
from ..rewards.builtin import BoundReward, combine_rewards
from ..engines.rollout import EnginePrompt
from ..engines.rollout.api_actor import chat_view
from ..engines.rollout.base import RolloutEngine
from ..engines.rollout.colocate import as_engine
from ..engines.rollout.sampling import Rollout, sample
from ..spec import SpecError
from ..spec.runspec_types import Environment as EnvironmentSection, to_dict
from .sections import EnvironmentInput, environment_section
from ..models.tokenizer import Tokenizer

_JINJA = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
SEPARATOR = "\n"


def schedule_seed(run_seed: int, environment: str, step: int, group: int, sample_index: int) -> int:
    """The round-spec seed of one episode: first 8 bytes (little-endian) of
    sha256("<run seed>:<environment name>:<step>:<group>:<sample>") — stable across processes."""
    digest = hashlib.sha256(f"{run_seed}:{environment}:{step}:{group}:{sample_index}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "little")


# Environments played by round spec (this module); single_turn is environments.py.
MULTI_ACTOR_KINDS = ("collaborative", "adversarial", "parallel")


def round_spec_of(round_spec: str | None, kind: str, players: Sequence[str]) -> str | None:
    """The environment's roundSpec; an `adversarial` environment without one plays
    `<first actor> -> <second actor>` (the attacker speaks, the defender answers); a `parallel`
    one plays `(<drafter> & <drafter> & ...) -> <combiner>`: every actor but the last drafts from
    the same context at once, then the last reads all drafts and writes the combination.
    `players`: the roles when the environment names them, else its actors (roles.py)."""
    if round_spec:
        return round_spec
    if kind == "adversarial" and len(players) == 2:
        return f"{players[0]} -> {players[1]}"
    if kind == "parallel" and len(players) >= 2:
        drafters = " & ".join(players[:-1])
        return f"({drafters}) -> {players[-1]}"
    return None


def round_spec_errors(source: str | None, players: Sequence[str], max_turns: int, index: int) -> list[tuple[str, str]]:
    """(field, message) for every error of the round spec `source`, with the DSL's line and column."""
    if not source:
        return []
    _, errors = dsl.check(source, list(players), max_turns)
    return [(f"environments.{index}.roundSpec", f"line {e.line}, column {e.column}: {e.message} [{e.kind}]") for e in errors]


def effective_round_spec(env_spec: Mapping[str, Any]) -> str | None:
    """`round_spec_of` an environment's JSON document (the spec's rules read the document: spec/support.py)."""
    return round_spec_of(env_spec.get("roundSpec"), env_spec.get("kind", "single_turn"), player_names(env_spec))


def round_spec_issues(env_spec: Mapping[str, Any], index: int) -> list[tuple[str, str]]:
    """`round_spec_errors` of an environment's JSON document (spec/support.py checks every environment with it)."""
    return round_spec_errors(effective_round_spec(env_spec), player_names(env_spec), env_spec["maxTurns"], index)


def section_round_spec(section: EnvironmentSection, players: Sequence[str], index: int) -> dsl.Node:
    """The compiled round spec of a built environment (its own, or the one its `kind` implies), its errors raised
    with the field's path."""
    source = round_spec_of(section.round_spec, section.kind, players)
    issues = round_spec_errors(source, players, section.max_turns, index)
    if issues:
        raise SpecError.at(*issues[0])
    return dsl.compile_spec(source or "", list(players), section.max_turns)


@dataclass
class Message:
    actor: str
    text: str
    ids: list[int]  # the speaker's sampled ids (EOS included when drawn)
    logprobs: list[float]  # the sampler's log-probs of `ids`
    ended: bool = True  # False: the turn was cut off at maxNewTokens (no end-of-sequence drawn)
    # "assistant": an actor's turn; "environment": the environment speaking (a tool result, program
    # output, game state, verdict): context for every actor, never a training target (acting.py).
    role: str = "assistant"
    to: list[str] | None = None  # environment messages: the actors who see it (None: everyone)


@dataclass
class View:
    """One actor's token view of an episode, with the loss mask and sampler log-probs aligned."""

    ids: list[int] = field(default_factory=list)
    own: list[int] = field(default_factory=list)  # 1 on the actor's sampled tokens
    sampler_logprobs: list[float] = field(default_factory=list)

    def extend(self, ids: Sequence[int], own: bool = False, logprobs: Sequence[float] | None = None) -> None:
        self.ids.extend(ids)
        self.own.extend([1 if own else 0] * len(ids))
        self.sampler_logprobs.extend(logprobs if logprobs is not None else [0.0] * len(ids))


@dataclass
class Episode:
    row_index: int
    group: int
    sample: int
    schedule: list[list[str]]
    user: str
    systems: dict[str, str]
    views: dict[str, View]
    messages: list[Message] = field(default_factory=list)
    rewards: dict[str, float] = field(default_factory=dict)  # per actor
    components: dict[str, dict[str, float]] = field(default_factory=dict)
    advantages: dict[str, float] = field(default_factory=dict)

    visibility: dict[str, list[str]] | None = None
    # Environments that act (acting.py): the dataset row, the environment's own state, whether the
    # episode has ended, and the rewards the environment gave (actor -> component -> value).
    row: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    done: bool = False
    env_rewards: dict[str, dict[str, float]] = field(default_factory=dict)
    # role -> the episode whose turn this one copies (Players.shared_turns: one proposal read by several solvers).
    leaders: dict[str, "Episode"] = field(default_factory=dict, repr=False, compare=False)

    def sees(self, viewer: str, speaker: str) -> bool:
        """The environment's `visibility`: own messages always; an unlisted viewer sees everyone."""
        if viewer == speaker or not self.visibility or viewer not in self.visibility:
            return True
        return speaker in self.visibility[viewer]

    def sees_message(self, viewer: str, m: "Message") -> bool:
        """Environment messages go to their `to` actors (everyone when None); actors' by `visibility`."""
        if m.role == "environment":
            return m.to is None or viewer in m.to
        return self.sees(viewer, m.actor)

    def conversation(self) -> list[dict[str, str]]:
        """What conversation rewards see: the user prompt, then every message in order (environment
        messages included, with `role: "environment"`)."""
        return [{"actor": "user", "content": self.user}] + [
            {"actor": m.actor, "content": m.text, **({"role": "environment"} if m.role == "environment" else {})} for m in self.messages
        ]

    def finish(self, rewards: dict[str, Any] | None = None) -> None:
        """End the episode (acting environments); `rewards`: actor -> number (component
        "environment") or {component: number}, added to the spec's rewards."""
        self.done = True
        for actor, value in (rewards or {}).items():
            self.env_rewards[actor] = {k: float(v) for k, v in value.items()} if isinstance(value, dict) else {"environment": float(value)}

    def own_messages(self, actor: str) -> list["Message"]:
        return [m for m in self.messages if m.actor == actor and m.role == "assistant"]


@dataclass
class CollaborativeEnvironment:
    index: int
    section: EnvironmentSection  # its typed section of the RunSpec
    dataset: Dataset
    actors: list[str]
    rewards: list[tuple[BoundReward, float]]
    sampler: RowSampler
    node: Any  # the compiled round spec
    notes: list[str] = field(default_factory=list)
    # `environments[].roles` (roles.py): role -> actor; empty: each actor is its own role. Episodes, round specs and
    # seats are keyed by role; `actors` stays the actors who play (what the run samples and trains).
    role_actor: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # A document handed to the constructor (tests and notebooks build environments by hand) is read once, here;
        # what the object holds itself (its actors, its dataset) fills what a partial document leaves out.
        if isinstance(self.section, Mapping):
            known = {"actors": list(self.actors), "dataset": self.dataset.name if self.dataset is not None else ""}
            self.section = environment_section({**known, **self.section})

    @property
    def name(self) -> str:
        return self.section.name

    @cached_property
    def spec(self) -> dict[str, Any]:
        """The section as its JSON document, for the parts outside envs/ that still read a dict."""
        return to_dict(self.section)

    @cached_property
    def visibility(self) -> dict[str, list[str]] | None:
        """`visibility` (viewer -> the speakers it sees), as each episode keeps it."""
        seen = self.section.visibility
        return {viewer: list(speakers) for viewer, speakers in seen.items()} if seen is not None else None

    @property
    def roles(self) -> list[str]:
        """The names the episodes are keyed by: the roles, or the actors when the environment has none."""
        return list(self.role_actor) if self.role_actor else list(self.actors)

    def actor_of(self, role: str) -> str:
        return self.role_actor.get(role, role)

    def bind(self, handles: dict[str, Any], log: Any = None) -> None:
        """Nothing to bind: only acting environments speak through the run's actors (acting.py)."""

    def close(self) -> None:
        """Nothing to release: acting environments close their `Environment` object (acting.py)."""

    def metrics(self, episodes: list[Episode]) -> dict[str, float]:
        """Metrics of its own: none (acting environments report their `Environment` object's, acting.py)."""
        return {}

    def roll_out(self, players: Players, n_prompts: int, step: int, seconds: dict[str, float]) -> "PlayedConversations":
        """The protocol's step (protocol.py): each drawn row's `groupSize` episodes, their turns from the round spec
        (or the acting environment's own), played with every actor's engine."""
        row_indices = self.sampler.take(n_prompts)
        # Per role, its actor's tokenizer, engine and sampling (two roles of one actor share its one engine).
        tokenizers = {r: players.tokenizer(self.actor_of(r)) for r in self.roles}
        episodes = []
        for g, r in enumerate(row_indices):
            for s in range(players.group_size):
                turns = dsl.sample(self.node, schedule_seed(players.seed, self.name, step, g, s), self.roles, self.section.max_turns) if self.node is not None else []
                episodes.append(self.new_episode(self.dataset.rows[r], r, g, s, turns, tokenizers))
        share_turns(episodes, {r: n for r, n in players.shared_turns.items() if r in self.roles}, players.group_size)
        played = self.play(episodes, {r: players.engine(self.actor_of(r)) for r in self.roles}, tokenizers, {r: players.sampling(self.actor_of(r)) for r in self.roles})
        for role, sec in played.items():
            a = self.actor_of(role)
            seconds[a] = seconds.get(a, 0.0) + sec
        return PlayedConversations(self, row_indices, episodes)

    def _render(self, template: str, row: dict[str, Any], row_index: int, path: str) -> str:
        try:
            return _JINJA.from_string(template).render(**row)
        except jinja2.TemplateError as e:
            raise SpecError.at(path, f"cannot render dataset row {row_index}: {e}") from e

    def user_text(self, row: dict[str, Any], row_index: int) -> str:
        prompt = self.section.prompt
        if prompt.template is not None:
            return self._render(prompt.template, row, row_index, f"environments.{self.index}.prompt.template")
        return str(row[prompt.field])

    def system_text(self, actor: str, row: dict[str, Any], row_index: int) -> str | None:
        template = self.section.system_prompts.get(actor)
        if template is None:
            return None
        return self._render(template, row, row_index, f"environments.{self.index}.systemPrompts.{actor}")

    def new_episode(
        self, row: dict[str, Any], row_index: int, group: int, sample_index: int, schedule: list[list[str]], tokenizers: dict[str, Tokenizer | None]
    ) -> Episode:
        """Actors without a tokenizer (API actors) get no token view: they read `chat_view`."""
        user = self.user_text(row, row_index)
        systems = {a: s for a in self.roles if (s := self.system_text(a, row, row_index)) is not None}
        views = {}
        for actor in self.roles:
            if tokenizers.get(actor) is None:
                continue
            view = View()
            prefix = (systems[actor] + SEPARATOR if actor in systems else "") + (user + SEPARATOR if user else "")
            view.extend(tokenizers[actor].encode(prefix, False) if prefix else [])  # type: ignore[union-attr]
            views[actor] = view
        return Episode(row_index, group, sample_index, schedule, user, systems, views, visibility=self.visibility)

    def play(
        self,
        episodes: list[Episode],
        models: dict[str, Any],
        tokenizers: dict[str, Tokenizer | None],
        samplings: dict[str, dict[str, Any]],
    ) -> dict[str, float]:
        """Play the step's episodes by their round spec (acting environments speak between turns: acting.py)."""
        return run_turns(episodes, models, tokenizers, samplings)

    def score_all(self, episodes: list[Episode]) -> None:
        """Per actor and episode: conversation-scope rewards get (conversation, actor_name, **row)
        (builtins score the conversation's last message); completion-scope rewards score the
        actor's own last message. Each reward scores the whole step in one batch."""
        weights = {reward.name: weight for reward, weight in self.rewards}
        keys = [(e, a) for e in episodes for a in self.roles]
        rows = [self.dataset.rows[e.row_index] for e, _ in keys]
        per_reward = {}
        for reward, _ in self.rewards:
            calls = []
            for (e, actor), row in zip(keys, rows):
                if reward.scope == "conversation":
                    calls.append({**row, "conversation": e.conversation(), "actor_name": actor})
                else:
                    own = [m.text for m in e.messages if m.actor == actor]
                    calls.append({**row, "prompt": e.user, "completion": own[-1] if own else ""})
            per_reward[reward.name] = reward.score_many(calls, rows)
        for k, (e, actor) in enumerate(keys):
            components = {name: scores[k] for name, scores in per_reward.items()}
            e.components[actor] = components
            e.rewards[actor] = combine_rewards(components, weights)


@dataclass
class PlayedConversations:
    """A conversation environment's share of a step (protocol.py): its drawn rows and their episodes."""

    env: CollaborativeEnvironment
    row_indices: list[int]
    episodes: list[Episode]

    def score(self, players: Players) -> None:
        self.env.score_all(self.episodes)

    def add_to(self, step: StepShares) -> None:
        step.add_conversations(self.env, self.row_indices, self.episodes)


def speak(
    actor: str,
    batch: list[Episode],
    models: dict[str, Any],
    tokenizers: dict[str, Tokenizer | None],
    samplings: dict[str, dict[str, Any]],
    seconds: dict[str, float],
) -> list[Message]:
    """One turn of `actor` in each episode of `batch`, sampled as one batch from each episode's
    current context (its token view plus the `Name:` header; API actors read `chat_view`).
    Nothing is appended here: see `append_message`."""
    # `models[actor]`: the actor's rollout engine; a transformers model or an ApiActor is wrapped in one.
    engine = engine_for(models[actor], tokenizers.get(actor))
    if engine.reads_chat:
        t0 = time.monotonic()
        chats = [chat_view(actor, e.systems.get(actor), e.user, [m for m in e.messages if e.sees_message(actor, m)]) for e in batch]
        texts = engine.generate([EnginePrompt([], chat) for chat in chats], samplings[actor]).texts
        seconds[actor] = seconds.get(actor, 0.0) + time.monotonic() - t0
        return [Message(actor, text, [], []) for text in texts]
    tok = tokenizers[actor]
    assert tok is not None
    header = tok.encode(f"{actor}:", False)
    contexts = [e.views[actor].ids + header for e in batch]
    t0 = time.monotonic()
    rollout = engine.generate([EnginePrompt(c) for c in contexts], samplings[actor])
    seconds[actor] = seconds.get(actor, 0.0) + time.monotonic() - t0
    out = []
    for k in range(len(batch)):
        n = int(rollout.completion_mask[k].sum())
        ids = rollout.completion_ids[k, :n].tolist()
        ended = bool(rollout.ended[k]) if rollout.ended is not None else True
        out.append(Message(actor, rollout.texts[k], ids, rollout.sampler_logprobs[k, :n].tolist(), ended))
    return out


def engine_for(model: Any, tokenizer: Tokenizer | None) -> RolloutEngine:
    """The engine that samples `model`: an actor's engine or an API actor as it is (each knows its own placement, the
    actor's device); a transformers model handed in as it is (tests, notebooks) samples where its weights are."""
    device = next(model.parameters()).device if isinstance(model, torch.nn.Module) else None
    return as_engine(model, tokenizer, device)  # type: ignore[arg-type]  # device: read only for a bare model


def append_message(e: Episode, m: Message, tokenizers: dict[str, Tokenizer | None]) -> None:
    """Add `m` to the episode and to the token view of every actor who sees it."""
    e.messages.append(m)
    add_to_views(e, m, tokenizers, list(e.views))


def add_to_views(e: Episode, m: Message, tokenizers: dict[str, Tokenizer | None], viewers: Sequence[str]) -> None:
    """`m` as `[Name:][body]\n` in the views of `viewers` who see it. Only the speaker's own sampled
    body is marked as its own (a loss target); environment messages are context in every view
    (own = 0), so no actor ever trains on them."""
    for viewer in viewers:
        view = e.views[viewer]
        if not e.sees_message(viewer, m):
            continue
        tok = tokenizers[viewer]
        assert tok is not None
        view.extend(tok.encode(f"{m.actor}:", False))
        if viewer == m.actor and m.role == "assistant":
            view.extend(m.ids, own=True, logprobs=m.logprobs)
        else:
            view.extend(tok.encode(m.text, False))
        view.extend(tok.encode(SEPARATOR, False))


def share_turns(episodes: Sequence[Episode], blocks: Mapping[str, int], group_size: int) -> None:
    """Each role of `blocks` (role -> n) speaks once per n consecutive episodes of a group: the block's first episode
    leads, the others copy its message (run_turns). Episodes come `group_size` per row, groups contiguous."""
    for role, n in blocks.items():
        for i, e in enumerate(episodes):
            lead = episodes[i - (i % group_size) % n]
            if lead is not e:
                e.leaders[role] = lead


def _leaders_and_copies(actor: str, batch: list[Episode]) -> tuple[list[Episode], list[tuple[Episode, Episode]]]:
    """Who samples `actor`'s turn, and (episode, leader) for those who copy it (a leader that speaks this turn too)."""
    speaking = {id(e) for e in batch}
    copies = [(e, e.leaders[actor]) for e in batch if actor in e.leaders and id(e.leaders[actor]) in speaking]
    copying = {id(e) for e, _ in copies}
    return [e for e in batch if id(e) not in copying], copies


def run_turns(
    episodes: list[Episode],
    models: dict[str, Any],
    tokenizers: dict[str, Tokenizer | None],
    samplings: dict[str, dict[str, Any]],
) -> dict[str, float]:
    """Play every episode's schedule, batching each turn by actor. Returns rollout seconds per actor.

    `models[a]` is a rollout engine (an actor's: `Players.engine`), an `ApiActor` (then `tokenizers[a]` is None), or
    a transformers model (it samples where its weights are: `engine_for`)."""
    seconds: dict[str, float] = {}
    longest = max((len(e.schedule) for e in episodes), default=0)
    for t in range(longest):
        acting = [e for e in episodes if t < len(e.schedule)]
        said: dict[int, list[Message]] = {id(e): [] for e in acting}
        # Every actor of a turn (`a & b`) samples from the same context: nothing is appended until all have spoken.
        for actor in dict.fromkeys(a for e in acting for a in e.schedule[t]):
            batch = [e for e in acting if actor in e.schedule[t]]
            # A shared turn (Players.shared_turns) is sampled by its block's leader; the others say the same message.
            leaders, copies = _leaders_and_copies(actor, batch)
            for e, m in zip(leaders, speak(actor, leaders, models, tokenizers, samplings, seconds)):
                said[id(e)].append(m)
            for e, lead in copies:
                said[id(e)].append(replace(said[id(lead)][-1]))
        for e in acting:
            turn = said[id(e)]
            # Everyone of a turn sampled before any of the turn's messages was appended, so a
            # speaker's own message goes first in its own view: the trainer then conditions its
            # tokens on exactly the context it sampled from (others' drafts come after).
            e.messages.extend(turn)
            for viewer in e.views:
                for m in sorted(turn, key=lambda m: m.actor != viewer):
                    add_to_views(e, m, tokenizers, [viewer])
    return seconds


@dataclass
class ActorBatch:
    """An actor's training sequences in the trainer's Rollout shape plus a separate loss mask.

    `rollout.completion_mask` is the attention mask of the part after the prompt (other actors'
    tokens are attended); `loss_mask` marks the actor's own sampled tokens, the only targets.
    """

    rollout: Rollout
    loss_mask: torch.Tensor


def actor_batch(views: Sequence[View], pad_id: int, device: torch.device) -> ActorBatch:
    """Split each view at its first own token: before = prompt (left-padded), after = completion."""
    splits = [v.own.index(1) if 1 in v.own else len(v.ids) for v in views]
    p = max(max(splits), 1)
    t = max(max(len(v.ids) - s for v, s in zip(views, splits)), 1)
    b = len(views)
    prompt_ids = torch.full((b, p), pad_id, dtype=torch.long)
    prompt_mask = torch.zeros((b, p), dtype=torch.long)
    completion_ids = torch.full((b, t), pad_id, dtype=torch.long)
    attention = torch.zeros((b, t), dtype=torch.long)
    loss_mask = torch.zeros((b, t), dtype=torch.long)
    sampler = torch.zeros((b, t), dtype=torch.float32)
    for i, (v, s) in enumerate(zip(views, splits)):
        if s:
            prompt_ids[i, p - s :] = torch.tensor(v.ids[:s])
            prompt_mask[i, p - s :] = 1
        rest = len(v.ids) - s
        if rest:
            completion_ids[i, :rest] = torch.tensor(v.ids[s:])
            attention[i, :rest] = 1
            loss_mask[i, :rest] = torch.tensor(v.own[s:])
            sampler[i, :rest] = torch.tensor(v.sampler_logprobs[s:])
    rollout = Rollout(prompt_ids.to(device), prompt_mask.to(device), completion_ids.to(device), attention.to(device), sampler.to(device), [])
    return ActorBatch(rollout, loss_mask.to(device))


def build_collaborative(
    environment: EnvironmentInput,
    index: int,
    datasets: dict[str, Dataset],
    rewards: dict[str, BoundReward],
    rng: np.random.Generator,
) -> CollaborativeEnvironment:
    section = environment_section(environment)
    dataset = datasets[section.dataset]
    check_prompt_field(section, index, dataset)
    bound = bind_env_rewards(section, index, dataset, rewards)
    document = to_dict(section)  # roles.py reads the roles from the document
    node = section_round_spec(section, player_names(document), index)
    roles = role_map(document) if section.roles else {}
    env = CollaborativeEnvironment(index, section, dataset, list(section.actors), bound, RowSampler(dataset.train_indices, rng), node, role_actor=roles)
    first = dataset.train_indices[0]
    env.user_text(dataset.rows[first], first)  # fail early on a bad template
    for role in env.roles:
        env.system_text(role, dataset.rows[first], first)
    for actor in section.system_prompts:
        if actor not in env.roles:
            env.notes.append(f'environment "{env.name}": systemPrompts names "{actor}", who is not one of its {"roles" if roles else "actors"}')
    return env
