"""Triton forward kernel for token log-probs: one program per block of token rows.

Each program walks the vocabulary in BLOCK_V columns and the hidden size in BLOCK_H steps
(`tl.dot`, float32 accumulation), keeping per-row running max, rescaled sum, target logit and
sum(e^(z-m) (m-z)) for the entropy, so logits only ever live in registers. Out-of-range columns get a
large finite negative value (not -inf: 0 * -inf would be NaN in the entropy sum).
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
        N, V, H, stride_h, stride_w, inv_t,
        WANT_ENTROPY: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_V: tl.constexpr, BLOCK_H: tl.constexpr,
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
                acc = tl.dot(hb, tl.trans(wb), acc)
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


@functools.lru_cache(maxsize=None)
def _blocks(h_dim: int) -> tuple[int, int, int]:
    # Interpreter: small blocks keep numpy tiles cheap. GPU: 64 rows x 128 columns x 64 of H.
    if _interpreting():
        return 16, 32, 32 if h_dim >= 32 else 16
    return 64, 128, 64


def triton_forward(hidden, weight, targets, inv_t: float, want_entropy: bool):
    """(log-probs, log-sum-exp, entropy) in float32; inputs [N, H], [V, H], [N] (contiguous)."""
    if triton is None:
        raise RuntimeError(_IMPORT_ERROR)
    n, h_dim = hidden.shape
    vocab = weight.shape[0]
    dev = hidden.device
    if weight.dtype != hidden.dtype:
        weight = weight.to(hidden.dtype)
    if _interpreting() and hidden.dtype == torch.bfloat16:
        # The interpreter runs on numpy, which has no bfloat16 (loads come back as garbage);
        # on a GPU the kernel multiplies bf16 tiles directly with float32 accumulation.
        hidden, weight = hidden.float(), weight.float()
    lp = torch.empty(n, dtype=torch.float32, device=dev)
    lse = torch.empty(n, dtype=torch.float32, device=dev)
    ent = torch.empty(n if want_entropy else 1, dtype=torch.float32, device=dev)
    bn, bv, bh = _blocks(h_dim)
    if n:
        _logprobs_fwd_kernel[(triton.cdiv(n, bn),)](
            hidden, weight, targets, lp, lse, ent, n, vocab, h_dim, hidden.stride(0), weight.stride(0), float(inv_t),
            WANT_ENTROPY=want_entropy, BLOCK_N=bn, BLOCK_V=bv, BLOCK_H=bh,
        )
    return lp, lse, ent if want_entropy else ent[:0]
