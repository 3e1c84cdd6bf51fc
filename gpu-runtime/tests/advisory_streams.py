"""Synthetic metric and episode streams for the advisory tests: events shaped as the runtime emits them."""

from __future__ import annotations

import random
import string
from typing import Callable

from troupe import EventWriter
from troupe.advisories import Advisor, AdvisorySettings

LETTERS = string.ascii_lowercase


def episode(step: int, group: int, sample: int, answer: str | list[str], reward: float, row: int, actor: str = "student", prompt: str = "say a:") -> dict:
    answers = [answer] if isinstance(answer, str) else answer
    messages = [{"actor": "letters", "role": "user", "content": prompt, "trained": False}]
    for k, a in enumerate(answers):
        if k:
            messages.append({"actor": "partner", "role": "assistant", "content": "zq", "trained": False})
        messages.append({"actor": actor, "role": "assistant", "content": a, "trained": True})
    return {"step": step, "environment": "relay", "group": group, "sample": sample, "datasetRow": row, "messages": messages, "reward": reward, "rewardComponents": {}}


def random_text(rng: random.Random, n: int = 8) -> str:
    return "".join(rng.choice(LETTERS + " ") for _ in range(n))


def play(
    steps: int,
    metrics: Callable[[int], dict[str, float]] | None = None,
    episodes: Callable[[int], list[dict]] | None = None,
    settings: AdvisorySettings | None = None,
    actor: str = "student",
    writer: EventWriter | None = None,
    advisor: Advisor | None = None,
) -> list[dict]:
    """Feed a stream through an EventWriter watched by an Advisor, as the training loop does; the advisories."""
    events = writer or EventWriter(keep=True)
    advisor = advisor or Advisor(settings)
    events.watch(advisor)
    for step in range(1, steps + 1):
        if metrics is not None:
            events.metric(step, metrics(step), actor=actor)
        for e in episodes(step) if episodes is not None else []:
            events.episode(**e)
        advisor.report(events, step)
    assert events.events is not None
    return [e for e in events.events if e["type"] == "advisory"]


def healthy_metrics(step: int) -> dict[str, float]:
    """A run that learns without trouble: reward up slowly, entropy slowly down, lengths steady."""
    return {
        "reward/mean": 0.1 + 0.004 * step, "entropy": 2.0 - 0.005 * step, "kl": 0.01 + 0.0005 * step,
        "completion_len": 8.0, "truncation_rate": 0.1, "grad_norm": 0.5, "lr": 3e-3,
    }


def echo_episodes(rng: random.Random, learned: Callable[[int], float], group_size: int = 8) -> Callable[[int], list[dict]]:
    """One group per step asking `say k:` for a random k; a sample is right (k's) with probability learned(step)."""

    def make(step: int) -> list[dict]:
        row = rng.randrange(256)
        k = LETTERS[row % 26]
        out = []
        for s in range(group_size):
            right = rng.random() < learned(step)
            text = k * 8 if right else random_text(rng)
            # Graded reward with some noise: groups differ (a learning run, not a flat one).
            out.append(episode(step, 0, s, [text, text], min(1.0, text.count(k) / 8 + 0.1 * rng.random()), row, prompt=f"say {k}:"))
        return out

    return make
