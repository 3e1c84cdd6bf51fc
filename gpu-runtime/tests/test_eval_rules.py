"""The runtime's mirror of the contracts' eval rules (evalRules.ts `evalIssues`): the same cases as
packages/contracts/test/evalRules.test.ts, so a spec written by hand meets the same refusals."""

import copy

import pytest
from runtime_helpers import demo_input

from troupe.spec import SpecError, validate_spec


def _spec(change):
    doc = demo_input()
    doc["datasets"].append({"name": "held", "source": {"kind": "huggingface", "id": "openai/gsm8k", "config": "main", "split": "test"}})
    doc["environments"].append({**copy.deepcopy(doc["environments"][0]), "name": "exam", "dataset": "held", "evalOnly": True})
    doc["trainer"]["evalEvery"] = 10
    change(doc)
    return doc


def _issues(doc):
    try:
        validate_spec(doc)
    except SpecError as e:
        return {i.path: i.message for i in e.issues}
    return {}


def test_an_eval_only_environment_beside_a_trained_one_and_an_eval_only_run_of_frozen_actors_are_accepted():
    assert _issues(_spec(lambda d: None)) == {}
    filled = validate_spec(_spec(lambda d: None))
    assert [e["evalOnly"] for e in filled["environments"]] == [False, True]
    assert filled["datasets"][1]["source"] == {"kind": "huggingface", "id": "openai/gsm8k", "config": "main", "split": "test"}

    def eval_run(d):
        d["trainer"].update(steps=0, evalEvery=0)
        d["environments"][0]["evalOnly"] = True
        d["environments"].pop()
        d["actors"][0]["trainable"] = False

    assert _issues(_spec(eval_run)) == {}


CASES = [
    ("every environment eval-only with steps > 0", lambda d: d["environments"][0].update(evalOnly=True), "environments", "nothing would train: set trainer.steps to 0"),
    ("an eval-only environment with evalEvery 0", lambda d: d["trainer"].update(evalEvery=0), "environments.1.evalOnly", "trainer.evalEvery is 0"),
    ("an eval-only environment on a trained dataset", lambda d: d["environments"][1].update(dataset="letters"), "environments.1.dataset", 'trained on by environment "echo"'),
    ("steps 0 with a trained environment holding out no rows", lambda d: d["trainer"].update(steps=0), "environments.0.evalOnly", "holds out no rows"),
    ("frozen actors only with steps > 0", lambda d: d["actors"][0].update(trainable=False), "actors", "at least one actor must be trainable"),
]


@pytest.mark.parametrize("what,change,path,message", CASES, ids=[c[0] for c in CASES])
def test_refused_on_the_field_at_fault(what, change, path, message):
    found = _issues(_spec(change))
    assert list(found) == [path]
    assert message in found[path]


def test_an_eval_only_run_evaluates_a_trained_environments_held_out_rows():
    def change(d):
        d["trainer"]["steps"] = 0
        d["datasets"][0]["evalFraction"] = 0.25

    assert _issues(_spec(change)) == {}
