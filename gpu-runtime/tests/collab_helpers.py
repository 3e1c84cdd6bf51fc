"""The secret-digit task: Alice sees a digit in her system prompt, Bob must say it; shared reward."""

import json
from pathlib import Path

from runtime_helpers import TEST_THREADS

DIGITS = "0123"


def write_digits(folder: Path, size: int = 64, digits: str = DIGITS) -> Path:
    path = Path(folder) / "digits.jsonl"
    path.write_text("".join(json.dumps({"prompt": "?", "digit": digits[i % len(digits)]}) + "\n" for i in range(size)))
    return path


def secret_digit_spec(folder: Path, steps: int = 150, bob_trainable: bool = True, seed: int = 7, lr: float = 3e-3, tokens: int = 2, digits: str = DIGITS, shaped: bool = False) -> dict:
    write_digits(folder, digits=digits)
    actor = lambda name, trainable: {  # noqa: E731
        "name": name,
        "model": {"source": "tiny", "preset": "tiny-char-2l"},
        "trainable": trainable,
        "training": {"learningRate": lr},
        "sampling": {"temperature": 1.0, "maxNewTokens": tokens},
    }
    return {
        "specVersion": 1,
        "name": "secret digit",
        "seed": seed,
        "actors": [actor("Alice", True), actor("Bob", bob_trainable)],
        "datasets": [{"name": "digits", "source": {"kind": "file", "path": "digits.jsonl", "format": "jsonl"}}],
        "rewards": [
            {"name": "said", "scope": "conversation", "source": {"kind": "builtin", "name": "letter_match", "params": {"field": "digit"}}}
        ]
        + (
            [{"name": "own", "source": {"kind": "builtin", "name": "letter_match", "params": {"field": "digit"}}}]
            if shaped
            else []
        ),
        "environments": [
            {
                "name": "secret",
                "kind": "collaborative",
                "dataset": "digits",
                "actors": ["Alice", "Bob"],
                "roundSpec": "Alice -> Bob",
                "systemPrompts": {"Alice": "secret {{ digit }}"},
                "rewards": [{"reward": "said"}] + ([{"reward": "own"}] if shaped else []),
            }
        ],
        "algorithm": {"name": "grpo", "groupSize": 8},
        "trainer": {"steps": steps, "promptsPerStep": 8, "episodesPerStep": 2, "cpuThreads": TEST_THREADS},
    }
