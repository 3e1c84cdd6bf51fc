"""Small environments to serve (`python -m troupe.envserver troupe.remote.examples:Countdown`)."""

from __future__ import annotations

from typing import Any

from ..environment_api import Environment


class Countdown(Environment):
    """The actor must say the numbers from the row's `start` (default 3) down to 1, one per turn.
    Reward 1 when it reaches 1 without a mistake, 0 at the first wrong number. Cheap: for benches."""

    def reset(self, episode: Any) -> str:
        episode.state["n"] = int(episode.row.get("start", 3))
        return f"count down from {episode.state['n']}"

    def step(self, episode: Any, message: Any) -> str:
        if message.text.strip() != str(episode.state["n"]):
            episode.finish({message.actor: 0.0})
            return "wrong"
        episode.state["n"] -= 1
        if episode.state["n"] == 0:
            episode.finish({message.actor: 1.0})
            return "done"
        return "next"
