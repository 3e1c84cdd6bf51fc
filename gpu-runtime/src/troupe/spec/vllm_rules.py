"""`backend: "vllm"` on this host: the package must be installed (and CUDA present, sleep mode needs it), and
the actor rules of packages/contracts/src/actorRules.ts about vLLM, mirrored (same paths, same words) for
specs that reach the runtime without a Troupe client."""

from __future__ import annotations

import importlib.util
from typing import Any

from .issues import FieldIssue

VLLM_INSTALL = 'pip install "troupe[gpu]" (vllm>=0.22,<0.34)'


def vllm_available() -> bool:
    return importlib.util.find_spec("vllm") is not None


def vllm_host_issue(cuda_available: bool) -> str | None:
    """Why this host cannot run a vLLM actor, or None. Tests that run the stand-in engine replace this."""
    if not vllm_available():
        return f'"vllm" needs the vllm package, which is not installed on this host ({VLLM_INSTALL}): use "hf" here'
    if not cuda_available:
        return '"vllm" samples on CUDA GPUs (its sleep mode needs CUDA), and this host has none: use "hf" here'
    return None


def vllm_actor_issues(actor: dict[str, Any], p: str) -> list[FieldIssue]:
    issues: list[FieldIssue] = []
    settings = actor.get("vllm")
    if settings is not None and actor["backend"] != "vllm":
        issues.append(FieldIssue(f"{p}.vllm", f'`vllm` settings are only used by the vllm backend; this actor samples with "{actor["backend"]}"'))
    if actor["backend"] != "vllm":
        return issues
    if actor["model"]["source"] == "tiny":
        issues.append(FieldIssue(f"{p}.backend", "tiny presets are built in-process with a character tokenizer that vLLM cannot load: use backend hf"))
    elif actor["model"]["source"] not in ("huggingface", "local"):
        issues.append(FieldIssue(f"{p}.model.source", f'the vLLM engine loads a Hugging Face id or a local folder, not a "{actor["model"]["source"]}" model: use backend hf'))
    if settings is not None:
        gpus = len(actor["placement"]["gpus"])
        tp = int(settings.get("tensorParallel", 1))
        if tp > 1 and tp != gpus:
            issues.append(
                FieldIssue(f"{p}.vllm.tensorParallel", f"shards the engine over {tp} GPUs, but the actor is placed on {gpus}: give placement.gpus that many GPUs, or use 1")
            )
        if not actor["trainable"] and int(settings.get("sleepLevel", 1)) == 2:
            issues.append(
                FieldIssue(f"{p}.vllm.sleepLevel", "level 2 drops the weights while the others train, and a frozen actor has no trainer to push them back: use 1")
            )
    return issues
