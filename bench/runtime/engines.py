"""Training engines (#14): what between-phase offload keeps off the device, what it costs per step, and
what 2 ranks cost against 1. Every number is a ratio against a baseline run in this same script.

1. Resident bytes per phase, two trainable actors taking turns on one device, with
   `trainer.offloadBetweenPhases` against without: the residency manager's own books (on a CPU host,
   host memory cannot show it: offloading CPU -> CPU frees nothing; scripts/gpu-check.sh checks the books
   against torch.cuda.memory_allocated on a GPU). Goal: the resident peak is the largest single actor's
   training state, not the sum.
2. Step time with offload against without, and the bytes and seconds copied per step, on a random-init
   ~85M-parameter Qwen2 (12 layers, width 768).
3. Step time of 2 ranks (fsdp2, gloo) against 1 process on the same model and batch.

    .venv/bin/python bench/runtime/engines.py [--steps 4] [--skip-ranks]
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "gpu-runtime" / "tests"))

from runtime_helpers import small_spec  # noqa: E402

from troupe import EventWriter, run_spec  # noqa: E402
import troupe.train as train_module  # noqa: E402  (the loop module; `from troupe import train` is the library function)


def mib(n: float) -> str:
    return f"{n / 2**20:,.1f} MiB"


def two_actor_spec(offload: bool) -> dict:
    spec = small_spec(steps=2, offloadBetweenPhases=offload)
    second = copy.deepcopy(spec["actors"][0])
    second["name"], second["model"] = "rival", {"source": "tiny", "preset": "tiny-char-4l"}
    spec["actors"].append(second)
    env = copy.deepcopy(spec["environments"][0])
    env["name"], env["actors"] = "echo2", ["rival"]
    spec["environments"].append(env)
    return spec


def resident_books() -> None:
    books = {}
    original = train_module.build_residency

    def spy(trainer, actors, events):  # the loop hands the typed trainer section
        manager = original(trainer, actors, events)
        books[bool(trainer.offload_between_phases)] = manager
        return manager

    train_module.build_residency = spy
    try:
        for offload in (False, True):
            with tempfile.TemporaryDirectory() as tmp:
                result = run_spec(two_actor_spec(offload), events=EventWriter(keep=True), work_dir=tmp)
                assert result.state == "succeeded", result.message
    finally:
        train_module.build_residency = original
    off, on = books[False], books[True]
    states = {n: r.part_bytes("params") * 2 + r.part_bytes("optimizer") for n, r in on.residents.items()}
    print("1. resident bytes on the training device (two actors: tiny-char-2l and tiny-char-4l)")
    print(f"   {'phase':<8} {'no offload':>14} {'offload':>14} {'ratio':>7}")
    for phase in sorted(set(off.resident_by_phase) | set(on.resident_by_phase)):
        a, b = off.resident_by_phase.get(phase, 0), on.resident_by_phase.get(phase, 0)
        print(f"   {phase:<8} {mib(a):>14} {mib(b):>14} {b / a if a else float('nan'):>7.2f}")
    print(f"   peak     {mib(off.resident_peak):>14} {mib(on.resident_peak):>14} {on.resident_peak / off.resident_peak:>7.2f}")
    print(f"   largest single actor's training state (params + grads + optimizer): {mib(max(states.values()))}"
          f" -> goal {'met' if on.resident_peak <= max(states.values()) else 'NOT met'}")


def model_folder(root: Path) -> Path:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from troupe.models.tokenizer import CharTokenizer

    folder = root / "qwen2-85m"
    tokenizer = CharTokenizer()
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=tokenizer.vocab_size, hidden_size=768, intermediate_size=2048, num_hidden_layers=12, num_attention_heads=12,
        num_key_value_heads=12, tie_word_embeddings=True, max_position_embeddings=1024,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
    )
    model = Qwen2ForCausalLM(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def big_spec(folder: Path, steps: int, **trainer) -> dict:
    spec = small_spec(steps=steps, **trainer)
    spec["actors"][0]["model"] = {"source": "local", "path": str(folder)}
    spec["algorithm"]["groupSize"] = 2
    spec["trainer"]["promptsPerStep"] = 2
    return spec


def step_stats(result) -> dict:
    times = result.metrics("step_time_s")[1:]  # the first step warms up allocators
    moves = [e for e in result.events if e["type"] == "offload" and e["step"] > 1]
    steps = max(len(times), 1)
    return {
        "median_s": statistics.median(times),
        "bytes_per_step": sum(e["bytes"] for e in moves) / steps,
        "copy_s_per_step": sum(e["seconds"] for e in moves) / steps,
    }


def run(spec: dict, tmp: Path, name: str):
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp / name)
    assert result.state == "succeeded", result.message
    return result


def big_model(steps: int, skip_ranks: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        folder = model_folder(tmp)
        # The model lies beside the runs' folders: a data root, as an operator lists one (TROUPE_DATA_ROOTS).
        os.environ["TROUPE_DATA_ROOTS"] = ",".join(filter(None, [os.environ.get("TROUPE_DATA_ROOTS"), str(tmp)]))
        params = sum(p.numel() for p in __import__("transformers").AutoModelForCausalLM.from_pretrained(folder).parameters())
        print(f"\n2. offload cost per step, Qwen2 {params / 1e6:.0f}M parameters, {steps} steps (median of steps 2..)")
        plain = step_stats(run(big_spec(folder, steps, offloadBetweenPhases=False), tmp, "plain"))
        moved = step_stats(run(big_spec(folder, steps, offloadBetweenPhases=True), tmp, "offload"))
        print(f"   no offload: {plain['median_s']:.2f} s/step")
        print(f"   offload:    {moved['median_s']:.2f} s/step ({moved['median_s'] / plain['median_s']:.2f}x), "
              f"{mib(moved['bytes_per_step'])} and {moved['copy_s_per_step']:.3f} s copied per step")
        if skip_ranks:
            return
        print(f"\n3. 2 ranks (fsdp2, gloo, 1 thread each) against 1 process (1 thread), same model and batch")
        one = step_stats(run(big_spec(folder, steps, cpuThreads=1), tmp, "one"))
        spec = big_spec(folder, steps, cpuThreads=1)
        spec["actors"][0]["training"]["backend"] = "fsdp2"
        spec["actors"][0]["placement"] = {"processes": 2}
        two = step_stats(run(spec, tmp, "two"))
        print(f"   1 process: {one['median_s']:.2f} s/step")
        print(f"   2 ranks:   {two['median_s']:.2f} s/step ({two['median_s'] / one['median_s']:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--skip-ranks", action="store_true")
    parser.add_argument("--only-books", action="store_true")
    args = parser.parse_args()
    resident_books()
    if not args.only_books:
        big_model(args.steps, args.skip_ranks)


if __name__ == "__main__":
    main()
