"""The policy-update loss path: never full logits, and Liger's fused GRPO loss dispatched with the
right arguments.

liger-kernel needs CUDA and cannot be installed here, so the dispatch and argument mapping are
tested against a STAND-IN for `LigerFusedLinearGRPOLoss` (a mock at the GPU-library edge, named so
in each test): a CPU re-statement of Liger's documented math (liger_kernel/chunked_loss/
grpo_loss.py: per-token log-probs of `_input @ weight.T / temperature`, token ratio against
`old_per_token_logps`, clip, k3 KL against `ref_per_token_logps` when `use_ref_model`, grpo/dapo/
dr_grpo aggregation, metrics [kl if beta != 0, clip fraction]). The real library's numerics are
compared in `test_liger_matches_the_torch_path_on_cuda`, which skips here and says why.
"""

import pytest
import torch

from troupe.algorithms.grpo import policy_loss
from troupe.engines.train.policy import completion_logprobs
from troupe.engines.rollout.sampling import Rollout
from troupe.algorithms.update_loss import LossOptions, liger_arguments, resolve_liger, update_loss

B, P, T, VOCAB = 6, 4, 7, 300


@pytest.fixture(scope="module")
def model():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=2, tie_word_embeddings=False,
    )
    return LlamaForCausalLM(config).float()


def _batch():
    g = torch.Generator().manual_seed(1)
    lengths = torch.tensor([7, 3, 5, 7, 1, 6])
    completion_mask = (torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)).long()
    prompt_mask = torch.ones(B, P, dtype=torch.long)
    prompt_mask[1, 0] = 0  # one left-padded prompt
    rollout = Rollout(
        torch.randint(0, VOCAB, (B, P), generator=g), prompt_mask, torch.randint(0, VOCAB, (B, T), generator=g),
        completion_mask, torch.zeros(B, T), [],
    )
    advantages = torch.tensor([1.2, -0.4, -0.8, 0.5, 0.9, -1.1])
    offsets = 0.3 * torch.randn(2, B, T, generator=g)
    return rollout, completion_mask, advantages, offsets


class StandInLigerGRPOLoss(torch.nn.Module):
    """Stand-in for liger_kernel.chunked_loss.LigerFusedLinearGRPOLoss (mock at the GPU-library edge)."""

    instances: list["StandInLigerGRPOLoss"] = []

    def __init__(self, beta=0.04, compiled=True, use_ref_model=True, chunk_size=1, epsilon_low=0.2, epsilon_high=0.2,
                 loss_type="dapo", max_completion_length=None, importance_sampling_level="token", temperature=1.0, **rest):
        super().__init__()
        assert not rest, f"argument Liger does not take: {rest}"
        self.kw = dict(beta=beta, use_ref_model=use_ref_model, epsilon_low=epsilon_low, epsilon_high=epsilon_high,
                       loss_type=loss_type, max_completion_length=max_completion_length,
                       importance_sampling_level=importance_sampling_level, temperature=temperature)
        self.calls: list[dict] = []
        StandInLigerGRPOLoss.instances.append(self)

    def forward(self, _input, lin_weight, selected_token_ids, attention_mask, advantages, bias=None,
                ref_per_token_logps=None, old_per_token_logps=None, ref_input=None, ref_weight=None, ref_bias=None):
        k = self.kw
        self.calls.append(dict(input_shape=tuple(_input.shape), weight=lin_weight, old=old_per_token_logps, ref=ref_per_token_logps))
        assert _input.dim() == 3 and selected_token_ids.shape == attention_mask.shape == _input.shape[:2]
        logits = _input.float() @ lin_weight.float().T / k["temperature"]  # tiny vocab: the plain definition
        logp = torch.log_softmax(logits, -1).gather(-1, selected_token_ids.unsqueeze(-1)).squeeze(-1)
        old = old_per_token_logps if old_per_token_logps is not None else logp.detach()
        ref = ref_per_token_logps if k["use_ref_model"] else logp.detach()
        coef_1 = torch.exp(logp - old)
        coef_2 = torch.clamp(coef_1, 1 - k["epsilon_low"], 1 + k["epsilon_high"])
        a = advantages.unsqueeze(1)
        per_token = -torch.min(coef_1 * a, coef_2 * a)
        if k["beta"] != 0.0:
            kl = torch.exp(ref - logp) - (ref - logp) - 1.0
            per_token = per_token + k["beta"] * kl
        m = attention_mask
        if k["loss_type"] == "grpo":
            loss = ((per_token * m).sum(-1) / m.sum(-1).clamp(min=1.0)).sum() / m.shape[0]
        elif k["loss_type"] == "dapo":
            loss = (per_token * m).sum() / m.sum().clamp(min=1.0)
        elif k["loss_type"] == "dr_grpo":
            loss = (per_token * m).sum() / (m.shape[0] * k["max_completion_length"])
        else:
            raise ValueError(k["loss_type"])
        metrics = []
        if k["beta"] != 0.0:
            metrics.append((kl * m).sum() / m.sum().clamp(min=1.0))
        clipped = ((coef_1 < 1 - k["epsilon_low"]) & (a < 0)) | ((coef_1 > 1 + k["epsilon_high"]) & (a > 0))
        metrics.append((clipped * m).sum() / m.sum().clamp(min=1.0))
        return loss, tuple(metrics)


