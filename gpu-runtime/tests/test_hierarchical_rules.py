"""The runtime's mirror of hierarchical's rules (hierarchicalRules.ts): the cases of
fixtures/hierarchical_rules.cases.json, which packages/contracts/test/hierarchicalRules.test.ts runs too."""

import pytest
from rule_cases import all_issue_paths, case_applied, load_fixture

from troupe.spec import validate_spec
from troupe.spec.hierarchical_rules import hierarchical_rule_issues

FIXTURE = load_fixture("hierarchical_rules")
CASES = FIXTURE["cases"]


def apply_case(case: dict) -> dict:
    return case_applied(FIXTURE["base"], case)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_hierarchical_rules_match_the_contracts(case):
    assert all_issue_paths(apply_case(case)) == sorted(case["issues"])


def test_the_rules_name_the_field_and_say_why():
    case = next(c for c in CASES if c["name"] == "a group that is not whole proposals")
    issues = hierarchical_rule_issues(validate_spec(apply_case(case)))
    assert [i.path for i in issues] == ["algorithm.groupSize"]
    assert "multiple of 4 with at least 2 proposals, e.g. 8" in issues[0].message
