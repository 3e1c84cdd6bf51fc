"""The learners beside the GRPO family: which `algorithm.name` belongs to which training loop.

- GRPO family: on-policy rollouts, group-normalised advantages (grpo.py, update.py).
- PPO family: on-policy rollouts, a critic per actor (ppo, ippo) or a centralised one (mappo).
- offline: no rollouts; batches come from a dataset (sft: supervised completions; dpo: preference pairs).
"""

from __future__ import annotations

from typing import Literal

GRPO_FAMILY: tuple[str, ...] = ("grpo", "dr_grpo", "dapo", "gspo")
PPO_FAMILY: tuple[str, ...] = ("ppo", "ippo", "mappo")  # learners/ppo.py
OFFLINE: tuple[str, ...] = ("sft", "dpo")
SUPPORTED_ALGORITHMS: tuple[str, ...] = GRPO_FAMILY + PPO_FAMILY + OFFLINE
OFFLINE_NAMES = ("sft", "dpo")  # the offline learners' names, whether or not this runtime supports them

Family = Literal["grpo", "ppo", "offline"]


def family(name: str) -> Family:
    if name in OFFLINE_NAMES:
        return "offline"
    if name in PPO_FAMILY or name in ("ppo", "ippo", "mappo"):
        return "ppo"
    return "grpo"
