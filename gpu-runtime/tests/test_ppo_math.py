"""The PPO family's math against hand-computed references on fixed tensors.

Formulas: GAE from Schulman et al. 2016 (arXiv:1506.02438) eq. 16, A_t = sum_l (gamma*lambda)^l delta_{t+l},
delta_t = r_t + gamma V_{t+1} - V_t, returns R_t = A_t + V_t; the clipped value loss from OpenAI baselines'
ppo2 (0.5 * mean(max((V - R)^2, (V_old + clip(V - V_old, -c, c) - R)^2))); the clipped policy loss from
Schulman et al. 2017 (arXiv:1707.06347) eq. 7, token-averaged. TRL 1.13 has no PPO trainer to compare with.
"""

import math

import pytest
import torch

from troupe.algorithms.grpo import policy_loss
from troupe.algorithms.learners.ppo_math import explained_variance, gae, terminal_rewards, turn_gae, value_loss, whiten


def test_terminal_rewards_sit_on_each_rows_last_trained_token():
    mask = torch.tensor([[1, 1, 1, 0], [0, 1, 0, 1], [0, 0, 0, 0]])
    out = terminal_rewards(torch.tensor([2.0, -1.0, 5.0]), mask)
    assert out.tolist() == [[0, 0, 2, 0], [0, 0, 0, -1], [0, 0, 0, 0]]


def test_gae_equals_the_hand_computation():
    # One row, three tokens, reward 1 at the end; gamma 0.9, lambda 0.8.
    values = torch.tensor([[0.5, 0.2, -0.1]])
    mask = torch.ones(1, 3)
    rewards = terminal_rewards(torch.tensor([1.0]), mask)
    g, lam = 0.9, 0.8
    d2 = 1.0 - (-0.1)  # last token: next value 0 (terminal)
    d1 = 0 + g * (-0.1) - 0.2
    d0 = 0 + g * 0.2 - 0.5
    a2 = d2
    a1 = d1 + g * lam * a2
    a0 = d0 + g * lam * a1
    adv, ret = gae(rewards, values, mask, g, lam)
    assert adv[0].tolist() == pytest.approx([a0, a1, a2], abs=1e-6)
    assert ret[0].tolist() == pytest.approx([a0 + 0.5, a1 + 0.2, a2 - 0.1], abs=1e-6)


def test_gae_with_lambda_1_and_gamma_1_is_reward_minus_value():
    values = torch.tensor([[0.3, 0.1, 0.7, 9.0]])
    mask = torch.tensor([[1, 1, 1, 0]])
    adv, ret = gae(terminal_rewards(torch.tensor([2.0]), mask), values, mask, 1.0, 1.0)
    assert adv[0].tolist() == pytest.approx([1.7, 1.9, 1.3, 0.0])
    assert ret[0, :3].tolist() == pytest.approx([2.0, 2.0, 2.0])
    assert ret[0, 3] == 0  # off the mask: not a time step


def test_gae_skips_tokens_off_the_mask():
    """An actor's two turns with another speaker's tokens between: the trajectory is its own tokens only."""
    values = torch.tensor([[0.1, 5.0, 0.4, 0.2]])
    mask = torch.tensor([[1, 0, 1, 1]])
    contiguous_v = torch.tensor([[0.1, 0.4, 0.2]])
    adv, _ = gae(terminal_rewards(torch.tensor([1.0]), mask), values, mask, 0.95, 0.9)
    ref, _ = gae(terminal_rewards(torch.tensor([1.0]), torch.ones(1, 3)), contiguous_v, torch.ones(1, 3), 0.95, 0.9)
    assert adv[0, [0, 2, 3]].tolist() == pytest.approx(ref[0].tolist())
    assert adv[0, 1] == 0


def test_turn_gae_matches_token_gae_on_one_token_turns():
    values = [0.2, -0.3, 0.6]
    turn_adv, turn_ret = turn_gae([0.0, 0.0, 1.5], values, 0.9, 0.7)
    adv, ret = gae(terminal_rewards(torch.tensor([1.5]), torch.ones(1, 3)), torch.tensor([values]), torch.ones(1, 3), 0.9, 0.7)
    assert turn_adv == pytest.approx(adv[0].tolist())
    assert turn_ret == pytest.approx(ret[0].tolist())


