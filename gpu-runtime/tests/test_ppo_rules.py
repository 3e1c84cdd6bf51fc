"""The runtime's mirror of the PPO family's rules (ppoRules.ts): the cases of fixtures/ppo_rules.cases.json,
which packages/contracts/test/ppoRules.test.ts runs too."""

import json
from pathlib import Path

import pytest
from runtime_helpers import demo_input

from troupe.spec import validate_spec
from troupe.spec.ppo_rules import ppo_rule_issues
from troupe.spec.support import support_issues

CASES = json.loads((Path(__file__).parent / "fixtures" / "ppo_rules.cases.json").read_text())["cases"]


def apply_case(case: dict) -> dict:
    doc = demo_input()
    doc["algorithm"].update(case.get("algorithm", {}))
    actor = doc["actors"][0]
    actor["training"] = {**actor["training"], **case.get("actor", {}).get("training", {})}
    return doc


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_ppo_rules_match_the_contracts(case):
    found = sorted(i.path for i in ppo_rule_issues(validate_spec(apply_case(case))))
    assert found == sorted(case["issues"])


def test_the_runtime_refuses_them_before_running():
    case = next(c for c in CASES if c["name"] == "mappo in a single-turn environment")
    paths = [i.path for i in support_issues(validate_spec(apply_case(case)), cuda_available=False)]
    assert "environments.0.kind" in paths
    ok = next(c for c in CASES if c["name"] == "ppo on the demo")
    assert support_issues(validate_spec(apply_case(ok)), cuda_available=False) == []
