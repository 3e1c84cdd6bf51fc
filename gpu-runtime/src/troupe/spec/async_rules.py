"""The contracts' rules for asynchronous rollouts (packages/contracts/src/asyncRules.ts `asyncIssues`), mirrored
for specs that reach the runtime without a Troupe client; tests/test_async_rules.py runs the contracts' cases.

Every environment kind is accepted: the producers run the rollout phases every kind implements (rollout/collect.py
through envs/protocol.py), whole episodes of multi-turn environments included, with any number of ranks (each
rank runs its own producer, as each rank of the synchronous loop samples) and a sharded training backend (the
producer samples from a plain copy loaded with the gathered full parameters). What stays refused is what the
producer cannot copy: a vLLM engine."""

from __future__ import annotations

from typing import Any

from ..algorithms.names import ASYNC_ALGORITHMS
from .issues import FieldIssue

WHY = "asynchronous rollouts (algorithm.async)"


def async_issues(spec: dict[str, Any]) -> list[FieldIssue]:
    algorithm = spec["algorithm"]
    if algorithm.get("async") is None:
        return []
    issues: list[FieldIssue] = []
    if algorithm["name"] not in ASYNC_ALGORITHMS:
        issues.append(FieldIssue("algorithm.async", f'{WHY} feed the GRPO family ({", ".join(ASYNC_ALGORITHMS)}), not "{algorithm["name"]}": remove async'))
    issues.extend(copy_issues(spec, WHY, "algorithm.async", per_rank=True))
    return issues


def copy_issues(spec: dict[str, Any], why: str, remove: str, per_rank: bool = False) -> list[FieldIssue]:
    """What sampling from a plain one-process copy of each actor rules out (asynchronous rollouts and rollout
    workers both sample so): several ranks, a vLLM engine, a sharded training backend. `remove` is the field
    whose removal lifts the refusal. `per_rank`: the caller makes one copy per rank from the gathered full
    parameters (the async producers), so several ranks and a sharded backend are no obstacle."""
    issues: list[FieldIssue] = []
    for i, a in enumerate(spec["actors"]):
        if a["backend"] == "openai":
            continue
        placement = a["placement"]
        ranks = len(placement["gpus"]) if placement["gpus"] else placement.get("processes") or 1
        if ranks > 1 and not per_rank:
            what = "gpus" if placement["gpus"] else "processes"
            issues.append(FieldIssue(f"actors.{i}.placement.{what}", f"{why} run in one process; this actor asks for {ranks} ranks: use one, or remove {remove}"))
        if a["backend"] == "vllm":
            issues.append(
                FieldIssue(
                    f"actors.{i}.backend",
                    f"{why} sample from a copy of the weights with transformers; a colocated vLLM engine sleeps while its actor trains: "
                    f"use backend hf, or remove {remove}",
                )
            )
        if a["trainable"] and a["training"]["backend"] != "torch" and not per_rank:
            issues.append(
                FieldIssue(
                    f"actors.{i}.training.backend",
                    f'{why} copy each trainable actor\'s plain torch module; "{a["training"]["backend"]}" shards it: use torch, or remove {remove}',
                )
            )
    return issues
