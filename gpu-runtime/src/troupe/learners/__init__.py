"""The learners beside the GRPO family: which `algorithm.name` belongs to which training loop.

- GRPO family: on-policy rollouts, group-normalised advantages (grpo.py, update.py).
- PPO family: on-policy rollouts, a critic per actor (ppo, ippo) or a centralised one (mappo).
- offline: no rollouts; batches come from a dataset (sft: supervised completions; dpo: preference pairs).
"""

from __future__ import annotations

from typing import Literal

GRPO_FAMILY: tuple[str, ...] = ("grpo", "dr_grpo", "dapo", "gspo")
PPO_FAMILY: tuple[str, ...] = ()  # ppo, ippo, mappo once their learners land
OFFLINE: tuple[str, ...] = ()  # sft, dpo once their learners land
SUPPORTED_ALGORITHMS: tuple[str, ...] = GRPO_FAMILY + PPO_FAMILY + OFFLINE

Family = Literal["grpo", "ppo", "offline"]


def family(name: str) -> Family:
    if name in OFFLINE or name in ("sft", "dpo"):
        return "offline"
    if name in PPO_FAMILY or name in ("ppo", "ippo", "mappo"):
        return "ppo"
    return "grpo"
