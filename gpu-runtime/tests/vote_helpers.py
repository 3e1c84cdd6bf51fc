"""The arithmetic task for the outcome environments (majority_vote, summary): `a+b=` -> the sum's digits.

Operands 0-4, so every sum is one digit 0-8 (25 distinct problems, 9 distinct answers): a tiny character
model can learn it on CPU in minutes, and a random policy is right about 1 time in 100 (it must draw the one
right character out of the ~100 of its vocabulary before any other digit)."""

import json
from pathlib import Path

from runtime_helpers import TEST_THREADS


def write_arithmetic(folder: Path, size: int = 100, top: int = 4) -> Path:
    path = Path(folder) / "arithmetic.jsonl"
    rows = [{"prompt": f"{a}+{b}=", "answer": str(a + b)} for a in range(top + 1) for b in range(top + 1)]
    path.write_text("".join(json.dumps(rows[i % len(rows)]) + "\n" for i in range(size)))
    return path


def actor(name: str, lr: float = 3e-3, tokens: int = 1) -> dict:
    return {
        "name": name,
        "model": {"source": "tiny", "preset": "tiny-char-2l"},
        "trainable": True,
        "training": {"learningRate": lr},
        "sampling": {"temperature": 1.0, "maxNewTokens": tokens},
    }


def vote_spec(
    folder: Path,
    kind: str = "majority_vote",
    steps: int = 100,
    seed: int = 7,
    agents: int = 3,
    weights: dict | None = None,
    lr: float = 3e-3,
    top: int = 4,
    prompts: int = 4,
    **env,
) -> dict:
    """`agents` actors answer (plus a summariser `lead` for kind "summary"); operands 0..`top`."""
    write_arithmetic(folder, top=top)
    names = [f"s{i + 1}" for i in range(agents)] + (["lead"] if kind == "summary" else [])
    settings = {"answerField": "answer", "extract": "last_number", "rewardWeights": weights or {"outcome": 1, "own": 1}}
    return {
        "specVersion": 1,
        "name": f"{kind} arithmetic",
        "seed": seed,
        "actors": [actor(n, lr) for n in names],
        "datasets": [{"name": "sums", "source": {"kind": "file", "path": "arithmetic.jsonl", "format": "jsonl"}}],
        "rewards": [],
        "environments": [
            {
                "name": "team",
                "kind": kind,
                "dataset": "sums",
                "actors": names,
                "prompt": {"field": "prompt", "applyChatTemplate": False},
                ("majorityVote" if kind == "majority_vote" else "summary"): settings,
                **env,
            }
        ],
        "algorithm": {"name": "grpo", "groupSize": 8},
        "trainer": {"steps": steps, "promptsPerStep": prompts, "episodesPerStep": 1, "cpuThreads": TEST_THREADS},
    }
