"""What loading an actor's model gives back, shared by every model source (loading.py: tiny, hub, local;
run_source.py: another run's checkpoint, whose base is loaded by loading.py in turn)."""

from __future__ import annotations

from dataclasses import dataclass

from transformers import PreTrainedModel

from .tokenizer import Tokenizer


@dataclass
class LoadedModel:
    model: PreTrainedModel
    tokenizer: Tokenizer
    description: str

    @property
    def num_params(self) -> int:
        return sum(p.numel() for p in self.model.parameters())


def _eos_from_generation_config(model: PreTrainedModel) -> list[int]:
    eos = getattr(model.generation_config, "eos_token_id", None)
    if eos is None:
        return []
    return [eos] if isinstance(eos, int) else list(eos)
