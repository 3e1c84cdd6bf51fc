"""A CORY pair on the arithmetic task (vote_helpers.py: `a+b=` -> one digit): two trainable copies of one tiny
character model, the pioneer answering the prompt and the observer answering after reading the pioneer's answer;
each role's reward is its own answer's exact match (the learner trains both on their sum)."""

from pathlib import Path

from runtime_helpers import TEST_THREADS
from vote_helpers import actor, write_arithmetic


def cory_spec(folder: Path, steps: int = 100, seed: int = 7, swap_every: int = 10, lr: float = 3e-3, top: int = 4, prompts: int = 8) -> dict:
    rows = write_arithmetic(folder, top=top)
    return {
        "specVersion": 1,
        "name": "cory arithmetic",
        "seed": seed,
        "actors": [actor("alice", lr), actor("bob", lr)],
        "datasets": [{"name": "sums", "source": {"kind": "file", "path": str(rows.resolve()), "format": "jsonl"}}],
        "rewards": [{"name": "right", "source": {"kind": "builtin", "name": "exact_match", "params": {"field": "answer"}}}],
        "environments": [
            {
                "name": "pair",
                "kind": "collaborative",
                "dataset": "sums",
                "actors": ["alice", "bob"],
                "roles": {"pioneer": "alice", "observer": "bob"},
                "roundSpec": "pioneer -> observer",
                "maxTurns": 2,
                "prompt": {"field": "prompt", "applyChatTemplate": False},
                "rewards": [{"reward": "right"}],
            }
        ],
        "algorithm": {"name": "cory", "groupSize": 8, "cory": {"swapEvery": swap_every}},
        "trainer": {"steps": steps, "promptsPerStep": prompts, "episodesPerStep": 1, "cpuThreads": TEST_THREADS},
    }
