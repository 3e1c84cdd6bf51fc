"""`backend: "hf"`: transformers `generate` on the trainer's own module (rollout.py's `sample`).

The engine owns no weights: it samples with the very module the train backend updates, so there is
nothing to push, and sleep/wake are left to the residency manager (residency.py), which moves the
trainer's parameters themselves. On CUDA a bf16-trained actor samples with a bf16 copy of those
parameters, refreshed before every generate (sampling_copy.py), and the decode loop is the static
cache with a compiled step (static_decode.py, hooked in rollout.sample)."""

from __future__ import annotations

from collections.abc import Mapping

from typing import Any, Sequence

import torch

from .sampling import Rollout, SamplingSettings, sample
from .base import EnginePrompt, RolloutEngine
from .sampling_copy import sampling_module


class HFEngine(RolloutEngine):
    name = "hf"

    def __init__(self, model: Any, tokenizer: Any, device: torch.device, sampling_dtype: torch.dtype | None = None):
        self.model = model
        self.tokenizer = tokenizer
        self.device = device
        # bf16: sample with a refreshed bf16 copy of the trainer's float32 weights (sampling_copy.py).
        self.sampling_dtype = sampling_dtype

    def generate(self, prompts: Sequence[EnginePrompt], sampling: SamplingSettings | Mapping[str, Any]) -> Rollout:
        model = sampling_module(self.model, self.sampling_dtype)
        return sample(model, self.tokenizer, [p.token_ids for p in prompts], sampling, self.device)
