"""Token log-probs (and entropy) from the last hidden state and the LM head, without full logits.

`token_logprobs(hidden, weight, targets)` equals
`log_softmax(hidden @ weight.T / temperature, -1).gather(-1, targets)` but walks the
`[tokens, vocab]` logits in tiles of `rows x vocab_block`, keeping an online log-sum-exp per row
(running max and rescaled sum), so at most one tile of logits per tile worker exists at a time.
The backward pass (a custom autograd function) recomputes each tile from the saved per-row
log-sum-exp instead of keeping logits, and accumulates d/d(hidden) and d/d(weight) tile by tile.

Memory bound (torch path), float32 beyond inputs and outputs, with W tile workers (one per torch
intra-op thread of the caller, at most 16; see `tile_workers`): the tiles of all workers together
hold at most `tile_elements` (default 2**20: 4 MiB of float32; twice that with the entropy or its
gradient), whatever N and V; besides,
  forward:  per worker an [N] row state of 2 floats (3 with the entropy) and a float32 copy of one
            vocab block of the weight (only for non-float32 weights); once, h / T as an [N, H]
            float32 copy (only when h is not float32 or T != 1);
  backward: per worker a [rows, H] buffer (-g * h of a row block, then its P @ W_b) and, for a
            non-float32 weight, the vocab-block copy plus a [vocab_block, H] float32 accumulator;
            once, hidden in float32 (only when it is not) and h / T as in the forward.

Targets < 0 (e.g. -100 padding) are masked: log-prob 0, no gradient; entropy is still reported.
"""

from __future__ import annotations

import torch

from .chunked import chunked_backward, chunked_forward, plan_vocab_block
from .tile_workers import worker_count
from .tiled_torch import NEG_LARGE, tiled_backward, tiled_forward

# 4 MiB of float32 logits per tile (512 rows x 2048 columns). Measured on the 2-core CPU (same
# run, interleaved, N=512, before the single-threaded tile workers): 256x1024 tiles cost 2.96x
# the bare matmul forward, 512x1024 1.81x, 256x2048 1.69x, 512x2048 1.18x: fewer, larger
# matmuls and fewer Python-level tile steps win; memory stays independent of N and V (a few
# tiles per worker).
_TILE = 1 << 20
_DEFAULT_ROWS = 512


def reference_token_logprobs(
    hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0
) -> torch.Tensor:
    """The plain (memory-hungry) definition, for tests and as documentation."""
    logits = hidden.float() @ weight.float().T / temperature
    return torch.log_softmax(logits, dim=-1).gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1) * (targets >= 0)


