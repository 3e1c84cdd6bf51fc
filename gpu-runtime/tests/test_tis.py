"""Truncated importance sampling (algorithm.importanceCorrection {kind: "tis", cap}): each token's
policy-gradient term weighted by min(exp(trainer_logp_old - sampler_logp), cap), checked against a hand
computation, against plain GRPO where it must change nothing, and through the update path."""

import math

import pytest
import torch

from troupe.algorithms.grpo import policy_loss, truncated_importance_weights
from troupe.engines.train.policy import completion_logprobs
from troupe.engines.rollout.sampling import Rollout
from troupe.algorithms.update_loss import LossOptions, liger_arguments, tis_cap_of, update_loss
from troupe.spec.runspec_types import Algorithm

MASK = torch.tensor([[1, 1], [1, 0]])
OLD = torch.tensor([[-1.0, -2.0], [-0.5, -3.0]])  # the trainer's log-probs before the update
SAMPLER = torch.tensor([[-1.2, -1.0], [-2.0, -9.0]])  # the rollout engine's; the masked -9 must not matter
ADV = torch.tensor([1.0, -0.5])


def test_weights_by_hand():
    weights, stats = truncated_importance_weights(OLD, SAMPLER, MASK, cap=2.0)
    # old - sampler: 0.2, -1.0, 1.5 (capped at 2), masked (weight 1)
    expected = torch.tensor([[math.exp(0.2), math.exp(-1.0)], [2.0, 1.0]])
    torch.testing.assert_close(weights, expected)
    assert stats["tis/weight_mean"] == pytest.approx((math.exp(0.2) + math.exp(-1.0) + 2.0) / 3, rel=1e-6)
    assert stats["tis/clipped_frac"] == pytest.approx(1 / 3)


def test_grpo_loss_and_gradient_with_tis_by_hand():
    weights, _ = truncated_importance_weights(OLD, SAMPLER, MASK, cap=2.0)
    logp = OLD.clone().requires_grad_(True)  # first iteration: ratio 1
    loss, stats = policy_loss(logp, OLD, ADV, MASK, loss_type="grpo", is_weights=weights)
    # per token -w * A; grpo = mean over rows of each row's token mean
    row0 = -(math.exp(0.2) + math.exp(-1.0)) / 2 * 1.0
    row1 = -2.0 * -0.5
    assert float(loss.detach()) == pytest.approx((row0 + row1) / 2, rel=1e-6)
    loss.backward()
    # d/dlogp of -w * exp(logp - old) * A at ratio 1 = -w * A, / tokens in the row, / rows
    expected_grad = torch.tensor([[-math.exp(0.2) / 4, -math.exp(-1.0) / 4], [2.0 * 0.5 / 2, 0.0]])
    torch.testing.assert_close(logp.grad, expected_grad)
    assert stats["clip_frac"] == 0.0


def test_tis_weight_multiplies_the_clipped_term_not_the_kl():
    weights, _ = truncated_importance_weights(OLD, SAMPLER, MASK, cap=2.0)
    logp = OLD + torch.tensor([[0.3, 0.0], [0.0, 0.0]])  # row 0 token 0: ratio e^0.3 = 1.35 > 1.2, A > 0: clipped
    ref = OLD.clone()
    loss, stats = policy_loss(logp, OLD, ADV, MASK, loss_type="dapo", ref_logp=ref, kl_beta=0.1, is_weights=weights)
    kl00 = math.exp(-0.3) + 0.3 - 1  # k3 with d = ref - logp = -0.3
    tokens = [
        -math.exp(0.2) * 1.2 * 1.0 + 0.1 * kl00,  # clipped ratio 1.2, weighted; the KL unweighted
        -math.exp(-1.0) * 1.0 * 1.0,
        -2.0 * 1.0 * -0.5,
    ]
    assert float(loss) == pytest.approx(sum(tokens) / 3, rel=1e-6)
    assert stats["clip_frac"] == pytest.approx(1 / 3)


@pytest.mark.parametrize("loss_type", ["grpo", "dapo", "dr_grpo", "gspo"])
def test_infinite_cap_and_agreeing_sampler_is_plain_grpo(loss_type):
    g = torch.Generator().manual_seed(3)
    mask = (torch.rand(4, 6, generator=g) > 0.2).long()
    old = -torch.rand(4, 6, generator=g) * 3
    logp = (old + 0.2 * torch.randn(4, 6, generator=g)).requires_grad_(True)
    adv = torch.randn(4, generator=g)
    weights, stats = truncated_importance_weights(old, old.clone(), mask, cap=math.inf)
    assert torch.equal(weights, torch.ones_like(weights)) and stats == {"tis/weight_mean": 1.0, "tis/clipped_frac": 0.0}
    plain, plain_stats = policy_loss(logp, old, adv, mask, loss_type=loss_type, max_completion_len=6)
    (plain_grad,) = torch.autograd.grad(plain, logp)
    tis, tis_stats = policy_loss(logp, old, adv, mask, loss_type=loss_type, max_completion_len=6, is_weights=weights)
    (tis_grad,) = torch.autograd.grad(tis, logp)
    assert torch.equal(plain, tis) and torch.equal(plain_grad, tis_grad) and plain_stats == tis_stats


