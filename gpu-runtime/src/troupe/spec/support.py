"""What this runtime (the CPU / plain-torch path) runs today, and a field-named refusal for the rest.

The RunSpec already describes everything Troupe will do; this module is the one place that says
which of it the runtime implements, so a spec is refused up front (exit 2) instead of failing
half-way through a run.
"""

from __future__ import annotations

from typing import Any

import jinja2

from ..grpo import SUPPORTED_LOSS_TYPES, loss_type_issue
from ..rewards import param_issues
from .issues import FieldIssue

GPU_EXTRA = "pip install troupe[gpu]"
# `reward/mean` and `reward/std` describe the combined reward; a component may not shadow them.
RESERVED_REWARD_NAMES = ("mean", "std")


def support_issues(spec: dict[str, Any], cuda_available: bool) -> list[FieldIssue]:
    issues: list[FieldIssue] = []

    def no(path: str, message: str) -> None:
        issues.append(FieldIssue(path, message))

    for i, actor in enumerate(spec["actors"]):
        p = f"actors.{i}"
        backend = actor["backend"]
        if backend == "vllm":
            no(f"{p}.backend", f'"vllm" needs CUDA and the gpu extra ({GPU_EXTRA}); use "hf" here')
        elif backend == "openai":
            no(f"{p}.backend", '"openai" (frozen actors behind an API) is not supported yet')
        if not actor["trainable"]:
            no(f"{p}.trainable", "frozen actors are not supported yet (they join with multi-actor environments)")
        training = actor["training"]
        if "lora" in training:
            no(f"{p}.training.lora", "LoRA is not supported yet")
        for what in ("params", "optimizer"):
            if training["offload"][what]:
                no(f"{p}.training.offload.{what}", f"offloading needs DeepSpeed ZeRO-3 (the gpu extra, {GPU_EXTRA}); not supported yet")
        if training["lossType"] not in SUPPORTED_LOSS_TYPES:
            no(f"{p}.training.lossType", f'"{training["lossType"]}" is not supported yet (supported: {", ".join(SUPPORTED_LOSS_TYPES)})')
        else:
            clash = loss_type_issue(spec["algorithm"]["name"], training["lossType"])
            if clash:
                no(f"{p}.training.lossType", clash)
        if len(actor["placement"]["gpus"]) > 1:
            no(f"{p}.placement.gpus", "an actor on several GPUs needs accelerate + DeepSpeed; not supported yet")

    for i, dataset in enumerate(spec["datasets"]):
        source = dataset["source"]
        p = f"datasets.{i}.source"
        if source["kind"] == "huggingface":
            no(f"{p}.kind", '"huggingface" datasets are not supported yet; export the split to jsonl and use kind "file"')
        elif source["kind"] == "file" and source["format"] == "parquet":
            no(f"{p}.format", '"parquet" is not supported yet (jsonl and csv are)')

    for i, reward in enumerate(spec["rewards"]):
        source = reward["source"]
        p = f"rewards.{i}"
        if reward["name"] in RESERVED_REWARD_NAMES:
            no(f"{p}.name", f'"{reward["name"]}" is reserved: reward/{reward["name"]} is a metric of the combined reward')
        if source["kind"] == "python":
            no(f"{p}.source.kind", '"python" rewards are not supported yet (builtin rewards are)')
        else:
            issues.extend(param_issues(source["name"], source["params"], f"{p}.source.params"))
        if reward["scope"] == "conversation":
            no(f"{p}.scope", '"conversation" scope is not supported yet (single_turn environments score completions)')

    for i, env in enumerate(spec["environments"]):
        p = f"environments.{i}"
        if env["kind"] != "single_turn":
            no(f"{p}.kind", f'"{env["kind"]}" is not supported yet (single_turn is)')
        template = env["prompt"].get("template")
        if template is not None:
            try:
                jinja2.Environment(undefined=jinja2.StrictUndefined).parse(template)
            except jinja2.TemplateSyntaxError as e:
                no(f"{p}.prompt.template", f"template syntax error on line {e.lineno}: {e.message}")

    algorithm = spec["algorithm"]["name"]
    if algorithm not in SUPPORTED_LOSS_TYPES:
        no("algorithm.name", f'"{algorithm}" is not supported yet (supported: {", ".join(SUPPORTED_LOSS_TYPES)})')

    trainer = spec["trainer"]
    if trainer["device"] == "cuda" and not cuda_available:
        no("trainer.device", '"cuda" asked for, but CUDA is not available here (torch.cuda.is_available() is false)')
    if trainer["evalEvery"] > 0:
        no("trainer.evalEvery", "evaluation during training is not supported yet; set it to 0")
    return issues
