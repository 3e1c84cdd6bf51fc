"""`majority_vote` environments: N actors answer the same prompt in parallel; the vote decides.

    environments: [{kind: majority_vote, actors: [s1, s2, s3], dataset: arithmetic,
                    majorityVote: {answerField: answer, extract: last_number, rewardWeights: {outcome: 1, own: 0}}}]

Every actor speaks once, seeing only the prompt (no actor reads another's answer: the answers are
independent draws, which is what makes a vote better than its voters). The answer of each message is
read by `extract` (rewards/outcomes.py: whole text, last number or first letter); the team's answer is the
one with strictly more votes than any other. Tie rule: a tie for the most votes (or no answer at all)
decides nothing, and nothing is a wrong outcome; an actor whose message gives no answer casts no vote.

Each actor's reward = outcome × [the team's answer equals the row's] + own × [its own answer does]
(`rewardWeights`; the components `outcome` and `own` in the episode's reward components are those two
weighted terms). Spec rewards listed on the environment add to them, as in every acting environment.

This is an `Environment` (environment_api.py) played by `ActingEnvironment` (acting.py), so turns,
views, loss masks, transcripts and metric reporting are those of every acting kind. summary.py shares
the settings, the reward and the builder below.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from ..rewards.builtin import BoundReward
from ..rewards.outcomes import extract_answer, majority, reference_answer
from ..spec import SpecError
from ..spec.outcome_rules import OUTCOME_SETTINGS_FIELD
from ..spec.runspec_types import Environment as EnvironmentSection, EnvironmentMajorityVote, EnvironmentSummary
from .checks import bind_env_rewards, check_prompt_field
from .sections import EnvironmentInput, environment_section
from .acting import ActingEnvironment
from .collaborative import Episode
from .data import Dataset, RowSampler
from .environment_api import Environment

if TYPE_CHECKING:
    from .summary import Summary


@dataclass(frozen=True)
class OutcomeSettings:
    """`environments[].majorityVote` / `.summary` with the contracts' defaults (the field may be absent)."""

    answer_field: str = "answer"
    extract: str = "last_number"
    outcome_weight: float = 1.0
    own_weight: float = 0.0
    summariser: str | None = None  # summary only: None is the environment's last actor

    @classmethod
    def from_section(cls, section: EnvironmentMajorityVote | EnvironmentSummary | None) -> "OutcomeSettings":
        """From the typed `majorityVote` / `summary` section (None: the field is absent, the defaults)."""
        if section is None:
            return cls()
        summariser = section.summariser if isinstance(section, EnvironmentSummary) else None
        weights = section.reward_weights
        return cls(str(section.answer_field), str(section.extract), float(weights.outcome), float(weights.own), summariser)

    @classmethod
    def from_spec(cls, settings: Mapping[str, Any] | None) -> "OutcomeSettings":
        s = dict(settings or {})
        weights = dict(s.get("rewardWeights") or {})
        return cls(
            answer_field=str(s.get("answerField", "answer")),
            extract=str(s.get("extract", "last_number")),
            outcome_weight=float(weights.get("outcome", 1.0)),
            own_weight=float(weights.get("own", 0.0)),
            summariser=s.get("summariser"),
        )


def outcome_reward(team_right: bool, own_right: bool, settings: OutcomeSettings) -> dict[str, float]:
    """One agent's reward components: the weighted team term and the weighted own-answer term (a term whose
    weight is 0 is left out, so the episode shows only what the reward is made of)."""
    out = {}
    if settings.outcome_weight:
        out["outcome"] = settings.outcome_weight * float(team_right)
    if settings.own_weight:
        out["own"] = settings.own_weight * float(own_right)
    return out


def agreement(votes: Mapping[str, str], voters: int) -> float:
    """The share of the voters behind the most common answer (0 when nobody answered): 1 is unanimity."""
    counts = Counter(votes.values()).most_common(1)
    return counts[0][1] / voters if counts and voters else 0.0


