"""The one environment protocol: what every environment kind does for a step, and all the rollout side asks of it.

    environment.roll_out(players, n_prompts, step, seconds) -> share   draw n_prompts rows, play groupSize
                                                                       episodes of each with the actors' engines
    share.score(players)                                              the spec's (and the environment's) rewards
    share.add_to(step_shares)                                          hand the typed episodes to the batch

A single-turn environment is the one-turn case (its share is an `EnvRollout`: one actor's completions, groups
contiguous); conversations, acting environments (python, code, tools), games and remote environments play turns
(their share is a `PlayedConversations`: `Episode`s with a token view per actor). The rollout sources
(rollout/) call only these methods, so they never ask which kind an environment is; the share says where its
episodes go in the step's batch (`StepShares`: the learners read single-turn parts per actor and conversations).

A new kind implements `EnvironmentKind` (or subclasses one that does) and registers its builder by name in
environment_kinds.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Protocol, Sequence, runtime_checkable

from ..engines.rollout.colocate import engine_of
from ..spec.runspec_types import to_dict

if TYPE_CHECKING:
    from ..actors import Actor
    from .collaborative import Episode
    from .data import RowSampler
    from .single_turn import EnvRollout


@dataclass(frozen=True)
class Players:
    """Who plays a step, and the step's sampling settings: the run's actors (or a producer's sampling copies of
    them), the API actors, and what every share is drawn and scored with."""

    actors: Mapping[str, "Actor"]
    api_actors: Mapping[str, Any]
    seed: int  # the run's seed (round-spec schedules are drawn from it)
    group_size: int
    overlong: Mapping[str, Any]  # algorithm.overlong (DAPO's overlong penalty)
    # role -> block size: that role's turn is sampled once per block of consecutive episodes of a row and copied into
    # the block's others (the advantage estimator's wish, algorithms/advantage_estimators.py SHARED_TURNS:
    # hierarchical's proposer writes one task for several solvers). Empty: every episode samples every turn.
    shared_turns: Mapping[str, int] = field(default_factory=dict)

    def engine(self, name: str) -> Any:
        """The actor's rollout engine; an API actor as it is (the conversation wraps it)."""
        return engine_of(self.actors[name]) if name in self.actors else self.api_actors[name]

    def tokenizer(self, name: str) -> Any:
        """None for an API actor: it reads the chat, not token ids."""
        return self.actors[name].loaded.tokenizer if name in self.actors else None

    def sampling(self, name: str) -> Mapping[str, Any]:
        """The actor's sampling settings as the engines read them (its typed section's, as a document)."""
        return to_dict(self.actors[name].section.sampling) if name in self.actors else self.api_actors[name].sampling


class StepShares(Protocol):
    """Where a played share puts its episodes (the rollout's collector, rollout/collect.py)."""

    def add_single_turn(self, part: "EnvRollout") -> None: ...

    def add_conversations(self, env: "EnvironmentKind", row_indices: list[int], episodes: Sequence["Episode"]) -> None: ...


class Share(Protocol):
    """One environment's played groups of one step."""

    def score(self, players: Players) -> None: ...

    def add_to(self, step: StepShares) -> None: ...


@runtime_checkable
class EnvironmentKind(Protocol):
    """What the run and its rollout sources ask of every environment (built from the spec, environment_kinds.py)."""

    index: int
    # Its section of the RunSpec as a JSON document (what the loop, evaluation and ratings read: weight, evalOnly,
    # maxTurns, ...); the kinds built here keep the typed section (`section`) and read that.
    spec: dict[str, Any]
    sampler: "RowSampler"
    notes: list[str]

    @property
    def name(self) -> str: ...

    @property
    def actors(self) -> list[str]:
        """The actors who play in it (a single-turn environment: its one actor)."""
        ...

    def bind(self, handles: dict[str, Any], log: Any = None) -> None:
        """The run's actor handles and log, before the first step (acting environments speak through them)."""
        ...

    def close(self) -> None: ...

    def roll_out(self, players: Players, n_prompts: int, step: int, seconds: dict[str, float]) -> Share:
        """Draw `n_prompts` rows and play `players.group_size` episodes of each (adds rollout seconds per actor)."""
        ...