def plan_tiles(
    n: int, vocab: int, chunk_size: int | None = None, tile_elements: int | None = None, workers: int = 1
) -> tuple[int, int]:
    """(rows per tile, vocab columns per tile) for N tokens and a vocabulary of `vocab`; with several
    tile workers each gets `tile_elements / workers`, so all their tiles together fit the budget."""
    budget = tile_elements if tile_elements is not None else _TILE
    rows = chunk_size if chunk_size is not None else min(max(n, 1), _DEFAULT_ROWS)
    if rows < 1 or budget < 1:
        raise ValueError("chunk_size and tile_elements must be >= 1")
    budget = max(1, budget // max(1, workers))
    rows = min(rows, max(n, 1))
    cols = min(vocab, max(1, budget // rows))
    return rows, cols


class _TokenLogprobs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, weight, targets, temperature, rows, cols, want_entropy, backend):  # type: ignore[override]
        inv_t = 1.0 / temperature
        if backend == "triton":
            from .triton_logprobs import triton_forward

            logprobs, lse, entropy = triton_forward(hidden, weight, targets, inv_t, want_entropy)
        elif backend == "chunked":
            logprobs, lse, entropy = chunked_forward(hidden, weight, targets, inv_t, cols, want_entropy)
        else:
            logprobs, lse, entropy = tiled_forward(hidden, weight, targets, inv_t, rows, cols, want_entropy)
        ctx.save_for_backward(hidden, weight, targets, lse, entropy)
        ctx.inv_t, ctx.rows, ctx.cols, ctx.backend = inv_t, rows, cols, backend
        # An unused output (the entropy, mostly) then gets None instead of a tensor of zeros.
        ctx.set_materialize_grads(False)
        if not want_entropy:
            ctx.mark_non_differentiable(entropy)
        return logprobs, entropy

    @staticmethod
    def backward(ctx, grad_logprobs, grad_entropy):  # type: ignore[override]
        hidden, weight, targets, lse, entropy = ctx.saved_tensors
        need_h, need_w = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        if grad_logprobs is None:
            grad_logprobs = torch.zeros_like(lse)
        if ctx.backend == "triton":
            from .triton_logprobs import triton_backward

            g = torch.where(targets >= 0, grad_logprobs.float() * ctx.inv_t, torch.zeros((), device=lse.device))
            u = grad_entropy.float() * ctx.inv_t if grad_entropy is not None else None
            grad_h, grad_w = triton_backward(hidden, weight, targets, lse, entropy, g, u, ctx.inv_t, need_h, need_w)
        elif ctx.backend == "chunked":
            grad_h, grad_w = chunked_backward(
                hidden, weight, targets, lse, entropy, grad_logprobs, grad_entropy, ctx.inv_t, ctx.cols, need_h, need_w
            )
        else:
            grad_h, grad_w = tiled_backward(
                hidden, weight, targets, lse, entropy, grad_logprobs, grad_entropy,
                ctx.inv_t, ctx.rows, ctx.cols, need_h, need_w,
            )
        return (
            grad_h.to(hidden.dtype) if need_h else None,
            grad_w.to(weight.dtype) if need_w else None,
            None, None, None, None, None, None,
        )


BACKENDS = ("torch", "chunked", "triton")


def _pick_backend(backend: str | None, hidden: torch.Tensor) -> str:
    if backend is None:
        # CUDA: whole-row vocab blocks through cuBLAS (chunked.py); the H200 measured the Triton
        # kernels at 18.8x the bare matmuls and over the memory goal. CPU: the tiled path.
        return "chunked" if hidden.is_cuda else "torch"
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS} or None, got {backend!r}")
    if backend == "triton":
        from .triton_logprobs import triton_available, triton_unavailable_reason

        if not triton_available():
            why = triton_unavailable_reason() or "there is no CUDA device (set TRITON_INTERPRET=1 for the CPU interpreter)"
            raise RuntimeError(f"backend='triton' requested but {why}")
    return backend


def token_logprobs(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    targets: torch.Tensor,
    *,
    temperature: float = 1.0,
    chunk_size: int | None = None,
    return_entropy: bool = False,
    tile_elements: int | None = None,
    backend: str | None = None,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Log-prob of each target token under `softmax(hidden @ weight.T / temperature)`.

    hidden: [..., H] (bf16/fp16/fp32), weight: [V, H] (the LM head), targets: [...] token ids
    (negative ids are masked: log-prob 0, no gradient). Returns float32 log-probs shaped like
    `targets`; with `return_entropy`, also each position's entropy (differentiable too, e.g. for an
    entropy bonus). Differentiable with respect to `hidden` and `weight`; the backward recomputes
    logits per tile.
    chunk_size: token rows per tile; tile_elements: max logits per tile (see module docstring).
    backend: None = 'chunked' (cuBLAS vocab blocks) on CUDA, 'torch' (tiles) elsewhere; or force
    'torch' / 'chunked' / 'triton'.
    """
    if hidden.shape[:-1] != targets.shape:
        raise ValueError(f"hidden {tuple(hidden.shape)} and targets {tuple(targets.shape)} disagree on the token dims")
    if weight.dim() != 2 or weight.shape[1] != hidden.shape[-1]:
        raise ValueError(f"weight must be [vocab, {hidden.shape[-1]}], got {tuple(weight.shape)}")
    if not hidden.is_floating_point() or not weight.is_floating_point():
        raise ValueError("hidden and weight must be floating point")
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    lead_shape = targets.shape
    h2 = hidden.reshape(-1, hidden.shape[-1])
    t1 = targets.reshape(-1).long()
    if t1.numel() and int(t1.max()) >= weight.shape[0]:
        raise ValueError(f"targets: token id {int(t1.max())} is outside the vocabulary of {weight.shape[0]}")
    chosen = _pick_backend(backend, h2)
    workers = worker_count(h2.device) if chosen == "torch" else 1
    rows, cols = plan_tiles(h2.shape[0], weight.shape[0], chunk_size, tile_elements, workers)
    if chosen == "chunked":
        cols = plan_vocab_block(h2.shape[0], weight.shape[0], tile_elements)
        if weight.dtype != h2.dtype:
            weight = weight.to(h2.dtype)  # one operand dtype for the matmuls (cast back for its gradient)
    if chosen == "triton":
        h2, weight = h2.contiguous(), weight.contiguous()
    logprobs, entropy = _TokenLogprobs.apply(
        h2, weight, t1, float(temperature), rows, cols, bool(return_entropy), chosen
    )
    logprobs = logprobs.reshape(lead_shape)
    if return_entropy:
        return logprobs, entropy.reshape(lead_shape)
    return logprobs
