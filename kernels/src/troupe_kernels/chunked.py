"""The CUDA log-prob path: whole-row vocabulary blocks through cuBLAS matmuls in the input dtype.

Why: on the first H200 run the Triton kernels took 18.8x the three bare bf16 matmuls for the
log-prob forward+backward (N=16,384, V=151,936; the backward kernel's 64x128 tiles with float32
atomics were 65 % of an update step's CUDA time), and the tiled torch path 42x (2 MiB float32
tiles, thousands of small ops). Here every block is one large matmul: all N token rows against
`cols` vocabulary columns, bf16 (or fp16/fp32) operands with float32 results, as Liger's fused
linear cross-entropy uses cuBLAS; the softmax gradient is formed in place on the block's logits.

Blocks run over the vocabulary (not over token chunks) so that every block of d/dW is complete
when its block is done and is written once, in the weight's dtype: no [V, H] float32 accumulator
(on the H200 the Triton path's float32 grad-weight accumulator, V*H*4 = 545 MiB, was what put its
peak at 1/25 of naive, not 1/50). The price is an [N, H] float32 accumulator for d/dh, which is
N*H, far below N*V.

Forward, per block (online log-sum-exp across blocks, as in tiled_torch.py):
  z = (h @ W_b.T) / T;  m' = max(m, max_j z);  s = s e^(m-m') + sum e^(z-m');  (entropy: q)
Backward (recompute, since the upstream gradient of each log-prob is not known in the forward
behind this autograd interface: 4 matmuls against the baseline's 3, floor 4/3), g = dL/dlogp / T:
  P = exp(z - lse)  in place;  grad_W_b = P.T @ (-g h) + one-hot part  (written once);
  grad_h += P @ W_b;  at the end grad_h = -g grad_h + g w_t.   With an entropy gradient u:
  G = P (-g - u H - u log P) on the block, grad_W_b = G.T @ h, grad_h += G @ W_b.
The block is cast to the operand dtype before its two matmuls (bf16 on the tensor cores with
float32 accumulation; P in bf16 costs <= 2^-9 relative per element, inside the bf16 tolerance).

Memory beyond inputs and outputs: `peak_extra_bytes` (a few blocks of N x cols plus three [N, H]
buffers); `plan_vocab_block` keeps a block at most 1/64 of the vocabulary and `tile_elements`
logits, so the peak stays under 1/50 of the naive 12 N V bytes for LM-head shapes (V >= 100 H)
once N >= 4096 (below that the [cols, H] and [N, H] terms weigh more; naive is small then).
On CPU this path runs too (tests; bf16 is emulated by upcasting, exact products in float32 as
cuBLAS forms them), but the tiled path stays the CPU default: it is faster there.
"""

from __future__ import annotations

import functools

import torch

from .tiled_torch import NEG_LARGE

# Logits per block: 16M (64 MiB of float32); with at most 1/64 of the vocabulary per block the
# peak at V=151,936, H=896 stays under 1/50 of naive for N >= 4096 (tested analytically); larger blocks buy nothing once a matmul is [8192 x 896] x [896 x 2048].
TILE_ELEMENTS = 1 << 24
MIN_BLOCKS = 64
_ROW_CHUNK = 1024  # rows per step of the target-logit gather (an [rows, H] float32 temporary)


