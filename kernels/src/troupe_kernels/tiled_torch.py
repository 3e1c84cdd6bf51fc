"""The torch tiled backend: forward and backward of token log-probs (and entropy) tile by tile.

Logits are walked in tiles of `rows x cols`; one flat scratch buffer is reused for every tile
(tiles of 1 MiB and more are mmap'd by the allocator: a fresh one per tile costs page faults).

Forward, per row block, for each vocab block (online log-sum-exp, as in flash attention):
  z = h_r @ W_b.T / T;  m_b = max z;  e = exp(z - m_b);  s_b = sum e
  running (m, s) rebased to max(m, m_b); the target logit is picked when it falls in the block.
  Entropy keeps q = sum e^(z-m) (z-m) (all terms <= 0: no cancellation at large logits), rebased
  with q' = a (q + (m - m') s), a = e^(m-m'); at the end H = log s - q / s.

Backward (vocab blocks outer so a block of W stays in cache; rows inner), with g = dL/dlogp * /T:
  d logp_i / d z_ij = onehot_ij - p_ij, so
    grad_h_i = g_i (w_t_i - sum_j p_ij w_j)         -> one tile matmul P @ W_b, scaled per row at the end
    grad_W_j = sum_i g_i (onehot_ij - p_ij) h_i     -> P.T @ (-g h) per tile + one index_add for the targets
  Only two elementwise passes per tile (subtract the row's lse, exp): the onehot and the per-row
  g never touch the tile. With an entropy gradient u_i (= dL/dH_i / T):
    d H_i / d z_ij = -p_ij (log p_ij + H_i)  ->  G = P * (-g - u H - u log P), the general tile.
"""

from __future__ import annotations

import torch

# Finite stand-in for -inf: exp(x - m) underflows to 0 but 0 * x stays 0 (0 * -inf would be NaN).
NEG_LARGE = -1.0e30


def _f32(x: torch.Tensor) -> torch.Tensor:
    return x if x.dtype == torch.float32 else x.float()


def tiled_forward(h, weight, targets, inv_t: float, rows: int, cols: int, want_entropy: bool):
    """(log-probs, log-sum-exp, entropy or empty) in float32; h [N, H], weight [V, H], targets [N]."""
    n, vocab = h.shape[0], weight.shape[0]
    dev = h.device
    logprobs = torch.empty(n, dtype=torch.float32, device=dev)
    lse_all = torch.empty(n, dtype=torch.float32, device=dev)
    entropy = torch.empty(n if want_entropy else 0, dtype=torch.float32, device=dev)
    scratch = torch.empty(min(n, rows) * min(vocab, cols), dtype=torch.float32, device=dev)
    scratch_e = torch.empty_like(scratch) if want_entropy else None
    for r0 in range(0, n, rows):
        r1 = min(n, r0 + rows)
        nr = r1 - r0
        hs = _f32(h[r0:r1])
        if inv_t != 1.0:
            hs = hs * inv_t
        tgt = targets[r0:r1]
        m = torch.full((nr,), NEG_LARGE, dtype=torch.float32, device=dev)
        s = torch.zeros(nr, dtype=torch.float32, device=dev)
        q = torch.zeros(nr, dtype=torch.float32, device=dev) if want_entropy else None
        zt = torch.zeros(nr, dtype=torch.float32, device=dev)
        for v0 in range(0, vocab, cols):
            v1 = min(vocab, v0 + cols)
            z = scratch[: nr * (v1 - v0)].view(nr, v1 - v0)
            torch.mm(hs, _f32(weight[v0:v1]).T, out=z)
            in_blk = (tgt >= v0) & (tgt < v1)
            picked = z.gather(1, (tgt - v0).clamp(0, v1 - v0 - 1).unsqueeze(1)).squeeze(1)
            zt = torch.where(in_blk, picked, zt)
            m_b = z.amax(1)
            m_new = torch.maximum(m, m_b)
            z.sub_(m_new.unsqueeze(1))  # z - m_new <= 0
            a = torch.exp(m - m_new)
            if want_entropy:
                e = torch.exp(z, out=scratch_e[: z.numel()].view_as(z))
                q = a * (q + (m - m_new) * s) + torch.linalg.vecdot(e, z)
                s = a * s + e.sum(1)
            else:
                s = a * s + z.exp_().sum(1)
            m = m_new
        lse = m + torch.log(s)
        lse_all[r0:r1] = lse
        logprobs[r0:r1] = torch.where(tgt >= 0, zt - lse, torch.zeros_like(lse))
        if want_entropy:
            entropy[r0:r1] = torch.log(s) - q / s
    return logprobs, lse_all, entropy


