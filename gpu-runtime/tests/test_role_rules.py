"""The runtime's mirror of the `environments[].roles` rules (roleRules.ts): the cases of fixtures/role_rules.cases.json,
which packages/contracts/test/roleRules.test.ts runs too."""

import copy

import pytest
from rule_cases import case_applied, load_fixture

from troupe.spec import validate_spec
from troupe.spec.role_rules import role_rule_issues
from troupe.spec.support import support_issues

FIXTURE = load_fixture("role_rules")
CASES = FIXTURE["cases"]


def apply_case(case: dict) -> dict:
    doc = case_applied(FIXTURE["selfplay"], case)
    env = doc["environments"][0]
    doc["trainer"].update(case.get("trainer", {}))
    for name in case.get("extraActors", []):
        doc["actors"].append({**doc["actors"][0], "name": name})
    if "extraDataset" in case:
        doc["datasets"].append({**doc["datasets"][0], "name": case["extraDataset"]})
    if "extraEnvironment" in case:
        doc["environments"].append(copy.deepcopy(case["extraEnvironment"]))
    if "datasetEvalFraction" in case:
        doc["datasets"][0]["evalFraction"] = case["datasetEvalFraction"]
    if case.get("rewards"):
        doc["rewards"] = [{"name": "letter_match", "source": {"kind": "builtin", "name": "letter_match"}}]
        env["rewards"] = [{"reward": "letter_match", "weight": 1}]
    return doc


def all_issue_paths(doc: dict) -> list[str]:
    """Every refusal of the runtime before anything runs (the schema, then the support rules)."""
    return sorted(i.path for i in support_issues(validate_spec(doc), cuda_available=False))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_role_rules_match_the_contracts(case):
    assert all_issue_paths(apply_case(case)) == sorted(case["issues"])


def test_the_role_rules_name_the_field_and_the_actor():
    case = next(c for c in CASES if c["name"] == "a role played by an unknown actor")
    issues = role_rule_issues(validate_spec(apply_case(case)))
    assert [(i.path, i.message) for i in issues] == [("environments.0.roles.O", 'unknown actor "ghost": a role is played by one of actors[]')]


def test_without_roles_nothing_changes():
    doc = apply_case(CASES[0])
    del doc["environments"][0]["roles"]
    doc["environments"][0]["actors"] = ["policy", "policy"]  # today's self-play: one actor twice is refused elsewhere, not here
    assert role_rule_issues(validate_spec(doc)) == []
