"""The cuBLAS vocab-block path (chunked.py), run on CPU: values and gradients against float64, equal
to the tiled path in float32, bf16 within stated tolerances, and its memory, measured and analytic.

Tolerances: float32 as the tiled path (log-probs/entropy rtol 1e-5 atol 1e-5, gradients rtol 1e-4
atol 1e-5: float32 summation over V or N terms). bf16: log-probs are computed from exact products
of the bf16 inputs with float32 sums, so they meet the float32 tolerance against float64 of the
rounded inputs; gradients pass the block through bf16 (P, and -g*h) and come back in bf16, each a
2^-9 relative rounding, so rtol 1.6e-2 (4 bf16 ulps) and atol 1e-3 (gradient entries ~1e-1..1e-3).
"""

from __future__ import annotations

import types

import pytest
import torch

from _live_bytes import LiveBytes
from troupe_kernels import token_logprobs
from troupe_kernels.chunked import chunked_backward, chunked_forward, peak_extra_bytes, plan_vocab_block
from troupe_kernels.logprobs import _pick_backend


def _reference(h, w, t, temperature, up_lp, up_ent):
    hr, wr = h.double().requires_grad_(), w.double().requires_grad_()
    logp_all = torch.log_softmax(hr @ wr.T / temperature, -1)
    lp = logp_all.gather(-1, t.clamp(min=0).unsqueeze(-1)).squeeze(-1) * (t >= 0)
    ent = -(logp_all.exp() * logp_all).sum(-1)
    ((lp * up_lp.double()).sum() + (ent * up_ent.double()).sum()).backward()
    return lp.detach().float(), ent.detach().float(), hr.grad.float(), wr.grad.float()


def _ours(h, w, t, temperature, up_lp, up_ent, backend="chunked", tile_elements=None):
    hg, wg = h.clone().requires_grad_(), w.clone().requires_grad_()
    lp, ent = token_logprobs(hg, wg, t, temperature=temperature, return_entropy=True, backend=backend, tile_elements=tile_elements)
    ((lp * up_lp).sum() + (ent * up_ent).sum()).backward()
    return lp.detach(), ent.detach(), hg.grad, wg.grad


