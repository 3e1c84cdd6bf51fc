"""What every environment builder checks against its dataset, once: the prompt's column and each reward's
columns, with the field's path. (The builders of single_turn, collaborative, acting and outcome kinds each had a copy.)"""

from __future__ import annotations

from typing import Any

from .data import Dataset
from ..spec import SpecError
from ..spec.runspec_types import Environment as EnvironmentSection


def check_prompt_field(section: EnvironmentSection, index: int, dataset: Dataset) -> None:
    """A prompt read from a column needs that column (a template is checked by rendering the first row)."""
    prompt, columns = section.prompt, dataset.columns()
    if prompt.template is None and prompt.field not in columns:
        raise SpecError.at(
            f"environments.{index}.prompt.field", f'dataset "{dataset.name}" has no column "{prompt.field}" (columns: {", ".join(sorted(columns))})'
        )


def bind_env_rewards(section: EnvironmentSection, index: int, dataset: Dataset, rewards: dict[str, Any]) -> list[tuple[Any, float]]:
    """(reward, weight) for each of the environment's rewards, after checking that the dataset has every column
    the reward reads (a reward passed in as a Python object may declare none)."""
    columns = dataset.columns()
    bound: list[tuple[Any, float]] = []
    for j, ref in enumerate(section.rewards):
        reward = rewards[ref.reward]
        for column in getattr(reward, "fields", []):
            if column not in columns:
                raise SpecError.at(
                    f"environments.{index}.rewards.{j}.reward",
                    f'reward "{reward.name}" reads column "{column}", which dataset "{dataset.name}" does not have in every row',
                )
        bound.append((reward, float(ref.weight)))
    return bound
