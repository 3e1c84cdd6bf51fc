import pytest
import torch

from troupe_kernels import reference_token_logprobs, token_logprobs


def _inputs(shape=(3, 5), hidden=16, vocab=37, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    h = torch.randn(*shape, hidden, generator=g, dtype=dtype)
    w = torch.randn(vocab, hidden, generator=g, dtype=dtype)
    t = torch.randint(0, vocab, shape, generator=g)
    return h, w, t


@pytest.mark.parametrize("chunk_size", [1, 4, 7, 15, None])
@pytest.mark.parametrize("temperature", [1.0, 0.7, 1.3])
def test_matches_log_softmax_gather(chunk_size, temperature):
    h, w, t = _inputs()
    expected = torch.log_softmax(h @ w.T / temperature, -1).gather(-1, t.unsqueeze(-1)).squeeze(-1)
    got = token_logprobs(h, w, t, temperature=temperature, chunk_size=chunk_size)
    assert got.shape == t.shape
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, expected.float(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(reference_token_logprobs(h, w, t, temperature), expected.float())


@pytest.mark.parametrize("chunk_size", [1, 6, None])
def test_gradients_match_autograd_through_the_reference(chunk_size):
    h, w, t = _inputs(shape=(2, 6), hidden=8, vocab=11)
    upstream = torch.randn(2, 6, dtype=torch.float64)

    h_ref, w_ref = h.clone().requires_grad_(), w.clone().requires_grad_()
    ref = torch.log_softmax(h_ref @ w_ref.T / 0.8, -1).gather(-1, t.unsqueeze(-1)).squeeze(-1)
    (ref * upstream).sum().backward()

    h_got, w_got = h.clone().requires_grad_(), w.clone().requires_grad_()
    got = token_logprobs(h_got, w_got, t, temperature=0.8, chunk_size=chunk_size)
    (got * upstream.float()).sum().backward()

    torch.testing.assert_close(h_got.grad, h_ref.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(w_got.grad, w_ref.grad, rtol=1e-4, atol=1e-5)


def test_entropy_matches_definition_and_has_its_gradient():
    h, w, t = _inputs(dtype=torch.float64)
    hg, wg = h.float().requires_grad_(), w.float().requires_grad_()
    lp, ent = token_logprobs(hg, wg, t, chunk_size=4, return_entropy=True, temperature=0.9)
    h64, w64 = h.clone().requires_grad_(), w.clone().requires_grad_()
    logp_all = torch.log_softmax(h64 @ w64.T / 0.9, -1)
    expected = -(logp_all.exp() * logp_all).sum(-1)
    torch.testing.assert_close(ent, expected.float(), rtol=1e-5, atol=1e-5)
    assert lp.requires_grad and ent.requires_grad
    # An entropy bonus alone (no log-prob term): d(sum H)/dh and /dW.
    ent.sum().backward()
    expected.sum().backward()
    torch.testing.assert_close(hg.grad, h64.grad.float(), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(wg.grad, w64.grad.float(), rtol=1e-4, atol=1e-5)


def test_low_precision_inputs_are_computed_in_float32():
    h, w, t = _inputs(dtype=torch.float32)
    got = token_logprobs(h.bfloat16(), w.bfloat16(), t)
    expected = reference_token_logprobs(h.bfloat16(), w.bfloat16(), t)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


def test_shape_errors_are_explained():
    h, w, t = _inputs()
    with pytest.raises(ValueError, match="disagree"):
        token_logprobs(h, w, t[:, :2])
    with pytest.raises(ValueError, match="weight must be"):
        token_logprobs(h, w.T, t)
