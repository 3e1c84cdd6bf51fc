"""The runtime's mirror of the outcome-environment rules (outcomeRules.ts): the cases of
fixtures/outcome_rules.cases.json, which packages/contracts/test/outcomeRules.test.ts runs too. Each case goes
through `validate_spec`, so the paths are every issue the runtime raises, not only this module's."""

import copy
import json
from pathlib import Path

import pytest
from runtime_helpers import demo_input

from troupe.spec import SpecError, validate_spec

CASES = json.loads((Path(__file__).parent / "fixtures" / "outcome_rules.cases.json").read_text())["cases"]


def apply_case(case: dict) -> dict:
    doc = demo_input()
    for k in range(case.get("extraActors", 0)):
        doc["actors"].append({**copy.deepcopy(doc["actors"][0]), "name": f"a{k + 2}"})
    doc["algorithm"].update(case.get("algorithm", {}))
    doc["environments"][0].update(case.get("environment", {}))
    if case.get("noRewards"):
        doc["rewards"] = []
        doc["environments"][0]["rewards"] = []
    return doc


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_outcome_rules_match_the_contracts(case):
    try:
        validate_spec(apply_case(case))
        found: list[str] = []
    except SpecError as e:
        found = [i.path for i in e.issues]
    assert sorted(found) == sorted(case["issues"])


def test_dynamic_sampling_on_a_conversation_is_refused_by_name():
    case = next(c for c in CASES if c["name"] == "dynamic sampling on a majority vote")
    with pytest.raises(SpecError) as caught:
        validate_spec(apply_case(case))
    [issue] = caught.value.issues
    assert issue.message == (
        "dynamic sampling resamples single-turn groups only, and environments.0 is a majority_vote environment "
        "(its episodes would not be resampled): turn it off, or train that environment in another run"
    )
