"""`summary` environments: N actors answer the same prompt in parallel; a summariser reads every answer and
writes the team's.

    environments: [{kind: summary, actors: [s1, s2, s3, lead], dataset: arithmetic,
                    summary: {summariser: lead, answerField: answer, extract: last_number, rewardWeights: {outcome: 1, own: 0}}}]

The answering actors speak once each, seeing only the prompt (as in majority_vote.py); then the summariser
speaks once, seeing the prompt and every answer (`Name: answer` lines in its context). Its last message's
answer (read by `extract`) is the team's.

Rewards: an answering actor gets outcome × [the summary is right] + own × [its own answer is right]; the
summariser's own answer is the summary, so the same formula gives it (outcome + own) × [the summary is right].
Metrics: summary/accuracy, each answering actor's own accuracy (summary/own_accuracy, reported to it), the
best of them, what a majority vote over the answers would have scored (summary/vote_accuracy, so the
summariser can be read against the plain vote), and the answerers' agreement.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..rewards.builtin import BoundReward
from ..rewards.outcomes import majority, reference_answer
from .acting import ActingEnvironment
from .collaborative import Episode
from .data import Dataset
from .environment_api import Environment
from .sections import EnvironmentInput, environment_section
from .majority_vote import OutcomeSettings, agreement, build_outcome_environment, last_answers, mean, outcome_reward


class Summary(Environment):
    """The answerers speak once each, blind to each other; the summariser reads them all and answers for the team."""

    def __init__(self, settings: OutcomeSettings) -> None:
        self.settings = settings

    @property
    def summariser(self) -> str:
        return self.settings.summariser or self.actors[-1]

    @property
    def answerers(self) -> list[str]:
        return [a for a in self.actors if a != self.summariser]

    def reset(self, episode: Episode) -> str | None:
        # Answerers see only the prompt; the summariser (not listed) sees everyone.
        episode.visibility = {a: [] for a in self.answerers}
        return None

    def next_speaker(self, episode: Episode, turn: int) -> str | None:
        order = [*self.answerers, self.summariser]
        return order[turn] if turn < len(order) else None

    def score(self, episode: Episode) -> dict[str, float | dict[str, float]]:
        s = self.settings
        truth = reference_answer(episode.row, s.answer_field, s.extract)
        answers = last_answers(episode, self.answerers, s.extract)
        final = last_answers(episode, [self.summariser], s.extract).get(self.summariser)
        team_right = final is not None and final == truth
        own_right = {a: answers.get(a) is not None and answers.get(a) == truth for a in self.answerers}
        voted = majority(answers)
        episode.state.update(
            answers=answers,
            final=final,
            team_right=team_right,
            own_right=own_right,
            vote_right=voted is not None and voted == truth,
            agreement=agreement(answers, len(self.answerers)),
        )
        out: dict[str, float | dict[str, float]] = {a: outcome_reward(team_right, own_right[a], s) for a in self.answerers}
        out[self.summariser] = outcome_reward(team_right, team_right, s)
        return out

    def metrics(self, episodes: Sequence[Episode]) -> dict[str, float]:
        own = {a: mean([float(e.state["own_right"][a]) for e in episodes]) for a in self.answerers}
        return {
            "summary/accuracy": mean([float(e.state["team_right"]) for e in episodes]),
            "summary/vote_accuracy": mean([float(e.state["vote_right"]) for e in episodes]),
            "summary/agreement": mean([e.state["agreement"] for e in episodes]),
            "summary/best_agent_accuracy": max(own.values(), default=0.0),
            **{f"summary/{a}/own_accuracy": value for a, value in own.items()},
        }


def build_summary(
    environment: EnvironmentInput, index: int, datasets: dict[str, Dataset], rewards: dict[str, BoundReward], rng: np.random.Generator
) -> ActingEnvironment:
    section = environment_section(environment)
    return build_outcome_environment(section, index, datasets, rewards, rng, Summary(OutcomeSettings.from_section(section.summary)))
