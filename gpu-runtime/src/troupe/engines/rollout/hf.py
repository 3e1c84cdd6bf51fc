"""`backend: "hf"`: transformers `generate` on the trainer's own module (rollout.py's `sample`).

The engine owns no weights: it samples with the very module the train backend updates, so there is
nothing to push, and sleep/wake are left to the residency manager (residency.py), which moves the
trainer's parameters themselves."""

from __future__ import annotations

from typing import Any, Sequence

import torch

from .sampling import Rollout, sample
from .base import EnginePrompt, RolloutEngine


class HFEngine(RolloutEngine):
    name = "hf"

    def __init__(self, model: Any, tokenizer: Any, device: torch.device):
        self.model = model
        self.tokenizer = tokenizer
        self.device = device

    def generate(self, prompts: Sequence[EnginePrompt], sampling: dict[str, Any]) -> Rollout:
        return sample(self.model, self.tokenizer, [p.token_ids for p in prompts], sampling, self.device)
