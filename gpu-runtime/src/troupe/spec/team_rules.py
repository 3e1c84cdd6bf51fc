"""The team learners' rules and `algorithm.advantage`'s (packages/contracts/src/teamRules.ts `teamIssues`),
mirrored for specs that reach the runtime without a Troupe client. tests/test_team_rules.py runs the cases of
tests/fixtures/team_rules.cases.json, which the contracts' test runs too."""

from __future__ import annotations

from typing import Any

from ..algorithms.names import GRPO_FAMILY, TEAM_ALGORITHMS
from .issues import FieldIssue

TEAM_KIND = "collaborative"  # one team's conversation: every member's turns, one shared outcome


def team_rule_issues(spec: dict[str, Any]) -> list[FieldIssue]:
    issues: list[FieldIssue] = []
    algorithm = spec["algorithm"]
    name = algorithm["name"]
    advantage = algorithm.get("advantage", "group")
    if advantage != "group" and name not in GRPO_FAMILY:
        issues.append(
            FieldIssue(
                "algorithm.advantage",
                f'"{advantage}" advantages are the GRPO family\'s ({", ".join(GRPO_FAMILY)}); {name} takes its advantages elsewhere: leave it at "group"',
            )
        )
    if name not in TEAM_ALGORITHMS:
        return issues
    trainable = {a["name"] for a in spec["actors"] if a.get("trainable", True)}
    for i, env in enumerate(spec["environments"]):
        if env["kind"] != TEAM_KIND:
            issues.append(
                FieldIssue(
                    f"environments.{i}.kind",
                    f"{name} learns a team's value from its members' turns of one conversation; a {env['kind']} environment is not a team's: "
                    f"use a {TEAM_KIND} environment (or mappo/ippo for it)",
                )
            )
        elif sum(1 for a in env["actors"] if a in trainable) < 2:
            issues.append(
                FieldIssue(
                    f"environments.{i}.actors",
                    f"{name} trains a team, and this environment has fewer than 2 trainable actors: make 2 or more of its actors trainable (or use ppo/ippo)",
                )
            )
    if name in ("vdn", "qmix") and algorithm.get("valueNorm") is True:
        issues.append(
            FieldIssue(
                "algorithm.valueNorm",
                f"{name}'s mixed value fits the team return itself, in the rewards' units: value normalisation is not applied; leave valueNorm unset",
            )
        )
    return issues
