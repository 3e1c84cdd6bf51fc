"""The rollout-engine seam: what the training loop asks of the thing that samples an actor's turns.

One class per engine (`hf.py`: transformers `generate` on the trainer's own model; `vllm_engine.py`: a
colocated vLLM engine with sleep mode and in-memory weight sync; `api.py`: an OpenAI-compatible chat
API). The loop, `run_turns` and the single-turn path call only this interface, never a model.

The order of one weight sync (sync.py), the same for every engine:
    wake(["weights"]) -> push_weights(one parameter at a time) -> reset_prefix_cache() -> wake(["kv_cache"])
and `sleep(level)` while the actors train (level 1: weights backed up on the host, KV cache dropped;
level 2: both dropped, so the weights are unusable until pushed again).
"""

from __future__ import annotations

from collections.abc import Mapping

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import torch

from .sampling import Rollout, SamplingSettings

WAKE_TAGS = ("weights", "kv_cache")
SLEEP_LEVELS = (1, 2)


@dataclass(frozen=True)
class EnginePrompt:
    """One request: the context as the actor's token ids, and (for engines that read text, i.e. API
    actors) the same context as chat messages."""

    token_ids: list[int]
    messages: list[dict[str, str]] | None = None


class EngineStateError(RuntimeError):
    """An engine used out of order (generate while asleep, a push while its weights sleep)."""


class RolloutEngine(ABC):
    """Samples an actor's completions. `generate` returns the trainer's `Rollout` shape: left-padded
    prompts, right-padded completions with the sampler's own token ids, log-probs (float32) and
    `ended` (an end-of-sequence was drawn); `texts` are the decoded completions (EOS dropped)."""

    name: str = "?"
    # True: reads `EnginePrompt.messages` and returns texts only (no token ids, no log-probs): API actors.
    reads_chat: bool = False
    # True: the engine holds its own copy of the weights, which `push_weights` must refresh after
    # every update. False: it samples with the trainer's own module (nothing to push).
    holds_own_weights: bool = False

    @abstractmethod
    def generate(self, prompts: Sequence[EnginePrompt], sampling: SamplingSettings | Mapping[str, Any]) -> Rollout:
        """One completion per prompt (repeat prompts for groups), with the actor's typed sampling settings (or
        their JSON document: sampling.py's `sampling_settings` reads one)."""

    def push_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> int:
        """Loads full tensors (Hugging Face parameter names), consumed one at a time; returns how many."""
        return 0

    def set_adapter(self, name: str | None, path: str | None = None) -> None:
        """Samples with the LoRA adapter `name` (saved at `path` where the engine loads adapters from
        a folder); None: the base weights."""

    def sleep(self, level: int) -> None:
        """Frees the engine's device memory while the actors train (see the module docstring)."""

    def wake(self, tags: Sequence[str]) -> None:
        """Re-allocates what `tags` names ("weights", "kv_cache") after `sleep`."""

    def reset_prefix_cache(self) -> None:
        """Forgets cached prefixes (computed with the old weights)."""

    def close(self) -> None:
        """Releases the engine (end of the run)."""


def check_tags(tags: Sequence[str]) -> list[str]:
    unknown = [t for t in tags if t not in WAKE_TAGS]
    if unknown:
        raise ValueError(f"unknown wake tag(s) {unknown}; expected a subset of {list(WAKE_TAGS)}")
    return list(tags)


def check_level(level: int) -> int:
    if level not in SLEEP_LEVELS:
        raise ValueError(f"sleep level must be one of {SLEEP_LEVELS}, not {level}")
    return level
