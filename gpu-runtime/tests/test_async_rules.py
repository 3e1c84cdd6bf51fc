"""The runtime's mirror of the contracts' async rules (asyncRules.ts): the cases of
packages/contracts/test/rolloutCorrection.test.ts "algorithm.async", each refused on the same field."""

import copy
import json
from pathlib import Path

import pytest
from runtime_helpers import demo_input

from troupe.spec import SpecError, validate_spec
from troupe.spec.run_rules import run_rule_issues

K1 = {"async": {"maxStaleness": 1}}
VLLM_CASES = json.loads((Path(__file__).parent / "fixtures" / "async_vllm_rules.cases.json").read_text())["cases"]


def _issues(patch=lambda s: s, algorithm=K1):
    doc = patch(copy.deepcopy(demo_input()))
    doc["algorithm"].update(algorithm)
    return [i.path for i in run_rule_issues(validate_spec(doc)) if "algorithm.async" in i.message or i.path.startswith("algorithm.async")]


def _actor0(**extra):
    def patch(doc):
        doc["actors"][0].update(extra)
        return doc

    return patch


def test_the_demo_with_a_staleness_bound_is_accepted_and_k_defaults_to_1():
    assert _issues() == []
    doc = demo_input()
    doc["algorithm"]["async"] = {}
    assert validate_spec(doc)["algorithm"]["async"] == {"maxStaleness": 1}
    doc["algorithm"]["async"] = {"maxStaleness": -1}
    with pytest.raises(SpecError) as caught:
        validate_spec(doc)
    assert [i.path for i in caught.value.issues] == ["algorithm.async.maxStaleness"]


def test_several_ranks_are_accepted():
    assert _issues(_actor0(placement={"gpus": [], "processes": 2})) == []
    assert _issues(_actor0(placement={"gpus": [], "processes": 1})) == []


def test_a_sharded_backend_is_accepted():
    training = {**demo_input()["actors"][0].get("training", {}), "backend": "fsdp2"}
    assert _issues(_actor0(training=training)) == []
    assert _issues(_actor0(training={**training, "backend": "deepspeed"}, placement={"gpus": [], "processes": 2})) == []


def test_a_vllm_engine_is_accepted_awake_and_refused_when_it_would_sleep():
    model = {"source": "huggingface", "id": "Qwen/Qwen2.5-0.5B"}
    assert _issues(_actor0(backend="vllm", model=model)) == ["actors.0.vllm.sleepLevel"]
    assert _issues(_actor0(backend="vllm", model=model, vllm={"sleepLevel": 2})) == ["actors.0.vllm.sleepLevel"]
    assert _issues(_actor0(backend="vllm", model=model, vllm={"sleepLevel": 0})) == []


def test_multi_turn_environments_are_accepted():
    def collaborative(doc):
        doc["environments"][0].update(kind="collaborative", roundSpec="student")
        return doc

    assert _issues(collaborative) == []


def test_learners_outside_the_grpo_family_are_refused_on_async():
    assert _issues(algorithm={**K1, "name": "ppo"}) == ["algorithm.async"]


@pytest.mark.parametrize("case", VLLM_CASES, ids=[c["name"] for c in VLLM_CASES])
def test_vllm_cases_match_the_contracts(case):
    def patch(doc):
        doc["actors"][0].update(case.get("actor", {}))
        doc["algorithm"].update(case.get("algorithm", {}))
        return doc

    assert sorted(_issues(patch, algorithm={})) == sorted(case["issues"])