def test_the_spec_field_reaches_the_loss_options():
    assert tis_cap_of(Algorithm.from_dict({"name": "grpo"})) is None
    assert tis_cap_of(Algorithm.from_dict({"importanceCorrection": {"kind": "tis", "cap": 3}})) == 3.0
    opts = LossOptions("grpo", 0.2, 0.2, None, 0.0, 1.0, tis_cap=2.0)
    args, why = liger_arguments(opts, has_ref=False)
    assert args is None and "importanceCorrection" in why


@pytest.fixture(scope="module")
def model():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=50, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)
    return LlamaForCausalLM(config).float()


def _rollout(sampler_logprobs=None):
    g = torch.Generator().manual_seed(1)
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0], [1, 1, 1, 1]])
    rollout = Rollout(torch.randint(0, 50, (3, 3), generator=g), torch.ones(3, 3, dtype=torch.long), torch.randint(0, 50, (3, 4), generator=g), mask, torch.zeros(3, 4), [])
    return rollout, mask


def _loss_and_grads(model, rollout, mask, options):
    model.zero_grad(set_to_none=True)
    adv = torch.tensor([1.0, -0.7, 0.4])
    loss, stats, _, _ = update_loss(model, rollout, mask, adv, None, None, options)
    loss.backward()
    return loss.detach(), stats, {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def test_update_loss_with_tis(model):
    rollout, mask = _rollout()
    with torch.no_grad():
        trainer, _ = completion_logprobs(model, rollout, 1.0)
    plain_opts = LossOptions("grpo", 0.2, 0.2, None, 0.0, 1.0)
    # The sampler agrees with the trainer: an infinite cap changes nothing.
    rollout.sampler_logprobs = trainer.clone()
    plain = _loss_and_grads(model, rollout, mask, plain_opts)
    agree = _loss_and_grads(model, rollout, mask, LossOptions("grpo", 0.2, 0.2, None, 0.0, 1.0, tis_cap=math.inf))
    assert torch.equal(plain[0], agree[0]) and all(torch.equal(plain[2][n], agree[2][n]) for n in plain[2])
    assert agree[1]["tis/weight_mean"] == 1.0 and agree[1]["tis/clipped_frac"] == 0.0
    # The sampler thought every token 0.5 nats likelier: weights e^-0.5, the loss and gradient shrink by that.
    rollout.sampler_logprobs = trainer + 0.5
    shifted = _loss_and_grads(model, rollout, mask, LossOptions("grpo", 0.2, 0.2, None, 0.0, 1.0, tis_cap=2.0))
    assert shifted[1]["tis/weight_mean"] == pytest.approx(math.exp(-0.5), rel=1e-5)
    torch.testing.assert_close(shifted[0], plain[0] * math.exp(-0.5))
    for n in plain[2]:
        torch.testing.assert_close(shifted[2][n], plain[2][n] * math.exp(-0.5), rtol=1e-4, atol=1e-7)
    # ...and 1 nat less likely: ratio e^1 = 2.72 truncated at the cap for every token.
    rollout.sampler_logprobs = trainer - 1.0
    capped = _loss_and_grads(model, rollout, mask, LossOptions("grpo", 0.2, 0.2, None, 0.0, 1.0, tis_cap=2.0))
    assert capped[1]["tis/clipped_frac"] == 1.0 and capped[1]["tis/weight_mean"] == pytest.approx(2.0)
    torch.testing.assert_close(capped[0], plain[0] * 2.0)


@pytest.mark.parametrize(("value", "needle"), [(0.5, "less than the minimum of 1"), ("3", "not of type 'number'")])
def test_the_runtime_refuses_a_bad_cap_by_field(value, needle):
    from runtime_helpers import demo_input

    from troupe.spec import SpecError, validate_spec

    doc = demo_input()
    doc["algorithm"]["importanceCorrection"] = {"kind": "tis", "cap": value}
    with pytest.raises(SpecError) as caught:
        validate_spec(doc)
    assert [(i.path, needle in i.message) for i in caught.value.issues] == [("algorithm.importanceCorrection.cap", True)]
    doc["algorithm"]["importanceCorrection"] = {"kind": "tis"}
    assert validate_spec(doc)["algorithm"]["importanceCorrection"] == {"kind": "tis", "cap": 2}
