"""Troupe's CPU GRPO loop against TRL's `GRPOTrainer`, side by side: step time, where it goes, and
steps until the reward reaches a target; Troupe both synchronous and with asynchronous rollouts
(`algorithm.async.maxStaleness`, --staleness, default 1).

Run from the repo root (needs trl 1.13, in gpu-runtime's `test` extra):
    .venv/bin/python bench/runtime/trl_compare.py [--seeds 1 2 3] [--steps 300] [--json out.json] [--staleness 1] [--tis-cap 2]
    .venv/bin/python bench/runtime/trl_compare.py --report out.json   # re-print a saved run

Task: the demo's (builtin `echo_letter` rows, 256 of them, scored by `letter_match`: the share
of the completion's characters equal to the asked letter). For each seed, one tiny-char-2l
model is initialised from the seed and saved to a folder; both trainers load those weights.
Each trainer runs in its own child process (fresh interpreter, one torch thread,
OMP_NUM_THREADS=1); the two run in lockstep, taking turns one step each (lockstep.py), so a
change in machine load hits both alike.

Settings matched on both sides: lr 3e-3 constant (no warm-up), AdamW (0.9, 0.999, eps 1e-8,
weight decay 0), max grad norm 1.0, 8 prompts x 8 completions per step, 8 new tokens,
temperature 1.0 (top-p 1, top-k off), loss `grpo` (per-sequence token mean, then batch mean),
advantages (r - group mean) / (group std + 1e-4), clip eps 0.2/0.2, beta 0 (no reference),
one gradient step per batch, float32, no gradient checkpointing, CPU.
Differences that remain (stated, not hidden):
- Tokenizer object: Troupe loads the folder's character tokenizer (its own class); TRL needs a
  transformers tokenizer, so this script builds a `PreTrainedTokenizerFast` with the same
  vocabulary and ids and checks, before training, that both encode every prompt and decode
  every token identically.
- Prompt order: each trainer draws 8 of the 256 rows per step with its own seeded sampler.
- TRL decides each step's sampling with its RNG, Troupe with its own: completions differ.
- Optimizer kernel: TRL's default `adamw_torch_fused`; Troupe's `torch.optim.AdamW` default
  (same update rule; the fused kernel is faster, which the phase table shows).
- Per-step extras each trainer does anyway: Troupe keeps the sampler's log-probs (for the
  sampler/trainer gap metric) and emits memory readings; TRL computes its logged metrics.

Step time: Troupe's own `step_time_s` event (rollout start to end of update); TRL's span from
`on_step_begin` to `on_step_end` (batch in hand to optimizer step done). Neither includes logging.

Async (`troupe-async`): the same spec with `algorithm.async: {maxStaleness: K}`. Its producer process samples
the next batch while the trainer trains, so it uses a second core where the other two use one (that
overlap is the point of async; it is stated, not hidden). In lockstep it may compute only during its own
turn: the producer process is stopped (SIGSTOP) whenever the baton is handed on and continued when it comes
back, so it never borrows time from TRL's or sync Troupe's turn. Its step time is the trainer's `step_time_s` (waiting for
the batch included). Phases are not split for it (its sampling runs in another process), only the step.
Phases: see phase_timing.py (the same wrappers on both sides, plus Troupe's lean sampling loop, lean_sampling.py,
as generation where it stands in for `generate`; `other` is the rest).
"Reaches 0.9": the first step at which the mean reward of the last --window steps is >= 0.9.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lockstep import Baton, run_lockstep
from phase_timing import PHASES, PhaseTimer, instrument_common, summarise

LEARNING_RATE = 3e-3
GROUP_SIZE = 8
PROMPTS_PER_STEP = 8
MAX_NEW_TOKENS = 8
DATASET_SIZE = 256
PRESET = "tiny-char-2l"
FRAMEWORKS = ("troupe", "trl", "troupe-async")


# --------------------------------------------------------------------------- shared set-up


def save_model(seed: int, folder: Path) -> None:
    """The seed's freshly initialised tiny model and its character tokenizer, as both trainers load them."""
    from troupe.models.loading import build_tiny, neutral_generation_config, save_checkpoint
    from troupe.host.system import seed_everything

    seed_everything(seed)
    loaded = build_tiny(PRESET)
    loaded.model.generation_config = neutral_generation_config(loaded.tokenizer)
    save_checkpoint(loaded, folder)


