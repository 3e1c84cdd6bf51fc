"""The runtime's mirror of hierarchical's rules (hierarchicalRules.ts): the cases of
fixtures/hierarchical_rules.cases.json, which packages/contracts/test/hierarchicalRules.test.ts runs too."""

import copy
import json
from pathlib import Path

import pytest

from troupe.spec import SpecError, validate_spec
from troupe.spec.hierarchical_rules import hierarchical_rule_issues
from troupe.spec.support import support_issues

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "hierarchical_rules.cases.json").read_text())
CASES = FIXTURE["cases"]


def apply_case(case: dict) -> dict:
    doc = copy.deepcopy(FIXTURE["base"])
    env = doc["environments"][0]
    env.update(case.get("environment", {}))
    for key in [k for k, v in env.items() if v is None]:
        del env[key]
    doc["algorithm"].update(case.get("algorithm", {}))
    return doc


def all_issue_paths(doc: dict) -> list[str]:
    """Every refusal before anything runs: the schema's (by field), then the support rules."""
    try:
        spec = validate_spec(doc)
    except SpecError as e:
        return sorted(i.path for i in e.issues)
    return sorted(i.path for i in support_issues(spec, cuda_available=False))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_hierarchical_rules_match_the_contracts(case):
    assert all_issue_paths(apply_case(case)) == sorted(case["issues"])


def test_the_rules_name_the_field_and_say_why():
    case = next(c for c in CASES if c["name"] == "a group that is not whole proposals")
    issues = hierarchical_rule_issues(validate_spec(apply_case(case)))
    assert [i.path for i in issues] == ["algorithm.groupSize"]
    assert "multiple of 4 with at least 2 proposals, e.g. 8" in issues[0].message