def test_value_loss_clips_like_ppo2():
    values = torch.tensor([[1.0, 0.0, 2.0]], requires_grad=True)
    old = torch.tensor([[0.5, 0.0, 0.0]])
    returns = torch.tensor([[0.0, 1.0, 3.0]])
    mask = torch.tensor([[1, 1, 1]])
    loss, stats = value_loss(values, old, returns, mask, clip=0.2)
    # token 0: unclipped (1-0)^2 = 1, clipped (0.5+0.2-0)^2 = 0.49 -> 1
    # token 1: (0-1)^2 = 1 both -> 1
    # token 2: unclipped (2-3)^2 = 1, clipped (0+0.2-3)^2 = 7.84 -> 7.84 (clipped larger)
    assert float(loss.detach()) == pytest.approx(0.5 * (1 + 1 + 7.84) / 3)
    assert stats["value/clip_frac"] == pytest.approx(1 / 3)
    loss.backward()
    # d/dV of 0.5*mean: token 0 (V - R)/3; token 1 (V - R)/3; token 2 clipped term has no gradient w.r.t. V.
    assert values.grad[0].tolist() == pytest.approx([1 / 3, -1 / 3, 0.0])
    unclipped, _ = value_loss(values, old, returns, mask, clip=None)
    assert float(unclipped) == pytest.approx(0.5)


def test_explained_variance():
    returns = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    mask = torch.ones(1, 4)
    assert explained_variance(returns, returns, mask) == pytest.approx(1.0)
    assert explained_variance(torch.zeros(1, 4), returns, mask) == pytest.approx(0.0)
    assert explained_variance(torch.full((1, 4), 2.5), returns, mask) == pytest.approx(0.0)
    assert math.isnan(explained_variance(returns, torch.ones(1, 4), mask))


def test_whiten_uses_only_the_masked_entries():
    x = torch.tensor([[1.0, 3.0, 100.0]])
    mask = torch.tensor([[1, 1, 0]])
    out = whiten(x, mask)
    assert out[0].tolist() == pytest.approx([-1.0, 1.0, 0.0], abs=1e-4)


def test_policy_loss_takes_per_token_advantages():
    """PPO's clipped objective, token-averaged (loss type dapo), with one advantage per token."""
    logp = torch.log(torch.tensor([[0.5, 0.25], [0.2, 0.9]]))
    old = torch.log(torch.tensor([[0.25, 0.25], [0.2, 0.5]]))
    adv = torch.tensor([[1.0, -2.0], [0.5, 3.0]])
    mask = torch.tensor([[1, 1], [1, 0]])
    loss, stats = policy_loss(logp, old, adv, mask, loss_type="dapo", clip_eps_low=0.2, clip_eps_high=0.2)
    # ratios: 2 (clipped to 1.2, A>0 -> min(2, 1.2) = 1.2), 1, 1 ; token 3 masked
    expected = -(1.2 * 1.0 + 1.0 * -2.0 + 1.0 * 0.5) / 3
    assert float(loss) == pytest.approx(expected)
    assert stats["clip_frac"] == pytest.approx(1 / 3)
    # A per-sequence advantage broadcast to tokens gives the same as the 1-D form.
    seq = torch.tensor([1.0, 0.5])
    one, _ = policy_loss(logp, old, seq, mask, loss_type="dapo")
    two, _ = policy_loss(logp, old, seq.unsqueeze(1).expand(2, 2), mask, loss_type="dapo")
    assert float(one) == pytest.approx(float(two))


# ---------------------------------------------------------------------------- the entropy bonus
def test_the_entropy_bonus_subtracts_the_aggregated_entropy():
    """loss(c) = loss(0) - c * entropy aggregated like the loss (dapo: token mean; grpo: mean of row means)."""
    logp = torch.log(torch.tensor([[0.5, 0.25], [0.2, 0.9]]))
    old = logp.clone()
    adv = torch.tensor([[1.0, -2.0], [0.5, 3.0]])
    mask = torch.tensor([[1, 1], [1, 0]])
    entropy = torch.tensor([[1.5, 0.5], [2.0, 7.0]])  # 7.0 sits off the mask
    for loss_type, mean_entropy in (("dapo", (1.5 + 0.5 + 2.0) / 3), ("grpo", ((1.5 + 0.5) / 2 + 2.0) / 2)):
        plain, _ = policy_loss(logp, old, adv, mask, loss_type=loss_type)
        bonus, _ = policy_loss(logp, old, adv, mask, loss_type=loss_type, entropy=entropy, entropy_coef=0.1)
        assert float(bonus) == pytest.approx(float(plain) - 0.1 * mean_entropy)
        unchanged, _ = policy_loss(logp, old, adv, mask, loss_type=loss_type, entropy=entropy, entropy_coef=0.0)
        assert float(unchanged) == float(plain)


