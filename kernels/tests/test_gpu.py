"""CUDA-only: Triton against the torch path and the naive logits, peak memory, Liger when installed."""

import pytest
import torch

from troupe_kernels import token_logprobs
from troupe_kernels.liger import liger_grpo_loss_class, liger_unavailable_reason
from troupe_kernels.triton_logprobs import triton_unavailable_reason

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")


def test_triton_matches_torch_path_on_gpu():
    if triton_unavailable_reason():
        pytest.skip(triton_unavailable_reason())
    g = torch.Generator(device="cuda").manual_seed(0)
    h = torch.randn(1000, 896, device="cuda", generator=g, dtype=torch.bfloat16)
    w = torch.randn(151936, 896, device="cuda", generator=g, dtype=torch.bfloat16) / 30
    t = torch.randint(0, 151936, (1000,), device="cuda", generator=g)
    lp_t, ent_t = token_logprobs(h, w, t, return_entropy=True, backend="triton")
    lp_p, ent_p = token_logprobs(h, w, t, return_entropy=True, backend="torch")
    torch.testing.assert_close(lp_t, lp_p, rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(ent_t, ent_p, rtol=1e-4, atol=1e-3)


def test_triton_backward_matches_torch_path_on_gpu():
    if triton_unavailable_reason():
        pytest.skip(triton_unavailable_reason())
    g = torch.Generator(device="cuda").manual_seed(1)
    h = torch.randn(513, 896, device="cuda", generator=g)
    w = torch.randn(32000, 896, device="cuda", generator=g) / 30
    t = torch.randint(0, 32000, (513,), device="cuda", generator=g)
    up = torch.randn(513, device="cuda", generator=g)
    grads = {}
    for backend in ("triton", "torch"):
        hg, wg = h.clone().requires_grad_(), w.clone().requires_grad_()
        lp, ent = token_logprobs(hg, wg, t, return_entropy=True, backend=backend)
        ((lp * up).sum() + 0.1 * ent.sum()).backward()
        grads[backend] = (hg.grad, wg.grad)
    # Both paths in full float32 (torch's default; the kernels' float32 dots follow
    # torch.backends.cuda.matmul.allow_tf32, see f32_dot_precision): summation order only. The
    # first H200 run failed here (3e-4 off) when Triton's dots were TF32 and torch's were not.
    torch.testing.assert_close(grads["triton"][0], grads["torch"][0], rtol=1e-3, atol=1e-4)
    torch.testing.assert_close(grads["triton"][1], grads["torch"][1], rtol=1e-3, atol=1e-4)


def test_chunked_path_matches_the_tiled_path_on_gpu():
    # Full float32 on both sides (torch's default matmul precision): summation order only.
    g = torch.Generator(device="cuda").manual_seed(2)
    h = torch.randn(700, 896, device="cuda", generator=g)
    w = torch.randn(32000, 896, device="cuda", generator=g) / 30
    t = torch.randint(0, 32000, (700,), device="cuda", generator=g)
    up = torch.randn(700, device="cuda", generator=g)
    out = {}
    for backend in ("chunked", "torch"):
        hg, wg = h.clone().requires_grad_(), w.clone().requires_grad_()
        lp, ent = token_logprobs(hg, wg, t, return_entropy=True, backend=backend)
        ((lp * up).sum() + 0.1 * ent.sum()).backward()
        out[backend] = (lp, ent, hg.grad, wg.grad)
    for a, b in zip(out["chunked"], out["torch"]):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def test_peak_memory_is_under_a_fiftieth_of_naive():
    # The default CUDA path (chunked.py). The Triton path measured 1/25 here on the H200: its
    # float32 grad-W accumulator (V*H*4 = 545 MB) alone is 1/27 of naive at N=8192.
    n, vocab, hidden = 8192, 151936, 896
    h = torch.randn(n, hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = (torch.randn(vocab, hidden, device="cuda", dtype=torch.bfloat16) / 30).requires_grad_()
    t = torch.randint(0, vocab, (n,), device="cuda")

    def peak(fn):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        fn()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - base

    naive = peak(lambda: torch.log_softmax((h @ w.T).float(), -1).gather(-1, t[:, None]).sum().backward())
    h.grad = w.grad = None
    ours = peak(lambda: token_logprobs(h, w, t).sum().backward())
    from troupe_kernels.chunked import peak_extra_bytes, plan_vocab_block

    bound = peak_extra_bytes(n, vocab, hidden, 2, plan_vocab_block(n, vocab))
    grads = (h.numel() + w.numel()) * 2  # both computations return these
    assert ours - grads <= (naive - grads) / 50, (ours, naive)
    assert ours - grads <= bound * 1.1, (ours - grads, bound)  # the analytic accounting holds on CUDA


def test_liger_fused_grpo_loss_is_found_when_installed():
    cls = liger_grpo_loss_class()
    if cls is None:
        pytest.skip(liger_unavailable_reason())
    assert callable(cls)
