"""Troupe at real model shapes against the hardware's own limits, measured in the same run (issue #25).

Random-init Qwen2 at the Qwen2.5-0.5B and 1.5B shapes (bf16), random token ids with EOS out of the
vocabulary (every row decodes the full length). First the limits: HBM bandwidth (a device-to-device copy,
read + write), bf16 matmul TFLOP/s (8192^3), pinned host<->device copy GB/s. Then, through Troupe's own
code paths, so that a speed-up there shows here:

  rollout    the HF rollout engine (troupe.engines.rollout.HFEngine, what a run samples with) in tok/s,
             against the decode floor (weight + KV-cache bytes read per token step / measured bandwidth,
             plus the prefill at the measured matmul peak) and against transformers' static-cache
             `generate` (cache_implementation="static", compiled by transformers on CUDA) in this script;
  update     one GRPO step (troupe.algorithms.update.update_actor on the torch backend, bf16 autocast, packing as a
             run does it, fwd + bwd + AdamW): MFU = 6 x params x tokens / step time / measured bf16 peak;
  logprobs   troupe_kernels.token_logprobs forward + backward against the three bare matmuls it cannot
             beat (logits, grad hidden, grad weight), bf16 and fp32;
  offload    two actors taking turns with between-phase offload (troupe.residency.manager.ResidencyManager): GB/s
             of every move, the first included, against the pinned copy; peak allocated against one
             actor's training state + its update's activations.

It ends with ONE table: value, limit, ratio and the issue's goal per row. `--device cpu --tiny` runs
every section at toy sizes in seconds (CI's smoke test, gpu-runtime/tests/test_gpu_scale_smoke.py): its
numbers say nothing about speed. On a GPU: `python bench/runtime/gpu_scale.py` (scripts/gpu-check.sh runs
it); `--json FILE` also writes the rows.

Measured on an NVIDIA H200 on 2026-11-28 (bench/measurements/h200-2026-11-28/, the table in README "Speed on a
GPU"), the head-dtype and gradient-slab fixes included (run3-*).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "gpu-runtime" / "tests"))

import torch  # noqa: E402
from transformers import Qwen2Config, Qwen2ForCausalLM  # noqa: E402
from transformers import GenerationConfig  # noqa: E402

from troupe.engines.train import BackendSettings, build_backend  # noqa: E402
from troupe.launch.distributed import SINGLE  # noqa: E402
from troupe.residency.host_buffers import HostBuffers  # noqa: E402
from troupe.residency.manager import Resident, ResidencyManager  # noqa: E402
from troupe.engines.rollout.sampling import Rollout  # noqa: E402
from troupe.engines.rollout import EnginePrompt, HFEngine  # noqa: E402
from troupe.algorithms.update import update_actor  # noqa: E402
from troupe.algorithms.update_loss import LossOptions  # noqa: E402
from troupe_kernels import token_logprobs  # noqa: E402

GIB = 2**30

# Qwen2.5 shapes (config.json of the Hub models); `tiny` is for the CPU smoke test.
SHAPES: dict[str, dict[str, Any]] = {
    "qwen2.5-0.5b": dict(hidden_size=896, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2, intermediate_size=4864, vocab_size=151936),
    "qwen2.5-1.5b": dict(hidden_size=1536, num_hidden_layers=28, num_attention_heads=12, num_key_value_heads=2, intermediate_size=8960, vocab_size=151936),
    "tiny": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, intermediate_size=128, vocab_size=512),
}


@dataclass(frozen=True)
class Sizes:
    """Workload sizes: the issue's on a GPU, toy ones for --tiny."""

    rollout_rows: int = 64
    prompt_tokens: int = 128
    new_tokens: int = 256
    update_rows: int = 64
    update_prompt: int = 128
    update_completion: int = 256
    logprob_n: int = 16384
    logprob_h: int = 896
    logprob_v: int = 151936
    offload_rows: int = 16
    matmul_n: int = 8192
    copy_bytes: int = GIB
    repeats: int = 3


TINY = Sizes(rollout_rows=4, prompt_tokens=8, new_tokens=8, update_rows=4, update_prompt=8, update_completion=8,
             logprob_n=128, logprob_h=64, logprob_v=512, offload_rows=2, matmul_n=256, copy_bytes=2**22, repeats=2)


