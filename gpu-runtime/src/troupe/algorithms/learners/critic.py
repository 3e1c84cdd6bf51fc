"""Critics of the PPO family: a value model is a causal LM's body with a linear value head.

- ppo / ippo: one critic per trainable actor, a fresh copy of the actor's base model (pretrained
  weights for a Hugging Face model, a seeded initialisation for a tiny preset). It reads exactly what
  the actor reads (its own view of a conversation: decentralised) and values every token it produced.
- mappo: one centralised critic per multi-actor environment, built on the environment's first
  trainable actor's base, that reads the whole conversation (every message, whoever may see it) and
  has one value head per actor of the environment.

A critic trains through the same train-backend seam as actors (`backends/`: torch, fsdp2, deepspeed)
with its actor's training settings (precision, offload, optimizer), so it is sharded, offloaded and
checkpointed like one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from ...engines.train import BackendSettings, TrainBackend, build_backend
from ...launch.distributed import RankContext
from ...models.loading import load_actor_model
from ...engines.rollout.sampling import Rollout
from ...models.tokenizer import Tokenizer
from ..micro_batch import fixed_size
from .value_norm import ValueNorm

if TYPE_CHECKING:
    from ...actors import Actor


class ValueModel(torch.nn.Module):
    """values[b, i] = head(hidden state at position i): the value of the state after token i."""

    def __init__(self, lm: Any, heads: int = 1):
        super().__init__()
        self.body = getattr(lm, lm.base_model_prefix)
        self.head = torch.nn.Linear(lm.config.hidden_size, heads)
        torch.nn.init.zeros_(self.head.weight)  # values start at 0 (the head's bias learns the mean return first)
        torch.nn.init.zeros_(self.head.bias)
        # fsdp2 shards the body's decoder layers (backends/fsdp2.py reads this).
        self._no_split_modules = getattr(lm, "_no_split_modules", None)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        position_ids = (attention_mask.cumsum(dim=1) - 1).clamp(min=0)
        hidden = self.body(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, use_cache=False).last_hidden_state
        return self.head(hidden).float()  # [B, L, heads]


def completion_values(model: ValueModel, rollout: Rollout, head: int = 0) -> torch.Tensor:
    """[B, T]: the value of the state before each completion token (the hidden state that predicts it),
    aligned with `policy.completion_logprobs`."""
    input_ids = torch.cat([rollout.prompt_ids, rollout.completion_ids], dim=1)
    attention_mask = torch.cat([rollout.prompt_mask, rollout.completion_mask], dim=1)
    p, t = rollout.prompt_ids.shape[1], rollout.completion_ids.shape[1]
    return model(input_ids, attention_mask)[:, p - 1 : p + t - 1, head]


@dataclass
class Critic:
    name: str  # "<actor>/critic" or "<environment>/critic"
    backend: TrainBackend
    tokenizer: Tokenizer
    device: torch.device
    heads: list[str]  # the actors it values (one head each); ppo/ippo: just its actor
    norm: ValueNorm | None = None  # algorithm.valueNorm: the model's outputs are normalised values

    def denormalize(self, outputs: torch.Tensor) -> torch.Tensor:
        """The values in the returns' units from the model's outputs."""
        return self.norm.denormalize(outputs) if self.norm is not None else outputs

    @property
    def model(self) -> ValueModel:
        return self.backend.module  # type: ignore[return-value]

    def head_of(self, actor: str) -> int:
        return self.heads.index(actor)


def build_critic(
    name: str,
    actor: "Actor",
    heads: list[str],
    learning_rate: float | None,
    value_norm: bool,
    ctx: RankContext,
    work_dir: Path,
    micro_batch_size: int | str | None,
) -> Critic:
    """A copy of the actor's base with a value head per actor in `heads`, on the actor's device, trained with the
    actor's training settings (`learning_rate`: algorithm.criticLearningRate, when set)."""
    device = actor.device
    loaded = load_actor_model(actor.spec, actor.index, work_dir)  # its JSON document: models/ reads one
    model = ValueModel(loaded.model, heads=len(heads)).to(device)
    training = actor.section.training
    if learning_rate is not None:
        training = replace(training, learning_rate=learning_rate)
    if training.gradient_checkpointing:
        loaded.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    # "auto" is chosen per update (micro_batch.py): the backend (DeepSpeed's bookkeeping) gets no fixed size.
    backend = build_backend(model, BackendSettings(name, training, device, ctx, fixed_size(micro_batch_size)))
    return Critic(name, backend, loaded.tokenizer, device, heads, ValueNorm() if value_norm else None)
