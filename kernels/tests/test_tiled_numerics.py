"""The torch tiled path against float64 `log_softmax(h @ w.T / T).gather` and its gradients.

Stated tolerances: float32 inputs, log-probs and entropy rtol=1e-5 / atol=1e-5 (scaled by the
logit magnitude for the large-logit case), gradients rtol=1e-4 / atol=1e-5; bfloat16 inputs are
compared with bf16 tolerances (rtol=1.6e-2, atol=1e-2 relative to the logit scale).
"""

import pytest
import torch

from troupe_kernels import plan_tiles, token_logprobs

F32 = dict(rtol=1e-5, atol=1e-5)
F32_GRAD = dict(rtol=1e-4, atol=1e-5)


def _inputs(n=24, hidden=16, vocab=101, dtype=torch.float32, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    h = torch.randn(n, hidden, generator=g) * scale
    w = torch.randn(vocab, hidden, generator=g) / hidden**0.5
    t = torch.randint(0, vocab, (n,), generator=g)
    return h.to(dtype), w.to(dtype), t


def _reference(h, w, t, temperature=1.0, upstream=None, upstream_ent=None):
    """float64 log-probs, entropy and (if upstream is given) gradients of
    sum(upstream * logp) (+ sum(upstream_ent * entropy) when given)."""
    h64 = h.detach().double().requires_grad_()
    w64 = w.detach().double().requires_grad_()
    logp_all = torch.log_softmax(h64 @ w64.T / temperature, -1)
    keep = t >= 0
    logp = logp_all.gather(-1, t.clamp(min=0).unsqueeze(-1)).squeeze(-1) * keep
    entropy = -(logp_all.exp() * logp_all).sum(-1)
    grads = None
    if upstream is not None:
        loss = (logp * upstream.double()).sum()
        if upstream_ent is not None:
            loss = loss + (entropy * upstream_ent.double()).sum()
        loss.backward()
        grads = (h64.grad, w64.grad)
    return logp.detach(), entropy.detach(), grads


@pytest.mark.parametrize("tile_elements", [7, 64, 400, None])
@pytest.mark.parametrize("chunk_size", [1, 5, None])
@pytest.mark.parametrize("temperature", [1.0, 0.6])
def test_forward_entropy_and_grads_match_float64_for_any_tiling(tile_elements, chunk_size, temperature):
    h, w, t = _inputs()
    upstream = torch.randn(h.shape[0], generator=torch.Generator().manual_seed(1))
    ref_lp, ref_ent, (ref_gh, ref_gw) = _reference(h, w, t, temperature, upstream)
    hg, wg = h.clone().requires_grad_(), w.clone().requires_grad_()
    lp, ent = token_logprobs(
        hg, wg, t, temperature=temperature, chunk_size=chunk_size, tile_elements=tile_elements, return_entropy=True
    )
    (lp * upstream).sum().backward()
    torch.testing.assert_close(lp, ref_lp.float(), **F32)
    torch.testing.assert_close(ent, ref_ent.float(), **F32)
    torch.testing.assert_close(hg.grad, ref_gh.float(), **F32_GRAD)
    torch.testing.assert_close(wg.grad, ref_gw.float(), **F32_GRAD)


@pytest.mark.parametrize("tile_elements", [7, 400, None])
@pytest.mark.parametrize("temperature", [1.0, 0.6])
def test_entropy_bonus_gradients_match_float64(tile_elements, temperature):
    # The loss shape of an entropy bonus: sum(a * logp) + sum(b * H), masked rows included in H.
    h, w, t = _inputs()
    t[3] = -100
    gen = torch.Generator().manual_seed(4)
    up_lp, up_ent = torch.randn(h.shape[0], generator=gen), torch.randn(h.shape[0], generator=gen)
    ref_lp, ref_ent, (ref_gh, ref_gw) = _reference(h, w, t, temperature, up_lp, up_ent)
    hg, wg = h.clone().requires_grad_(), w.clone().requires_grad_()
    lp, ent = token_logprobs(hg, wg, t, temperature=temperature, tile_elements=tile_elements, return_entropy=True)
    ((lp * up_lp).sum() + (ent * up_ent).sum()).backward()
    torch.testing.assert_close(lp, ref_lp.float(), **F32)
    torch.testing.assert_close(ent, ref_ent.float(), **F32)
    torch.testing.assert_close(hg.grad, ref_gh.float(), **F32_GRAD)
    torch.testing.assert_close(wg.grad, ref_gw.float(), **F32_GRAD)


def test_tile_plan_respects_the_budget():
    for n, v, chunk, budget in [(16384, 151936, None, None), (7, 50, 3, 10), (1, 151936, None, None), (100, 10, None, 7)]:
        rows, cols = plan_tiles(n, v, chunk, budget)
        effective = budget if budget is not None else 1 << 20
        assert 1 <= rows <= n and 1 <= cols <= v
        assert rows * cols <= max(effective, rows), (n, v, rows, cols)
    rows, cols = plan_tiles(16384, 151936)
    assert rows * cols * 4 <= 2**22  # one fp32 tile: at most 4 MiB at the shape


def test_masked_targets_give_zero_logprob_and_no_gradient():
    h, w, t = _inputs(n=10)
    t[[2, 7]] = -100
    upstream = torch.ones(10)
    ref_lp, ref_ent, (ref_gh, ref_gw) = _reference(h, w, t, upstream=upstream)
    hg, wg = h.clone().requires_grad_(), w.clone().requires_grad_()
    lp, ent = token_logprobs(hg, wg, t, return_entropy=True, tile_elements=64)
    lp.sum().backward()
    assert lp[2] == 0 and lp[7] == 0
    assert torch.count_nonzero(hg.grad[[2, 7]]) == 0
    torch.testing.assert_close(lp, ref_lp.float(), **F32)
    torch.testing.assert_close(ent, ref_ent.float(), **F32)
    torch.testing.assert_close(hg.grad, ref_gh.float(), **F32_GRAD)
    torch.testing.assert_close(wg.grad, ref_gw.float(), **F32_GRAD)


@pytest.mark.parametrize("scale", [1e3, 1e5])
def test_large_logits_stay_finite_and_accurate(scale):
    h, w, t = _inputs(n=12, scale=scale)
    t[0] = -100
    ref_lp, ref_ent, (ref_gh, ref_gw) = _reference(h, w, t, upstream=torch.ones(12))
    hg, wg = h.clone().requires_grad_(), w.clone().requires_grad_()
    lp, ent = token_logprobs(hg, wg, t, return_entropy=True, tile_elements=50)
    lp.sum().backward()
    for x in (lp, ent, hg.grad, wg.grad):
        assert torch.isfinite(x).all()
    # float32 logits of magnitude ~scale carry an absolute error of ~scale * 1e-7.
    torch.testing.assert_close(lp, ref_lp.float(), rtol=1e-5, atol=scale * 1e-6)
    torch.testing.assert_close(ent, ref_ent.float(), rtol=1e-5, atol=scale * 1e-6)
    torch.testing.assert_close(wg.grad, ref_gw.float(), rtol=1e-4, atol=scale * 1e-5)


def test_bf16_inputs_within_bf16_tolerances():
    h, w, t = _inputs(n=32, hidden=64, vocab=3000)
    upstream = torch.randn(32, generator=torch.Generator().manual_seed(2))
    # Exact for the rounded inputs (math is float32) ...
    hb, wb = h.bfloat16().requires_grad_(), w.bfloat16().requires_grad_()
    lp, ent = token_logprobs(hb, wb, t, return_entropy=True, tile_elements=4096)
    (lp * upstream).sum().backward()
    ref_lp_b, ref_ent_b, (ref_gh_b, ref_gw_b) = _reference(hb, wb, t, upstream=upstream)
    torch.testing.assert_close(lp, ref_lp_b.float(), **F32)
    assert hb.grad.dtype == torch.bfloat16 and wb.grad.dtype == torch.bfloat16
    torch.testing.assert_close(hb.grad.float(), ref_gh_b.float(), rtol=1.6e-2, atol=1e-3)
    torch.testing.assert_close(wb.grad.float(), ref_gw_b.float(), rtol=1.6e-2, atol=1e-3)
    # ... and within bf16 rounding of the float32 truth.
    ref_lp, ref_ent, _ = _reference(h, w, t)
    torch.testing.assert_close(lp, ref_lp.float(), rtol=1.6e-2, atol=1e-1)
    torch.testing.assert_close(ent, ref_ent.float(), rtol=1.6e-2, atol=1e-1)


def test_realistic_vocab_and_no_full_logits_saved_for_backward():
    # Qwen2's vocabulary; a small hidden size keeps the test fast on 2 cores.
    n, vocab, hidden = 48, 151936, 32
    h, w, t = _inputs(n=n, hidden=hidden, vocab=vocab)
    saved_numels = []

    def pack(x):
        saved_numels.append(x.numel())
        return x

    hg, wg = h.clone().requires_grad_(), w.clone().requires_grad_()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
        lp = token_logprobs(hg, wg, t)
    assert max(saved_numels) < n * vocab  # the weight itself is the largest saved tensor
    assert max(saved_numels) == vocab * hidden
    upstream = torch.randn(n, generator=torch.Generator().manual_seed(3))
    (lp * upstream).sum().backward()
    ref_lp, _, (ref_gh, ref_gw) = _reference(h, w, t, upstream=upstream)
    torch.testing.assert_close(lp, ref_lp.float(), **F32)
    torch.testing.assert_close(hg.grad, ref_gh.float(), **F32_GRAD)
    torch.testing.assert_close(wg.grad, ref_gw.float(), **F32_GRAD)


def test_only_requested_gradients_are_computed():
    h, w, t = _inputs()
    wg = w.clone().requires_grad_()
    token_logprobs(h, wg, t).sum().backward()
    assert wg.grad is not None and torch.isfinite(wg.grad).all()
    hg = h.clone().requires_grad_()
    token_logprobs(hg, w, t).sum().backward()
    assert hg.grad is not None


def test_bad_arguments_name_the_argument():
    h, w, t = _inputs()
    with pytest.raises(ValueError, match="targets: token id"):
        token_logprobs(h, w, torch.full_like(t, w.shape[0]))
    with pytest.raises(ValueError, match="temperature"):
        token_logprobs(h, w, t, temperature=0.0)
    with pytest.raises(ValueError, match="chunk_size"):
        token_logprobs(h, w, t, chunk_size=0)
    with pytest.raises(ValueError, match="backend"):
        token_logprobs(h, w, t, backend="cuda")
