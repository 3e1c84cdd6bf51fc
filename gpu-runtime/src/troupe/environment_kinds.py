"""Which module builds each environment kind: the one dispatch point (add a kind here).

    single_turn                          environments.py
    collaborative, adversarial, parallel collaborative.py (round spec)
    python, code, tools                  acting.py (an `Environment` object speaks between turns)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .acting import ACTING_KINDS
from .collaborative import MULTI_ACTOR_KINDS, build_collaborative
from .data import Dataset
from .environments import build_environment


def build_any_environment(
    env_spec: dict[str, Any], index: int, datasets: dict[str, Dataset], rewards: dict[str, Any], rng: np.random.Generator, spec: dict[str, Any], work_dir: Path
) -> Any:
    kind = env_spec["kind"]
    if kind in MULTI_ACTOR_KINDS:
        return build_collaborative(env_spec, index, datasets, rewards, rng)
    if kind in ACTING_KINDS:
        from .acting_build import build_acting, sandbox_limits

        return build_acting(env_spec, index, datasets, rewards, rng, work_dir, sandbox_limits(spec))
    return build_environment(env_spec, index, datasets, rewards, rng)
