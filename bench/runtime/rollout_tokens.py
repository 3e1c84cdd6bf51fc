"""Rollout tokens/s of each engine on the same prompts (#15), as ratios against the HF sampler measured in
this same run.

Engines: `hf-generate` (transformers `generate` on the trainer's module: the baseline), `hf` (the HF engine as a run
uses it: the same model calls in rollout.py's lean loop where the model allows, lean_sampling.py), `vllm-standin`
(the vLLM engine driving tests/vllm_standin.py: NOT vLLM; a plain-torch decode loop behind vLLM's API, so its
speed says nothing about vLLM's, only what the engine's own bookkeeping costs), and `vllm` (the real engine,
only where vLLM and CUDA are installed, which is no machine of this workplace).

Tokens = sampled completion tokens (EOS included); each engine samples the same prompts, `--rounds` times
after one warm-up; the median round counts. A weight push (wake -> push -> reset -> wake) is timed too.

    .venv/bin/python bench/runtime/rollout_tokens.py [--prompts 64] [--new-tokens 32] [--rounds 5] [--width 256 --layers 4]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "gpu-runtime" / "tests"))

import torch  # noqa: E402
import vllm_standin  # noqa: E402
from transformers import Qwen2Config, Qwen2ForCausalLM  # noqa: E402

import troupe.engines.rollout.sampling as rollout_module  # noqa: E402
from troupe.models.loading import LoadedModel, neutral_generation_config, save_checkpoint  # noqa: E402
from troupe.engines.rollout import EnginePrompt, HFEngine  # noqa: E402
from troupe.engines.rollout.sync import push  # noqa: E402
from troupe.engines.rollout.vllm_engine import VllmEngine, VllmSettings  # noqa: E402
from troupe.models.tokenizer import CharTokenizer  # noqa: E402


def build(width: int, layers: int, device: torch.device) -> LoadedModel:
    tok = CharTokenizer()
    heads = max(width // 64, 2)
    config = Qwen2Config(
        vocab_size=tok.vocab_size, hidden_size=width, num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
        intermediate_size=4 * width, max_position_embeddings=1024, tie_word_embeddings=True,
        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(config).to(device)
    model.generation_config = neutral_generation_config(tok)
    return LoadedModel(model, tok, f"Qwen2 {layers}x{width}")


class GenerateOnly:
    """An HF engine made to sample through transformers `generate` (the lean loop refused), for the baseline."""

    def __init__(self, engine: HFEngine):
        self.engine = engine

    def generate(self, prompts, sampling):
        lean_refusal = rollout_module.lean_sampling_refusal
        rollout_module.lean_sampling_refusal = lambda model, synced: "the baseline row"
        try:
            return self.engine.generate(prompts, sampling)
        finally:
            rollout_module.lean_sampling_refusal = lean_refusal


def rounds(engine, prompts, sampling, n: int) -> tuple[float, int]:
    engine.generate(prompts, sampling)  # warm-up
    times, tokens = [], 0
    for _ in range(n):
        t0 = time.perf_counter()
        r = engine.generate(prompts, sampling)
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        tokens = int(r.completion_mask.sum())
    return statistics.median(times), tokens


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loaded = build(args.width, args.layers, device)
    tok = loaded.tokenizer
    # Rows end at EOS or --new-tokens; each engine's own count of sampled tokens is its numerator.
    sampling = {"temperature": 1.0, "topK": 0, "topP": 1.0, "maxNewTokens": args.new_tokens}
    prompts = [EnginePrompt(tok.encode(f"say {'abcdefgh'[i % 8]}: " + "x" * (i % 5), False)) for i in range(args.prompts)]
    params = sum(p.numel() for p in loaded.model.parameters())
    print(f"{loaded.description} ({params / 1e6:.1f}M parameters) on {device}, {args.prompts} prompts x {args.new_tokens} new tokens, "
          f"median of {args.rounds} rounds, {args.threads} CPU thread(s)")

    with tempfile.TemporaryDirectory() as tmp:
        save_checkpoint(loaded, Path(tmp))
        engines: list[tuple[str, object]] = [("hf-generate", GenerateOnly(HFEngine(loaded.model, tok, device))), ("hf", HFEngine(loaded.model, tok, device))]
        engines.append(("vllm-standin", VllmEngine(tmp, tok, VllmSettings(sleep_level=2), seed=0, dtype="float32", vllm=vllm_standin)))
        real = importlib.util.find_spec("vllm") is not None and torch.cuda.is_available()
        if real:
            engines.append(("vllm", VllmEngine(tmp, tok, VllmSettings(gpu_memory_utilization=0.3, sleep_level=2), seed=0, dtype="float32")))
        results = {}
        for name, engine in engines:
            seconds, tokens = rounds(engine, prompts, sampling, args.rounds)
            results[name] = tokens / seconds
            line = f"  {name:13s} {tokens:6d} tokens in {seconds * 1000:8.1f} ms = {tokens / seconds:10,.0f} tokens/s  ({results[name] / results['hf-generate']:.2f}x hf-generate)"
            if isinstance(engine, VllmEngine):
                engine.sleep(2)
                sync = push(engine, loaded.model.named_parameters())
                line += f"; weight push {sync.bytes / 2**20:.1f} MiB in {sync.seconds * 1000:.1f} ms"
            print(line)
        if not real:
            print("  vllm          not measured: vLLM and CUDA are not both installed on this host")


if __name__ == "__main__":
    main()