def test_the_entropy_bonus_gradient_raises_the_entropy():
    """Through update_loss (the kernel path), the bonus' gradient equals the autograd gradient of the plain
    definition -c * mean(H) over full logits, and one step along it raises the policy's entropy."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from troupe.engines.train.policy import completion_logprobs
    from troupe.engines.rollout.sampling import Rollout
    from troupe.algorithms.update_loss import LossOptions, update_loss

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=50, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)).float()
    g = torch.Generator().manual_seed(3)
    b, p, t = 3, 4, 5
    mask = torch.ones(b, t, dtype=torch.long)
    rollout = Rollout(torch.randint(0, 50, (b, p), generator=g), torch.ones(b, p, dtype=torch.long), torch.randint(0, 50, (b, t), generator=g), mask, torch.zeros(b, t), [])
    zero_adv = torch.zeros(b)  # only the bonus moves the weights
    coef = 0.5
    options = LossOptions("dapo", 0.2, 0.2, None, 0.0, 1.0, entropy_coef=coef)
    loss, _, _, _ = update_loss(model, rollout, mask, zero_adv, None, None, options)
    loss.backward()
    ours = {n: q.grad.clone() for n, q in model.named_parameters() if q.grad is not None}
    model.zero_grad()
    ids = torch.cat([rollout.prompt_ids, rollout.completion_ids], dim=1)
    logp_all = torch.log_softmax(model(input_ids=ids).logits[:, p - 1 : p + t - 1].float(), dim=-1)
    reference = coef * (logp_all.exp() * logp_all).sum(-1).mean()  # -c * mean entropy
    reference.backward()
    for n, q in model.named_parameters():
        if q.grad is not None:
            torch.testing.assert_close(ours[n], q.grad, rtol=1e-4, atol=1e-6)
    with torch.no_grad():
        before = float(completion_logprobs(model, rollout, 1.0, with_entropy=True)[1].mean())
        for n, q in model.named_parameters():
            q -= 0.5 * ours[n]
        after = float(completion_logprobs(model, rollout, 1.0, with_entropy=True)[1].mean())
    assert after > before, (before, after)


def test_entropy_coef_is_off_unless_asked():
    from troupe.algorithms.update_loss import entropy_coef_of, liger_arguments, LossOptions
    from troupe.spec.runspec_types import Algorithm

    assert entropy_coef_of(Algorithm.from_dict({"name": "grpo"})) == 0.0  # as TRL, verl and OpenRLHF default
    assert entropy_coef_of(Algorithm.from_dict({"name": "mappo"})) == 0.0
    assert entropy_coef_of(Algorithm.from_dict({"name": "mappo", "entropyCoef": 0.05})) == 0.05
    assert entropy_coef_of(Algorithm.from_dict({"name": "dapo", "entropyCoef": 0.02})) == 0.02
    kwargs, why = liger_arguments(LossOptions("grpo", 0.2, 0.2, None, 0.0, 1.0, entropy_coef=0.01), has_ref=False)
    assert kwargs is None and "entropyCoef" in (why or "")


# ---------------------------------------------------------------------------- value normalisation
def test_value_norm_is_the_debiased_running_mean_and_std_of_the_returns():
    from troupe.algorithms.learners.value_norm import BETA, ValueNorm

    norm = ValueNorm()
    assert norm.normalize(torch.tensor([3.0])).item() == 3.0  # nothing seen yet: identity
    a, b = torch.tensor([[1.0, 3.0, 99.0]]), torch.tensor([[5.0, 9.0, 99.0]])
    mask = torch.tensor([[1, 1, 0]])
    norm.update(a, mask)
    # One batch: debiasing makes the statistics exactly the batch's (mean 2, E[x^2] 5, var 1).
    assert norm.mean == pytest.approx(2.0) and norm.std == pytest.approx(1.0)
    norm.update(b, mask)
    # Two batches: weights BETA and 1 (before debiasing), so nearly the plain mean of both batches.
    w = torch.tensor([BETA, 1.0])
    mean = float((w * torch.tensor([2.0, 7.0])).sum() / w.sum())
    sq = float((w * torch.tensor([5.0, 53.0])).sum() / w.sum())
    assert norm.mean == pytest.approx(mean) and norm.std == pytest.approx(math.sqrt(sq - mean**2))
    x = torch.tensor([0.3, -2.0, 8.0])
    torch.testing.assert_close(norm.denormalize(norm.normalize(x)), x)
    torch.testing.assert_close(norm.normalize(torch.tensor([mean])), torch.tensor([0.0]))
    copy = ValueNorm()
    copy.load_state_dict(norm.state_dict())
    assert copy == norm


def test_value_norm_floors_the_variance_of_equal_returns():
    from troupe.algorithms.learners.value_norm import MIN_VAR, ValueNorm

    norm = ValueNorm()
    norm.update(torch.full((2, 3), 2.0), torch.ones(2, 3))
    assert norm.mean == pytest.approx(2.0) and norm.std == pytest.approx(math.sqrt(MIN_VAR))
