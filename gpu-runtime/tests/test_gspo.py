"""GSPO (sequence-level importance ratio) checked against values written out by hand."""

import math

import pytest
import torch

from troupe.algorithms.grpo import effective_loss_type, policy_loss, sequence_ratio

# 2 sequences x 3 positions; the second has 2 real tokens (same batch as test_grpo.py).
LOGP = [[-1.0, -2.0, -0.5], [-1.5, -0.3, -2.0]]
OLD = [[-1.2, -2.0, -0.1], [-1.5, -0.5, -2.0]]
MASK = [[1, 1, 1], [1, 1, 0]]
# Token log-ratios: seq 1 = (0.2, 0, -0.4) -> mean -0.2/3; seq 2 = (0, 0.2) -> mean 0.1 (pad ignored).
S1 = math.exp(-0.2 / 3)
S2 = math.exp(0.1)


def _gspo(adv, **kw):
    return policy_loss(torch.tensor(LOGP), torch.tensor(OLD), torch.tensor(adv), torch.tensor(MASK), loss_type="gspo", **kw)


def test_sequence_ratio_is_exp_of_the_length_normalised_log_ratio():
    r = sequence_ratio(torch.tensor(LOGP), torch.tensor(OLD), torch.tensor(MASK))
    assert r.shape == (2, 1)
    torch.testing.assert_close(r.squeeze(1), torch.tensor([S1, S2]))


def test_gspo_loss_inside_the_clip_range_by_hand():
    loss, stats = _gspo([1.0, -0.5])
    # -min(s A, clip(s) A) per sequence; both ratios sit inside [0.8, 1.2]: loss = -(s1 * 1 + s2 * -0.5) / 2
    assert float(loss) == pytest.approx((-S1 + 0.5 * S2) / 2, rel=1e-6)
    assert stats["clip_frac"] == 0.0


def test_gspo_clips_whole_sequences_with_the_papers_tiny_range():
    # eps 3e-4 / 4e-4 (GSPO paper). Seq 1: s1 = 0.9355 < 1 - 3e-4 with A < 0 -> clipped to 0.9997.
    # Seq 2: s2 = 1.105 > 1 + 4e-4 with A > 0 -> clipped to 1.0004.
    loss, stats = _gspo([-1.0, 0.5], clip_eps_low=3e-4, clip_eps_high=4e-4)
    assert float(loss) == pytest.approx((0.9997 * 1.0 - 1.0004 * 0.5) / 2, rel=1e-6)
    assert stats["clip_frac"] == 1.0  # a share of sequences, not tokens


def test_token_changes_that_cancel_leave_the_sequence_ratio_at_one():
    old = torch.tensor([[-1.0, -1.0, -1.0]])
    logp = torch.tensor([[-0.7, -1.3, -1.0]])  # +0.3 and -0.3: token ratios 1.35 and 0.74, sequence ratio 1
    mask = torch.ones(1, 3)
    gspo, gspo_stats = policy_loss(logp, old, torch.tensor([1.0]), mask, loss_type="gspo")
    grpo, grpo_stats = policy_loss(logp, old, torch.tensor([1.0]), mask, loss_type="grpo")
    assert float(gspo) == pytest.approx(-1.0, rel=1e-6)
    assert gspo_stats["clip_frac"] == 0.0
    # The token-level ratio clips the first token instead: -(1.2 + exp(-0.3) + 1) / 3
    assert float(grpo) == pytest.approx(-(1.2 + math.exp(-0.3) + 1.0) / 3, rel=1e-6)
    assert grpo_stats["clip_frac"] == pytest.approx(1 / 3)


def test_on_policy_gspo_gradient_is_advantage_over_length():
    # At s = 1, d(-s A)/d logp_t = -A / |y|, then / B: the same as GRPO's on-policy gradient.
    logp = torch.tensor(LOGP, requires_grad=True)
    loss, _ = policy_loss(logp, logp.detach(), torch.tensor([1.0, -0.5]), torch.tensor(MASK), "gspo")
    loss.backward()
    expected = torch.tensor([[-1.0 / 3 / 2] * 3, [0.5 / 2 / 2, 0.5 / 2 / 2, 0.0]])
    torch.testing.assert_close(logp.grad, expected)


def test_gspo_kl_stays_per_token():
    logp = torch.tensor(LOGP)
    with_kl, stats = _gspo([1.0, -0.5], ref_logp=logp - 0.5, kl_beta=0.1)
    without, _ = _gspo([1.0, -0.5])
    k3 = math.exp(-0.5) + 0.5 - 1
    assert stats["kl"] == pytest.approx(k3, rel=1e-6)
    assert float(with_kl) - float(without) == pytest.approx(0.1 * k3, rel=1e-5)


def test_an_empty_sequence_contributes_nothing():
    mask = torch.tensor([[1, 1, 1], [0, 0, 0]])
    loss, stats = policy_loss(torch.tensor(LOGP), torch.tensor(OLD), torch.tensor([1.0, 5.0]), mask, loss_type="gspo")
    assert float(loss) == pytest.approx(-S1 / 2, rel=1e-6)
    assert stats["clip_frac"] == 0.0


def test_algorithm_gspo_selects_the_gspo_loss():
    assert effective_loss_type("gspo", "grpo") == "gspo"