def plan_vocab_block(n: int, vocab: int, tile_elements: int | None = None) -> int:
    """Vocabulary columns per block for N token rows: within `tile_elements` logits and at most
    1/MIN_BLOCKS of the vocabulary, a multiple of 128 when >= 256 (tensor-core friendly)."""
    budget = tile_elements if tile_elements is not None else TILE_ELEMENTS
    if budget < 1:
        raise ValueError("tile_elements must be >= 1")
    cols = min(budget // max(n, 1), -(-vocab // MIN_BLOCKS))
    if cols >= 256:
        cols -= cols % 128
    return max(1, min(cols, vocab))


def peak_extra_bytes(
    n: int, vocab: int, hidden: int, itemsize: int, cols: int, *, entropy: bool = False, entropy_grad: bool = False
) -> int:
    """Analytic peak of the tensors this path allocates beyond its inputs and returned gradients,
    on CUDA (bf16/fp16 operands use cuBLAS' float32-output matmul; fp32 operands have no casts).

    T = n * cols logits per block. Forward: the block's float32 logits (+ e^(z-m) with the
    entropy), [N] state; at the end a row chunk of gathered target rows. Backward, always alive:
    the [N, H] float32 d/dh accumulator, -g*h in the operand dtype, [N] vectors; then the largest
    of (forming the block: z and P, or z and its operand-dtype copy), (d/dW: the copy + a
    [cols, H] float32 block), (d/dh: the copy + one [N, H] float32 P @ W_b), (the end: a row chunk
    of target rows). The one-hot rows of a block (N*cols/V of them on average) are left out.
    """
    tile = n * cols
    tile_lo = tile * itemsize  # the block in the operand dtype (the float32 block itself for fp32)
    cast = tile_lo if itemsize != 4 else 0
    rows = min(n, _ROW_CHUNK) * hidden * (4 + 4 + itemsize)
    fwd = tile * 4 * (2 if entropy else 1) + 8 * n * 4 + rows
    base = n * hidden * (4 + itemsize) + 8 * n * 4
    form = max(tile * 4 * (2 if entropy_grad else 1), tile * 4 + cast)
    dw = tile_lo + cols * hidden * 4
    dh = tile_lo + n * hidden * 4
    return max(fwd, base + max(form, dw, dh, rows))


@functools.lru_cache(maxsize=None)
def _cuda_mm_has_out_dtype() -> bool:
    """torch >= 2.8 on CUDA: `torch.mm(a, b, out_dtype=torch.float32)` for bf16/fp16 operands."""
    try:
        a = torch.zeros(16, 16, dtype=torch.bfloat16, device="cuda")
        return torch.mm(a, a, out_dtype=torch.float32).dtype == torch.float32
    except Exception:  # noqa: BLE001 - older torch: the keyword or the kernel is missing
        return False


def _mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b with float32 results; 16-bit operands stay 16-bit on CUDA (tensor cores, fp32 accumulate)."""
    if a.dtype == torch.float32:
        return torch.mm(a, b)
    if a.is_cuda and _cuda_mm_has_out_dtype():
        return torch.mm(a, b, out_dtype=torch.float32)
    # CPU (tests) or an old torch: products of 16-bit values are exact in float32, as in cuBLAS.
    return torch.mm(a.float(), b.float())


def _blocks(vocab: int, cols: int) -> list[tuple[int, int]]:
    return [(v0, min(v0 + cols, vocab)) for v0 in range(0, vocab, cols)]


def _target_logits(h: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, inv_t: float) -> torch.Tensor:
    """(h_i . w_t_i) / T in float32, a row chunk at a time."""
    out = torch.empty(h.shape[0], dtype=torch.float32, device=h.device)
    idx = targets.clamp(min=0)
    for r0 in range(0, h.shape[0], _ROW_CHUNK):
        r1 = min(r0 + _ROW_CHUNK, h.shape[0])
        out[r0:r1] = torch.linalg.vecdot(h[r0:r1].float(), weight.index_select(0, idx[r0:r1]).float()) * inv_t
    return out


def _no_autocast(fn):
    """The update calls the forward under bf16 autocast (backends' forward_context): autocast would
    turn these float32-result matmuls into bf16 ones. The dtypes here are chosen explicitly."""

    @functools.wraps(fn)
    def run(h, *args, **kwargs):
        with torch.autocast(device_type=h.device.type, enabled=False):
            return fn(h, *args, **kwargs)

    return run


@_no_autocast
def chunked_forward(h, weight, targets, inv_t: float, cols: int, want_entropy: bool):
    """(log-probs, log-sum-exp, entropy or empty) in float32; h [N, H], weight [V, H] (same dtype), targets [N]."""
    n, vocab = h.shape[0], weight.shape[0]
    dev = h.device
    m = torch.full((n,), NEG_LARGE, dtype=torch.float32, device=dev)
    s = torch.zeros(n, dtype=torch.float32, device=dev)
    q = torch.zeros(n, dtype=torch.float32, device=dev) if want_entropy else None
    if n:
        for v0, v1 in _blocks(vocab, cols):
            z = _mm(h, weight[v0:v1].T)
            if inv_t != 1.0:
                z.mul_(inv_t)
            m_new = torch.maximum(m, z.amax(1))
            z.sub_(m_new.unsqueeze(1))  # z - m' <= 0
            a = torch.exp(m - m_new)
            if want_entropy:
                e = torch.exp(z)
                q = a * (q + (m - m_new) * s) + torch.linalg.vecdot(e, z)
                s = a * s + e.sum(1)
                del e
            else:
                s = a * s + z.exp_().sum(1)
            m = m_new
            del z
    lse = m + torch.log(s)
    logprobs = torch.where(targets >= 0, _target_logits(h, weight, targets, inv_t) - lse, torch.zeros_like(lse))
    entropy = torch.log(s) - q / s if want_entropy else torch.empty(0, dtype=torch.float32, device=dev)
    return logprobs, lse, entropy


@_no_autocast
def chunked_backward(h, weight, targets, lse, entropy, grad_lp, grad_ent, inv_t: float, cols: int, need_h: bool, need_w: bool):
    """(grad_hidden float32 or None, grad_weight in the weight's dtype or None); grad_ent may be None."""
    n, vocab = h.shape[0], weight.shape[0]
    dev = h.device
    lo = h.dtype
    keep = targets >= 0
    g = torch.where(keep, grad_lp.float() * inv_t, torch.zeros((), device=dev))
    general = grad_ent is not None
    if general:
        u = grad_ent.float() * inv_t
        row_a = (-g - u * entropy).unsqueeze(1)  # G = P * (row_a + row_b * log P)
        row_b = (-u).unsqueeze(1)
    acc_h = torch.zeros(h.shape, dtype=torch.float32, device=dev) if need_h else None
    grad_w = None
    if need_w:
        grad_w = (torch.empty if n else torch.zeros)(weight.shape, dtype=weight.dtype, device=dev)
        # P.T @ (-g h): the per-row -g goes onto h once, not onto every block.
        h_for_w = h if general else (h.float() * (-g).unsqueeze(1)).to(lo)
        tgt_sorted, order = torch.sort(torch.where(keep, targets, torch.full_like(targets, vocab)))
    if n and (need_h or need_w):
        lse_col = lse.unsqueeze(1)
        blocks = _blocks(vocab, cols)
        if need_w:  # where each block's one-hot rows start in tgt_sorted: one device sync, not one per block
            edges = torch.tensor([v0 for v0, _ in blocks] + [vocab], device=dev)
            bounds = torch.searchsorted(tgt_sorted, edges).tolist()
        for k, (v0, v1) in enumerate(blocks):
            wb = weight[v0:v1]
            z = _mm(h, wb.T)
            if inv_t != 1.0:
                z.mul_(inv_t)
            z.sub_(lse_col)  # log P
            if general:
                p = torch.exp(z)
                tile = z.mul_(row_b).add_(row_a).mul_(p)
                del p
            else:
                tile = z.exp_()  # P
            tile_lo = tile if lo == torch.float32 else tile.to(lo)
            del z, tile
            if need_w:
                gw = _mm(tile_lo.T, h_for_w)  # [cols, H] float32
                a, b = bounds[k], bounds[k + 1]
                if b > a:  # the one-hot part: + g_i h_i into row t_i
                    rows = order[a:b]
                    gw.index_add_(0, tgt_sorted[a:b] - v0, h.index_select(0, rows).float() * g.index_select(0, rows).unsqueeze(1))
                grad_w[v0:v1] = gw
                del gw
            if need_h:
                acc_h.add_(_mm(tile_lo, wb))
            del tile_lo
    if need_h:
        idx = targets.clamp(min=0)
        for r0 in range(0, n, _ROW_CHUNK):
            r1 = min(r0 + _ROW_CHUNK, n)
            w_t = weight.index_select(0, idx[r0:r1]).float().mul_(g[r0:r1].unsqueeze(1))
            if general:
                acc_h[r0:r1].add_(w_t)
            else:  # acc_h holds P @ W: grad = g (w_t - P @ W)
                acc_h[r0:r1].mul_(-g[r0:r1].unsqueeze(1)).add_(w_t)
    return acc_h, grad_w
