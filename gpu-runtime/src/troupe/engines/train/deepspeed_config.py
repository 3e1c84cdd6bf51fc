"""The DeepSpeed JSON config for one actor (`training.backend: "deepspeed"`): pure, no DeepSpeed import.

Keys are DeepSpeed's documented ones (https://www.deepspeed.ai/docs/config-json/, checked against
deepspeed/runtime/config.py and zero/config.py of DeepSpeed 0.19.6):

- `zero_optimization.stage` 3: parameters, gradients and optimizer state partitioned over the ranks.
- `zero_optimization.offload_param` / `offload_optimizer` `{device: "cpu", pin_memory}` from
  `training.offload`. With `offload_optimizer` DeepSpeed builds `DeepSpeedCPUAdam` from the
  `optimizer` block below (the update runs on the host); without it, `FusedAdam` on the GPU, the only
  optimizer whose states `engine.offload_states` can move between phases.
- `gradient_clipping` = `training.maxGradNorm`. The reference library wrote `max_grad_norm`, which
  DeepSpeed ignores at the top level (and rejects inside `optimizer.params`), so its clipping was
  always Accelerate's default 1.0 (`_prepare_deepspeed` fills `gradient_clipping` only when it is
  absent or "auto").
- `bf16.enabled` from `training.precision`: bf16 parameters and compute, fp32 master weights and
  optimizer state in the ZeRO optimizer.
- `train_micro_batch_size_per_gpu`, `gradient_accumulation_steps`, `train_batch_size`: given as
  numbers, never "auto" (Accelerate can fill "auto" only from a DataLoader, which we do not pass).
  The backend sets each micro-batch's accumulation boundary itself and calls
  `backward(..., scale_wrt_gas=False)`, so the accumulation count is bookkeeping for DeepSpeed's
  sample counters, not a divisor of the loss.
- `stage3_gather_16bit_weights_on_model_save` true: `accelerator.get_state_dict` /
  `engine._zero3_consolidated_16bit_state_dict` refuse to gather full weights without it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from ...spec.runspec_types import ActorTraining

DEEPSPEED_PIP = "pip install deepspeed"
# torch.optim.AdamW's default, which the torch and fsdp2 backends use: the same update on every backend.
ADAM_EPS = 1e-8


def training_section(training: ActorTraining | Mapping[str, Any]) -> ActorTraining:
    """The actor's typed `training` section; its JSON document (the spec rules' and tests' form) is read into it,
    absent fields at the schema's defaults."""
    return training if isinstance(training, ActorTraining) else ActorTraining.from_dict(training)


def deepspeed_config(
    training: ActorTraining | Mapping[str, Any],
    trainer_micro_batch: int | None,
    world_size: int,
    device: torch.device | str,
    accumulation_steps: int = 1,
) -> dict[str, Any]:
    """The DeepSpeed config for an actor's `training` section (typed, or its document), the trainer's
    `microBatchSize` (None: the whole batch in one pass, booked as 1 per GPU), the run's world size and the device
    the backend trains on (pinned host buffers only for CUDA)."""
    t = training_section(training)
    issues = deepspeed_training_issues(t)
    if issues:
        path, message = issues[0]
        raise ValueError(f"{path}: {message}")
    if world_size < 1 or accumulation_steps < 1:
        raise ValueError(f"world_size ({world_size}) and accumulation_steps ({accumulation_steps}) must be at least 1")
    # Pinned host buffers need CUDA; on a CPU host pinning is refused by torch.
    pin = torch.device(device).type == "cuda"
    micro = int(trainer_micro_batch or 1)
    zero: dict[str, Any] = {
        "stage": 3,
        "stage3_gather_16bit_weights_on_model_save": True,
    }
    if t.offload.params:
        zero["offload_param"] = {"device": "cpu", "pin_memory": pin}
    if t.offload.optimizer:
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": pin}
    beta1, beta2 = t.betas
    return {
        "train_batch_size": micro * accumulation_steps * world_size,
        "train_micro_batch_size_per_gpu": micro,
        "gradient_accumulation_steps": accumulation_steps,
        "gradient_clipping": float(t.max_grad_norm),
        "bf16": {"enabled": t.precision == "bf16"},
        "fp16": {"enabled": False},
        "zero_optimization": zero,
        "optimizer": {
            "type": "AdamW",
            "params": {
                "lr": float(t.learning_rate),
                "betas": [float(beta1), float(beta2)],
                "eps": ADAM_EPS,
                "weight_decay": float(t.weight_decay),
            },
        },
        # DeepSpeed prints a progress line every `steps_per_print` steps on stdout, which is our event
        # stream's neighbour: never (Accelerate sets inf, which is not JSON; a huge int is).
        "steps_per_print": 2**62,
        "wall_clock_breakdown": False,
    }


def deepspeed_training_issues(training: ActorTraining | Mapping[str, Any]) -> list[tuple[str, str]]:
    """(field path under the actor, message) for `training` settings (typed, or the document) this backend cannot run."""
    t = training_section(training)
    issues: list[tuple[str, str]] = []
    if t.optimizer != "adamw":
        issues.append(
            (
                "training.optimizer",
                f'"{t.optimizer}" is not available with training.backend "deepspeed": DeepSpeed ZeRO-3 here '
                'runs AdamW (FusedAdam, or DeepSpeedCPUAdam with offload.optimizer); use "adamw" or another backend',
            )
        )
    if t.lora is not None:
        # Untested here, and shared-base LoRA (shared_lora.py) swaps the backend's module for a wrapper,
        # which would bypass the engine's forward.
        issues.append(
            (
                "training.lora",
                'LoRA is not available with training.backend "deepspeed" yet; use "torch" or "fsdp2" for LoRA actors',
            )
        )
    return issues


def deepspeed_actor_issues(
    training: ActorTraining | Mapping[str, Any], *, deepspeed_installed: bool, cuda_available: bool, offload_between_phases: bool
) -> list[tuple[str, str]]:
    """Everything that stops an actor with `training.backend: "deepspeed"` here, as (path under the
    actor, message), for the support rules: DeepSpeed missing, no CUDA (Accelerate runs DeepSpeed only on
    an accelerator), settings the backend refuses, and between-phase offload where DeepSpeed cannot move
    states (`offload_param` on: offload_states asserts; `offload_optimizer` on: issue 6596).
    `offload_between_phases` is the effective value (the trainer's, or its default)."""
    t = training_section(training)
    issues: list[tuple[str, str]] = []
    if not deepspeed_installed:
        issues.append(("training.backend", f'"deepspeed" needs DeepSpeed, which is not installed here ({DEEPSPEED_PIP})'))
    if not cuda_available:
        issues.append(("training.backend", '"deepspeed" needs CUDA (Accelerate runs DeepSpeed only on an accelerator); use "fsdp2" on CPU'))
    issues.extend(deepspeed_training_issues(t))
    if offload_between_phases:
        for what, why in (("params", "not supported for offloaded parameters"), ("optimizer", "DeepSpeed issue 6596")):
            if getattr(t.offload, what):
                issues.append(
                    (
                        f"training.offload.{what}",
                        f"DeepSpeed cannot offload this actor's states between phases while it keeps its {what} on the CPU "
                        f"({why}): turn off trainer.offloadBetweenPhases or this offload",
                    )
                )
    return issues
