"""The runtime's mirror of the contracts' run-wide rules (actorRules.ts `runIssues`): the same cases as
packages/contracts/test/actorRules.test.ts, so a spec written by hand meets the same refusals."""

import copy

from runtime_helpers import demo_input

from troupe.spec import validate_spec
from troupe.spec.run_rules import run_rule_issues


def _issues(actors, **trainer):
    doc = demo_input()
    base = doc["actors"][0]
    doc["actors"] = [{**copy.deepcopy(base), "name": f"a{i}", **a} for i, a in enumerate(actors)]
    doc["environments"][0]["actors"] = ["a0"]
    doc["trainer"].update(trainer)
    return {i.path: i.message for i in run_rule_issues(validate_spec(doc))}


def test_actors_sharing_the_runs_ranks_are_accepted():
    assert _issues([{"placement": {"processes": 2}}, {"placement": {"processes": 2}}, {}]) == {}


def test_different_rank_counts_are_refused_on_the_second_actor():
    found = _issues([{"placement": {"processes": 2}}, {"placement": {"processes": 3}}])
    assert list(found) == ["actors.1.placement.processes"]
    assert 'asks for 3 ranks but "a0" asks for 2' in found["actors.1.placement.processes"]


def test_gpu_ranks_and_cpu_processes_do_not_mix():
    assert "actors.1.placement.processes" in _issues([{"placement": {"gpus": [0, 1]}}, {"placement": {"processes": 2}}])


def test_deepspeed_cpu_offload_and_between_phase_offload():
    ds = {"training": {**demo_input()["actors"][0]["training"], "backend": "deepspeed", "offload": {"optimizer": True}}, "placement": {"gpus": [0]}}
    assert list(_issues([ds], offloadBetweenPhases=True)) == ["trainer.offloadBetweenPhases"]
    assert list(_issues([ds, {"placement": {"gpus": [0]}}])) == ["actors.0.training.offload.optimizer"]
    assert _issues([ds, {"placement": {"gpus": [0]}}], offloadBetweenPhases=False) == {}
    assert _issues([ds, {"placement": {"gpus": [1]}}]) == {}
