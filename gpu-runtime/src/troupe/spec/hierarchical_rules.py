"""The rules of `algorithm.advantage: "hierarchical"` (packages/contracts/src/hierarchicalRules.ts
`hierarchicalIssues`), mirrored for specs that reach the runtime without a Troupe client.
tests/test_hierarchical_rules.py runs the cases of tests/fixtures/hierarchical_rules.cases.json, which the contracts'
test runs too."""

from __future__ import annotations

import re
from typing import Any

from ..algorithms.names import ROLE_EXCHANGE_ALGORITHMS
from .issues import FieldIssue

HIERARCHICAL_KIND = "collaborative"  # the solver answers the proposal in one conversation


def hierarchical_round(proposer: str, solver: str) -> str:
    """The round a proposer–solver environment plays: the proposal, then one answer to it."""
    return f"{proposer} -> {solver}"


def hierarchical_rule_issues(spec: dict[str, Any]) -> list[FieldIssue]:
    issues: list[FieldIssue] = []
    algorithm = spec["algorithm"]
    if algorithm.get("advantage", "group") != "hierarchical":
        return issues
    settings = algorithm["hierarchical"]
    proposer, solver, samples = settings["proposer"], settings["solver"], settings["solverSamples"]
    name, group_size = algorithm["name"], algorithm["groupSize"]
    if name in ROLE_EXCHANGE_ALGORITHMS:
        issues.append(FieldIssue("algorithm.advantage", f"{name} trains both roles on their summed reward; hierarchical pays the proposer from the solver's answers: use grpo (or gspo, dr_grpo, dapo)"))
    if proposer == solver:
        issues.append(FieldIssue("algorithm.hierarchical.solver", f'the solver is "{solver}", the proposer\'s role too: name two different roles'))
        return issues
    if group_size % samples != 0 or group_size // samples < 2:
        issues.append(FieldIssue(
            "algorithm.groupSize",
            f"each row's {group_size} episodes are proposals answered {samples} times each (solverSamples): make groupSize a multiple of {samples} with at least 2 proposals, e.g. {2 * samples}",
        ))
    round_ = hierarchical_round(proposer, solver)
    paired = 0
    for i, env in enumerate(spec["environments"]):
        roles = env.get("roles")
        if roles is None:
            continue

        def at(path: str, message: str) -> None:
            issues.append(FieldIssue(f"environments.{i}.{path}", message))

        has = [r for r in (proposer, solver) if r in roles]
        if not has:
            continue
        if len(has) == 1:
            missing = solver if has[0] == proposer else proposer
            at("roles", f'"{has[0]}" is here but "{missing}" is not: hierarchical plays both roles in one environment; map "{missing}" to an actor')
            continue
        paired += 1
        if env["kind"] != HIERARCHICAL_KIND:
            at("kind", f"the solver answers the proposal in one conversation: use a {HIERARCHICAL_KIND} environment, not {env['kind']}")
        # Without a roundSpec the environment's own rules refuse it already.
        if env.get("roundSpec") is not None and re.sub(r"\s+", " ", env["roundSpec"]).strip() != round_:
            at("roundSpec", f'hierarchical plays "{round_}" (the proposer writes the task once, each solver answers it): set roundSpec to that')
    if paired == 0 and not any(i.path.startswith("environments") for i in issues):
        issues.append(FieldIssue("environments", f'hierarchical needs an environment whose roles are "{proposer}" and "{solver}" (environments[].roles), with roundSpec "{round_}"'))
    return issues
