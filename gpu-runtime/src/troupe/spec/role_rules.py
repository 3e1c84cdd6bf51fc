"""The rules of `environments[].roles` (packages/contracts/src/roleRules.ts `roleIssues`), mirrored for specs that
reach the runtime without a Troupe client. tests/test_role_rules.py runs the cases of
tests/fixtures/role_rules.cases.json, which the contracts' test runs too."""

from __future__ import annotations

from typing import Any

from ..algorithms.names import GRPO_FAMILY
from ..envs.roles import ROLE_KINDS
from .issues import FieldIssue


def role_rule_issues(spec: dict[str, Any]) -> list[FieldIssue]:
    issues: list[FieldIssue] = []
    run_actors = {a["name"] for a in spec["actors"]}
    name = spec["algorithm"]["name"]
    for i, env in enumerate(spec["environments"]):
        roles = env.get("roles")
        if roles is None:
            continue
        p = f"environments.{i}"

        def add(path: str, message: str) -> None:
            issues.append(FieldIssue(f"{p}.{path}", message))

        if not roles:
            add("roles", "name at least one role (or leave roles out: each actor is then its own role)")
            continue
        if env["kind"] not in ROLE_KINDS:
            add("roles", f"a {env['kind']} environment cannot play roles (kinds that can: {', '.join(ROLE_KINDS)}): remove roles")
            continue
        if name not in GRPO_FAMILY:
            add("roles", f"roles are trained by the GRPO family ({', '.join(GRPO_FAMILY)}); {name} reads each actor's turns by actor: use one of those, or drop roles")
        for role, actor in roles.items():
            if actor not in run_actors:
                add(f"roles.{role}", f'unknown actor "{actor}": a role is played by one of actors[]')
            elif actor not in env["actors"]:
                add(f"roles.{role}", f'"{actor}" is not one of this environment\'s actors ({", ".join(env["actors"])}): add it to environments[{i}].actors')
            if role != actor and role in run_actors:
                add(f"roles.{role}", f'"{role}" is the name of another actor: a role named after an actor it is not played by is ambiguous in metrics and transcripts; rename the role')
        played = set(roles.values())
        idle = [a for a in env["actors"] if a not in played]
        if idle:
            them = "it" if len(idle) == 1 else "them"
            add("actors", f'{", ".join(f"{chr(34)}{a}{chr(34)}" for a in idle)} play{"s" if len(idle) == 1 else ""} no role: map a role to {them} in roles, or remove {them} from actors')
    return issues
