"""`backend: "openai"`: a frozen actor behind an OpenAI-compatible chat API (api_actor.py) as an engine.

It reads the chat view of each prompt and returns texts only: no token ids, no log-probs (an API
actor is never trained), so its `Rollout` has zero-width token tensors and `ended` None."""

from __future__ import annotations

from collections.abc import Mapping

from typing import Any, Sequence

import torch

from .api_actor import ApiActor
from .sampling import Rollout, SamplingSettings
from .base import EnginePrompt, RolloutEngine


class ApiEngine(RolloutEngine):
    name = "openai"
    reads_chat = True

    def __init__(self, actor: ApiActor):
        self.actor = actor

    def generate(self, prompts: Sequence[EnginePrompt], sampling: SamplingSettings | Mapping[str, Any]) -> Rollout:
        conversations = []
        for p in prompts:
            if p.messages is None:
                raise ValueError(f'actor "{self.actor.name}" is behind an API and reads chat messages; this prompt has none')
            conversations.append(p.messages)
        texts = self.actor.complete_many(conversations)
        b = len(texts)
        empty_ids = torch.zeros((b, 0), dtype=torch.long)
        return Rollout(empty_ids, empty_ids.clone(), empty_ids.clone(), empty_ids.clone(), torch.zeros((b, 0)), texts, None)