@dataclass
class Row:
    section: str
    measure: str
    value: float
    unit: str
    limit: float | None = None
    limit_unit: str = ""
    goal: str = ""
    note: str = ""

    @property
    def ratio(self) -> float | None:
        return None if self.limit in (None, 0) else self.value / self.limit  # type: ignore[operator]


@dataclass
class Bench:
    device: torch.device
    sizes: Sizes
    rows: list[Row] = field(default_factory=list)
    profile: bool = False

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        ratio = f"  ratio {row.ratio:.3f}" if row.ratio is not None else ""
        print(f"  [{row.section}] {row.measure}: {fmt(row.value)} {row.unit}" + (f" | limit {fmt(row.limit)} {row.limit_unit}" if row.limit else "") + ratio + (f"  ({row.note})" if row.note else ""), flush=True)
        return row

    def sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def timed(self, fn: Callable[[], Any], repeats: int | None = None, warm: bool = True) -> float:
        """Median seconds of `repeats` calls after one warm-up (`warm=False`: the caller warmed up)."""
        if warm:
            fn()
            self.sync()
        times = []
        for _ in range(repeats or self.sizes.repeats):
            t0 = time.perf_counter()
            fn()
            self.sync()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    @contextlib.contextmanager
    def peak(self) -> Iterator[dict[str, int]]:
        out = {"peak": 0, "base": 0}
        if self.device.type == "cuda":
            self.sync()
            torch.cuda.reset_peak_memory_stats(self.device)
            out["base"] = torch.cuda.memory_allocated(self.device)
        yield out
        if self.device.type == "cuda":
            self.sync()
            out["peak"] = torch.cuda.max_memory_allocated(self.device)

    def free(self) -> None:
        gc.collect()
        if self.device.type == "cuda":
            torch.cuda.empty_cache()


