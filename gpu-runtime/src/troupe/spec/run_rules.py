"""The contracts' run-wide rules (packages/contracts/src/actorRules.ts `runIssues`), mirrored for specs that
reach the runtime without a Troupe client (`python -m troupe run spec.json`). tests/test_run_rules.py runs
the same cases as the contracts' tests, so the two cannot drift apart unnoticed."""

from __future__ import annotations

from typing import Any

from .async_rules import async_issues
from .issues import FieldIssue


def actor_ranks(actor: dict[str, Any]) -> int | None:
    if actor["backend"] == "openai":
        return None
    placement = actor["placement"]
    if placement["gpus"]:
        return len(placement["gpus"])
    return placement.get("processes")


def run_rule_issues(spec: dict[str, Any]) -> list[FieldIssue]:
    issues: list[FieldIssue] = []
    placed = [(i, a, actor_ranks(a)) for i, a in enumerate(spec["actors"]) if actor_ranks(a) is not None]
    if placed:
        _, first, first_ranks = placed[0]
        for i, a, ranks in placed[1:]:
            if ranks != first_ranks:
                what = "gpus" if a["placement"]["gpus"] else "processes"
                issues.append(
                    FieldIssue(
                        f"actors.{i}.placement.{what}",
                        f'asks for {ranks} ranks but "{first["name"]}" asks for {first_ranks}: all actors of a run share its ranks '
                        "(give each the same number of GPUs or processes, or none)",
                    )
                )
    gpu_hosts = [(i, a) for i, a, _ in placed if a["placement"]["gpus"]]
    cpu_hosts = [(i, a) for i, a, _ in placed if a["placement"].get("processes") is not None]
    if gpu_hosts and cpu_hosts:
        issues.append(
            FieldIssue(f"actors.{cpu_hosts[0][0]}.placement.processes", f'"{gpu_hosts[0][1]["name"]}" runs on GPUs; one run does not mix GPU ranks and CPU processes')
        )
    between = spec["trainer"].get("offloadBetweenPhases")
    shared = shares_a_gpu(spec["actors"])
    for i, a in enumerate(spec["actors"]):
        training = a["training"]
        if training["backend"] != "deepspeed":
            continue
        offload = training["offload"]
        if between is True and (offload["optimizer"] or offload["params"]):
            what = "optimizer" if offload["optimizer"] else "parameters"
            issues.append(
                FieldIssue(
                    "trainer.offloadBetweenPhases",
                    f'"{a["name"]}" keeps its {what} on the CPU with DeepSpeed (training.offload); DeepSpeed cannot also offload '
                    "its states between phases (DeepSpeed issue 6596): turn one off",
                )
            )
        elif between is None and shared:
            for part in ("optimizer", "params"):
                if offload[part]:
                    issues.append(
                        FieldIssue(
                            f"actors.{i}.training.offload.{part}",
                            "actors here share a GPU, so offloading between phases is on by default, and DeepSpeed cannot offload its states "
                            f"while it keeps its {'parameters' if part == 'params' else 'optimizer'} on the CPU (DeepSpeed issue 6596): "
                            "set trainer.offloadBetweenPhases to false, or turn this off",
                        )
                    )
    issues.extend(async_issues(spec))
    return issues


def shares_a_gpu(actors: list[dict[str, Any]]) -> bool:
    seen: set[int] = set()
    for a in actors:
        if a["backend"] == "openai":
            continue
        for gpu in a["placement"]["gpus"]:
            if gpu in seen:
                return True
            seen.add(gpu)
    return False
