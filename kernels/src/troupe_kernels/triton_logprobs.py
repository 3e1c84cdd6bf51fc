"""Triton kernels for token log-probs: a forward (one program per block of token rows) and a
backward (one program per tile of rows x vocab columns) that recomputes its tile of logits.

Each program walks the vocabulary in BLOCK_V columns and the hidden size in BLOCK_H steps
(`tl.dot`, float32 accumulation), keeping per-row running max, rescaled sum, target logit and
sum(e^(z-m) (m-z)) for the entropy, so logits only ever live in registers. Out-of-range columns get a
large finite negative value (not -inf: 0 * -inf would be NaN in the entropy sum).
Backward: each program recomputes its logits tile from the saved per-row log-sum-exp, forms
G = dL/dz on the tile (see tiled_torch.py for the math, entropy gradient included) and adds
G @ W_tile into grad_hidden and G.T @ h_tile into grad_weight with float32 atomics, H in BLOCK_H
steps: no [N x V] tensor, and no second kernel re-deriving G. (Atomics make the summation order,
and so the last bits, run-dependent.)
Triton is imported lazily: the torch path never needs it. Tests run it under TRITON_INTERPRET=1.
"""

from __future__ import annotations

import functools
import os

import torch

_IMPORT_ERROR: str | None = None
try:  # pragma: no cover - depends on the environment
    import triton
    import triton.language as tl
except Exception as exc:  # noqa: BLE001 - any import failure means "not available"
    triton = None  # type: ignore[assignment]
    tl = None  # type: ignore[assignment]
    _IMPORT_ERROR = f"triton is not importable ({type(exc).__name__}: {exc})"


def triton_unavailable_reason() -> str | None:
    return _IMPORT_ERROR


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def triton_available() -> bool:
    """Triton can run here: importable, and either a CUDA device or the CPU interpreter."""
    return triton is not None and (torch.cuda.is_available() or _interpreting())