def hf_char_tokenizer(folder: Path) -> Any:
    """A transformers tokenizer with the folder's character vocabulary: same ids, one token per character."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from troupe.models.tokenizer import CharTokenizer

    char = CharTokenizer.from_pretrained(folder)
    vocab = {char.token_text(i): i for i in range(char.vocab_size)}
    inner = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    inner.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    inner.decoder = decoders.Fuse()  # characters join with nothing between them
    return PreTrainedTokenizerFast(tokenizer_object=inner, pad_token="<pad>", bos_token="<bos>", eos_token="<eos>", unk_token="<unk>")


def check_same_tokenizer(folder: Path, prompts: list[str]) -> None:
    from troupe.models.tokenizer import CharTokenizer

    char, hf = CharTokenizer.from_pretrained(folder), hf_char_tokenizer(folder)
    assert len(hf) == char.vocab_size, (len(hf), char.vocab_size)
    assert (hf.pad_token_id, hf.eos_token_id) == (char.pad_token_id, char.eos_token_id)
    for text in [*sorted(set(prompts)), char.chars]:
        got, want = hf(text=[text])["input_ids"][0], char.encode(text)
        assert got == want, f"tokenizers disagree on {text!r}: {got} vs {want}"
    every_id = list(range(char.vocab_size))
    assert hf.decode(every_id, skip_special_tokens=True) == char.decode(every_id)


def rows(seed: int) -> list[dict[str, str]]:
    from troupe.envs.data import echo_letter_rows

    return echo_letter_rows(DATASET_SIZE, seed)


# --------------------------------------------------------------------------- workers (child processes)


def gate_producer(baton: Baton) -> None:
    """Async in lockstep: the producer computes only while this process holds the baton. A producer process
    (async_process.py, what a CPU run uses) is stopped (SIGSTOP) whenever the baton is handed on and continued
    (SIGCONT) when it comes back; a producer thread's model forwards wait for the baton."""
    import signal
    import threading

    from transformers import Qwen2ForCausalLM

    from troupe.rollout.async_process import ProcessRolloutProducer

    producers: list[int] = []
    original_init, original_acquire, original_release = ProcessRolloutProducer.__init__, baton.acquire, baton.release

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        producers.append(self.pid)
        if baton.active and not baton.holding:
            os.kill(self.pid, signal.SIGSTOP)

    def acquire() -> None:
        original_acquire()
        for pid in producers:
            os.kill(pid, signal.SIGCONT)

    def release() -> None:
        for pid in producers if baton.active else ():
            os.kill(pid, signal.SIGSTOP)
        original_release()

    original_close = ProcessRolloutProducer.close

    def close(self: Any) -> None:
        if self.pid in producers:  # a stopped process cannot hear "close"
            producers.remove(self.pid)
            os.kill(self.pid, signal.SIGCONT)
        original_close(self)

    ProcessRolloutProducer.__init__, ProcessRolloutProducer.close = init, close  # type: ignore[method-assign]
    baton.acquire, baton.release = acquire, release  # type: ignore[method-assign]

    original = Qwen2ForCausalLM.forward

    def gated(self: Any, *args: Any, **kwargs: Any) -> Any:
        if threading.current_thread().name == "troupe-rollout-producer":
            while baton.active and not baton.holding:
                time.sleep(0.0002)
        return original(self, *args, **kwargs)

    Qwen2ForCausalLM.forward = gated  # type: ignore[method-assign]


