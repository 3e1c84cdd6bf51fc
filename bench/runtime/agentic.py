"""Asynchronous multi-turn rollouts against synchronous ones (issue 28, item 1): the calculator tool task of
gpu-runtime/tests/tools_task.py (a `tools` environment, two actor turns per episode: the call, then the answer),
GRPO from the same SFT warm-up, the same steps and seed, once with `algorithm.async.maxStaleness: 1` and once
without. The async arm's sampler is the run's own producer process (rollout/async_process.py). A third arm,
`workers` (item 2), samples on policy in two rollout worker processes (`rollout.workers: {count: 2, processes:
true}`, rollout/workers.py), the trainer broadcasting its weights to them over gloo after every update.

The CPU split (the host has 2 cores): each arm gets both. Synchronous: one process, `trainer.cpuThreads: 2`
(sampling and training take turns on two threads). Async: `trainer.cpuThreads: 1` for the trainer and one for
the producer process (it takes the trainer's thread count), so sampling and training run side by side on one
core each. Workers: `trainer.cpuThreads: 2` for the trainer and one thread for each of the 2 workers (they share
the trainer's count), taking turns: the workers sample (2 cores) while the trainer waits, the trainer trains
(2 threads) while they wait. The arms run one after the other, never together.

For each seed it prints the mean step time of each arm (the first step left out: process start, warm-up), their
ratio (goal <= 0.6x), and both reward curves (10-step means of reward/mean); with --out, the whole curves as
JSON. Run it on an otherwise idle host: other load changes the ratio.

    .venv/bin/python bench/runtime/agentic.py [--seeds 17 18] [--steps 40] [--sft-steps 250] [--out DIR]

Measured (one brief run, NOT an idle host: other engineers' jobs kept the load average at 3.6-4.5 on the 2 cores):
  seed 17, 250 SFT + 20 GRPO steps: step time sync 2.265 s, async 2.627 s, ratio 1.16x (goal <= 0.6x not met);
  reward 10-step means sync [0.41, 0.74], async [0.39, 0.72]; successful calls sync [0.49, 0.87], async
  [0.50, 0.83]; staleness max 1. (12 steps after 60 SFT steps at load ~6: 0.86x, reward 0 in both arms.)
Workers arm (load 5.8 falling to 3.4 on the 2 cores; 60 SFT + 8 GRPO steps, seed 17, `--arms workers`): step
  time sync 1.078 s, workers 1.414 s, ratio 1.31x; per step: rollout busy 0.83 s (both workers together), rollout
  idle 2.06 worker-s, trainer busy 0.98 s, trainer idle 0.44 s (waiting for the workers), weight sync 0.026 s;
  reward 0 in both arms (too few steps to learn). An earlier run, before the workers' shares were merged into one
  part per environment, measured 1.60x at load 5.7-7.1 (trainer busy 1.51 s). On policy the workers only split
  the sampling (the trainer waits for it, the workers wait for the update): on 2 cores the pool can win at most
  part of the sampling's share, and pays the process hand-over. Worth measuring again on an idle host, and with
  the workers feeding asynchronous rollouts (below).
Async + workers arm (`--arms async-workers`: `algorithm.async.maxStaleness: 1` + `rollout.workers: {count: 1,
  processes: true}`; split: trainer `cpuThreads: 1` + one worker process with 1 thread, against sync with 2
  threads in one process; the weights through 2 shared-memory slots). Host load 9.3 before, 9.6 after (4 other
  helpers and this helper's own test run on the 2 cores); 60 SFT + 12 GRPO steps, seed 17: step time sync 4.32 s,
  async-workers 8.11 s, ratio 1.88x (goal <= 0.6x not met); per step: rollout busy 4.63 s, rollout idle 3.51
  worker-s, trainer busy 7.87 s, trainer idle 0.26 s (the batch was nearly always ready: the overlap works),
  weight sync 0.010 s; staleness max 1. What explains it: the trainer's update on 1 thread took 7.9 s against the
  whole sync step's 4.3 s on 2 threads; at load ~9 the scheduler shares the cores per thread, so a process with
  one thread gets about half the CPU the 2-thread sync process gets, and the overlap cannot make that up. Reward
  0 in both arms after 12 steps (steps to the 0.6 bar: neither reached it), so "no worse" cannot be told from
  this run; tool success 10-step means sync [0.14, 0.08], async-workers [0.19, 0.25]. To be measured again on an
  idle host, with more steps and seeds.
Idle host (load 0.1 before, 2026-11-28 22:38 UTC, this 2-core Xeon), seed 17, 250 SFT + 30 GRPO steps:
  --async-threads 1 (one core each): sync 1.115 s/step; async 0.961 s (0.86x); async-workers 1.127 s (1.01x); per
  step rollout busy 0.399 s, rollout idle 0.736 worker-s, trainer busy 1.106 s, trainer idle 0.023 s, weight sync
  0.000 s. Steps to the 0.6 reward bar: sync 12, async 12, async-workers 11 (no worse); last-10 reward sync 0.78,
  async 0.69, async-workers 0.68 (one seed: within noise is not established).
  --async-threads 2 (trainer and sampler 2 threads each, oversubscribed): sync 1.003 s; async 1.20x;
  async-workers 1.07x (rollout busy 0.857 s, trainer busy 1.042 s).
  Why the goal (<= 0.6x) is out of reach for this task on this host: the update on one core (1.1 s) takes as long
  as the whole synchronous step on two (sampling ~0.3 s + update ~0.8 s), so even a perfect overlap at the 1 + 1
  split is ~1.0x (the bench prints that bound); the overlap itself works (trainer idle 0.02-0.03 s a step). The
  split pays off where sampling is the larger phase (long multi-turn generations on GPUs), not with a tiny model
  whose update dominates.
With no idle core the producer cannot overlap anything and the trainer loses its second thread; the ratio has
to be measured again on an idle host before anything is concluded about the goal.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "gpu-runtime" / "tests"))


def warm_up(root: Path, seed: int, sft_steps: int) -> None:
    """The SFT warm-up both arms start from (test_tools_learning.py's stage 1), and the RL questions."""
    from test_tools_learning import TOOL_SHARE, sft_spec
    from tools_task import build_model_folder, questions, write_rl_rows, write_sft_rows

    from troupe import EventWriter, run_spec

    warmup = root / "warmup"
    warmup.mkdir(parents=True)
    base = build_model_folder(warmup / "base", seed=seed)  # a local model is read only under the run folder
    seen = questions(600, seed=1)
    write_sft_rows(warmup / "warmup.jsonl", seen, TOOL_SHARE, seed=2)
    spec = sft_spec(str(base))
    spec["seed"] = seed
    spec["trainer"].update(steps=sft_steps, checkpointEvery=sft_steps, cpuThreads=2)
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=warmup)
    if result.state != "succeeded":
        raise SystemExit(f"warm-up failed: {result.message}")
    for arm in ARMS:
        (root / arm).mkdir()
        write_rl_rows(root / arm / "products.jsonl", questions(200, seed=3, exclude=frozenset(seen)))


