"""`trainer.microBatchSize: "auto"`: the largest micro-batch whose activations fit the device's memory.

The activation model is the memory estimate's (packages/contracts/src/memory/actorMemory.ts, whose header
derives it), ported term by term so the composer's estimate and the runtime's choice agree:

- `activation_bytes_per_token_layer` = TS `activationBytesPerTokenLayer`: values kept for backward per token
  in one Llama/Qwen2 decoder layer, 7h + 2kv + 4i (4 bytes each in fp32; bf16: 2(7h + 2kv + 4i) + 8h + 10h).
- `update_bytes_per_token` = TS `estimateActorMemory`'s `activations / tokens`: every layer's activations
  (gradient checkpointing: each layer's fp32 input plus one layer recomputed), the model-level 3h fp32 values
  (final norm, the log-prob kernel's input), and one more layer's worth of working space for backward.
- gradients: with more than one micro-batch the first micro-batches' gradients are alive while the next one's
  activations build up, so the gradients that do not exist yet (`.grad is None` after `zero_grad`) are taken
  off the budget first (the estimate's `onDevice.gradients + activations`).

The budget is the device's free memory at the update (`torch.cuda.mem_get_info`, whatever is resident is
already taken), less a safety share for the allocator's fragmentation and the kernels' workspaces; on a CPU
there is no device budget and "auto" means every row at once (today's behaviour, so CPU runs are unchanged).
`TROUPE_MEMORY_BUDGET_BYTES` (the runner's environment) overrides the budget on any device, in bytes, so a
CPU test, or a user who shares a GPU with another process, can set it.

Every rank must run the same number of passes (a sharded backend's collectives), so ranks agree on the
smallest size any of them chose.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import torch

from ..launch.distributed import RankContext
from ..spec.runspec_types import ActorTraining

BUDGET_ENV = "TROUPE_MEMORY_BUDGET_BYTES"
# The share of the free device memory handed to activations: the rest covers fragmentation, cuBLAS/attention
# workspaces and the estimate's unmodelled terms (its rows are within 5 % on the H200, see issue 25).
FREE_MEMORY_SHARE = 0.85
METRIC = "update/micro_batch_size"


@dataclass(frozen=True)
class DecoderShape:
    """The architecture numbers the activation model needs (TS `ModelConfig`, less what it does not use)."""

    hidden_size: int
    layers: int
    heads: int
    kv_heads: int
    intermediate_size: int

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * (self.hidden_size // self.heads)


def activation_bytes_per_token_layer(shape: DecoderShape, bf16: bool) -> int:
    """Bytes kept for backward per token in one decoder layer (TS `activationBytesPerTokenLayer`)."""
    h, values = shape.hidden_size, 7 * shape.hidden_size + 2 * shape.kv_dim + 4 * shape.intermediate_size
    return 2 * values + 8 * h + 10 * h if bf16 else 4 * values


def update_bytes_per_token(shape: DecoderShape, bf16: bool, checkpointing: bool) -> int:
    """Activation bytes of the update per token of a micro-batch (TS `activations / tokens`)."""
    per_layer = activation_bytes_per_token_layer(shape, bf16)
    kept = shape.layers * shape.hidden_size * 4 + per_layer if checkpointing else shape.layers * per_layer
    model_level = 3 * shape.hidden_size * 4
    return kept + model_level + per_layer


def fitting_micro_batch_size(rows: int, sequence_length: int, bytes_per_token: int, budget_bytes: int | None, gradient_bytes: int = 0) -> int:
    """The largest micro-batch of `rows` rows of `sequence_length` tokens whose activations fit `budget_bytes`
    (None: no budget, every row). When one pass cannot hold every row, the gradients that several passes keep
    alive come off the budget first. At least 1 row: a run whose single row does not fit fails in the update
    with the device's own out-of-memory error, which names the allocation."""
    rows = max(1, rows)
    if budget_bytes is None:
        return rows
    per_row = max(1, bytes_per_token * max(1, sequence_length))
    if rows * per_row <= budget_bytes:
        return rows
    return max(1, min(rows, (budget_bytes - gradient_bytes) // per_row))


def device_budget(device: torch.device) -> int | None:
    """Bytes the update's activations may take: TROUPE_MEMORY_BUDGET_BYTES, else a share of CUDA's free memory,
    else None (a CPU has no device budget)."""
    override = os.environ.get(BUDGET_ENV, "").strip()
    if override:
        try:
            value = int(override)
        except ValueError as exc:
            raise ValueError(f"{BUDGET_ENV}: expected a whole number of bytes, got {override!r}") from exc
        if value < 1:
            raise ValueError(f"{BUDGET_ENV}: expected a positive number of bytes, got {value}")
        return value
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        return int(free * FREE_MEMORY_SHARE)
    return None


def decoder_shape(module: torch.nn.Module) -> DecoderShape:
    """The decoder's shape from the first Hugging Face config found in `module` (a wrapped backend module, a
    PEFT model or a critic's backbone all hold one)."""
    for sub in module.modules():
        config = getattr(sub, "config", None)
        if config is not None and getattr(config, "hidden_size", None) is not None:
            heads = int(config.num_attention_heads)
            return DecoderShape(
                hidden_size=int(config.hidden_size),
                layers=int(config.num_hidden_layers),
                heads=heads,
                kv_heads=int(getattr(config, "num_key_value_heads", None) or heads),
                intermediate_size=int(config.intermediate_size),
            )
    raise ValueError('trainer.microBatchSize: "auto" needs a Hugging Face decoder config (hidden_size, num_hidden_layers, ...) on the model')


def missing_gradient_bytes(parameters: Iterable[torch.nn.Parameter]) -> int:
    """Bytes the trainable parameters' gradients will take that are not allocated yet."""
    return sum(p.numel() * p.element_size() for p in parameters if p.requires_grad and p.grad is None)


def agree(size: int, ctx: RankContext) -> int:
    """The smallest size any rank chose, on every rank (one slot per rank in a sum)."""
    if not ctx.distributed:
        return size
    slots = [0.0] * ctx.world_size
    slots[ctx.rank] = float(size)
    return int(min(ctx.sum_floats(slots)))


@dataclass(frozen=True)
class AutoMicroBatch:
    """What "auto" chose for one update: the size, and the inputs it came from (for the log)."""

    size: int
    rows: int
    sequence_length: int
    bytes_per_token: int
    budget_bytes: int | None

    def describe(self, who: str) -> str:
        budget = "no device budget (CPU)" if self.budget_bytes is None else f"budget {self.budget_bytes / 2**20:,.2f} MiB"
        return (
            f'{who}: trainer.microBatchSize "auto" -> {self.size} of {self.rows} rows per micro-batch '
            f"({self.sequence_length} tokens each, {self.bytes_per_token:,} activation bytes per token, {budget})"
        )


def resolve_micro_batch_size(
    setting: int | str | None,
    module: torch.nn.Module,
    rows: int,
    sequence_length: int,
    ctx: RankContext,
    bf16: bool,
    checkpointing: bool,
) -> tuple[int | None, AutoMicroBatch | None]:
    """The micro-batch size to use for `setting` (a number or None: itself; "auto": sized to fit), and for
    "auto" what it chose. `rows` are the whole batch's (this rank takes ceil(rows / world_size))."""
    if setting != "auto":
        return (int(setting) if setting is not None else None), None
    per_rank = math.ceil(rows / ctx.world_size)
    device = next(module.parameters()).device
    per_token = update_bytes_per_token(decoder_shape(module), bf16, checkpointing)
    budget = device_budget(device)
    size = fitting_micro_batch_size(per_rank, sequence_length, per_token, budget, missing_gradient_bytes(module.parameters()))
    size = agree(size, ctx)
    return size, AutoMicroBatch(size, per_rank, sequence_length, per_token, budget)


def reported(chosen: AutoMicroBatch | None) -> bool:
    """An "auto" choice is reported (log, metric) when a budget sized it: on a CPU without one it is the whole
    batch, what every run did before "auto" became the default, and those runs' event streams stay as they were."""
    return chosen is not None and chosen.budget_bytes is not None


def metrics_of(chosen: AutoMicroBatch | None) -> dict[str, float]:
    """The metric of an "auto" choice that a budget sized; nothing otherwise (see `reported`)."""
    return {METRIC: float(chosen.size)} if chosen is not None and reported(chosen) else {}


def fixed_size(setting: Any) -> int | None:
    """A backend's fixed micro-batch size at build time: "auto" is chosen per update, so None there."""
    return setting if isinstance(setting, int) and not isinstance(setting, bool) else None


def resolve_for_training(
    setting: int | str | None, module: torch.nn.Module, training: ActorTraining, rows: int, sequence_length: int, ctx: RankContext
) -> tuple[int | None, AutoMicroBatch | None]:
    """`resolve_micro_batch_size` with the precision and gradient checkpointing of an actor's `training`."""
    return resolve_micro_batch_size(
        setting, module, rows, sequence_length, ctx, training.precision == "bf16", training.gradient_checkpointing
    )


class ChoiceLog:
    """Logs an "auto" choice a budget sized, the first time for each model and whenever it changes (not every step)."""

    def __init__(self, log: Callable[[str, str], None]) -> None:
        self.log = log
        self.last: dict[str, int] = {}

    def report(self, who: str, chosen: AutoMicroBatch | None) -> None:
        if chosen is not None and reported(chosen) and self.last.get(who) != chosen.size:
            self.last[who] = chosen.size
            self.log("info", chosen.describe(who))
