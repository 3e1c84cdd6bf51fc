"""The rules of `algorithm.name: "cory"` (packages/contracts/src/coryRules.ts `coryIssues`), mirrored for specs
that reach the runtime without a Troupe client. tests/test_cory_rules.py runs the cases of
tests/fixtures/cory_rules.cases.json, which the contracts' test runs too."""

from __future__ import annotations

import re
from typing import Any

from ..algorithms.names import CORY_ROLES, ROLE_EXCHANGE_ALGORITHMS
from .issues import FieldIssue

CORY_ROUND = f"{CORY_ROLES[0]} -> {CORY_ROLES[1]}"  # the pioneer answers, then the observer, having read it
CORY_KIND = "collaborative"


def cory_rule_issues(spec: dict[str, Any]) -> list[FieldIssue]:
    issues: list[FieldIssue] = []
    name = spec["algorithm"]["name"]
    if name not in ROLE_EXCHANGE_ALGORITHMS:
        return issues
    pioneer, observer = CORY_ROLES
    actors = {a["name"]: a for a in spec["actors"]}
    paired = 0
    for i, env in enumerate(spec["environments"]):
        roles = env.get("roles")
        if roles is None:
            continue

        def at(path: str, message: str) -> None:
            issues.append(FieldIssue(f"environments.{i}.{path}", message))

        if len(roles) != 2 or pioneer not in roles or observer not in roles:
            got = ", ".join(f'"{r}"' for r in roles) or "none"
            at("roles", f'{name} plays exactly two roles, "{pioneer}" and "{observer}" (got {got}): map each to one of its two actors')
            continue
        paired += 1
        if env["kind"] != CORY_KIND:
            at("kind", f"{name}'s observer reads the pioneer's answer in one conversation: use a {CORY_KIND} environment, not {env['kind']}")
        if re.sub(r"\s+", " ", env.get("roundSpec") or "").strip() != CORY_ROUND:
            at("roundSpec", f'{name} plays "{CORY_ROUND}" (the pioneer answers, the observer answers after it): set roundSpec to that')
        first, second = actors.get(roles[pioneer]), actors.get(roles[observer])
        if first is None or second is None:
            continue  # unknown actors: the role rules name them
        if first["name"] == second["name"]:
            at(f"roles.{observer}", f'"{second["name"]}" plays both roles; {name} exchanges the roles of two actors: give the observer a second actor (a copy of the pioneer\'s base)')
            continue
        for role, actor in ((pioneer, first), (observer, second)):
            if not actor["trainable"]:
                at(f"roles.{role}", f'"{actor["name"]}" is frozen; {name} trains both the pioneer and the observer: make it trainable')
        if first["model"] != second["model"]:
            at(f"roles.{observer}", f'"{second["name"]}" has another model than the pioneer "{first["name"]}"; {name}\'s pair are two copies of one base: give both the same model')
    if paired == 0 and not any(i.path.startswith("environments.") for i in issues):
        issues.append(FieldIssue("environments", f'{name} needs an environment whose roles are "{pioneer}" and "{observer}" (environments[].roles), played by two trainable actors of one base'))
    # The role exchange changes who plays which role between steps: a batch sampled ahead would be played by the old map.
    if spec["algorithm"].get("async") is not None:
        issues.append(FieldIssue("algorithm.async", f"{name} exchanges roles between steps, and a batch sampled ahead would be played with the previous roles: remove async"))
    if (spec.get("rollout") or {}).get("workers") is not None:
        issues.append(FieldIssue("rollout.workers", f"{name} exchanges roles between steps, which rollout workers do not see: remove rollout.workers"))
    return issues