if triton is not None:

    @triton.jit
    def _logprobs_fwd_kernel(
        h_ptr, w_ptr, t_ptr, lp_ptr, lse_ptr, ent_ptr,
        N, stride_h, stride_w, inv_t, V: tl.constexpr, H: tl.constexpr,
        WANT_ENTROPY: tl.constexpr, F32_DOT: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_V: tl.constexpr, BLOCK_H: tl.constexpr,
    ):
        NEG: tl.constexpr = -1.0e30
        pid = tl.program_id(0)
        rows = pid * BLOCK_N + tl.arange(0, BLOCK_N)
        row_ok = rows < N
        tgt = tl.load(t_ptr + rows, mask=row_ok, other=-1)
        m = tl.full((BLOCK_N,), NEG, tl.float32)
        s = tl.zeros((BLOCK_N,), tl.float32)
        zt = tl.zeros((BLOCK_N,), tl.float32)
        ez = tl.zeros((BLOCK_N,), tl.float32)
        for v0 in range(0, V, BLOCK_V):
            cols = v0 + tl.arange(0, BLOCK_V)
            col_ok = cols < V
            acc = tl.zeros((BLOCK_N, BLOCK_V), tl.float32)
            for k0 in range(0, H, BLOCK_H):
                ks = k0 + tl.arange(0, BLOCK_H)
                k_ok = ks < H
                hb = tl.load(h_ptr + rows[:, None] * stride_h + ks[None, :], mask=row_ok[:, None] & k_ok[None, :], other=0.0)
                wb = tl.load(w_ptr + cols[:, None] * stride_w + ks[None, :], mask=col_ok[:, None] & k_ok[None, :], other=0.0)
                acc = tl.dot(hb, tl.trans(wb), acc, input_precision=F32_DOT)
            z = tl.where(col_ok[None, :], acc * inv_t, NEG)
            zt += tl.sum(tl.where(cols[None, :] == tgt[:, None], z, 0.0), axis=1)
            m_new = tl.maximum(m, tl.max(z, axis=1))
            scale = tl.exp(m - m_new)
            e = tl.exp(z - m_new[:, None])
            if WANT_ENTROPY:
                # acc = sum e^(z-m) (m - z), re-based on the new max; all terms >= 0.
                ez = scale * (ez + (m_new - m) * s) + tl.sum(e * (m_new[:, None] - z), axis=1)
            s = s * scale + tl.sum(e, axis=1)
            m = m_new
        lse = m + tl.log(s)
        tl.store(lse_ptr + rows, lse, mask=row_ok)
        tl.store(lp_ptr + rows, tl.where(tgt >= 0, zt - lse, 0.0), mask=row_ok)
        if WANT_ENTROPY:
            tl.store(ent_ptr + rows, ez / s + tl.log(s), mask=row_ok)


    @triton.jit
    def _logprobs_bwd_kernel(
        h_ptr, w_ptr, t_ptr, lse_ptr, ent_ptr, g_ptr, u_ptr, gh_ptr, gw_ptr,
        N, stride_h, stride_w, inv_t, V: tl.constexpr, H: tl.constexpr,
        ENTROPY_GRAD: tl.constexpr, F32_DOT: tl.constexpr, NEED_H: tl.constexpr, NEED_W: tl.constexpr,
        BLOCK_N: tl.constexpr, BLOCK_V: tl.constexpr, BLOCK_H: tl.constexpr,
    ):
        rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
        cols = tl.program_id(1) * BLOCK_V + tl.arange(0, BLOCK_V)
        row_ok = rows < N
        col_ok = cols < V
        acc = tl.zeros((BLOCK_N, BLOCK_V), tl.float32)
        for k0 in range(0, H, BLOCK_H):
            ks = k0 + tl.arange(0, BLOCK_H)
            k_ok = ks < H
            hb = tl.load(h_ptr + rows[:, None] * stride_h + ks[None, :], mask=row_ok[:, None] & k_ok[None, :], other=0.0)
            wb = tl.load(w_ptr + cols[:, None] * stride_w + ks[None, :], mask=col_ok[:, None] & k_ok[None, :], other=0.0)
            acc = tl.dot(hb, tl.trans(wb), acc, input_precision=F32_DOT)
        lse = tl.load(lse_ptr + rows, mask=row_ok, other=0.0)
        g = tl.load(g_ptr + rows, mask=row_ok, other=0.0)  # dL/dlogp / T, 0 on masked rows
        tgt = tl.load(t_ptr + rows, mask=row_ok, other=-1)
        logp = acc * inv_t - lse[:, None]
        p = tl.where(row_ok[:, None] & col_ok[None, :], tl.exp(logp), 0.0)
        grad = tl.where(cols[None, :] == tgt[:, None], g[:, None], 0.0) - g[:, None] * p
        if ENTROPY_GRAD:
            u = tl.load(u_ptr + rows, mask=row_ok, other=0.0)  # dL/dH / T
            ent = tl.load(ent_ptr + rows, mask=row_ok, other=0.0)
            grad -= u[:, None] * p * (logp + ent[:, None])
        grad_lo = grad.to(h_ptr.dtype.element_ty)  # bf16 tiles on the tensor cores, float32 sums
        for k0 in range(0, H, BLOCK_H):
            ks = k0 + tl.arange(0, BLOCK_H)
            k_ok = ks < H
            if NEED_H:
                wb = tl.load(w_ptr + cols[:, None] * stride_w + ks[None, :], mask=col_ok[:, None] & k_ok[None, :], other=0.0)
                dh = tl.dot(grad_lo, wb, input_precision=F32_DOT)
                tl.atomic_add(gh_ptr + rows[:, None] * H + ks[None, :], dh, mask=row_ok[:, None] & k_ok[None, :])
            if NEED_W:
                hb = tl.load(h_ptr + rows[:, None] * stride_h + ks[None, :], mask=row_ok[:, None] & k_ok[None, :], other=0.0)
                dw = tl.dot(tl.trans(grad_lo), hb, input_precision=F32_DOT)
                tl.atomic_add(gw_ptr + cols[:, None] * H + ks[None, :], dw, mask=col_ok[:, None] & k_ok[None, :])


