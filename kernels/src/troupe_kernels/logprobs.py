"""Token log-probs (and entropy) from the last hidden state and the LM head, without full logits.

`token_logprobs(hidden, weight, targets)` equals
`log_softmax(hidden @ weight.T / temperature, -1).gather(-1, targets)` but walks the
`[tokens, vocab]` logits in tiles of `rows x vocab_block`, keeping an online log-sum-exp per row
(running max and rescaled sum), so at most one tile of logits exists at a time. The backward pass
(a custom autograd function) recomputes each tile from the saved per-row log-sum-exp instead of
keeping logits, and accumulates d/d(hidden) and d/d(weight) tile by tile.

Memory bound (torch path), elements of float32 beyond inputs and outputs:
  forward:  2 tiles (logits + exp for the entropy; 1 tile and logsumexp's scratch without) + a float32 copy of one row block and
            one vocab block of the weight (only for non-float32 inputs) + O(N) row state;
  backward: 1 tile + the same block copies + an [N, H] float32 gradient buffer when `hidden` is
            not float32 + a [vocab_block, H] float32 accumulator when `weight` is not float32.
A tile holds at most `tile_elements` (default 2**18: 1 MiB of float32), whatever N and V.

Targets < 0 (e.g. -100 padding) are masked: log-prob 0, no gradient; entropy is still reported.
"""

from __future__ import annotations

import torch

# Finite stand-in for -inf: exp(x - m) underflows to 0 but 0 * x stays 0 (0 * -inf would be NaN).
NEG_LARGE = -1.0e30
# 1 MiB of float32 logits per tile (256 rows x 1024 columns): small enough that the elementwise
# passes of the online log-sum-exp run in cache, large enough for efficient matmuls.
_TILE = 1 << 18
_DEFAULT_ROWS = 256


def reference_token_logprobs(
    hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0
) -> torch.Tensor:
    """The plain (memory-hungry) definition, for tests and as documentation."""
    logits = hidden.float() @ weight.float().T / temperature
    return torch.log_softmax(logits, dim=-1).gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1) * (targets >= 0)