def run_troupe(seed: int, steps: int, folder: Path, work: Path, baton: Baton, staleness: int | None = None, tis_cap: float | None = None) -> dict[str, Any]:
    from troupe.events import EventWriter
    from troupe.run import run_spec

    timer = PhaseTimer()
    if staleness is None:
        instrument_common(timer)
        import troupe.train  # noqa: F401 - loads every module the loop calls into, so their names can be wrapped
        from troupe.envs.environments import SingleTurnEnvironment
        from troupe.algorithms.grpo import policy_loss
        from troupe.engines.rollout.lean_sampling import lean_generate
        from troupe.engines.train.policy import completion_logprobs

        timer.wrap(SingleTurnEnvironment, "score_batch", "scoring")
        timer.wrap_everywhere(completion_logprobs, "forward", "troupe")
        timer.wrap_everywhere(lean_generate, "generation", "troupe")  # Troupe's sampling loop where it replaces generate
        timer.wrap_everywhere(policy_loss, "loss", "troupe")
    else:
        gate_producer(baton)

    rewards: list[float] = []
    lengths: list[float] = []  # mean completion tokens per sample (EOS included), per step

    class StepEvents(EventWriter):
        """Closes the timer's step at the runtime's own per-step metric event."""

        def metric(self, step: int, values: dict[str, float], actor: str | None = None, **kw: Any) -> Any:
            if "step_time_s" in values:
                timer.end_step(values["step_time_s"])
                rewards.append(values["reward/mean"])
                lengths.append(values["completion_len"])
                baton.release()  # every step of this task updates the actor, so every step ends here
            return super().metric(step, values, actor=actor, **kw)

    spec = {
        "specVersion": 1,
        "name": f"trl-compare seed {seed}",
        "seed": seed,
        "actors": [
            {
                "name": "student",
                "model": {"source": "local", "path": str(folder)},
                "backend": "hf",
                "trainable": True,
                "training": {"learningRate": LEARNING_RATE, "maxGradNorm": 1.0, "lossType": "grpo", "klBeta": 0},
                "sampling": {"temperature": 1.0, "maxNewTokens": MAX_NEW_TOKENS},
            }
        ],
        "datasets": [{"name": "letters", "source": {"kind": "builtin", "name": "echo_letter", "size": DATASET_SIZE}}],
        "rewards": [{"name": "letter_match", "source": {"kind": "builtin", "name": "letter_match"}}],
        "environments": [
            {
                "name": "echo",
                "kind": "single_turn",
                "dataset": "letters",
                "actors": ["student"],
                "prompt": {"field": "prompt", "applyChatTemplate": False},
                "rewards": [{"reward": "letter_match", "weight": 1}],
            }
        ],
        "algorithm": {
            "name": "grpo",
            "groupSize": GROUP_SIZE,
            **({"async": {"maxStaleness": staleness}} if staleness is not None else {}),
            **({"importanceCorrection": {"kind": "tis", "cap": tis_cap}} if tis_cap is not None else {}),
        },
        "trainer": {"steps": steps, "promptsPerStep": PROMPTS_PER_STEP, "episodesPerStep": 4, "device": "cpu", "cpuThreads": 1},
    }
    started = time.perf_counter()
    result = run_spec(spec, StepEvents(), work_dir=work, stop=baton)  # the stop check opens each step
    if result.state != "succeeded":
        raise RuntimeError(f"troupe run failed: {result.message}")
    return {"wall_s": time.perf_counter() - started, "rewards": rewards, "lengths": lengths, "steps": timer.steps}


