"""The torch tiled backend: forward and backward of token log-probs (and entropy) tile by tile.

Logits are walked in tiles of `rows x cols`. The vocabulary blocks are independent tasks that
`tile_workers.run_tasks` hands to single-threaded workers (one per intra-op thread; see there for
why not multi-threaded ops); each worker loops over all row blocks for its vocab block (the
block of W stays in cache) and reuses one flat scratch buffer for every tile (tiles of 1 MiB and
more are mmap'd by the allocator: a fresh one per tile costs page faults).

Forward, per tile (online log-sum-exp, as in flash attention; each worker keeps its own [N] state):
  z = h_r @ W_b.T / T;  m_b = max z;  e = exp(z - m_b);  s_b = sum e
  running (m, s) rebased to max(m, m_b). Entropy keeps q = sum e^(z-m) (z-m) (all terms <= 0: no
  cancellation at large logits), rebased with q' = a (q + (m - m') s), a = e^(m-m'); the workers'
  states merge the same way; at the end lse = m + log s and H = log s - q / s. The target logit is
  one dot product per row (h_i . w_t_i), outside the tiles.

Backward (vocab blocks per worker, rows inner), with g = dL/dlogp * /T:
  d logp_i / d z_ij = onehot_ij - p_ij, so
    grad_h_i = g_i (w_t_i - sum_j p_ij w_j)         -> one tile matmul P @ W_b, scaled per row at the end
    grad_W_j = sum_i g_i (onehot_ij - p_ij) h_i     -> P.T @ (-g h) per tile + one index_put for the targets
  Only two elementwise passes per tile (subtract the row's lse, exp): the onehot and the per-row
  g never touch the tile. With an entropy gradient u_i (= dL/dH_i / T):
    d H_i / d z_ij = -p_ij (log p_ij + H_i)  ->  G = P * (-g - u H - u log P), the general tile.
  Workers write disjoint rows of grad_W; each sums its P @ W_b into its own [N, H] grad_h partial,
  and the partials are added in worker order at the end (the same bits on every run).
  Each worker's tile is `tile_elements / workers` (logprobs.plan_tiles), so the tiles of all
  workers together stay within the one budget.
"""

from __future__ import annotations


import torch

from .tile_workers import chunks, run_tasks, worker_count

# Finite stand-in for -inf: exp(x - m) underflows to 0 but 0 * x stays 0 (0 * -inf would be NaN).
NEG_LARGE = -1.0e30


def _f32(x: torch.Tensor) -> torch.Tensor:
    return x if x.dtype == torch.float32 else x.float()


def _scaled_f32(h: torch.Tensor, inv_t: float) -> torch.Tensor:
    """h / T in float32 ([N, H]; h itself when it already is float32 and T = 1)."""
    h32 = _f32(h)
    return h32 * inv_t if inv_t != 1.0 else h32


def _target_logits(hs_all, weight, targets, rows) -> torch.Tensor:
    """z_i,t_i = (h_i / T) . w_t_i, a row block at a time (no [N, H] gather of W rows)."""
    out = torch.empty(hs_all.shape[0], dtype=torch.float32, device=hs_all.device)
    idx = targets.clamp(min=0)
    for r0, r1 in chunks(0, hs_all.shape[0], rows):
        out[r0:r1] = torch.linalg.vecdot(hs_all[r0:r1], _f32(weight.index_select(0, idx[r0:r1])))
    return out


