"""MAPPO (a centralised critic) against independent GRPO on the two-agent secret digit (Alice sees a digit,
Bob answers; tests/collab_helpers.py), same seed, steps and settings; for each seed prints Bob's `said` reward
over the first and last 20 steps of each learner, Bob's entropy over the last 20 steps, and the ratio
mappo / grpo of the last-20 means; then the mean over the seeds and the machine's load average.

    .venv/bin/python bench/runtime/mappo_vs_grpo.py [--steps 200] [--seeds 7 1 2 3] [--lr 0.003]
        [--entropy-coef C] [--no-value-norm] [--grpo-entropy-coef C] [--only mappo]

Each mappo option left out takes the learner's default (what ships).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "gpu-runtime" / "tests"))

from collab_helpers import secret_digit_spec  # noqa: E402

from troupe import EventWriter, run_spec  # noqa: E402


def run(algorithm: str, steps: int, seed: int, lr: float, extra: dict[str, Any]) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        spec = secret_digit_spec(Path(folder), steps=steps, seed=seed, lr=lr, shaped=True)
        spec["algorithm"].update({"name": algorithm, **extra})
        started = time.monotonic()
        result = run_spec(spec, events=EventWriter(keep=True), work_dir=Path(folder))
        assert result.state == "succeeded", result.message
    bob = [e["values"] for e in result.events if e["type"] == "metric" and e["actor"] == "Bob"]
    said = [m["reward/said"] for m in bob]
    return {
        "head": sum(said[:20]) / 20,
        "tail": sum(said[-20:]) / 20,
        "entropy": sum(m["entropy"] for m in bob[-20:]) / 20,
        "seconds": time.monotonic() - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seeds", type=int, nargs="+", default=[7])
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--entropy-coef", type=float, default=0.05, help="mappo's algorithm.entropyCoef (default 0.05, the learning check's; the product's default is 0)")
    parser.add_argument("--no-value-norm", action="store_true", help="mappo with algorithm.valueNorm false")
    parser.add_argument("--grpo-entropy-coef", type=float, default=None, help="grpo's algorithm.entropyCoef (default 0)")
    parser.add_argument("--only", choices=["grpo", "mappo"], default=None)
    args = parser.parse_args()
    extras: dict[str, dict[str, Any]] = {"grpo": {}, "mappo": {}}
    if args.entropy_coef is not None:
        extras["mappo"]["entropyCoef"] = args.entropy_coef
    if args.no_value_norm:
        extras["mappo"]["valueNorm"] = False
    if args.grpo_entropy_coef is not None:
        extras["grpo"]["entropyCoef"] = args.grpo_entropy_coef
    algorithms = [args.only] if args.only else ["grpo", "mappo"]
    print(f"steps {args.steps}, lr {args.lr}, grpo {extras['grpo'] or 'defaults'}, mappo {extras['mappo'] or 'defaults'}")
    tails: dict[str, list[float]] = {a: [] for a in algorithms}
    for seed in args.seeds:
        for algorithm in algorithms:
            r = run(algorithm, args.steps, seed, args.lr, extras[algorithm])
            tails[algorithm].append(r["tail"])
            print(
                f"seed {seed:3d} {algorithm:6s} Bob said: first 20 steps {r['head']:.3f}, last 20 steps {r['tail']:.3f}; "
                f"entropy last 20 {r['entropy']:.2f} nats ({r['seconds']:.0f} s, load {os.getloadavg()[0]:.1f})",
                flush=True,
            )
        if len(algorithms) == 2:
            print(f"seed {seed:3d} mappo / grpo (last 20 steps): {tails['mappo'][-1] / max(tails['grpo'][-1], 1e-9):.2f}", flush=True)
    for algorithm in algorithms:
        print(f"mean over seeds {args.seeds}: {algorithm} {sum(tails[algorithm]) / len(tails[algorithm]):.3f}")
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