def run_trl(seed: int, steps: int, folder: Path, work: Path, baton: Baton) -> dict[str, Any]:
    import torch
    from accelerate import Accelerator
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from troupe.rewards.builtin import letter_match

    torch.set_num_threads(1)  # as Troupe's cpuThreads: 1
    timer = PhaseTimer()
    instrument_common(timer)
    timer.wrap(Accelerator, "clip_grad_norm_", "clip")
    timer.wrap(GRPOTrainer, "_calculate_rewards", "scoring")
    timer.wrap(GRPOTrainer, "_get_per_token_logps_and_entropies", "forward")
    timer.wrap(GRPOTrainer, "_compute_loss", "loss")

    rewards: list[float] = []
    lengths: list[float] = []

    def letter_reward(
        prompts: list[str], completions: list[str], completion_ids: list[list[int]], letter: list[str], **_: Any
    ) -> list[float]:
        scores = [letter_match(p, c, {"letter": k}, {"field": "letter"}) for p, c, k in zip(prompts, completions, letter)]
        rewards.append(sum(scores) / len(scores))  # one call per step: the step's reward/mean
        lengths.append(sum(len(ids) for ids in completion_ids) / len(completion_ids))  # EOS included, as Troupe's
        return scores

    class StepClock(TrainerCallback):
        def on_step_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            baton.acquire()
            self.t0 = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            timer.end_step(time.perf_counter() - self.t0)
            baton.release()

    config = GRPOConfig(
        output_dir=str(work),
        seed=seed,
        max_steps=steps,
        learning_rate=LEARNING_RATE,
        lr_scheduler_type="constant",
        warmup_steps=0,
        weight_decay=0.0,
        adam_beta1=0.9,
        adam_beta2=0.999,
        adam_epsilon=1e-8,
        max_grad_norm=1.0,
        num_generations=GROUP_SIZE,
        per_device_train_batch_size=GROUP_SIZE * PROMPTS_PER_STEP,  # counts completions
        gradient_accumulation_steps=1,
        num_iterations=1,
        max_completion_length=MAX_NEW_TOKENS,
        temperature=1.0,
        top_p=1.0,
        top_k=0,
        loss_type="grpo",
        scale_rewards="group",
        beta=0.0,
        epsilon=0.2,
        bf16=False,  # TRL's default is True; Troupe trains in float32
        gradient_checkpointing=False,  # TRL's default is True
        use_cpu=True,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32)
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=letter_reward,
        args=config,
        train_dataset=Dataset.from_list(rows(seed)),
        processing_class=hf_char_tokenizer(folder),
        callbacks=[StepClock()],
    )
    started = time.perf_counter()
    trainer.train()
    return {"wall_s": time.perf_counter() - started, "rewards": rewards, "lengths": lengths, "steps": timer.steps}


def worker(framework: str, seed: int, steps: int, folder: Path, out: Path, baton: Baton, staleness: int, tis_cap: float | None = None) -> None:
    with tempfile.TemporaryDirectory(prefix=f"trl-compare-{framework}-") as work:
        if framework == "troupe-async":
            result = run_troupe(seed, steps, folder, Path(work), baton, staleness, tis_cap)
        else:
            result = (run_troupe if framework == "troupe" else run_trl)(seed, steps, folder, Path(work), baton)
    out.write_text(json.dumps(result))


# --------------------------------------------------------------------------- parent: run, compare, print


def steps_to_reach(rewards: list[float], threshold: float, window: int) -> int | None:
    for end in range(window, len(rewards) + 1):
        if sum(rewards[end - window : end]) / window >= threshold:
            return end
    return None