def f32_dot_precision(dtype: torch.dtype = torch.float32) -> str:
    """The precision of the kernels' float32 `tl.dot`s: the one torch's own float32 matmuls use.

    Triton's default for float32 dots on NVIDIA GPUs is TF32 (10-bit mantissa), while torch's is
    full float32 unless `torch.backends.cuda.matmul.allow_tf32` (or float32 matmul precision
    'high'/'medium') says otherwise. With the default, the first H200 run saw the Triton backward
    differ from the torch path by up to 3e-4 (10 of 459,648 elements past atol 1e-4): TF32 on one
    side only. Following torch's flag makes both paths compute the same thing. (bf16/fp16 tiles
    keep Triton's default, which is what they ran with before.)
    """
    if dtype != torch.float32:
        return "tf32"  # Triton's default; ignored for 16-bit operands
    return "tf32" if torch.backends.cuda.matmul.allow_tf32 else "ieee"


@functools.lru_cache(maxsize=None)
def _blocks(h_dim: int) -> tuple[int, int, int]:
    # Interpreter: small blocks keep numpy tiles cheap. GPU: 64 rows x 128 columns x 64 of H.
    if _interpreting():
        return 16, 32, 32 if h_dim >= 32 else 16
    return 64, 128, 64


def _same_dtype_inputs(hidden, weight):
    if weight.dtype != hidden.dtype:
        weight = weight.to(hidden.dtype)
    if _interpreting() and hidden.dtype == torch.bfloat16:
        # The interpreter runs on numpy, which has no bfloat16 (loads come back as garbage);
        # on a GPU the kernels multiply bf16 tiles directly with float32 accumulation.
        hidden, weight = hidden.float(), weight.float()
    return hidden.contiguous(), weight.contiguous()


def triton_backward(hidden, weight, targets, lse, entropy, g, u, inv_t: float, need_h: bool, need_w: bool):
    """(grad_hidden, grad_weight) in float32 (None where not needed).

    g: dL/dlogp * 1/T per row, zero on masked rows; u: dL/dentropy * 1/T per row, or None.
    """
    if triton is None:
        raise RuntimeError(_IMPORT_ERROR)
    n, h_dim = hidden.shape
    vocab = weight.shape[0]
    hidden, weight = _same_dtype_inputs(hidden, weight)
    dev = hidden.device
    gh = torch.zeros((n, h_dim) if need_h else (1, 1), dtype=torch.float32, device=dev)
    gw = torch.zeros((vocab, h_dim) if need_w else (1, 1), dtype=torch.float32, device=dev)
    bn, bv, bh = _blocks(h_dim)
    if n and (need_h or need_w):
        _logprobs_bwd_kernel[(triton.cdiv(n, bn), triton.cdiv(vocab, bv))](
            hidden, weight, targets, lse, entropy if u is not None else lse, g.contiguous(),
            (u if u is not None else g).contiguous(), gh, gw,
            n, hidden.stride(0), weight.stride(0), float(inv_t), V=vocab, H=h_dim,
            ENTROPY_GRAD=u is not None, F32_DOT=f32_dot_precision(hidden.dtype), NEED_H=need_h, NEED_W=need_w, BLOCK_N=bn, BLOCK_V=bv, BLOCK_H=bh,
        )
    return (gh if need_h else None), (gw if need_w else None)


def triton_forward(hidden, weight, targets, inv_t: float, want_entropy: bool):
    """(log-probs, log-sum-exp, entropy) in float32; inputs [N, H], [V, H], [N] (contiguous)."""
    if triton is None:
        raise RuntimeError(_IMPORT_ERROR)
    n, h_dim = hidden.shape
    vocab = weight.shape[0]
    dev = hidden.device
    hidden, weight = _same_dtype_inputs(hidden, weight)
    lp = torch.empty(n, dtype=torch.float32, device=dev)
    lse = torch.empty(n, dtype=torch.float32, device=dev)
    ent = torch.empty(n if want_entropy else 1, dtype=torch.float32, device=dev)
    bn, bv, bh = _blocks(h_dim)
    if n:
        _logprobs_fwd_kernel[(triton.cdiv(n, bn),)](
            hidden, weight, targets, lp, lse, ent, n, hidden.stride(0), weight.stride(0), float(inv_t),
            V=vocab, H=h_dim, WANT_ENTROPY=want_entropy, F32_DOT=f32_dot_precision(hidden.dtype), BLOCK_N=bn, BLOCK_V=bv, BLOCK_H=bh,
        )
    return lp, lse, ent if want_entropy else ent[:0]