@pytest.mark.parametrize("with_entropy_grad", [False, True])
@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_float32_values_and_gradients_match_float64(with_entropy_grad, temperature):
    g = torch.Generator().manual_seed(3)
    n, vocab, hidden = 37, 301, 24
    h = torch.randn(n, hidden, generator=g)
    w = torch.randn(vocab, hidden, generator=g) / hidden**0.5
    t = torch.randint(0, vocab, (n,), generator=g)
    t[[2, 11]] = -100
    up_lp = torch.randn(n, generator=g)
    up_ent = torch.randn(n, generator=g) if with_entropy_grad else torch.zeros(n)
    # 64 logits per block: columns = 1, many ragged blocks; and the default plan (one to ten blocks).
    for tile in (64, None):
        lp, ent, gh, gw = _ours(h, w, t, temperature, up_lp, up_ent, tile_elements=tile)
        rlp, rent, rgh, rgw = _reference(h, w, t, temperature, up_lp, up_ent)
        torch.testing.assert_close(lp, rlp, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(ent, rent, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(gh, rgh, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(gw, rgw, rtol=1e-4, atol=1e-5)
        assert lp[2] == 0 and lp[11] == 0
        if not with_entropy_grad:
            assert torch.count_nonzero(gh[2]) == 0  # a masked row gets no gradient from its log-prob


def test_float32_equals_the_tiled_path():
    g = torch.Generator().manual_seed(4)
    n, vocab, hidden = 64, 500, 32
    h, w = torch.randn(n, hidden, generator=g), torch.randn(vocab, hidden, generator=g) / 6
    t = torch.randint(0, vocab, (n,), generator=g)
    up_lp, up_ent = torch.randn(n, generator=g), torch.randn(n, generator=g)
    a = _ours(h, w, t, 0.9, up_lp, up_ent, backend="chunked")
    b = _ours(h, w, t, 0.9, up_lp, up_ent, backend="torch")
    for x, y in zip(a, b):
        torch.testing.assert_close(x, y, rtol=1e-5, atol=1e-6)


def test_large_logits_stay_finite_and_exact():
    g = torch.Generator().manual_seed(5)
    h = torch.randn(9, 16, generator=g) * 300
    w = torch.randn(50, 16, generator=g) / 4
    t = torch.randint(0, 50, (9,), generator=g)
    lp, ent = token_logprobs(h, w, t, return_entropy=True, backend="chunked", tile_elements=9 * 7)
    ref = torch.log_softmax(h.double() @ w.double().T, -1)
    torch.testing.assert_close(lp, ref.gather(-1, t[:, None]).squeeze(-1).float(), rtol=1e-5, atol=1e-5 * 300)
    assert torch.isfinite(ent).all()


def test_bf16_within_the_stated_tolerances():
    g = torch.Generator().manual_seed(6)
    n, vocab, hidden = 48, 400, 32
    h = torch.randn(n, hidden, generator=g).bfloat16()
    w = (torch.randn(vocab, hidden, generator=g) / hidden**0.5).bfloat16()
    t = torch.randint(0, vocab, (n,), generator=g)
    up_lp, up_ent = torch.randn(n, generator=g), torch.zeros(n)
    lp, ent, gh, gw = _ours(h, w, t, 1.0, up_lp, up_ent, tile_elements=n * 64)
    rlp, rent, rgh, rgw = _reference(h, w, t, 1.0, up_lp, up_ent)
    assert gh.dtype == torch.bfloat16 and gw.dtype == torch.bfloat16
    torch.testing.assert_close(lp, rlp, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(ent, rent, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(gh.float(), rgh, rtol=1.6e-2, atol=1e-3)
    torch.testing.assert_close(gw.float(), rgw, rtol=1.6e-2, atol=1e-3)


def test_a_float32_weight_with_bf16_hidden_gets_a_float32_gradient():
    g = torch.Generator().manual_seed(7)
    h = torch.randn(8, 16, generator=g).bfloat16().requires_grad_()
    w = (torch.randn(40, 16, generator=g) / 4).requires_grad_()
    token_logprobs(h, w, torch.randint(0, 40, (8,), generator=g), backend="chunked").sum().backward()
    assert w.grad.dtype == torch.float32 and h.grad.dtype == torch.bfloat16
    assert torch.isfinite(w.grad).all()


def test_autocast_around_the_call_changes_nothing():
    # The update runs the log-prob forward inside bf16 autocast; the path must keep its own dtypes
    # (float32 logits), not let autocast turn its matmuls into bf16 ones.
    g = torch.Generator().manual_seed(9)
    h, w = torch.randn(16, 32, generator=g), torch.randn(300, 32, generator=g) / 6
    t = torch.randint(0, 300, (16,), generator=g)
    plain = _ours(h, w, t, 1.0, torch.ones(16), torch.zeros(16))
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        under = _ours(h, w, t, 1.0, torch.ones(16), torch.zeros(16))
    for a, b in zip(plain, under):
        assert a.dtype == b.dtype
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)


def test_cuda_selects_the_chunked_path_and_cpu_keeps_the_tiles():
    assert _pick_backend(None, types.SimpleNamespace(is_cuda=True)) == "chunked"
    assert _pick_backend(None, torch.zeros(1)) == "torch"
    with pytest.raises(ValueError, match="backend"):
        _pick_backend("cublas", torch.zeros(1))


def test_plan_is_a_bounded_slice_of_the_vocabulary():
    assert plan_vocab_block(8192, 151936) == 2048  # 16M logits per block, a multiple of 128
    assert plan_vocab_block(64, 151936) == 2304  # capped at ~1/64 of the vocabulary
    assert plan_vocab_block(10, 7) == 1
    assert plan_vocab_block(4, 1000, tile_elements=40) == 10
    with pytest.raises(ValueError):
        plan_vocab_block(4, 10, tile_elements=0)


@pytest.mark.parametrize("itemsize", [2, 4])
@pytest.mark.parametrize("n", [4096, 8192, 16384, 24576])
def test_analytic_peak_is_under_a_fiftieth_of_naive_at_the_qwen_head(n, itemsize):
    # Naive forward+backward holds logits, log-softmax and its gradient: 3 x N x V float32 (the H200
    # measured 14.9 GB at N=8192 in bf16, 12.0 bytes per logit). The Triton path's float32 grad-W
    # accumulator alone is V*H*4 = 545 MB = 1/27 of that at N=8192: the failure on the H200.
    vocab, hidden = 151936, 896
    cols = plan_vocab_block(n, vocab)
    ours = peak_extra_bytes(n, vocab, hidden, itemsize, cols, entropy=True, entropy_grad=True)
    naive = 3 * n * vocab * 4
    assert ours <= naive / 50, (ours, naive / 50)
    assert vocab * hidden * 4 > naive / 50 if n == 8192 else True  # why the old default failed


@pytest.mark.parametrize("entropy", [False, True])
def test_measured_live_bytes_stay_within_the_analytic_peak(entropy):
    # Tensors this path allocates on CPU in float32 (the CUDA matmuls allocate the same tensors;
    # only bf16 adds its casts there), counted by a dispatch mode: the formula is an upper bound.
    g = torch.Generator().manual_seed(8)
    n, vocab, hidden = 256, 4096, 32
    h, w = torch.randn(n, hidden, generator=g), torch.randn(vocab, hidden, generator=g) / 6
    t = torch.randint(0, vocab, (n,), generator=g)
    cols = plan_vocab_block(n, vocab, tile_elements=n * 128)
    up_lp, up_ent = torch.randn(n, generator=g), (torch.randn(n, generator=g) if entropy else None)
    with LiveBytes() as fwd:
        lp, lse, ent = chunked_forward(h, w, t, 1.0, cols, entropy)
    with LiveBytes() as bwd:
        gh, gw = chunked_backward(h, w, t, lse, ent, up_lp, up_ent, 1.0, cols, True, True)
    outputs = gh.numel() * 4 + gw.numel() * 4  # returned gradients are outputs, not scratch
    bound = peak_extra_bytes(n, vocab, hidden, 4, cols, entropy=entropy, entropy_grad=entropy)
    assert fwd.peak <= bound
    assert bwd.peak - outputs <= bound, (bwd.peak - outputs, bound)
    # And the bound is not vacuous: the block of logits is most of it.
    assert bwd.peak - outputs >= n * cols * 4
    naive = 3 * n * vocab * 4
    assert bwd.peak - outputs <= naive / 20


def test_paths_bench_runs_on_cpu_with_small_shapes():
    import subprocess
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parents[2] / "bench" / "kernels" / "paths_bench.py"
    proc = subprocess.run(
        [sys.executable, str(bench), "--n", "64", "--vocab", "512", "--hidden", "16", "--repeats", "1"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = {line.split()[0]: line for line in proc.stdout.splitlines() if line.strip()}
    assert "three" in lines and "chunked" in lines and "torch" in lines
    assert lines["chunked"].split()[2].endswith("x")  # the ratio column