def plan_tiles(n: int, vocab: int, chunk_size: int | None = None, tile_elements: int | None = None) -> tuple[int, int]:
    """(rows per tile, vocab columns per tile) for N tokens and a vocabulary of `vocab`."""
    budget = tile_elements if tile_elements is not None else _TILE
    rows = chunk_size if chunk_size is not None else min(max(n, 1), _DEFAULT_ROWS)
    if rows < 1 or budget < 1:
        raise ValueError("chunk_size and tile_elements must be >= 1")
    rows = min(rows, max(n, 1))
    cols = min(vocab, max(1, budget // rows))
    return rows, cols


def _tiled_forward(h, weight, targets, inv_t, rows, cols, want_entropy):
    n, vocab = h.shape[0], weight.shape[0]
    dev = h.device
    logprobs = torch.empty(n, dtype=torch.float32, device=dev)
    lse_all = torch.empty(n, dtype=torch.float32, device=dev)
    entropy = torch.empty(n if want_entropy else 0, dtype=torch.float32, device=dev)
    for r0 in range(0, n, rows):
        r1 = min(n, r0 + rows)
        hs = h[r0:r1].float()
        if inv_t != 1.0:
            hs = hs * inv_t
        tgt = targets[r0:r1]
        # Online log-sum-exp: combine each block's logsumexp with the running one (logaddexp).
        lse = torch.full((r1 - r0,), NEG_LARGE, dtype=torch.float32, device=dev)
        zt = torch.zeros(r1 - r0, dtype=torch.float32, device=dev)  # target logit
        ent = torch.zeros(r1 - r0, dtype=torch.float32, device=dev) if want_entropy else None  # entropy so far
        for v0 in range(0, vocab, cols):
            v1 = min(vocab, v0 + cols)
            z = hs @ weight[v0:v1].float().T
            in_blk = (tgt >= v0) & (tgt < v1)
            picked = z.gather(1, (tgt - v0).clamp(0, v1 - v0 - 1).unsqueeze(1)).squeeze(1)
            zt = torch.where(in_blk, picked, zt)
            lse_blk = torch.logsumexp(z, 1)
            lse_new = torch.logaddexp(lse, lse_blk)
            if want_entropy:
                # Block entropy sum p (lse_b - z) with non-negative terms (no cancellation for
                # large logits), then the mixture rule H = sum_b w_b (H_b + lse - lse_b).
                d = z.neg_().add_(lse_blk.unsqueeze(1))
                ent_blk = torch.linalg.vecdot(torch.exp(-d), d)
                ent = torch.exp(lse - lse_new) * (ent + lse_new - lse) + torch.exp(lse_blk - lse_new) * (
                    ent_blk + lse_new - lse_blk
                )
            lse = lse_new
            del z
        lse_all[r0:r1] = lse
        logprobs[r0:r1] = torch.where(tgt >= 0, zt - lse, torch.zeros_like(lse))
        if want_entropy:
            entropy[r0:r1] = ent
    return logprobs, lse_all, entropy


def _tiled_backward(h, weight, targets, lse_all, grad_out, inv_t, rows, cols, need_h, need_w):
    n, vocab = h.shape[0], weight.shape[0]
    dev = h.device
    # Masked targets get no gradient; 1/T is folded into the per-row upstream gradient.
    gs = torch.where(targets >= 0, grad_out.float() * inv_t, torch.zeros((), device=dev))
    grad_h = torch.zeros(h.shape, dtype=torch.float32, device=dev) if need_h else None
    w_is_f32 = weight.dtype == torch.float32
    grad_w = torch.zeros(weight.shape, dtype=torch.float32 if w_is_f32 else weight.dtype, device=dev) if need_w else None
    for v0 in range(0, vocab, cols):
        v1 = min(vocab, v0 + cols)
        wv = weight[v0:v1].float()
        acc_w = (grad_w[v0:v1] if w_is_f32 else torch.zeros(wv.shape, dtype=torch.float32, device=dev)) if need_w else None
        for r0 in range(0, n, rows):
            r1 = min(n, r0 + rows)
            hr = h[r0:r1].float()
            hs = hr * inv_t if inv_t != 1.0 else hr
            g = gs[r0:r1]
            # d logp[t] / d z = onehot(t) - softmax(z); times the upstream gradient g (and 1/T).
            z = hs @ wv.T
            z.sub_(lse_all[r0:r1].unsqueeze(1)).exp_().mul_(-g.unsqueeze(1))
            tgt = targets[r0:r1]
            hit = ((tgt >= v0) & (tgt < v1)).nonzero().squeeze(1)
            if hit.numel():
                z.index_put_((hit, tgt[hit] - v0), g[hit], accumulate=True)
            if need_h:
                grad_h[r0:r1].addmm_(z, wv)
            if need_w:
                acc_w.addmm_(z.T, hr)
            del z
        if need_w and not w_is_f32:
            grad_w[v0:v1] = acc_w
    return grad_h, grad_w


class _TokenLogprobs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, weight, targets, temperature, rows, cols, want_entropy, backend):  # type: ignore[override]
        inv_t = 1.0 / temperature
        if backend == "triton":
            from .triton_logprobs import triton_forward

            logprobs, lse, entropy = triton_forward(hidden, weight, targets, inv_t, want_entropy)
        else:
            logprobs, lse, entropy = _tiled_forward(hidden, weight, targets, inv_t, rows, cols, want_entropy)
        ctx.save_for_backward(hidden, weight, targets, lse)
        ctx.inv_t, ctx.rows, ctx.cols = inv_t, rows, cols
        ctx.mark_non_differentiable(entropy)
        return logprobs, entropy

    @staticmethod
    def backward(ctx, grad_logprobs, _grad_entropy):  # type: ignore[override]
        hidden, weight, targets, lse = ctx.saved_tensors
        need_h, need_w = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        # On CUDA too the backward is this tiled torch code: its three matmuls run on cuBLAS.
        grad_h, grad_w = _tiled_backward(
            hidden, weight, targets, lse, grad_logprobs, ctx.inv_t, ctx.rows, ctx.cols, need_h, need_w
        )
        return (
            grad_h.to(hidden.dtype) if need_h else None,
            grad_w.to(weight.dtype) if need_w else None,
            None, None, None, None, None, None,
        )


def _pick_backend(backend: str | None, hidden: torch.Tensor) -> str:
    if backend is None:
        if not hidden.is_cuda:
            return "torch"  # without importing triton (slow to import, ~100 MB of RSS)
        from .triton_logprobs import triton_available

        return "triton" if triton_available() else "torch"
    if backend not in ("torch", "triton"):
        raise ValueError(f"backend must be 'torch', 'triton' or None, got {backend!r}")
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
    `targets`; with `return_entropy`, also each position's entropy (a metric: not differentiable).
    Differentiable with respect to `hidden` and `weight`; the backward recomputes logits per tile.
    chunk_size: token rows per tile; tile_elements: max logits per tile (see module docstring).
    backend: None = Triton on CUDA when importable, else torch; or force 'torch' / 'triton'.
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
    rows, cols = plan_tiles(h2.shape[0], weight.shape[0], chunk_size, tile_elements)
    chosen = _pick_backend(backend, h2)
    if chosen == "triton":
        h2, weight = h2.contiguous(), weight.contiguous()
    logprobs, entropy = _TokenLogprobs.apply(
        h2, weight, t1, float(temperature), rows, cols, bool(return_entropy), chosen
    )
    logprobs = logprobs.reshape(lead_shape)
    if return_entropy:
        return logprobs, entropy.reshape(lead_shape)
    return logprobs
