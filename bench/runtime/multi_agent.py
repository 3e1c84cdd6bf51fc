"""The team learners on the two-agent secret digit (tests/collab_helpers.py: Alice sees a digit 0-3 in her system
prompt, Bob must say it; both trainable; the shaped spec of the learning checks), at each learner's default
settings (no entropy bonus), against independent GRPO on the same seeds and steps. Issue #27's bar: Bob's `said`
reward >= 0.9 over the last 20 steps within 400 steps. Chance: a Bob who ignores Alice says the digit at most 1/4
of the time (0.25).

For each learner and seed it prints (and writes as JSON with the whole curve, one file per run, as each run ends):
the first step at which Bob's 20-step mean reaches the bar (or "-"), his mean over the first and last 20 steps,
and the run's seconds; then the mean of the last 20 steps per learner and the machine's load average.

    .venv/bin/python bench/runtime/multi_agent.py [--learners mappo vdn happo qmix grpo] [--seeds 7 1 2]
        [--steps 400] [--workers 2] [--out bench-results/multi_agent] [--entropy-coef C]

Runs go `--workers` at a time, each in its own process with one torch thread (the same floats as one at a time).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "gpu-runtime" / "tests"))

BAR = 0.9
CHANCE = 0.25
WINDOW = 20


def steps_to_bar(said: list[float], bar: float = BAR, window: int = WINDOW) -> int | None:
    """The first step whose trailing `window`-step mean of Bob's reward reaches `bar` (None: never)."""
    for end in range(window, len(said) + 1):
        if sum(said[end - window : end]) / window >= bar:
            return end
    return None


def run(learner: str, seed: int, steps: int, out: str, entropy_coef: float | None = None) -> dict[str, Any]:
    from collab_helpers import secret_digit_spec

    from troupe import EventWriter, run_spec

    Path(out).mkdir(parents=True, exist_ok=True)
    progress = Path(out) / f"{learner}-seed{seed}.progress"
    progress.write_text("")

    class Progress(EventWriter):
        """Bob's reward of every step appended to a file as it comes (a bench cut short keeps its curves)."""

        def metric(self, step: int, values: dict[str, float], actor: str | None = None) -> dict[str, Any] | None:
            if actor == "Bob" and "reward/said" in values:
                with progress.open("a") as f:
                    f.write(f"{step} {values['reward/said']}\n")
            return super().metric(step, values, actor=actor)

    with tempfile.TemporaryDirectory() as folder:
        spec = secret_digit_spec(Path(folder), steps=steps, seed=seed, shaped=True)
        spec["algorithm"]["name"] = learner
        if entropy_coef is not None:
            spec["algorithm"]["entropyCoef"] = entropy_coef
        spec["trainer"]["cpuThreads"] = 1
        started = time.monotonic()
        result = run_spec(spec, events=Progress(keep=True), work_dir=Path(folder))
        seconds = time.monotonic() - started
    if result.state != "succeeded":
        return {"learner": learner, "seed": seed, "error": result.message}
    said = [e["values"]["reward/said"] for e in result.events if e["type"] == "metric" and e["actor"] == "Bob"]
    row = {
        "learner": learner,
        "seed": seed,
        "steps": steps,
        "steps_to_bar": steps_to_bar(said),
        "first20": sum(said[:WINDOW]) / WINDOW,
        "last20": sum(said[-WINDOW:]) / WINDOW,
        "seconds": seconds,
        "said": said,
    }
    (Path(out) / f"{learner}-seed{seed}.json").write_text(json.dumps(row))
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--learners", nargs="+", default=["mappo", "vdn", "happo", "qmix", "grpo"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[7, 1, 2])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default="bench-results/multi_agent")
    parser.add_argument("--entropy-coef", type=float, default=None, help="algorithm.entropyCoef for every learner (default: absent, 0)")
    args = parser.parse_args()
    # Seed-major: every learner's first seed before any second seed, so a cut-short bench still compares them.
    runs = [(learner, seed) for seed in args.seeds for learner in args.learners]
    settings = "default settings" if args.entropy_coef is None else f"entropyCoef {args.entropy_coef}"
    print(f"secret digit, {args.steps} steps, bar: Bob >= {BAR} over {WINDOW} steps; chance {CHANCE}; learners at {settings}")
    print(f"{'learner':8} {'seed':>4} {'to bar':>7} {'first20':>8} {'last20':>7} {'seconds':>8}")
    rows: list[dict[str, Any]] = []
    with ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(run, learner, seed, args.steps, args.out, args.entropy_coef) for learner, seed in runs]
        for future in as_completed(futures):
            row = future.result()
            rows.append(row)
            if "error" in row:
                print(f"{row['learner']:8} {row['seed']:>4} failed: {row['error']}", flush=True)
                continue
            reached = row["steps_to_bar"] if row["steps_to_bar"] is not None else "-"
            print(f"{row['learner']:8} {row['seed']:>4} {reached:>7} {row['first20']:>8.3f} {row['last20']:>7.3f} {row['seconds']:>8.0f}", flush=True)
    for learner in args.learners:
        tails = [r["last20"] for r in rows if r["learner"] == learner and "last20" in r]
        if tails:
            print(f"{learner}: mean last-20 {sum(tails) / len(tails):.3f} over {len(tails)} seed(s); held the bar at {sum(t >= BAR for t in tails)} of them")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