def arm(root: Path, name: str, seed: int, steps: int, sft_steps: int, async_threads: int = 1) -> dict[str, Any]:
    from test_tools_learning import rl_spec

    from troupe import EventWriter, run_spec

    spec = rl_spec("warmup")
    spec["seed"] = seed
    spec["actors"][0]["model"]["step"] = sft_steps
    spec["trainer"].update(steps=steps, cpuThreads=async_threads if name in ("async", "async-workers") else 2)
    if name in ("async", "async-workers"):
        spec["algorithm"]["async"] = {"maxStaleness": 1}
    if name == "workers":
        spec["rollout"] = {"workers": {"count": 2, "processes": True}}
    if name == "async-workers":  # one worker (workers.py: it takes the trainer's thread count / workers)
        spec["rollout"] = {"workers": {"count": 1, "processes": True}}
    started = time.monotonic()
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=root / name)
    seconds = time.monotonic() - started
    if result.state != "succeeded":
        raise SystemExit(f"{name} failed: {result.message}")
    step_times = result.metrics("step_time_s")
    return {
        "seconds": seconds,
        "step_time_s": step_times,
        "mean_step_time_s": sum(step_times[1:]) / max(len(step_times) - 1, 1),
        "reward": result.metrics("reward/mean"),
        "tool_success": result.metrics("tools/success_rate"),
        "staleness_max": max(result.metrics("staleness/max") or [0.0]),
        **{key: sum(result.metrics(key)[1:]) / max(len(result.metrics(key)) - 1, 1) for key in POOL if result.metrics(key)},
    }


