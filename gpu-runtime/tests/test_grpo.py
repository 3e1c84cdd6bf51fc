import math

import pytest
import torch

from troupe.algorithms.grpo import effective_loss_type, group_advantages, per_token_kl, policy_loss


def test_group_advantages_by_hand():
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    # group 1: mean 0.5, sample std sqrt(1/3); group 2 has no variance -> all zero
    a = 0.5 / (math.sqrt(1 / 3) + 1e-4)
    torch.testing.assert_close(group_advantages(rewards, 4, "group"), torch.tensor([a, -a, -a, a, 0, 0, 0, 0]))
    # batch: centred in the group, scaled by the batch's sample std
    batch_std = math.sqrt((2 * 0.75**2 + 6 * 0.25**2) / 7)
    b = 0.5 / (batch_std + 1e-4)
    torch.testing.assert_close(group_advantages(rewards, 4, "batch"), torch.tensor([b, -b, -b, b, 0, 0, 0, 0]))
    torch.testing.assert_close(group_advantages(rewards, 4, "none"), torch.tensor([0.5, -0.5, -0.5, 0.5, 0, 0, 0, 0]))


def test_group_advantages_rejects_ragged_groups():
    with pytest.raises(ValueError, match="multiple of group_size"):
        group_advantages(torch.zeros(6), 4)


# A batch of 2 sequences x 3 positions; the second sequence has 2 real tokens.
LOGP = [[-1.0, -2.0, -0.5], [-1.5, -0.3, -2.0]]
OLD = [[-1.2, -2.0, -0.1], [-1.5, -0.5, -2.0]]
MASK = [[1, 1, 1], [1, 1, 0]]
ADV = [1.0, -0.5]


def _hand_per_token(eps_low=0.2, eps_high=0.2):
    """-min(r A, clip(r) A) per real token, written out without torch."""
    out = []
    for lp_row, old_row, m_row, a in zip(LOGP, OLD, MASK, ADV):
        row = []
        for lp, old, m in zip(lp_row, old_row, m_row):
            if not m:
                continue
            r = math.exp(lp - old)
            r_clipped = min(max(r, 1 - eps_low), 1 + eps_high)
            row.append(-min(r * a, r_clipped * a))
        out.append(row)
    return out


def _call(loss_type, **kw):
    return policy_loss(
        torch.tensor(LOGP), torch.tensor(OLD), torch.tensor(ADV), torch.tensor(MASK), loss_type=loss_type, **kw
    )


def test_policy_loss_matches_hand_computation():
    per_token = _hand_per_token()
    # Spot-check the hand values themselves: token 1 is clipped at 1.2, token 3 is not (A > 0, r < 0.8).
    assert per_token[0] == pytest.approx([-1.2, -1.0, -math.exp(-0.4)])
    assert per_token[1] == pytest.approx([0.5, 0.5 * math.exp(0.2)])

    grpo, stats = _call("grpo", max_completion_len=4)
    expected_grpo = (sum(per_token[0]) / 3 + sum(per_token[1]) / 2) / 2
    assert float(grpo) == pytest.approx(expected_grpo, rel=1e-6)
    # Only the first token of sequence 1 has its clip active (ratio above 1.2 with A > 0).
    assert stats["clip_frac"] == pytest.approx(1 / 5)

    dapo, _ = _call("dapo")
    assert float(dapo) == pytest.approx((sum(per_token[0]) + sum(per_token[1])) / 5, rel=1e-6)

    dr, _ = _call("dr_grpo", max_completion_len=4)
    assert float(dr) == pytest.approx((sum(per_token[0]) + sum(per_token[1])) / (2 * 4), rel=1e-6)


def test_asymmetric_clip_range():
    per_token = _hand_per_token(eps_low=0.2, eps_high=0.28)
    loss, stats = _call("dapo", clip_eps_low=0.2, clip_eps_high=0.28)
    assert float(loss) == pytest.approx((sum(per_token[0]) + sum(per_token[1])) / 5, rel=1e-6)
    assert stats["clip_frac"] == 0.0  # 1.2214 is inside the widened range


def test_on_policy_gradient_is_advantage_over_length():
    logp = torch.tensor(LOGP, requires_grad=True)
    loss, _ = policy_loss(logp, logp.detach(), torch.tensor(ADV), torch.tensor(MASK), "grpo")
    loss.backward()
    expected = torch.tensor([[-1.0 / 3 / 2] * 3, [0.5 / 2 / 2, 0.5 / 2 / 2, 0.0]])
    torch.testing.assert_close(logp.grad, expected)


def test_kl_term_k3_by_hand():
    assert float(per_token_kl(torch.tensor(-1.0), torch.tensor(-1.5))) == pytest.approx(math.exp(-0.5) + 0.5 - 1)
    assert float(per_token_kl(torch.tensor(-1.0), torch.tensor(-1.0))) == 0.0
    logp = torch.tensor(LOGP)
    ref = logp - 0.5
    with_kl, stats = _call("dapo", ref_logp=ref, kl_beta=0.1)
    without, _ = _call("dapo")
    k3 = math.exp(-0.5) + 0.5 - 1
    assert stats["kl"] == pytest.approx(k3, rel=1e-6)
    assert float(with_kl) - float(without) == pytest.approx(0.1 * k3, rel=1e-5)


def test_dr_grpo_needs_the_length():
    with pytest.raises(ValueError, match="max_completion_len"):
        _call("dr_grpo")


def test_loss_type_follows_algorithm_unless_set():
    assert effective_loss_type("grpo", "grpo") == "grpo"
    assert effective_loss_type("dapo", "grpo") == "dapo"
    assert effective_loss_type("grpo", "dr_grpo") == "dr_grpo"
