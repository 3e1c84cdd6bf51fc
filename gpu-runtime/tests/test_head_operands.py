"""The fused LM head multiplies what the model's own `nn.Linear` head would under autocast (policy.head_operands).

On the H200 (2026-11-28) the final norm handed the fused head float32 operands under bf16 autocast, so the
head ran float32 GEMMs: 57 % of an update step's CUDA time. On CUDA autocast the operands are now cast to the
autocast dtype; on CPU they are left alone (the tiled path multiplies in float32 whatever it gets)."""

from __future__ import annotations

import pytest
import torch

from troupe.engines.train.policy import head_operands


def test_on_cpu_the_operands_are_handed_on_untouched_even_under_autocast():
    hidden, weight = torch.randn(3, 8), torch.randn(16, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h, w = head_operands(hidden, weight)
    assert h is hidden and w is weight


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: torch.cuda.is_available() is false")
def test_under_cuda_autocast_the_head_multiplies_in_bf16_and_grads_reach_the_float32_weight():
    from troupe_kernels import token_logprobs

    g = torch.Generator(device="cuda").manual_seed(0)
    hidden = torch.randn(512, 64, device="cuda", generator=g, requires_grad=True)
    weight = (torch.randn(1000, 64, device="cuda", generator=g) / 8).requires_grad_()
    targets = torch.randint(0, 1000, (512,), device="cuda", generator=g)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        h, w = head_operands(hidden, weight)
        assert h.dtype == w.dtype == torch.bfloat16
        fused = token_logprobs(h, w, targets)
        reference = torch.log_softmax(torch.nn.functional.linear(hidden, weight).float(), -1).gather(-1, targets[:, None])[:, 0]
    torch.testing.assert_close(fused, reference, atol=2e-2, rtol=2e-2)  # both bf16 products, float32 softmax
    fused.sum().backward()
    assert weight.grad is not None and weight.grad.dtype == torch.float32 and torch.isfinite(weight.grad).all()
