"""MAPPO (a centralised critic) against independent GRPO on the two-agent secret digit (Alice sees a digit,
Bob answers; tests/collab_helpers.py), same seed, steps and settings; prints Bob's `said` reward over the first
and last 20 steps of each and the ratio mappo / grpo of the last-20 means.

    .venv/bin/python bench/runtime/mappo_vs_grpo.py [--steps 200] [--seed 7] [--lr 0.003]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "gpu-runtime" / "tests"))

from collab_helpers import secret_digit_spec  # noqa: E402

from troupe import EventWriter, run_spec  # noqa: E402


def run(algorithm: str, steps: int, seed: int, lr: float) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as folder:
        spec = secret_digit_spec(Path(folder), steps=steps, seed=seed, lr=lr, shaped=True)
        spec["algorithm"]["name"] = algorithm
        started = time.monotonic()
        result = run_spec(spec, events=EventWriter(keep=True), work_dir=Path(folder))
        assert result.state == "succeeded", result.message
    said = [e["values"]["reward/said"] for e in result.events if e["type"] == "metric" and e["actor"] == "Bob"]
    return sum(said[:20]) / 20, sum(said[-20:]) / 20, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--lr", type=float, default=3e-3)
    args = parser.parse_args()
    tails = {}
    for algorithm in ("grpo", "mappo"):
        head, tails[algorithm], seconds = run(algorithm, args.steps, args.seed, args.lr)
        print(f"{algorithm:6s} Bob said: first 20 steps {head:.3f}, last 20 steps {tails[algorithm]:.3f} ({seconds:.0f} s)")
    print(f"mappo / grpo (last 20 steps): {tails['mappo'] / max(tails['grpo'], 1e-9):.2f}")


if __name__ == "__main__":
    main()