def _options(loss_type, beta):
    return LossOptions(loss_type=loss_type, clip_eps_low=0.2, clip_eps_high=0.28, max_completion_len=T, kl_beta=beta, temperature=0.9)


def _grads(model):
    return {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("loss_type", ["grpo", "dapo", "dr_grpo"])
@pytest.mark.parametrize("beta", [0.0, 0.05])
def test_liger_dispatch_with_a_stand_in_for_liger_kernel_matches_the_torch_path(model, loss_type, beta):
    rollout, mask, advantages, offsets = _batch()
    opts = _options(loss_type, beta)
    with torch.no_grad():
        current, _ = completion_logprobs(model, rollout, opts.temperature)
    old, ref = (current + offsets[0]) * mask, (current + offsets[1]) * mask
    model.zero_grad(set_to_none=True)
    loss_t, stats_t, _, _ = update_loss(model, rollout, mask, advantages, old, ref, opts)
    loss_t.backward()
    grads_t = _grads(model)
    model.zero_grad(set_to_none=True)
    StandInLigerGRPOLoss.instances.clear()
    loss_l, stats_l, logp_l, _ = update_loss(model, rollout, mask, advantages, old, ref, opts, liger_cls=StandInLigerGRPOLoss)
    loss_l.backward()
    grads_l = _grads(model)
    (inst,) = StandInLigerGRPOLoss.instances
    # The mapping: what Liger was built with and handed.
    assert inst.kw == dict(beta=beta, use_ref_model=beta > 0, epsilon_low=0.2, epsilon_high=0.28, loss_type=loss_type,
                           max_completion_length=T, importance_sampling_level="token", temperature=0.9)
    (call,) = inst.calls
    assert call["input_shape"] == (B, T, 32) and call["weight"] is model.lm_head.weight
    assert call["old"] is old and (call["ref"] is ref if beta > 0 else call["ref"] is None)
    assert logp_l is None  # not the first iteration: Liger computed the log-probs internally
    # ... and it is the same loss: value, stats and every parameter's gradient.
    torch.testing.assert_close(loss_l, loss_t, rtol=1e-5, atol=1e-6)
    assert stats_l.keys() == stats_t.keys()
    for key in stats_t:
        assert stats_l[key] == pytest.approx(stats_t[key], rel=1e-5, abs=1e-6), key
    assert stats_t["clip_frac"] > 0  # the offsets make the clip active, so the comparison means something
    assert grads_l.keys() == grads_t.keys()
    for name in grads_t:
        torch.testing.assert_close(grads_l[name], grads_t[name], rtol=1e-4, atol=1e-6, msg=name)


def test_first_iteration_on_the_liger_path_with_a_stand_in_returns_old_logprobs_and_entropy(model):
    rollout, mask, advantages, _ = _batch()
    opts = _options("grpo", 0.0)
    StandInLigerGRPOLoss.instances.clear()
    loss, stats, logp, entropy = update_loss(model, rollout, mask, advantages, None, None, opts, with_entropy=True,
                                            liger_cls=StandInLigerGRPOLoss)
    with torch.no_grad():
        ref_logp, ref_entropy = completion_logprobs(model, rollout, opts.temperature, with_entropy=True)
    torch.testing.assert_close(logp, ref_logp)
    torch.testing.assert_close(entropy, ref_entropy)
    assert StandInLigerGRPOLoss.instances[0].calls[0]["old"] is logp  # ratio 1 on the first iteration
    assert stats["clip_frac"] == 0.0
    loss.backward()


def test_loss_types_without_an_exact_liger_equivalent_take_the_torch_path():
    assert liger_arguments(_options("gspo", 0.0), has_ref=False)[0] is None
    assert "gspo" in (liger_arguments(_options("gspo", 0.0), has_ref=False)[1] or "")
    assert liger_arguments(LossOptions("dr_grpo", 0.2, 0.2, None, 0.0, 1.0), has_ref=False)[0] is None
    # No reference log-probs: no KL term even with beta > 0 (as policy_loss).
    kwargs, _ = liger_arguments(_options("grpo", 0.1), has_ref=False)
    assert kwargs is not None and kwargs["beta"] == 0.0 and kwargs["use_ref_model"] is False
    assert resolve_liger(torch.device("cpu")) is None


def test_gspo_with_a_stand_in_for_liger_kernel_never_calls_liger(model):
    rollout, mask, advantages, offsets = _batch()
    StandInLigerGRPOLoss.instances.clear()
    loss, stats, logp, _ = update_loss(model, rollout, mask, advantages, None, None, _options("gspo", 0.0),
                                       liger_cls=StandInLigerGRPOLoss)
    assert not StandInLigerGRPOLoss.instances and logp is not None and torch.isfinite(loss)


def test_policy_update_and_reference_logprobs_never_call_the_lm_head(model):
    # The LM head module is what would produce [B, T, vocab] logits; the kernel only reads its weight.
    rollout, mask, advantages, offsets = _batch()
    calls = []
    hook = model.lm_head.register_forward_hook(lambda mod, inp, out: calls.append(tuple(out.shape)))
    try:
        with torch.no_grad():  # the reference / old log-probs
            completion_logprobs(model, rollout, 1.0, with_entropy=True)
        for liger_cls in (None, StandInLigerGRPOLoss):
            loss, _, _, _ = update_loss(model, rollout, mask, advantages, None, None, _options("grpo", 0.0),
                                        with_entropy=True, liger_cls=liger_cls)
            loss.backward()
    finally:
        hook.remove()
    assert calls == []
    # The logits path exists (for heads that are not a plain matmul) and the hook does catch it.
    hook = model.lm_head.register_forward_hook(lambda mod, inp, out: calls.append(tuple(out.shape)))
    try:
        model(input_ids=rollout.prompt_ids)
    finally:
        hook.remove()
    assert calls == [(B, P, VOCAB)]


def test_liger_matches_the_torch_path_on_cuda():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: Liger's fused GRPO loss runs on CUDA only")
    liger_cls = resolve_liger(torch.device("cuda"))
    if liger_cls is None:
        from troupe_kernels.liger import liger_unavailable_reason

        pytest.skip(liger_unavailable_reason() or "liger-kernel is not installed")
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=32000, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=4, tie_word_embeddings=False)
    cuda_model = LlamaForCausalLM(config).cuda().float()
    rollout, mask, advantages, offsets = _batch()
    rollout = Rollout(*(x.cuda() for x in (rollout.prompt_ids, rollout.prompt_mask, rollout.completion_ids,
                                            rollout.completion_mask, rollout.sampler_logprobs)), [])
    mask, advantages, offsets = mask.cuda(), advantages.cuda(), offsets.cuda()
    for loss_type in ("grpo", "dapo", "dr_grpo"):
        opts = _options(loss_type, 0.05)
        with torch.no_grad():
            current, _ = completion_logprobs(cuda_model, rollout, opts.temperature)
        old, ref = (current + offsets[0]) * mask, (current + offsets[1]) * mask
        cuda_model.zero_grad(set_to_none=True)
        loss_t, stats_t, _, _ = update_loss(cuda_model, rollout, mask, advantages, old, ref, opts)
        loss_t.backward()
        grads_t = _grads(cuda_model)
        cuda_model.zero_grad(set_to_none=True)
        loss_l, stats_l, _, _ = update_loss(cuda_model, rollout, mask, advantages, old, ref, opts, liger_cls=liger_cls)
        loss_l.backward()
        torch.testing.assert_close(loss_l, loss_t, rtol=1e-4, atol=1e-5)
        for name, grad in _grads(cuda_model).items():
            torch.testing.assert_close(grad, grads_t[name], rtol=1e-3, atol=1e-5, msg=name)
        assert stats_l["clip_frac"] == pytest.approx(stats_t["clip_frac"], abs=1e-6)
