"""The algorithm names, read from the contracts' one list (packages/contracts/src/algorithms.ts, exported as
schema/algorithms.v1.json by `npm run contracts:export`): the runtime, the RunSpec and the web name the same
learners, and adding one touches that list, not a copy here."""

from __future__ import annotations

import json
from importlib import resources

_NAMES = json.loads(resources.files("troupe").joinpath("schema", "algorithms.v1.json").read_text(encoding="utf-8"))

GRPO_FAMILY: tuple[str, ...] = tuple(_NAMES["grpoFamily"])  # sampled groups, no critic
PPO_FAMILY: tuple[str, ...] = tuple(_NAMES["ppoFamily"])  # critics (mappo, happo: centralised; vdn, qmix: mixed)
TEAM_ALGORITHMS: tuple[str, ...] = tuple(_NAMES["team"])  # need >= 2 trainable actors in a collaborative environment
ROLE_EXCHANGE_ALGORITHMS: tuple[str, ...] = tuple(_NAMES["roleExchange"])  # two actors exchanging roles (cory)
CORY_ROLES: tuple[str, ...] = tuple(_NAMES["coryRoles"])  # (pioneer, observer)
ADVANTAGE_ESTIMATORS: tuple[str, ...] = tuple(_NAMES["advantages"])  # `algorithm.advantage` (GRPO family)
OFFLINE_FAMILY: tuple[str, ...] = tuple(_NAMES["offline"])  # dataset rows instead of episodes
ALGORITHM_NAMES: tuple[str, ...] = tuple(_NAMES["names"])  # every `algorithm.name`
LOSS_TYPES: tuple[str, ...] = tuple(_NAMES["lossTypes"])  # `training.lossType`
ASYNC_ALGORITHMS: tuple[str, ...] = tuple(_NAMES["async"])  # may sample asynchronously
