"""Token log-probs: peak extra memory and time of `troupe_kernels.token_logprobs` against the naive
`log_softmax(hidden @ weight.T).gather` and against the bare matmuls, at V=151,936, H=896 (Qwen2).

Run from the repo root:  .venv/bin/python bench/kernels/logprobs_bench.py [--full] [--device cuda]

Memory (CPU): each measurement runs in a fresh child process with glibc's mmap threshold pinned
at 1 MiB (MALLOC_MMAP_THRESHOLD_), so every tensor buffer is its own mapping, freed back to the OS
on release; peak extra = peak RSS (getrusage ru_maxrss) after the computation minus peak RSS once
the inputs exist. Gradients (the same for both) are included in fwd+bwd. On CUDA:
torch.cuda.max_memory_allocated over memory_allocated before.
The naive side is measured only where its computed size fits under --naive-cap-gb and in the
memory available now (this box is shared); elsewhere the table shows the computed size, marked
"computed": fwd 2*N*V*4 bytes (the float32 logits and the log_softmax output alive together),
fwd+bwd 3*N*V*4 (the saved log_softmax output, the gradient scattered into [N, V] by gather's
backward and log_softmax's [N, V] input gradient; the weight and hidden gradients come after the
first two are freed, and are smaller than them here). The measured rows print the computed value
next to them, so the formula is checked where both exist (within 1% at N=1024 and 4096).
'excl' subtracts the gradients from both sides although they are not part of the naive peak:
that understates the naive side, so the 'excl' ratio is a lower bound.
Time: --repeats interleaved rounds on the same inputs; each round's ratio, then the median.
  fwd ratio     = token_logprobs forward / bare `hidden @ weight.T` (the floor of any forward)
  fwd+bwd ratio = forward+backward / the three bare matmuls (logits, grad hidden, grad weight)
The load average is printed before and after: other processes share the cores.
Default: memory at N=1024, time at N=512 (about 3 minutes on 2 idle cores);
--full: memory at N=1024..16,384 and time at N=1024..4096 (an hour or more on 2 loaded cores).
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
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


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


def naive_bytes_computed(n: int, backward: bool) -> int:
    """The naive path's peak extra bytes by formula (see the module docstring), float32."""
    if not backward:
        return 2 * n * V * 4
    return max(3 * n * V * 4, n * V * 4 + (n + V) * H * 4)


def _available_bytes() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _timed(fn, device: str) -> float:
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - t0


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

    out: dict[str, list[float]] = {"bare_fwd": [], "ours_fwd": [], "bare_three": [], "ours_fwd_bwd": []}
    pairs = [("bare_fwd", bare_fwd, "ours_fwd", ours_fwd), ("bare_three", bare_three, "ours_fwd_bwd", ours_fwd_bwd)]
    for i in range(repeats):  # interleaved so load changes hit both sides alike
        for base_name, base, ours_name, ours in pairs:
            # Alternate which side goes first (ABBA): a load trend then favours neither.
            order = [(base_name, base), (ours_name, ours)]
            for name, fn in order if i % 2 == 0 else order[::-1]:
                out[name].append(_timed(fn, device))
    # Ratios per interleaved round (both sides saw the same load), then the median over rounds.
    fwd_ratios = [o / b for o, b in zip(out["ours_fwd"], out["bare_fwd"])]
    fb_ratios = [o / b for o, b in zip(out["ours_fwd_bwd"], out["bare_three"])]
    return {
        **{k: statistics.median(v) for k, v in out.items()},
        "fwd_ratio": statistics.median(fwd_ratios),
        "fwd_bwd_ratio": statistics.median(fb_ratios),
        "fwd_bwd_ratio_max": max(fb_ratios),
        "fwd_rounds": fwd_ratios,
        "fwd_bwd_rounds": fb_ratios,
    }


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def print_memory(ns: list[int], device: str, cap_gb: float) -> None:
    mib = 2**20
    print("\nPeak extra memory (MiB). fwd+bwd: 'all' includes the float32 gradients both sides return,")
    print("(N+V)*H*4 bytes; 'excl' leaves them out (the 1/50 goal is on 'excl': the gradients are outputs)")
    head = f"{'N':>6} {'pass':>8} {'naive':>9} {'naive is':>9} {'computed':>9} {'ours':>8} {'ratio all':>10}"
    print(f"{head} {'naive excl':>10} {'ours excl':>9} {'ratio excl':>10}")
    for n in ns:
        for backward in (False, True):
            computed = naive_bytes_computed(n, backward)
            fits = device == "cuda" or (computed <= cap_gb * 2**30 and computed + 2 * 2**30 <= _available_bytes())
            naive = measure_memory("naive", n, backward, device) if fits else computed
            ours = measure_memory("ours", n, backward, device)
            grads = (n + V) * H * 4 if backward else 0
            ne, oe = naive - grads, ours - grads
            print(
                f"{n:>6} {'fwd+bwd' if backward else 'fwd':>8} {naive / mib:>9.1f} {'measured' if fits else 'computed':>9}"
                f" {computed / mib:>9.1f} {ours / mib:>8.1f} {'1/' + format(naive / max(ours, 1), '.1f'):>10}"
                f" {ne / mib:>10.1f} {oe / mib:>9.1f} {'1/' + format(ne / max(oe, 1), '.1f'):>10}",
                flush=True,
            )


