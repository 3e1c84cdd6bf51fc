"""The runtime's mirror of cory's rules (coryRules.ts): the cases of fixtures/cory_rules.cases.json, which
packages/contracts/test/coryRules.test.ts runs too; and the role exchange's schedule (envs/roles.py)."""

import pytest
from rule_cases import all_issue_paths, case_applied, load_fixture

from troupe.algorithms.learners.cory import collective_rewards
from troupe.envs.roles import RoleExchange
from troupe.spec import validate_spec
from troupe.spec.cory_rules import cory_rule_issues

FIXTURE = load_fixture("cory_rules")
CASES = FIXTURE["cases"]


def apply_case(case: dict) -> dict:
    doc = case_applied(FIXTURE["pair"], case)
    doc["actors"][1].update(case.get("secondActor", {}))
    return doc


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_cory_rules_match_the_contracts(case):
    assert all_issue_paths(apply_case(case)) == sorted(case["issues"])


def test_the_rules_name_the_field_and_say_why():
    case = next(c for c in CASES if c["name"] == "an observer of another base")
    issues = cory_rule_issues(validate_spec(apply_case(case)))
    assert [i.path for i in issues] == ["environments.0.roles.observer"]
    assert 'another model than the pioneer "alice"' in issues[0].message


def test_the_roles_are_exchanged_every_swap_every_steps():
    exchange = RoleExchange(("pioneer", "observer"), 3)
    spec_map = {"pioneer": "alice", "observer": "bob"}
    pioneers = [exchange.map_at(spec_map, s)["pioneer"] for s in range(1, 10)]
    assert pioneers == ["alice"] * 3 + ["bob"] * 3 + ["alice"] * 3
    assert list(exchange.map_at(spec_map, 4)) == ["pioneer", "observer"]  # the roles keep their order
    assert spec_map == {"pioneer": "alice", "observer": "bob"}  # the spec's map is not changed


def test_the_collective_reward_is_the_sum_of_both_roles():
    class E:
        def __init__(self, p, o):
            self.rewards = {"pioneer": p, "observer": o}

    assert collective_rewards([E(1.0, 0.0), E(0.0, 0.0), E(1.0, 1.0)], ("pioneer", "observer")) == [1.0, 0.0, 2.0]
