"""The PPO family's rules (packages/contracts/src/ppoRules.ts `ppoIssues`), mirrored for specs that reach the
runtime without a Troupe client. tests/test_ppo_rules.py runs the cases of tests/fixtures/ppo_rules.cases.json,
which the contracts' test runs too."""

from __future__ import annotations

from typing import Any

from ..algorithms.names import PPO_FAMILY as PPO_ALGORITHMS
from .issues import FieldIssue

SINGLE_TURN_KINDS = ("single_turn",)


def ppo_rule_issues(spec: dict[str, Any]) -> list[FieldIssue]:
    issues: list[FieldIssue] = []

    def add(path: str, message: str) -> None:
        issues.append(FieldIssue(path, message))

    algorithm = spec["algorithm"]
    name = algorithm["name"]
    if name not in PPO_ALGORITHMS:
        critic = f'read only by the PPO family (ppo, ippo, mappo), and algorithm.name is "{name}"'
        if algorithm.get("criticLearningRate") is not None:
            add("algorithm.criticLearningRate", critic)
        if algorithm.get("valueNorm") is not None:
            add("algorithm.valueNorm", critic)
        return issues
    if name == "mappo":
        for i, env in enumerate(spec["environments"]):
            if env["kind"] in SINGLE_TURN_KINDS:
                add(
                    f"environments.{i}.kind",
                    f"mappo's centralised critic values every actor's turns of a conversation, and a {env['kind']} environment has one actor "
                    "and one turn: use ppo (or ippo) for it",
                )
    if algorithm["dynamicSampling"]["enabled"]:
        add(
            "algorithm.dynamicSampling.enabled",
            f"dynamic sampling replaces GRPO groups whose rewards are all equal; {name} takes its advantages from a critic, not from groups: turn it off",
        )
    # algorithm.async is refused for every learner outside the GRPO family (spec/async_rules.py).
    for i, actor in enumerate(spec["actors"]):
        loss_type = actor["training"]["lossType"]
        if loss_type != "grpo":
            add(
                f"actors.{i}.training.lossType",
                f"{name}'s policy loss is the clipped objective averaged over tokens; lossType \"{loss_type}\" is a GRPO-family choice: leave it at \"grpo\"",
            )
    return issues
