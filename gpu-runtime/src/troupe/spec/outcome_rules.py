"""Rules of the outcome environments (`majority_vote`, `summary`) and of DAPO dynamic sampling on
conversations, mirrored from packages/contracts/src/outcomeRules.ts (same paths, same words).
tests/test_outcome_rules.py runs the cases of tests/fixtures/outcome_rules.cases.json, which the contracts'
test runs too."""

from __future__ import annotations

from typing import Any

from .issues import FieldIssue

# packages/contracts/src/environmentKinds.ts OUTCOME_SETTINGS_FIELD: each outcome kind and its settings field.
OUTCOME_SETTINGS_FIELD = {"majority_vote": "majorityVote", "summary": "summary"}
OUTCOME_KINDS = tuple(OUTCOME_SETTINGS_FIELD)


def outcome_rule_issues(spec: dict[str, Any]) -> list[FieldIssue]:
    issues: list[FieldIssue] = []

    def add(path: str, message: str) -> None:
        issues.append(FieldIssue(path, message))

    environments = spec.get("environments", [])
    for i, env in enumerate(environments):
        p = f"environments.{i}"
        kind, actors = env.get("kind"), env.get("actors", [])
        for owner, settings_field in OUTCOME_SETTINGS_FIELD.items():
            if kind != owner and env.get(settings_field) is not None:
                add(f"{p}.{settings_field}", f"only {owner} environments take {settings_field} settings")
        if kind not in OUTCOME_KINDS:
            continue
        field = OUTCOME_SETTINGS_FIELD[kind]
        settings = env.get(field)
        if kind == "majority_vote" and len(actors) < 2:
            add(f"{p}.actors", "a majority_vote environment has at least two voting actors")
        if kind == "summary" and len(actors) < 2:
            add(f"{p}.actors", "a summary environment has at least one answering actor and the summariser (at least 2 actors)")
        summariser = (env.get("summary") or {}).get("summariser")
        if kind == "summary" and summariser is not None and summariser not in actors:
            add(f"{p}.summary.summariser", f'"{summariser}" is not an actor of this environment')
        then = ", then the summariser" if kind == "summary" else ""
        if env.get("roundSpec") is not None:
            add(f"{p}.roundSpec", f"a {kind} environment decides who speaks (every answering actor once, in parallel{then}): remove the roundSpec")
        if env.get("visibility") is not None:
            sees = "; the summariser sees every answer" if kind == "summary" else ""
            add(f"{p}.visibility", f"a {kind} environment decides who sees what (answering actors see only the prompt{sees}): remove visibility")
        if env.get("maxTurns", 16) < len(actors):
            add(f"{p}.maxTurns", f"every actor speaks once: maxTurns must be at least {len(actors)} (the number of actors)")
        weights = (settings or {}).get("rewardWeights")
        if weights is not None and weights.get("outcome", 1) == 0 and weights.get("own", 0) == 0:
            add(f"{p}.{field}.rewardWeights", "both weights are 0: every reward would be 0 and nothing would learn")
    if spec.get("algorithm", {}).get("dynamicSampling", {}).get("enabled"):
        i = next((i for i, env in enumerate(environments) if env.get("kind") != "single_turn" and not env.get("evalOnly")), None)
        if i is not None:
            kind = environments[i]["kind"]
            add(
                "algorithm.dynamicSampling.enabled",
                f"dynamic sampling resamples single-turn groups only, and environments.{i} is a {kind} environment "
                "(its episodes would not be resampled): turn it off, or train that environment in another run",
            )
    return issues