POOL = ("time/rollout_busy_s", "time/rollout_idle_s", "time/trainer_busy_s", "time/trainer_idle_s", "time/weight_sync_s")  # workers arms
ARMS = ("sync", "async", "workers", "async-workers")


def steps_to_bar(rewards: list[float], bar: float, window: int = 5) -> int | None:
    """The first step whose trailing `window`-step mean reward reaches `bar` (None: never in the run)."""
    for i in range(window, len(rewards) + 1):
        if sum(rewards[i - window : i]) / window >= bar:
            return i
    return None


def means(xs: list[float], n: int = 10) -> list[float]:
    return [round(sum(xs[i : i + n]) / len(xs[i : i + n]), 2) for i in range(0, len(xs), n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[17, 18])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--sft-steps", type=int, default=250)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--arms", nargs="+", default=["async", "workers", "async-workers"], choices=ARMS[1:], help="compared with sync")
    parser.add_argument("--bar", type=float, default=0.6, help="the reward bar: steps until the 5-step mean reward reaches it")
    parser.add_argument("--async-threads", type=int, default=1, help="the async arms' trainer.cpuThreads (1: one core each for trainer and sampler; 2: the trainer also uses the core the sampler leaves idle)")
    args = parser.parse_args()
    print(f"agentic: tools/calculator, GRPO {args.steps} steps after {args.sft_steps} SFT steps; sync: 1 process x 2 threads; "
          f"async K=1: trainer {args.async_threads} thread(s) + producer process with the same count; workers: trainer 2 threads, 2 workers x 1 thread; "
          f"async-workers (async K=1 + rollout.workers count 1): trainer {args.async_threads} thread(s) + 1 worker process with the same count; load average before {os.getloadavg()[0]:.2f}")
    ratios: dict[str, list[float]] = {name: [] for name in args.arms}
    for seed in args.seeds:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "runs"
            warm_up(root, seed, args.sft_steps)
            sync = arm(root, "sync", seed, args.steps, args.sft_steps)
            others = {name: arm(root, name, seed, args.steps, args.sft_steps, args.async_threads) for name in args.arms}
        for name, other in others.items():
            ratio = other["mean_step_time_s"] / sync["mean_step_time_s"]
            ratios[name].append(ratio)
            print(f"seed {seed}: step time sync {sync['mean_step_time_s']:.3f}s, {name} {other['mean_step_time_s']:.3f}s, ratio {ratio:.2f}x "
                  f"(goal <= 0.6x); staleness max {other['staleness_max']:.0f}; steps to reward bar {args.bar}: "
                  f"sync {steps_to_bar(sync['reward'], args.bar)}, {name} {steps_to_bar(other['reward'], args.bar)}")
            print(f"  reward (10-step means)  sync  {means(sync['reward'])}\n                          {name} {means(other['reward'])}")
            print(f"  tool success            sync  {means(sync['tool_success'])}\n                          {name} {means(other['tool_success'])}")
            if name in ("workers", "async-workers"):
                print("  per step (mean): " + ", ".join(f"{key} {other[key]:.3f}" for key in POOL if key in other))
            if name == "async-workers":
                # Perfect overlap at this split: a step takes the longer of the two pools' busy seconds.
                bound = max(other["time/rollout_busy_s"], other["time/trainer_busy_s"]) / sync["mean_step_time_s"]
                print(f"  perfect overlap at this split would be {bound:.2f}x sync: max(rollout busy, trainer busy) / sync step")
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / f"agentic-seed{seed}.json").write_text(json.dumps({"seed": seed, "steps": args.steps, "sync": sync, **others}))
    for name, rs in ratios.items():
        print(f"step-time ratio {name}/sync per seed {[round(r, 2) for r in rs]}, mean {sum(rs) / len(rs):.2f}x")
    print(f"load average after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
