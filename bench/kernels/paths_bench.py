"""Log-prob forward+backward: each `token_logprobs` path against the three bare matmuls it replaces.

The three bare matmuls (logits `h @ W.T`, grad hidden `G @ W`, grad weight `G.T @ h`, in the input
dtype) are the floor of any exact method that forms the logits; a path that recomputes the logits
in the backward (all of ours: the upstream gradient is unknown in the forward) does four, so 4/3 is
its floor. Printed per path: median seconds, median of the per-round ratios to the bare matmuls
(rounds interleaved, order alternating), and on CUDA the peak memory beyond inputs and gradients
against naive (`log_softmax((h @ W.T).float()).gather` forward+backward), measured in the same run.

  .venv/bin/python bench/kernels/paths_bench.py                      # CPU, small shapes (~1 min)
  .venv/bin/python bench/kernels/paths_bench.py --device cuda --n 16384 --vocab 151936 --hidden 896 --dtype bfloat16

Issue #25's goal on CUDA: <= 1.5x the three bare matmuls in bf16 and fp32, memory <= 1/50 of naive.
Measured on the H200 (2026-11-28, before chunked.py existed): Triton 18.8x (bf16) / 2.97x (fp32),
tiled torch 42x / 3.30x at N=16,384. The chunked path has not been measured on a GPU yet.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def _timed(fn, device: str) -> float:
    _sync(device)
    t0 = time.perf_counter()
    fn()
    _sync(device)
    return time.perf_counter() - t0


def _bare(h, w, up):
    # The same three products in the input dtype; G stands in for the softmax gradient.
    z = h @ w.T
    g = z.mul_(up[:, None].to(z.dtype))
    return g @ w, g.T @ h


def _ours(backend: str, h, w, t, up):
    from troupe_kernels import token_logprobs

    hg, wg = h.detach().requires_grad_(), w.detach().requires_grad_()
    (token_logprobs(hg, wg, t, backend=backend) * up).sum().backward()
    return hg.grad, wg.grad


def _peak(fn, device: str) -> int | None:
    if device != "cuda":
        return None
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    fn()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - base


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="float32", choices=sorted(DTYPES))
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--vocab", type=int, default=16384)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--paths", default=None, help="comma list of torch,chunked,triton (default: what runs here)")
    args = ap.parse_args()
    dev, dtype = args.device, DTYPES[args.dtype]
    g = torch.Generator().manual_seed(0)
    h = torch.randn(args.n, args.hidden, generator=g).to(dev, dtype)
    w = (torch.randn(args.vocab, args.hidden, generator=g) / args.hidden**0.5).to(dev, dtype)
    t = torch.randint(0, args.vocab, (args.n,), generator=g).to(dev)
    up = torch.randn(args.n, generator=g).to(dev)
    paths = args.paths.split(",") if args.paths else (["chunked", "torch", "triton"] if dev == "cuda" else ["chunked", "torch"])
    print(f"device={dev} dtype={args.dtype} N={args.n} V={args.vocab} H={args.hidden} repeats={args.repeats}"
          f" tf32={torch.backends.cuda.matmul.allow_tf32}")
    for p in paths:  # warm-up (Triton compiles, cuBLAS picks kernels)
        _ours(p, h, w, t, up)
    _bare(h, w, up)
    times: dict[str, list[float]] = {p: [] for p in paths}
    bare: list[float] = []
    for r in range(args.repeats):
        order = paths if r % 2 == 0 else list(reversed(paths))
        bare.append(_timed(lambda: _bare(h, w, up), dev))
        for p in order:
            times[p].append(_timed(lambda p=p: _ours(p, h, w, t, up), dev))
    grads = (h.numel() + w.numel()) * h.element_size()
    naive = _peak(lambda: _ours_naive(h, w, t, up), dev)
    print(f"three bare matmuls: {statistics.median(bare):.4f} s (median)")
    print(f"{'path':>8} {'fwd+bwd s':>10} {'ratio':>7} {'worst':>7} {'peak extra MiB':>15} {'of naive':>9}")
    for p in paths:
        ratios = [a / b for a, b in zip(times[p], bare)]
        peak = _peak(lambda p=p: _ours(p, h, w, t, up), dev)
        mem = f"{(peak - grads) / 2**20:15.1f} 1/{(naive - grads) / max(1, peak - grads):7.1f}" if peak is not None else f"{'-':>15} {'-':>9}"
        print(f"{p:>8} {statistics.median(times[p]):10.4f} {statistics.median(ratios):6.2f}x {max(ratios):6.2f}x {mem}")
    print("floor with recompute: 4/3 = 1.33x; goal <= 1.5x (CUDA)")


def _ours_naive(h, w, t, up):
    hg, wg = h.detach().requires_grad_(), w.detach().requires_grad_()
    (torch.log_softmax((hg @ wg.T).float(), -1).gather(-1, t[:, None]).squeeze(-1) * up).sum().backward()


if __name__ == "__main__":
    main()