def last_answers(episode: Episode, speakers: Sequence[str], extract: str) -> dict[str, str]:
    """speaker -> the answer its last message gives (speakers whose message gives none are left out)."""
    out = {}
    for actor in speakers:
        own = episode.own_messages(actor)
        answer = extract_answer(own[-1].text, extract) if own else None
        if answer is not None:
            out[actor] = answer
    return out


def mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else 0.0


class MajorityVote(Environment):
    """Every actor answers once, blind to the others; the strict-majority answer is the team's."""

    def __init__(self, settings: OutcomeSettings) -> None:
        self.settings = settings

    def reset(self, episode: Episode) -> str | None:
        # Every voter sees only the prompt and its own answer: independent votes.
        episode.visibility = {a: [] for a in self.actors}
        return None

    def next_speaker(self, episode: Episode, turn: int) -> str | None:
        return self.actors[turn] if turn < len(self.actors) else None

    def score(self, episode: Episode) -> dict[str, float | dict[str, float]]:
        s = self.settings
        votes = last_answers(episode, self.actors, s.extract)
        truth = reference_answer(episode.row, s.answer_field, s.extract)
        decided = majority(votes)
        team_right = decided is not None and decided == truth
        own_right = {a: votes.get(a) is not None and votes.get(a) == truth for a in self.actors}
        episode.state.update(votes=votes, decided=decided, team_right=team_right, own_right=own_right, agreement=agreement(votes, len(self.actors)))
        return {a: outcome_reward(team_right, own_right[a], s) for a in self.actors}

    def metrics(self, episodes: Sequence[Episode]) -> dict[str, float]:
        """vote/accuracy (the voted answer right), vote/tie_rate (nothing decided), vote/agreement, each
        voter's own accuracy (`vote/<actor>/own_accuracy`, reported to that actor as vote/own_accuracy) and
        the best voter's (vote/best_agent_accuracy), so the vote can be read against its best voter."""
        own = {a: mean([float(e.state["own_right"][a]) for e in episodes]) for a in self.actors}
        return {
            "vote/accuracy": mean([float(e.state["team_right"]) for e in episodes]),
            "vote/tie_rate": mean([float(e.state["decided"] is None) for e in episodes]),
            "vote/agreement": mean([e.state["agreement"] for e in episodes]),
            "vote/best_agent_accuracy": max(own.values(), default=0.0),
            **{f"vote/{a}/own_accuracy": value for a, value in own.items()},
        }


def build_outcome_environment(
    section: EnvironmentSection,
    index: int,
    datasets: dict[str, Dataset],
    rewards: dict[str, BoundReward],
    rng: np.random.Generator,
    impl: "MajorityVote | Summary",
) -> ActingEnvironment:
    """An outcome environment on its dataset, with the spec's extra rewards bound; a missing column fails
    here with the field's path, before any step."""
    dataset = datasets[section.dataset]
    columns = dataset.columns()
    field = OUTCOME_SETTINGS_FIELD[section.kind]
    answer_field = impl.settings.answer_field
    if answer_field not in columns:
        raise SpecError.at(f"environments.{index}.{field}.answerField", f'dataset "{dataset.name}" has no column "{answer_field}" (columns: {", ".join(sorted(columns))})')
    check_prompt_field(section, index, dataset)
    bound = bind_env_rewards(section, index, dataset, rewards)
    impl.name, impl.actors, impl.max_turns = section.name, list(section.actors), int(section.max_turns)
    impl.params, impl.rewards, impl.handles = {}, {r.name: r for r, _ in bound}, {}
    env = ActingEnvironment(index, section, dataset, list(section.actors), bound, RowSampler(dataset.train_indices, rng), None, impl=impl)
    first = dataset.train_indices[0]
    env.user_text(dataset.rows[first], first)  # fail early on a bad template
    for actor in env.actors:
        env.system_text(actor, dataset.rows[first], first)
    return env


def build_majority_vote(
    environment: EnvironmentInput, index: int, datasets: dict[str, Dataset], rewards: dict[str, BoundReward], rng: np.random.Generator
) -> ActingEnvironment:
    section = environment_section(environment)
    return build_outcome_environment(section, index, datasets, rewards, rng, MajorityVote(OutcomeSettings.from_section(section.majority_vote)))
