"""The contracts' rules for asynchronous rollouts (packages/contracts/src/asyncRules.ts `asyncIssues`), mirrored
for specs that reach the runtime without a Troupe client; tests/test_async_rules.py runs the contracts' cases.

Every environment kind is accepted: the producers run the rollout phases every kind implements (rollout/collect.py
through envs/protocol.py), whole episodes of multi-turn environments included, with any number of ranks (each
rank runs its own producer, as each rank of the synchronous loop samples) and a sharded training backend (the
producer samples from a plain copy loaded with the gathered full parameters). A vLLM actor's engine is not copied:
the producer thread samples with it and pushes each update to it, so the engine must stay awake while its actor
trains (`vllm.sleepLevel: 0`, `vllm_async_issues`)."""

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
    issues.extend(vllm_async_issues(spec))
    return issues


def vllm_async_issues(spec: dict[str, Any]) -> list[FieldIssue]:
    """The producer samples ahead with each vLLM actor's own engine while the trainer trains, so no engine may
    sleep between phases: it keeps its `gpuMemoryUtilization` share of the GPU throughout (`sleepLevel: 0`)."""
    issues: list[FieldIssue] = []
    for i, a in enumerate(spec["actors"]):
        level = int((a.get("vllm") or {}).get("sleepLevel", 1))
        if a["backend"] == "vllm" and level != 0:
            issues.append(
                FieldIssue(
                    f"actors.{i}.vllm.sleepLevel",
                    f"{WHY} keep sampling with the vLLM engine while its actor trains, so the engine cannot sleep to make room "
                    f"(level {level}): set vllm.sleepLevel to 0 (the engine keeps its gpuMemoryUtilization share of the GPU), or remove algorithm.async",
                )
            )
    return issues


def vllm_copy_issues(spec: dict[str, Any], why: str, remove: str) -> list[FieldIssue]:
    """A sampler that copies the actor's weights into transformers (rollout workers) cannot copy a vLLM engine."""
    issues: list[FieldIssue] = []
    for i, a in enumerate(spec["actors"]):
        if a["backend"] == "vllm":
            issues.append(FieldIssue(f"actors.{i}.backend", f"{why} sample from a copy of the weights with transformers, not a vLLM engine: use backend hf, or remove {remove}"))
    return issues


def copy_issues(spec: dict[str, Any], why: str, remove: str, per_rank: bool = False) -> list[FieldIssue]:
    """What sampling from a plain one-process copy of each actor rules out (asynchronous rollouts and rollout
    workers both sample so): several ranks, a sharded training backend. (A vLLM engine: each caller's own rule,
    `vllm_async_issues`, `vllm_copy_issues`.) `remove` is the field whose removal lifts the refusal. `per_rank`:
    the caller makes one copy per rank from the gathered full parameters (the async producers), so several ranks
    and a sharded backend are no obstacle."""
    issues: list[FieldIssue] = []
    for i, a in enumerate(spec["actors"]):
        if a["backend"] == "openai":
            continue
        placement = a["placement"]
        ranks = len(placement["gpus"]) if placement["gpus"] else placement.get("processes") or 1
        if ranks > 1 and not per_rank:
            what = "gpus" if placement["gpus"] else "processes"
            issues.append(FieldIssue(f"actors.{i}.placement.{what}", f"{why} run in one process; this actor asks for {ranks} ranks: use one, or remove {remove}"))
        if a["trainable"] and a["training"]["backend"] != "torch" and not per_rank:
            issues.append(
                FieldIssue(
                    f"actors.{i}.training.backend",
                    f'{why} copy each trainable actor\'s plain torch module; "{a["training"]["backend"]}" shards it: use torch, or remove {remove}',
                )
            )
    return issues