def fmt(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return str(x)
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"


# ----------------------------------------------------------------------------------------------- limits
@dataclass(frozen=True)
class Limits:
    bandwidth_gbs: float  # device memory, read + write counted
    bf16_tflops: float
    fp32_tflops: float
    h2d_gbs: float
    d2h_gbs: float


def measure_limits(b: Bench) -> Limits:
    d, s = b.device, b.sizes
    n_elems = s.copy_bytes // 2
    src = torch.empty(n_elems, dtype=torch.bfloat16, device=d).normal_()
    dst = torch.empty_like(src)
    seconds = b.timed(lambda: dst.copy_(src), repeats=max(s.repeats, 10) if d.type == "cuda" else s.repeats)
    bandwidth = 2 * s.copy_bytes / seconds / 1e9
    b.add(Row("limits", "memory bandwidth (device copy, read+write)", bandwidth, "GB/s", note=f"{s.copy_bytes / GIB:.2f} GiB buffer"))
    del src, dst

    def matmul(dtype: torch.dtype) -> float:
        n = s.matmul_n
        x = torch.randn(n, n, device=d, dtype=dtype)
        y = torch.randn(n, n, device=d, dtype=dtype)
        return 2 * n**3 / b.timed(lambda: x @ y) / 1e12

    bf16 = b.add(Row("limits", "dense matmul bf16", matmul(torch.bfloat16), "TFLOP/s", note=f"{s.matmul_n}^3")).value
    fp32 = b.add(Row("limits", "dense matmul fp32", matmul(torch.float32), "TFLOP/s", note=f"{s.matmul_n}^3, precision {torch.get_float32_matmul_precision()!r}")).value

    pin = d.type == "cuda"
    host = torch.empty(n_elems, dtype=torch.bfloat16, pin_memory=pin)
    dev = torch.empty(n_elems, dtype=torch.bfloat16, device=d)
    h2d = s.copy_bytes / b.timed(lambda: dev.copy_(host, non_blocking=pin)) / 1e9
    d2h = s.copy_bytes / b.timed(lambda: host.copy_(dev, non_blocking=pin)) / 1e9
    b.add(Row("limits", f"{'pinned' if pin else 'host'} copy host->device", h2d, "GB/s"))
    b.add(Row("limits", f"{'pinned' if pin else 'host'} copy device->host", d2h, "GB/s"))
    del host, dev
    b.free()
    return Limits(bandwidth, bf16, fp32, h2d, d2h)


# ----------------------------------------------------------------------------------------------- models
class IdTokenizer:
    """Token ids are the text: what HFEngine needs of a tokenizer for random ids (pad 0, EOS out of range)."""

    def __init__(self, vocab: int):
        self.pad_token_id = 0
        self.eos_token_ids = [vocab]  # never sampled: every row decodes the full length
        self.vocab_size = vocab

    def decode(self, ids: list[int]) -> str:
        return ""


def build_model(shape: str, device: torch.device, dtype: torch.dtype) -> Qwen2ForCausalLM:
    cfg = SHAPES[shape]
    config = Qwen2Config(**cfg, tie_word_embeddings=True, max_position_embeddings=4096, bos_token_id=1, eos_token_id=cfg["vocab_size"], pad_token_id=0)
    torch.manual_seed(0)
    with torch.device(device):
        model = Qwen2ForCausalLM(config).to(dtype)
    model.generation_config = GenerationConfig(eos_token_id=[cfg["vocab_size"]], pad_token_id=0)
    return model.eval()


def param_count(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())  # tied embedding counted once


def random_ids(rows: int, length: int, vocab: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(1, vocab, (rows, length), generator=g)


# ----------------------------------------------------------------------------------------------- rollout
def decode_floor(model: Qwen2ForCausalLM, rows: int, prompt: int, new: int, limits: Limits, bytes_per_value: int) -> float:
    """Tokens/s no decoder can beat: each step reads every weight and the KV cache so far; the prefill runs at the matmul peak."""
    c = model.config
    head_dim = c.hidden_size // c.num_attention_heads
    weights = param_count(model) * bytes_per_value
    kv_per_token = 2 * c.num_hidden_layers * c.num_key_value_heads * head_dim * bytes_per_value
    bandwidth = limits.bandwidth_gbs * 1e9  # the copy's read + write traffic per second, as the floor counts it
    steps = sum((weights + kv_per_token * rows * (prompt + t)) / bandwidth for t in range(new))
    prefill = 2 * param_count(model) * rows * prompt / (limits.bf16_tflops * 1e12)
    return rows * new / (steps + prefill)


def rollout_section(b: Bench, shape: str, limits: Limits) -> None:
    s = b.sizes
    model = build_model(shape, b.device, torch.bfloat16)
    vocab = model.config.vocab_size
    tok = IdTokenizer(vocab)
    prompts_ids = random_ids(s.rollout_rows, s.prompt_tokens, vocab, seed=1)
    prompts = [EnginePrompt(row.tolist()) for row in prompts_ids]
    sampling = {"temperature": 1.0, "topK": 0, "topP": 1.0, "maxNewTokens": s.new_tokens}
    floor = decode_floor(model, s.rollout_rows, s.prompt_tokens, s.new_tokens, limits, 2)
    engine = HFEngine(model, tok, b.device)  # what a run samples with (rollout_engines/hf.py)
    produced: dict[str, int] = {}

    def troupe() -> None:
        r = engine.generate(prompts, sampling)
        produced["tokens"] = int(r.completion_mask.sum())

    t0 = time.perf_counter()
    troupe()  # the first call: warm-up, and the compile where the engine compiles its step
    b.sync()
    first = time.perf_counter() - t0
    with b.peak() as mem:
        seconds = b.timed(troupe, repeats=1 if b.device.type == "cuda" else s.repeats, warm=False)
    troupe_tok_s = produced["tokens"] / seconds
    b.add(Row(f"rollout {shape}", "Troupe HF engine, bf16 weights: tok/s vs decode floor", troupe_tok_s, "tok/s", floor, "tok/s floor", ">= 0.25",
              f"{s.rollout_rows}x{s.new_tokens} new tokens after {s.prompt_tokens} in {seconds:.2f}s (first call {first:.1f}s); peak {mem['peak'] / GIB:.1f} GiB"))

    # transformers' static-cache generate on the same prompts (compiled by transformers on CUDA), warmed up once.
    ids = prompts_ids.to(b.device)
    attention = torch.ones_like(ids)

    def static_generate() -> None:
        out = model.generate(input_ids=ids, attention_mask=attention, do_sample=True, top_k=0, top_p=1.0, temperature=1.0,
                             max_new_tokens=s.new_tokens, cache_implementation="static")  # EOS is out of range: full length
        produced["static"] = (out.shape[1] - ids.shape[1]) * out.shape[0]

    t0 = time.perf_counter()
    static_generate()  # compile (CUDA) and warm-up, timed apart
    b.sync()
    warmup = time.perf_counter() - t0
    static_seconds = b.timed(static_generate, repeats=1 if b.device.type == "cuda" else s.repeats, warm=False)
    static_tok_s = produced["static"] / static_seconds
    b.add(Row(f"rollout {shape}", "transformers static-cache generate: tok/s vs decode floor", static_tok_s, "tok/s", floor, "tok/s floor", "",
              f"warm-up/compile {warmup:.1f}s"))
    b.add(Row(f"rollout {shape}", "Troupe HF engine vs static-cache generate", troupe_tok_s, "tok/s", static_tok_s, "tok/s generate", ">= 1.0"))
    del engine, model
    b.free()


# ----------------------------------------------------------------------------------------------- update
def training_settings(precision: str) -> dict[str, Any]:
    from runtime_helpers import small_spec

    from troupe.spec import validate_spec

    training = validate_spec(small_spec())["actors"][0]["training"]
    return {**training, "precision": precision, "backend": "torch", "offload": {"params": False, "optimizer": False}}


def grpo_batch(rows: int, prompt: int, completion: int, vocab: int, device: torch.device, seed: int) -> tuple[Rollout, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    prompt_ids = random_ids(rows, prompt, vocab, seed)
    completion_ids = random_ids(rows, completion, vocab, seed + 1)
    # Completions of varied length (as sampled ones are), so packing has padding to remove.
    lengths = torch.randint(completion // 4, completion + 1, (rows,), generator=g)
    mask = (torch.arange(completion).unsqueeze(0) < lengths.unsqueeze(1)).long()
    batch = Rollout(prompt_ids.to(device), torch.ones(rows, prompt, dtype=torch.long, device=device), completion_ids.to(device), mask.to(device),
                    (-2.0 + 0.1 * torch.randn(rows, completion, generator=g)).to(device), [])
    advantages = torch.randn(rows, generator=g).to(device)
    return batch, mask.to(device), advantages


OPTIONS = LossOptions(loss_type="grpo", clip_eps_low=0.2, clip_eps_high=0.2, max_completion_len=None, kl_beta=0.0, temperature=1.0)


def one_update(backend: Any, batch: Rollout, mask: torch.Tensor, advantages: torch.Tensor) -> dict[str, float]:
    return update_actor(backend, batch, mask, advantages, OPTIONS, 1, backend.settings.training["maxGradNorm"], SINGLE, None, lambda _b: None)


def update_section(b: Bench, shape: str, limits: Limits) -> None:
    s = b.sizes
    model = build_model(shape, b.device, torch.float32).train()  # a trainable actor: fp32 master weights
    params = param_count(model)
    backend = build_backend(model, BackendSettings("bench", training_settings("bf16"), b.device, SINGLE))
    batch, mask, advantages = grpo_batch(s.update_rows, s.update_prompt, s.update_completion, model.config.vocab_size, b.device, seed=3)
    with b.peak() as mem:
        seconds = b.timed(lambda: one_update(backend, batch, mask, advantages))
    tokens = s.update_rows * (s.update_prompt + s.update_completion)
    tflops = 6 * params * tokens / seconds / 1e12
    b.add(Row(f"update {shape}", "GRPO step (fwd+bwd+AdamW, bf16): MFU = 6*params*tokens/time vs bf16 peak", tflops, "TFLOP/s", limits.bf16_tflops, "TFLOP/s bf16", ">= 0.40",
              f"{s.update_rows}x{s.update_prompt + s.update_completion} tokens, {params / 1e6:.1f}M params, step {seconds:.3f}s, peak {mem['peak'] / GIB:.1f} GiB"))
    if b.profile:
        profile_step(b, shape, lambda: one_update(backend, batch, mask, advantages))
    del backend, model, batch
    b.free()


def profile_step(b: Bench, shape: str, step: Callable[[], Any]) -> None:
    """Where one update step's device time goes (--profile): the kernels by total CUDA time, printed (not rows)."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if b.device.type == "cuda" else [])
    with profile(activities=activities) as prof:
        step()
        b.sync()
    key = "self_device_time_total" if b.device.type == "cuda" else "self_cpu_time_total"
    print(f"\n  [update {shape}] profile of one step, top kernels by {key}:")
    print(prof.key_averages().table(sort_by=key, row_limit=15, max_name_column_width=60), flush=True)


# ----------------------------------------------------------------------------------------------- log-probs
def logprobs_section(b: Bench) -> None:
    s = b.sizes
    n, h, v = s.logprob_n, s.logprob_h, s.logprob_v
    for dtype in (torch.bfloat16, torch.float32):
        name = "bf16" if dtype == torch.bfloat16 else "fp32"
        g = torch.Generator(device=b.device).manual_seed(0)
        hidden = torch.randn(n, h, device=b.device, dtype=dtype, generator=g).requires_grad_()
        weight = (torch.randn(v, h, device=b.device, dtype=dtype, generator=g) / 30).requires_grad_()
        targets = torch.randint(0, v, (n,), device=b.device, generator=g)
        grad_out = torch.randn(n, v, device=b.device, dtype=dtype, generator=g) if n * v * 2 <= 8 * GIB else None

        def ours() -> None:
            hidden.grad = weight.grad = None
            token_logprobs(hidden, weight, targets).sum().backward()

        def bare() -> None:
            with torch.no_grad():
                _logits = hidden @ weight.T
                assert grad_out is not None
                _gh = grad_out @ weight
                _gw = grad_out.T @ hidden

        ours_s = b.timed(ours)
        bare_s = b.timed(bare) if grad_out is not None else float("nan")
        # Ratio row: the bare matmuls' time as the limit, so "ratio" reads as "x of the floor's speed".
        b.add(Row("logprobs", f"token_logprobs fwd+bwd {name}, N={n:,} V={v:,} H={h}: 3 bare matmuls' time / ours", bare_s / ours_s, "x", 1.0, "(bare = 1)", ">= 0.67 (<= 1.5x bare)",
                  f"ours {ours_s * 1e3:.1f} ms, bare {bare_s * 1e3:.1f} ms"))
        del hidden, weight, targets, grad_out
        b.free()


# ----------------------------------------------------------------------------------------------- offload
def offload_section(b: Bench, shape: str, limits: Limits) -> None:
    """Two trainable actors take turns (the rollout's arrangement -> update a -> update b), two cycles, without
    and with between-phase offload: peak allocated both ways; with offload, every move's GB/s against the
    pinned copy, the first included, and the peak against one actor's training state + its update's activations."""
    s = b.sizes
    cuda = b.device.type == "cuda"
    for between in (False, True):
        moves: list[dict[str, Any]] = []
        manager = ResidencyManager(between_phases=between, report=lambda **e: moves.append(e))
        actors = {}
        for name in ("a", "b"):
            model = build_model(shape, b.device, torch.float32).train()
            actors[name] = build_backend(model, BackendSettings(name, training_settings("bf16"), b.device, SINGLE))
            manager.add(Resident(name, b.device, backend=actors[name]))
        if between:  # as the run loop does (train.build_residency): host buffers before the first step, reused by every move
            t0 = time.perf_counter()
            reserved = manager.prepare_host_buffers(HostBuffers(pin=cuda))
            b.add(Row(f"offload {shape}", "host buffers set aside before the first step (once per run)", reserved / GIB, "GiB", note=f"in {time.perf_counter() - t0:.1f}s"))
        batch, mask, advantages = grpo_batch(s.offload_rows, s.update_prompt, s.update_completion, actors["a"].module.config.vocab_size, b.device, seed=5)
        peak = activations = state = 0
        if cuda:
            b.sync()
            torch.cuda.reset_peak_memory_stats(b.device)
        for cycle in (1, 2):
            manager.step = cycle
            manager.for_rollout(["a", "b"])
            for name in ("a", "b"):
                manager.for_update(name)
                if cuda:
                    b.sync()
                    peak = max(peak, torch.cuda.max_memory_allocated(b.device))
                    before = torch.cuda.memory_allocated(b.device)
                    torch.cuda.reset_peak_memory_stats(b.device)
                one_update(actors[name], batch, mask, advantages)
                if cuda:
                    b.sync()
                    top = torch.cuda.max_memory_allocated(b.device)
                    peak, activations = max(peak, top), max(activations, top - before)
                state = max(state, sum(actors[name].part_bytes(p) for p in ("params", "optimizer")) + actors[name].grads_bytes())
        label = "offload" if between else "no offload"
        if cuda:
            limit = (state + activations) / GIB if between else None
            b.add(Row(f"offload {shape}", f"peak allocated, two actors taking turns ({label})" + (" vs one actor's state + activations" if between else ""), peak / GIB, "GiB",
                      limit, "GiB" if between else "", "<= 1.0" if between else "", f"one actor's state {state / GIB:.2f} GiB, its update's activations {activations / GIB:.2f} GiB"))
        for e in moves:
            gbs = e["bytes"] / max(e["seconds"], 1e-9) / 1e9
            rate = limits.d2h_gbs if e["direction"] == "offload" else limits.h2d_gbs
            b.add(Row(f"offload {shape}", f"cycle {e['step']} {e['direction']} {e['actor']} ({'+'.join(e['parts'])})", gbs, "GB/s", rate, "GB/s pinned copy", ">= 0.7",
                      f"{e['bytes'] / GIB:.2f} GiB in {e['seconds']:.3f}s"))
        del actors, manager, batch
        b.free()


# ----------------------------------------------------------------------------------------------- table
def print_table(b: Bench, title: str) -> None:
    print("\n" + "=" * 150)
    print(title)
    print(f"{'section':24} {'measure':78} {'value':>10} {'unit':8} {'limit':>10} {'limit unit':18} {'ratio':>7}  goal")
    for r in b.rows:
        ratio = f"{r.ratio:.3f}" if r.ratio is not None else "-"
        limit = fmt(r.limit) if r.limit is not None else "-"
        print(f"{r.section[:24]:24} {r.measure[:78]:78} {fmt(r.value):>10} {r.unit[:8]:8} {limit:>10} {r.limit_unit[:18]:18} {ratio:>7}  {r.goal}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--tiny", action="store_true", help="toy sizes (the CPU smoke test): the numbers mean nothing")
    parser.add_argument("--shapes", default="qwen2.5-0.5b,qwen2.5-1.5b", help="comma-separated: qwen2.5-0.5b, qwen2.5-1.5b")
    parser.add_argument("--skip", default="", help="comma-separated sections to skip: rollout, update, logprobs, offload")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    parser.add_argument("--profile", action="store_true", help="also print where one update step's time goes (torch.profiler)")
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        print("gpu_scale: CUDA is not available here (use --device cpu --tiny for the smoke run)", file=sys.stderr)
        return 2
    device = torch.device(args.device)
    sizes = TINY if args.tiny else Sizes()
    shapes = ["tiny"] if args.tiny else [x for x in args.shapes.split(",") if x]
    skip = set(filter(None, args.skip.split(",")))
    b = Bench(device, sizes, profile=args.profile)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    import transformers

    print(f"gpu_scale on {name}: torch {torch.__version__}, transformers {transformers.__version__}; shapes {', '.join(shapes)}{'; TINY sizes' if args.tiny else ''}", flush=True)
    started = time.perf_counter()
    limits = measure_limits(b)
    for shape in shapes:
        if "rollout" not in skip:
            rollout_section(b, shape, limits)
        if "update" not in skip:
            update_section(b, shape, limits)
    if "logprobs" not in skip:
        logprobs_section(b)
    if "offload" not in skip:
        offload_section(b, shapes[0], limits)
    print_table(b, f"gpu_scale summary on {name} (random-init Qwen2, bf16), {time.perf_counter() - started:.1f}s; ratio = value / limit")
    if args.json:
        args.json.write_text(json.dumps([{**asdict(r), "ratio": r.ratio} for r in b.rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
