"""Token log-probs: peak extra memory and time of `troupe_kernels.token_logprobs` against the naive
`log_softmax(hidden @ weight.T).gather` and against the bare matmuls, at V=151,936, H=896 (Qwen2).

Run from the repo root:  .venv/bin/python bench/kernels/logprobs_bench.py [--full] [--device cuda]

Memory (CPU): each measurement runs in a fresh child process with glibc's mmap threshold pinned
at 1 MiB (MALLOC_MMAP_THRESHOLD_), so every tensor buffer is its own mapping, freed back to the OS
on release; peak extra = peak RSS (getrusage ru_maxrss) after the computation minus peak RSS once
the inputs exist. Gradients (the same for both) are included in fwd+bwd. On CUDA:
torch.cuda.max_memory_allocated over memory_allocated before.
Time: --repeats interleaved rounds on the same inputs; each round's ratio, then the median.
  fwd ratio     = token_logprobs forward / bare `hidden @ weight.T` (the floor of any forward)
  fwd+bwd ratio = forward+backward / the three bare matmuls (logits, grad hidden, grad weight)
Defaults keep the run near 3 minutes on 2 CPU cores; --full uses N up to 16,384 (hours on CPU,
and the naive path needs ~30 GB of RAM at that size).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import torch

V, H = 151936, 896


def _inputs(n: int, device: str, dtype: torch.dtype):
    g = torch.Generator().manual_seed(0)
    # In place and without dtype/device copies on CPU float32: no temporary may raise the
    # high-water mark the memory measurement starts from.
    h = torch.randn(n, H, generator=g).to(device=device, dtype=dtype)
    w = torch.randn(V, H, generator=g).div_(H**0.5).to(device=device, dtype=dtype)
    t = torch.randint(0, V, (n,), generator=g).to(device)
    return h, w, t


def _run(impl: str, backward: bool, h, w, t):
    from troupe_kernels import token_logprobs

    if backward:
        h.requires_grad_(True)
        w.requires_grad_(True)
    if impl == "naive":
        lp = torch.log_softmax((h @ w.T).float(), -1).gather(-1, t[:, None]).squeeze(-1)
    else:
        lp = token_logprobs(h, w, t)
    if backward:
        lp.sum().backward()
    return lp


def _child_memory(impl: str, n: int, backward: bool, device: str) -> int:
    import troupe_kernels  # noqa: F401 - imported before the baseline, like the inputs

    h, w, t = _inputs(n, device, torch.float32)
    if device == "cuda":
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        _run(impl, backward, h, w, t)
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - base
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    _run(impl, backward, h, w, t)
    return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024


def measure_memory(impl: str, n: int, backward: bool, device: str) -> int:
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": str(1 << 20)}
    args = [sys.executable, __file__, "--child", json.dumps([impl, n, backward, device])]
    out = subprocess.run(args, env=env, capture_output=True, text=True, check=True).stdout
    return int(out.strip().splitlines()[-1])


def _best(fn, repeats: int, device: str) -> float:
    best = float("inf")
    for _ in range(repeats):
        if device == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        if device == "cuda":
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return best


def measure_time(n: int, repeats: int, device: str, dtype: torch.dtype) -> dict[str, float]:
    from troupe_kernels import token_logprobs

    h, w, t = _inputs(n, device, dtype)
    logits = h @ w.T  # stand-in for d(loss)/d(logits) in the bare backward matmuls

    def bare_fwd():
        return h @ w.T

    def bare_three():
        h @ w.T
        logits @ w
        logits.T @ h

    def ours_fwd():
        with torch.no_grad():
            token_logprobs(h, w, t)

    hg, wg = h.clone().requires_grad_(), w.clone().requires_grad_()

    def ours_fwd_bwd():
        token_logprobs(hg, wg, t).sum().backward()
        hg.grad = wg.grad = None

    out = {"bare_fwd": [], "ours_fwd": [], "bare_three": [], "ours_fwd_bwd": []}
    for _ in range(repeats):  # interleaved so load changes hit all four alike
        out["bare_fwd"].append(_best(bare_fwd, 1, device))
        out["ours_fwd"].append(_best(ours_fwd, 1, device))
        out["bare_three"].append(_best(bare_three, 1, device))
        out["ours_fwd_bwd"].append(_best(ours_fwd_bwd, 1, device))
    # Ratios per interleaved round (both sides saw the same load), then the median over rounds.
    fwd_ratios = [o / b for o, b in zip(out["ours_fwd"], out["bare_fwd"])]
    fb_ratios = [o / b for o, b in zip(out["ours_fwd_bwd"], out["bare_three"])]
    return {
        **{k: statistics.median(v) for k, v in out.items()},
        "fwd_ratio": statistics.median(fwd_ratios),
        "fwd_bwd_ratio": statistics.median(fb_ratios),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--full", action="store_true", help="N up to 16,384 (slow on CPU)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        impl, n, backward, device = json.loads(args.child)
        print(_child_memory(impl, n, backward, device))
        return
    dev = args.device
    mem_ns = [1024, 4096, 16384] if args.full else [1024]
    time_ns = [1024, 4096, 16384] if args.full else [512]
    print(f"device={dev} threads={torch.get_num_threads()} V={V} H={H} float32 inputs")
    print("\nPeak extra memory (MiB)")
    print("(fwd+bwd includes the float32 gradients both return: (N+V)*H*4 bytes; 'excl' leaves them out)")
    print(f"{'N':>6} {'pass':>8} {'naive':>10} {'ours':>9} {'ours/naive':>11} {'naive excl':>11} {'ours excl':>10} {'ratio excl':>11}")
    for n in mem_ns:
        for backward in (False, True):
            naive = measure_memory("naive", n, backward, dev)
            ours = measure_memory("ours", n, backward, dev)
            grads = (n + V) * H * 4 if backward else 0
            ne, oe = naive - grads, ours - grads
            print(
                f"{n:>6} {'fwd+bwd' if backward else 'fwd':>8} {naive / 2**20:>10.1f} {ours / 2**20:>9.1f}"
                f" 1/{naive / max(ours, 1):>9.1f} {ne / 2**20:>11.1f} {oe / 2**20:>10.1f} 1/{ne / max(oe, 1):>9.1f}",
                flush=True,
            )
    print(f"\nTime (s, median of {args.repeats} interleaved rounds; ratio = median of per-round ratios); goals: fwd <= 1.2x, fwd+bwd <= 1.5x")
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'N':>6} {'bare mm':>8} {'fwd':>8} {'ratio':>6} {'3 mm':>8} {'fwd+bwd':>8} {'ratio':>6}")
    for n in time_ns:
        r = measure_time(n, args.repeats, dev, torch.float32)
        print(
            f"{n:>6} {r['bare_fwd']:>8.2f} {r['ours_fwd']:>8.2f} {r['fwd_ratio']:>6.2f}"
            f" {r['bare_three']:>8.2f} {r['ours_fwd_bwd']:>8.2f} {r['fwd_bwd_ratio']:>6.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
