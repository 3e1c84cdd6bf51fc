"""The algorithm names come from one list (packages/contracts/src/algorithms.ts): the runtime reads its
generated copy, which must equal the contracts' file, and the RunSpec's enums must be that same list."""

import json
from pathlib import Path

from troupe.algorithms.learners import family
from troupe.algorithms.names import ALGORITHM_NAMES, ASYNC_ALGORITHMS, GRPO_FAMILY, LOSS_TYPES, OFFLINE_FAMILY, PPO_FAMILY
from troupe.spec import runspec_schema

REPO = Path(__file__).resolve().parents[2]


def test_the_runtime_copy_is_the_contracts_file():
    contracts = (REPO / "packages/contracts/schema/algorithms.v1.json").read_text()
    runtime = (REPO / "gpu-runtime/src/troupe/schema/algorithms.v1.json").read_text()
    assert runtime == contracts, "stale: run npm run contracts:export"


def test_the_runspec_enums_are_the_one_list():
    schema = runspec_schema()
    algorithm = schema["properties"]["algorithm"]["properties"]["name"]
    assert tuple(algorithm["enum"]) == ALGORITHM_NAMES
    loss = schema["properties"]["actors"]["items"]["properties"]["training"]["properties"]["lossType"]
    assert tuple(loss["enum"]) == LOSS_TYPES


def test_every_name_has_one_family():
    assert ALGORITHM_NAMES == GRPO_FAMILY + PPO_FAMILY + OFFLINE_FAMILY and len(set(ALGORITHM_NAMES)) == len(ALGORITHM_NAMES)
    assert [family(n) for n in ALGORITHM_NAMES] == ["grpo"] * len(GRPO_FAMILY) + ["ppo"] * len(PPO_FAMILY) + ["offline"] * len(OFFLINE_FAMILY)
    assert set(ASYNC_ALGORITHMS) == set(GRPO_FAMILY)
    assert json.loads((REPO / "packages/contracts/schema/algorithms.v1.json").read_text())["names"] == list(ALGORITHM_NAMES)