def run_seed(seed: int, steps: int, folder: Path, scratch: Path, staleness: int, tis_cap: float | None = None) -> dict[str, dict[str, Any]]:
    """The three trainers on one seed, in lockstep (lockstep.py); returns {framework: worker result}."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    order = FRAMEWORKS if seed % 2 else FRAMEWORKS[::-1]  # who takes the very first step
    outs = {f: scratch / f"{f}-{seed}.json" for f in order}
    commands = {
        f: [sys.executable, __file__, "--worker", f, "--seed", str(seed), "--steps", str(steps), "--model", str(folder), "--out", str(outs[f]),
            "--staleness", str(staleness), *(["--tis-cap", str(tis_cap)] if tis_cap is not None else [])]
        for f in order
    }
    run_lockstep(commands, steps, env, scratch)
    return {f: json.loads(outs[f].read_text()) for f in order}


def fmt_steps(n: int | None, steps: int) -> str:
    return str(n) if n is not None else f">{steps}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--steps", type=int, default=250)
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--window", type=int, default=10)
    parser.add_argument("--json", type=Path, help="also write every per-step number here")
    parser.add_argument("--staleness", type=int, default=1, help="troupe-async's algorithm.async.maxStaleness")
    parser.add_argument("--tis-cap", type=float, help="troupe-async also corrects its stale samples: importanceCorrection tis with this cap")
    parser.add_argument("--worker", choices=list(FRAMEWORKS), help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--model", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--baton", help=argparse.SUPPRESS)
    parser.add_argument("--report", type=Path, help="print the tables of a saved --json file instead of running")
    args = parser.parse_args()
    if args.report:
        saved = json.loads(args.report.read_text())
        results = {f: {int(seed): run for seed, run in per.items()} for f, per in saved["results"].items()}
        seeds = sorted(set.intersection(*(set(per) for per in results.values())))
        report(results, seeds, len(results["troupe"][seeds[0]]["rewards"]), args.threshold, args.window)
        return
    if args.worker:
        worker(args.worker, args.seed, args.steps, args.model, args.out, Baton(args.baton), args.staleness, args.tis_cap)
        return

    results: dict[str, dict[int, dict[str, Any]]] = {f: {} for f in FRAMEWORKS}
    with tempfile.TemporaryDirectory(prefix="trl-compare-") as scratch_dir:
        scratch = Path(scratch_dir)
        # The saved models lie outside each run's folder: a data root, as an operator lists one (the workers inherit it).
        os.environ["TROUPE_DATA_ROOTS"] = ",".join(filter(None, [os.environ.get("TROUPE_DATA_ROOTS"), str(scratch)]))
        for seed in args.seeds:
            folder = scratch / f"model-seed{seed}"
            save_model(seed, folder)
            check_same_tokenizer(folder, [r["prompt"] for r in rows(seed)])
            print(f"seed {seed}: {', '.join(FRAMEWORKS)} in lockstep, {args.steps} steps each...", file=sys.stderr, flush=True)
            for framework, result in run_seed(seed, args.steps, folder, scratch, args.staleness, args.tis_cap).items():
                results[framework][seed] = result
            if args.json:  # after every seed, so a crash later keeps what was measured
                args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "results": results}))

    report(results, args.seeds, args.steps, args.threshold, args.window)


EARLY_STEPS = 30  # steps 2..30: both policies still near random, so both generate ~full-length completions


def report(results: dict[str, dict[int, dict[str, Any]]], seeds: list[int], steps: int, threshold: float, window: int) -> None:
    frameworks = [f for f in FRAMEWORKS if f in results and all(seed in results[f] for seed in seeds)]
    print(f"\nTroupe (sync, and async where run) vs TRL {_trl_version()} GRPOTrainer, CPU, one torch thread each "
          f"(async: + its producer process); {steps} steps, {len(seeds)} seeds; "
          f"'reach' = first step whose last-{window}-step mean reward >= {threshold}")
    print("len = mean completion tokens per sample (EOS included) over the run: a learned policy that stops early makes")
    print(f"later steps cheaper, so 'early' is also given: the median step ratio over steps 2..{EARLY_STEPS}, at equal length.\n")
    head = " | ".join(f"{f + ' s/step':>17}" for f in frameworks)
    ratio_names = [f"{f}/trl" for f in frameworks if f != "trl"]
    print(f"{'seed':>4} | {head} | " + " | ".join(f"{n:>17}" for n in ratio_names) + " | " + " | ".join(f"{'early ' + n:>23}" for n in ratio_names)
          + " | " + " | ".join(f"{'len ' + f:>16}" for f in frameworks) + " | " + " | ".join(f"{'reach ' + f:>18}" for f in frameworks))
    ratios: dict[str, list[float]] = {n: [] for n in ratio_names}
    early: dict[str, list[float]] = {n: [] for n in ratio_names}
    reach: dict[str, list[int | None]] = {f: [] for f in frameworks}
    for seed in seeds:
        median = {f: summarise(results[f][seed]["steps"])["median_step"] for f in frameworks}
        for f in frameworks:
            if f != "trl":
                ratios[f"{f}/trl"].append(median[f] / median["trl"])
                early[f"{f}/trl"].append(_early_median(results[f][seed]) / _early_median(results["trl"][seed]))
            reach[f].append(steps_to_reach(results[f][seed]["rewards"], threshold, window))
        lengths = [f"{statistics.fmean(results[f][seed].get('lengths') or [float('nan')]):>16.2f}" for f in frameworks]
        print(f"{seed:>4} | " + " | ".join(f"{median[f]:>17.4f}" for f in frameworks) + " | "
              + " | ".join(f"{ratios[n][-1]:>17.3f}" for n in ratio_names) + " | " + " | ".join(f"{early[n][-1]:>23.3f}" for n in ratio_names)
              + " | " + " | ".join(lengths) + " | " + " | ".join(f"{fmt_steps(reach[f][-1], steps):>18}" for f in frameworks))

    print("\nWhere a step's time goes (ms per step, mean over steps 2..N, mean over seeds; sync Troupe and TRL):")
    print(f"{'phase':>10} | {'troupe':>8} | {'trl':>8} | troupe/trl")
    means = {f: _mean_over_seeds(results[f], seeds) for f in ("troupe", "trl")}
    for phase in (*PHASES, "other", "step"):
        a, b = means["troupe"][phase] * 1e3, means["trl"][phase] * 1e3
        print(f"{phase:>10} | {a:>8.2f} | {b:>8.2f} | {a / b:.2f}" if b > 0 else f"{phase:>10} | {a:>8.2f} | {b:>8.2f} | -")
    if "troupe-async" in frameworks:
        a = _mean_over_seeds(results["troupe-async"], seeds)["step"] * 1e3
        print(f"{'async step':>10} | {a:>8.2f} | {means['trl']['step'] * 1e3:>8.2f} | {a / (means['trl']['step'] * 1e3):.2f}   "
              f"(async/sync {a / (means['troupe']['step'] * 1e3):.2f})")

    penalty = steps + 1  # a run that never reached the target counts as one step past the end
    mean_reach = {f: statistics.fmean(n if n is not None else penalty for n in reach[f]) for f in reach}
    never = {f: sum(n is None for n in reach[f]) for f in reach}
    print()
    for n in ratio_names:
        f = n.split("/")[0]
        goal = f"; goal <= 0.5 on every seed: {'met' if max(ratios[n]) <= 0.5 else 'NOT met'}" if f == "troupe-async" else ""
        print(f"median step-time ratio {n}: {statistics.median(ratios[n]):.3f} (early steps: {statistics.median(early[n]):.3f}){goal}")
    print(f"mean steps to {threshold}: " + ", ".join(f"{f} {mean_reach[f]:.1f}" for f in frameworks)
          + f" (runs that never reached it: " + ", ".join(f"{f} {never[f]}" for f in frameworks) + f"; counted as {penalty})")
    for f in frameworks:
        if f != "trl":
            print(f"  {f} no worse than trl: {_reach_verdict(mean_reach, never, f)}")


def _early_median(run: dict[str, Any]) -> float:
    return statistics.median(s["step"] for s in run["steps"][1:EARLY_STEPS])


def _reach_verdict(mean_reach: dict[str, float], never: dict[str, int], framework: str) -> str:
    if mean_reach[framework] > mean_reach["trl"]:
        return "NOT met"
    # A run cut off before the target only gives a lower bound: equal bounds prove nothing.
    return "met" if never[framework] == 0 else "undecided (a Troupe run never reached it; run more --steps)"


def _mean_over_seeds(per_seed: dict[int, dict[str, Any]], seeds: list[int]) -> dict[str, float]:
    summaries = [summarise(per_seed[s]["steps"]) for s in seeds]
    return {k: statistics.fmean(s[k] for s in summaries) for k in summaries[0]}


def _trl_version() -> str:
    from importlib.metadata import version

    return version("trl")


if __name__ == "__main__":
    main()
