"""What `rollout.workers` (rollout/workers.py) can honour today, refused by field path otherwise.

Built: CPU worker processes (`processes: true`) sampling on policy for a GRPO-family run whose actors are one-rank
transformers models trained with torch. Workers feed asynchronous rollouts too
(`algorithm.async`: they sample ahead, weights through shared memory). GPU workers (`gpus`) on a CUDA host: on policy the
weights come by an NCCL broadcast; feeding async rollouts, through the same host shared-memory slots (a collective
would make the trainer wait for workers still sampling). Not built yet: DAPO dynamic sampling (its refills draw rows a worker was not given), vLLM engines, sharded backends,
several trainer ranks, offline learners (nothing to sample)."""

from __future__ import annotations

from typing import Any

from ..algorithms.names import ASYNC_ALGORITHMS
from .async_rules import copy_issues, vllm_copy_issues
from .issues import FieldIssue

WHY = "rollout workers (rollout.workers)"


def rollout_issues(spec: dict[str, Any], cuda_available: bool) -> list[FieldIssue]:
    workers = (spec.get("rollout") or {}).get("workers")
    if workers is None:
        return []
    issues: list[FieldIssue] = []
    # The contracts' refinement (runSpec.ts RolloutWorkersSpec), which the exported JSON Schema cannot carry.
    if (workers.get("gpus") is None) == (workers.get("processes") is None):
        issues.append(FieldIssue("rollout.workers.processes", "give the workers either gpus (device ids) or processes: true, not both or neither"))
    elif workers.get("gpus") is not None and len(workers["gpus"]) != workers["count"]:
        issues.append(FieldIssue("rollout.workers.gpus", f'one GPU per worker: {workers["count"]} workers, {len(workers["gpus"])} GPUs'))
    algorithm = spec["algorithm"]
    if workers.get("gpus") is not None:
        # GPU workers take the weights by an NCCL broadcast from a CUDA trainer (rolloutRules.ts says the same).
        if not cuda_available:
            issues.append(FieldIssue("rollout.workers.gpus", f"GPU {WHY} need a CUDA host and this runner has none: use processes: true (CPU workers)"))
        if spec["trainer"].get("device") == "cpu":
            issues.append(FieldIssue("trainer.device", f"GPU {WHY} take their weights from a CUDA trainer (NCCL): set trainer.device to cuda or auto"))
    elif spec["trainer"].get("device") == "cuda":
        issues.append(FieldIssue("trainer.device", f"CPU {WHY} serve a CPU trainer: set trainer.device to cpu, or remove rollout.workers"))
    if algorithm["name"] not in ASYNC_ALGORITHMS:
        issues.append(FieldIssue("rollout.workers", f'{WHY} sample for the GRPO family ({", ".join(ASYNC_ALGORITHMS)}), not "{algorithm["name"]}": remove rollout.workers'))
    if algorithm["dynamicSampling"]["enabled"]:
        issues.append(FieldIssue("algorithm.dynamicSampling.enabled", f"{WHY} sample the rows the trainer drew; dynamic sampling's refills draw more: turn it off, or remove rollout.workers"))
    issues.extend(copy_issues(spec, WHY, "rollout.workers"))
    issues.extend(vllm_copy_issues(spec, WHY, "rollout.workers"))
    return issues