def print_time(ns: list[int], repeats: int, device: str, dtype_name: str) -> None:
    print(f"\nTime (s, median of {repeats} interleaved rounds; ratio = median of per-round ratios, max = worst round)")
    print("goals: fwd <= 1.2x one bare matmul; fwd+bwd <= 1.5x the three bare matmuls (floor with recompute: 4/3)")
    print(f"{dtype_name} inputs; load average at start: {_load()} on {os.cpu_count()} cores")
    print(f"{'N':>6} {'bare mm':>8} {'fwd':>8} {'ratio':>6} {'3 mm':>8} {'fwd+bwd':>8} {'ratio':>6} {'max':>6} {'load':>5}")
    for n in ns:
        r = measure_time(n, repeats, device, DTYPES[dtype_name])
        print(
            f"{n:>6} {r['bare_fwd']:>8.2f} {r['ours_fwd']:>8.2f} {r['fwd_ratio']:>6.2f}"
            f" {r['bare_three']:>8.2f} {r['ours_fwd_bwd']:>8.2f} {r['fwd_bwd_ratio']:>6.2f} {r['fwd_bwd_ratio_max']:>6.2f} {_load():>5}",
            flush=True,
        )
        rounds = "  ".join(f"{a:.2f}/{b:.2f}" for a, b in zip(r["fwd_rounds"], r["fwd_bwd_rounds"]))
        print(f"{'':>6} per round (fwd/fwd+bwd): {rounds}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--full", action="store_true", help="memory at N up to 16,384, time at N up to 4096 (slow on CPU)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", choices=["memory", "time"], help="run one of the two tables")
    ap.add_argument("--mem-ns", type=lambda s: [int(x) for x in s.split(",")], help="e.g. 4096,8192")
    ap.add_argument("--time-ns", type=lambda s: [int(x) for x in s.split(",")], help="e.g. 1024,4096")
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="float32", help="input dtype of the time table")
    ap.add_argument("--naive-cap-gb", type=float, default=12.0, help="largest naive run to measure (else computed)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        impl, n, backward, device = json.loads(args.child)
        print(_child_memory(impl, n, backward, device))
        return
    dev = args.device
    mem_ns = args.mem_ns or ([1024, 4096, 8192, 16384] if args.full else [1024])
    time_ns = args.time_ns or ([1024, 2048, 4096] if args.full else [512])
    from troupe_kernels.tile_workers import worker_count

    print(f"device={dev} torch threads={torch.get_num_threads()} tile workers={worker_count()} V={V} H={H}")
    if args.only != "time":
        print_memory(mem_ns, dev, args.naive_cap_gb)
    if args.only != "memory":
        print_time(time_ns, args.repeats, dev, args.dtype)
        print(f"load average at end: {_load()}")


if __name__ == "__main__":
    main()
