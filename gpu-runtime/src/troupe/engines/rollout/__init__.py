"""Rollout engines: HF `generate`, vLLM (colocated, sleep mode, in-memory weight sync), OpenAI-compatible API."""

from .base import WAKE_TAGS, EnginePrompt, EngineStateError, RolloutEngine
from .hf import HFEngine

__all__ = ["WAKE_TAGS", "EnginePrompt", "EngineStateError", "HFEngine", "RolloutEngine"]