def tiled_forward(h, weight, targets, inv_t: float, rows: int, cols: int, want_entropy: bool):
    """(log-probs, log-sum-exp, entropy or empty) in float32; h [N, H], weight [V, H], targets [N]."""
    n, vocab = h.shape[0], weight.shape[0]
    dev = h.device
    hs_all = _scaled_f32(h, inv_t)
    row_blocks = chunks(0, n, rows)

    def work(tasks):
        m = torch.full((n,), NEG_LARGE, dtype=torch.float32, device=dev)
        s = torch.zeros(n, dtype=torch.float32, device=dev)
        q = torch.zeros(n, dtype=torch.float32, device=dev) if want_entropy else None
        scratch = scratch_e = None
        for v0, v1 in tasks:
            if scratch is None:
                scratch = torch.empty(min(n, rows) * min(vocab, cols), dtype=torch.float32, device=dev)
                scratch_e = torch.empty_like(scratch) if want_entropy else None
            wv = _f32(weight[v0:v1])
            for r0, r1 in row_blocks:
                z = scratch[: (r1 - r0) * (v1 - v0)].view(r1 - r0, v1 - v0)
                torch.mm(hs_all[r0:r1], wv.T, out=z)
                m_r = m[r0:r1]
                m_new = torch.maximum(m_r, z.amax(1))
                z.sub_(m_new.unsqueeze(1))  # z - m_new <= 0
                a = torch.exp(m_r - m_new)
                if want_entropy:
                    e = torch.exp(z, out=scratch_e[: z.numel()].view_as(z))
                    q[r0:r1] = a * (q[r0:r1] + (m_r - m_new) * s[r0:r1]) + torch.linalg.vecdot(e, z)
                    s[r0:r1] = a * s[r0:r1] + e.sum(1)
                else:
                    s[r0:r1] = a * s[r0:r1] + z.exp_().sum(1)
                m[r0:r1] = m_new
        return m, s, q

    parts = run_tasks(chunks(0, vocab, cols), work, worker_count(dev) if n else 1)
    m = torch.stack([p[0] for p in parts]).amax(0)
    s = torch.zeros(n, dtype=torch.float32, device=dev)
    q = torch.zeros(n, dtype=torch.float32, device=dev) if want_entropy else None
    for m_k, s_k, q_k in parts:  # rebase each worker's (m, s, q) onto the common max
        a = torch.exp(m_k - m)
        if want_entropy:
            q += a * (q_k + (m_k - m) * s_k)
        s += a * s_k
    lse = m + torch.log(s)
    zt = _target_logits(hs_all, weight, targets, rows)
    logprobs = torch.where(targets >= 0, zt - lse, torch.zeros_like(lse))
    entropy = torch.log(s) - q / s if want_entropy else torch.empty(0, dtype=torch.float32, device=dev)
    return logprobs, lse, entropy


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
    else:
        # G = -g P: the tile stays P; -g goes onto a row block of h for grad W (per tile, into the
        # worker's [rows, H] buffer: no [N, H] copy) and onto P @ W at the end.
        neg_g = (-g).unsqueeze(1)
    w_is_f32 = weight.dtype == torch.float32
    grad_w = None
    if need_w:  # every block is written by its first row block's matmul; with no rows, zeros
        grad_w = (torch.empty if n > 0 else torch.zeros)(weight.shape, dtype=weight.dtype, device=dev)
    # Rows whose target is a real token, sorted by target: each vocab block adds its slice of them.
    tgt_sorted, order = torch.sort(torch.where(keep, targets, torch.full_like(targets, vocab)))
    row_blocks = chunks(0, n, rows)

    def work(tasks):
        # Each worker sums P @ W over its own vocab blocks into its own [N, H] partial; the partials are added
        # in worker order after the pass, so d/dh is the same on every run (a shared accumulator took the
        # workers' adds in whatever order the scheduler gave).
        scratch = scratch_p = rows_buf = None
        part_h = torch.zeros(h.shape, dtype=torch.float32, device=dev) if need_h else None
        for v0, v1 in tasks:
            if scratch is None:
                scratch = torch.empty(min(n, rows) * min(vocab, cols), dtype=torch.float32, device=dev)
                scratch_p = torch.empty_like(scratch) if general else None
                # One [rows, H] buffer per worker: -g * h of the row block (for d/dW).
                rows_buf = torch.empty(min(n, rows), h.shape[1], dtype=torch.float32, device=dev)
            wv = _f32(weight[v0:v1])
            acc_w = None
            if need_w:
                acc_w = grad_w[v0:v1] if w_is_f32 else torch.empty(wv.shape, dtype=torch.float32, device=dev)
            for k, (r0, r1) in enumerate(row_blocks):
                z = scratch[: (r1 - r0) * (v1 - v0)].view(r1 - r0, v1 - v0)
                torch.mm(hs_all[r0:r1], wv.T, out=z)
                z.sub_(lse_all[r0:r1].unsqueeze(1))  # log P
                if general:
                    p = torch.exp(z, out=scratch_p[: z.numel()].view_as(z))
                    tile = z.mul_(row_b[r0:r1]).add_(row_a[r0:r1]).mul_(p)
                else:
                    tile = z.exp_()  # P
                buf = rows_buf[: r1 - r0]
                if need_w:
                    h_for_w = h32[r0:r1] if general else torch.mul(h32[r0:r1], neg_g[r0:r1], out=buf)
                    if k == 0:  # the first row block writes the block (no zero fill)
                        torch.mm(tile.T, h_for_w, out=acc_w)
                    else:
                        acc_w.addmm_(tile.T, h_for_w)
                if need_h:
                    part_h[r0:r1].addmm_(tile, wv)
            if need_w:
                # The one-hot part for this block: +g_i h_i into row t_i (index_put_: a parallel
                # index_add_ costs ~100 ms per call under load; see tile_workers).
                lo, hi = torch.searchsorted(tgt_sorted, torch.tensor([v0, v1], device=dev)).tolist()
                if hi > lo:
                    rows_hit = order[lo:hi]
                    contrib = h32.index_select(0, rows_hit) * g.index_select(0, rows_hit).unsqueeze(1)
                    acc_w.index_put_((tgt_sorted[lo:hi] - v0,), contrib, accumulate=True)
                if not w_is_f32:
                    grad_w[v0:v1] = acc_w
        return part_h

    acc_h = torch.zeros(h.shape, dtype=torch.float32, device=dev) if need_h else None
    if n > 0 and (need_h or need_w):
        parts = run_tasks(chunks(0, vocab, cols), work, worker_count(dev))
        if need_h:
            acc_h = parts[0]
            for part in parts[1:]:
                acc_h.add_(part)
    if need_h:
        # The one-hot part: +g_i w_t_i (masked rows have g = 0), a row block at a time (no [N, H] temporary).
        idx = targets.clamp(min=0)
        for r0, r1 in row_blocks:
            w_t = _f32(weight.index_select(0, idx[r0:r1])).mul_(g[r0:r1].unsqueeze(1))
            if general:
                acc_h[r0:r1].add_(w_t)
            else:  # acc_h holds P @ W: grad = g (w_t - P @ W)
                acc_h[r0:r1].mul_(-g[r0:r1].unsqueeze(1)).add_(w_t)
    return acc_h, grad_w
