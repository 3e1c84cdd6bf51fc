"""The runtime's mirror of the offline learners' rules (learnerRules.ts): the cases of
fixtures/learner_rules.cases.json, which packages/contracts/test/learnerRules.test.ts runs too."""

import copy
import json
from pathlib import Path

import pytest
from runtime_helpers import demo_input

from troupe.spec import validate_spec
from troupe.spec.learner_rules import learner_rule_issues

CASES = json.loads((Path(__file__).parent / "fixtures" / "learner_rules.cases.json").read_text())["cases"]


def apply_case(case: dict) -> dict:
    doc = demo_input()
    doc["algorithm"].update(case.get("algorithm", {}))
    doc["environments"][0].update(case.get("environment", {}))
    actor = doc["actors"][0]
    spare = copy.deepcopy(actor)
    change = case.get("actor", {})
    training = {**actor["training"], **change.get("training", {})}
    actor.update(change)
    actor["training"] = training
    if change.get("backend") == "openai":
        actor["model"].pop("preset", None)
    if "datasetSource" in case:
        doc["datasets"][0]["source"] = case["datasetSource"]
    if case.get("noRewards"):
        doc["rewards"] = []
        doc["environments"][0]["rewards"] = []
    if case.get("extraEvalOnlyEnvironment"):
        doc["datasets"].append({"name": "exam", "source": {"kind": "builtin", "name": "echo_letter"}})
        doc["environments"].append({**copy.deepcopy(doc["environments"][0]), "name": "exam", "dataset": "exam", "evalOnly": True})
        for field in ("completionField", "chosenField", "rejectedField"):
            doc["environments"][1].pop(field, None)
    doc["trainer"].update(case.get("trainer", {}))
    if case.get("addTrainable"):
        doc["actors"].append({**spare, "name": "spare"})
    return doc


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_learner_rules_match_the_contracts(case):
    found = sorted(i.path for i in learner_rule_issues(validate_spec(apply_case(case))))
    assert found == sorted(case["issues"])


def test_dpo_without_a_preference_dataset_names_the_columns():
    case = next(c for c in CASES if c["name"] == "dpo without a preference dataset")
    [issue] = learner_rule_issues(validate_spec(apply_case(case)))
    assert issue.message == (
        'dpo trains on preference pairs (columns "chosen" and "rejected"), and builtin dataset "echo_letter" '
        "is not a preference dataset (columns: prompt, letter)"
    )
