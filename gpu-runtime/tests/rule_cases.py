"""What the rule tests that replay a shared fixture (fixtures/*.cases.json, run by packages/contracts too) have in
common: loading it, applying a case's changes to its base spec, and every refusal before anything runs."""

import copy
import json
from pathlib import Path
from typing import Any

from troupe.spec import SpecError, validate_spec
from troupe.spec.support import support_issues

FIXTURES = Path(__file__).parent / "fixtures"


def load_fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.cases.json").read_text())


def case_applied(base: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
    """A copy of `base` with the case's environment keys set (a null removes the key) and its algorithm keys set."""
    doc = copy.deepcopy(base)
    env = doc["environments"][0]
    env.update(case.get("environment", {}))
    for key in [k for k, v in env.items() if v is None]:
        del env[key]
    doc["algorithm"].update(case.get("algorithm", {}))
    return doc


def all_issue_paths(doc: dict[str, Any]) -> list[str]:
    """Every refusal before anything runs: the schema's (by field), then the support rules."""
    try:
        spec = validate_spec(doc)
    except SpecError as e:
        return sorted(i.path for i in e.issues)
    return sorted(i.path for i in support_issues(spec, cuda_available=False))
