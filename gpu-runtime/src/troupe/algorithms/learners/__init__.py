"""The learners beside the GRPO family: which `algorithm.name` belongs to which training loop.

- GRPO family: on-policy rollouts, group-normalised advantages (grpo.py, update.py).
- PPO family: on-policy rollouts, a critic per actor (ppo, ippo) or a centralised one (mappo); the team learners
  vdn and qmix (per-agent critics mixed into a team value: value_decomposition.py) and happo (mappo's critic,
  agents updated in a seeded random order: happo.py).
- offline: no rollouts; batches come from a dataset (sft: supervised completions; dpo: preference pairs).
"""

from __future__ import annotations

from typing import Literal

from ..names import ALGORITHM_NAMES, GRPO_FAMILY, OFFLINE_FAMILY, PPO_FAMILY

SUPPORTED_ALGORITHMS: tuple[str, ...] = ALGORITHM_NAMES
OFFLINE_NAMES = OFFLINE_FAMILY  # the offline learners' names, whether or not this runtime supports them
__all__ = ["GRPO_FAMILY", "OFFLINE_NAMES", "PPO_FAMILY", "SUPPORTED_ALGORITHMS", "Family", "family"]

Family = Literal["grpo", "ppo", "offline"]


def family(name: str) -> Family:
    if name in OFFLINE_NAMES:
        return "offline"
    if name in PPO_FAMILY:
        return "ppo"
    return "grpo"