def tiled_backward(h, weight, targets, lse_all, entropy, grad_lp, grad_ent, inv_t, rows, cols, need_h, need_w):
    """(grad_hidden float32, grad_weight in the weight's dtype), None where not needed; grad_ent may be None."""
    n, vocab = h.shape[0], weight.shape[0]
    dev = h.device
    keep = targets >= 0
    # g: upstream gradient of each log-prob times 1/T; masked rows contribute nothing.
    g = torch.where(keep, _f32(grad_lp) * inv_t, torch.zeros((), device=dev))
    h32 = _f32(h)
    hs_all = h32 * inv_t if inv_t != 1.0 else h32
    general = grad_ent is not None
    if general:
        u = _f32(grad_ent) * inv_t
        row_a = (-g - u * entropy).unsqueeze(1)  # G = P * (row_a + row_b * log P)
        row_b = (-u).unsqueeze(1)
        h_for_w = h32
    else:
        # G = -g P: the tile stays P; -g goes onto h (for grad W, a row block at a time: no [N, H]
        # copy) and onto P @ W at the end.
        neg_g = (-g).unsqueeze(1)
        h_for_w = None
    acc_h = torch.zeros(h.shape, dtype=torch.float32, device=dev) if need_h else None
    w_is_f32 = weight.dtype == torch.float32
    grad_w = torch.empty(weight.shape, dtype=weight.dtype, device=dev) if need_w else None
    # Rows whose target is a real token, sorted by target: each vocab block adds its slice of them.
    tgt_sorted, order = torch.sort(torch.where(keep, targets, torch.full_like(targets, vocab)))
    scratch = torch.empty(min(n, rows) * min(vocab, cols), dtype=torch.float32, device=dev)
    scratch_p = torch.empty_like(scratch) if general else None
    for v0 in range(0, vocab, cols):
        v1 = min(vocab, v0 + cols)
        wv = _f32(weight[v0:v1])
        acc_w = None
        if need_w:
            acc_w = grad_w[v0:v1].zero_() if w_is_f32 else torch.zeros(wv.shape, dtype=torch.float32, device=dev)
        for r0 in range(0, n, rows):
            r1 = min(n, r0 + rows)
            z = scratch[: (r1 - r0) * (v1 - v0)].view(r1 - r0, v1 - v0)
            torch.mm(hs_all[r0:r1], wv.T, out=z)
            z.sub_(lse_all[r0:r1].unsqueeze(1))  # log P
            if general:
                p = torch.exp(z, out=scratch_p[: z.numel()].view_as(z))
                tile = z.mul_(row_b[r0:r1]).add_(row_a[r0:r1]).mul_(p)
            else:
                tile = z.exp_()  # P
            if need_h:
                acc_h[r0:r1].addmm_(tile, wv)
            if need_w:
                acc_w.addmm_(tile.T, h_for_w[r0:r1] if general else h32[r0:r1] * neg_g[r0:r1])
        if need_w:
            # The one-hot part for this block: +g_i h_i into row t_i.
            lo, hi = torch.searchsorted(tgt_sorted, torch.tensor([v0, v1], device=dev)).tolist()
            if hi > lo:
                rows_hit = order[lo:hi]
                acc_w.index_add_(0, tgt_sorted[lo:hi] - v0, h32.index_select(0, rows_hit) * g.index_select(0, rows_hit).unsqueeze(1))
            if not w_is_f32:
                grad_w[v0:v1] = acc_w
    if need_h:
        # The one-hot part: +g_i w_t_i (masked rows have g = 0), a row block at a time (no [N, H] temporary).
        idx = targets.clamp(min=0)
        for r0 in range(0, n, rows):
            r1 = min(n, r0 + rows)
            w_t = _f32(weight.index_select(0, idx[r0:r1])).mul_(g[r0:r1].unsqueeze(1))
            if general:
                acc_h[r0:r1].add_(w_t)
            else:  # acc_h holds P @ W: grad = g (w_t - P @ W)
                acc_h[r0:r1].mul_(-g[r0:r1].unsqueeze(1)).add_(w_t)
    return acc_h, grad_w
