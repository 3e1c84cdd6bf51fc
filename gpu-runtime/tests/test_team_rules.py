"""The runtime's mirror of the team learners' rules (teamRules.ts): the cases of fixtures/team_rules.cases.json,
which packages/contracts/test/teamRules.test.ts runs too."""

import copy
import json
from pathlib import Path

import pytest
from runtime_helpers import demo_input

from troupe.spec import validate_spec
from troupe.spec.support import support_issues
from troupe.spec.team_rules import team_rule_issues

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "team_rules.cases.json").read_text())
CASES = FIXTURE["cases"]


def apply_case(case: dict) -> dict:
    doc = demo_input() if case["base"] == "demo" else copy.deepcopy(FIXTURE["relay"])
    doc["algorithm"].update(case.get("algorithm", {}))
    if "secondTrainable" in case:
        doc["actors"][1]["trainable"] = case["secondTrainable"]
    return doc


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_team_rules_match_the_contracts(case):
    found = sorted(i.path for i in team_rule_issues(validate_spec(apply_case(case))))
    assert found == sorted(case["issues"])


def test_the_runtime_refuses_them_before_running():
    case = next(c for c in CASES if c["name"] == "vdn with one trainable actor")
    issues = support_issues(validate_spec(apply_case(case)), cuda_available=False)
    assert [i.path for i in issues] == ["environments.0.actors"], issues
    assert "fewer than 2 trainable actors" in issues[0].message
    ok = next(c for c in CASES if c["name"] == "qmix with its mixing width")
    assert support_issues(validate_spec(apply_case(ok)), cuda_available=False) == []
