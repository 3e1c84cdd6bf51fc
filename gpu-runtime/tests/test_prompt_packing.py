"""Shared-prompt packing (prompt_packing.py): the packed forward gives each row the log-probs, entropies and
gradients it gets alone, and is used only where that holds."""

from __future__ import annotations

import copy

import pytest
import torch

import troupe.engines.train.policy as policy
from troupe.models.loading import build_tiny
from troupe.engines.train.prompt_packing import packing_supported, plan_packing
from troupe.engines.rollout.sampling import Rollout, left_pad
from troupe.host.system import seed_everything


def _rollout(prompts: list[list[int]], group: int, t: int, eos: int, vocab: int, seed: int = 0) -> Rollout:
    """Each prompt repeated `group` times (left-padded to the longest), random completions of up to t tokens: some end
    with EOS early (the rest of the row is padding, mask 0), some run to t."""
    g = torch.Generator().manual_seed(seed)
    rows = [p for p in prompts for _ in range(group)]
    prompt_ids, prompt_mask = left_pad(rows, pad_id=0)
    completion_ids = torch.randint(4, vocab, (len(rows), t), generator=g)
    completion_mask = torch.ones(len(rows), t, dtype=torch.long)
    for r in range(len(rows)):
        end = int(torch.randint(1, t + 3, (1,), generator=g))  # > t: no EOS in this row
        if end <= t:
            completion_ids[r, end - 1] = eos
            completion_ids[r, end:] = 0
            completion_mask[r, end:] = 0
    sampler = torch.zeros(len(rows), t)
    return Rollout(prompt_ids, prompt_mask, completion_ids, completion_mask, sampler, [""] * len(rows))


def _unpacked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "packing_supported", lambda model: False)


@pytest.fixture
def model():
    seed_everything(3)
    loaded = build_tiny("tiny-char-2l")
    return loaded.model, loaded.tokenizer


def _demo_like(tokenizer) -> Rollout:
    prompts = [tokenizer.encode(text) for text in ["say d:", "say a:", "now say the letter q:", "b", "say d:x"]]
    return _rollout(prompts, group=4, t=8, eos=tokenizer.eos_token_id, vocab=tokenizer.vocab_size)


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_packed_log_probs_entropy_and_gradients_equal_the_unpacked_ones(model, attention, monkeypatch):
    model, tokenizer = model
    model.config._attn_implementation = attention
    rollout = _demo_like(tokenizer)
    assert plan_packing(rollout.prompt_ids, rollout.prompt_mask, rollout.completion_ids, rollout.completion_mask) is not None
    twin = copy.deepcopy(model)

    def run(m):
        logp, entropy = policy.completion_logprobs(m, rollout, 0.7, with_entropy=True, entropy_grad=True)
        mask = rollout.completion_mask.float()
        ((logp * mask).sum() + 0.1 * (entropy * mask).sum()).backward()
        return logp, entropy, {n: p.grad.clone() for n, p in m.named_parameters()}

    packed = run(model)
    _unpacked(monkeypatch)
    plain = run(twin)
    mask = rollout.completion_mask.bool()
    torch.testing.assert_close(packed[0][mask], plain[0][mask], rtol=0, atol=1e-5)
    torch.testing.assert_close(packed[1][mask], plain[1][mask], rtol=0, atol=1e-5)
    for name, grad in plain[2].items():
        torch.testing.assert_close(packed[2][name], grad, rtol=1e-4, atol=1e-5, msg=name)


def test_the_logits_path_packs_too(model, monkeypatch):
    """A model whose head is not a plain matmul takes the logits path; packed, it gives the same log-probs."""
    model, tokenizer = model
    rollout = _demo_like(tokenizer)
    monkeypatch.setattr(policy, "_plain_head", lambda m: None)
    with torch.no_grad():
        packed, _ = policy.completion_logprobs(model, rollout, 1.0)
        _unpacked(monkeypatch)
        plain, _ = policy.completion_logprobs(model, rollout, 1.0)
    mask = rollout.completion_mask.bool()
    torch.testing.assert_close(packed[mask], plain[mask], rtol=0, atol=1e-5)


def test_the_packed_layout_runs_each_prompt_once():
    """8 prompts x 8 samples, prompt 7 tokens, 8 new tokens: 568 positions instead of 960."""
    prompts = [[1, 40 + k, 41, 42, 43, 44, 45] for k in range(8)]
    rollout = _rollout(prompts, group=8, t=8, eos=2, vocab=60)
    plan = plan_packing(rollout.prompt_ids, rollout.prompt_mask, rollout.completion_ids, rollout.completion_mask)
    assert plan is not None
    assert (plan.tokens, plan.unpacked_tokens) == (8 * (7 + 8 * 8), 64 * 15)
    # Row 9 (group 1, sample 1): token 0 is predicted by the prompt's last state, token a by the completion's a - 1.
    width = 7 + 64
    assert plan.gather[9].tolist() == [width + 6] + [width + 7 + 8 + a for a in range(7)]
    # A completion token sees the prompt and its own earlier live tokens only: never another sample's.
    allowed = plan.allowed[1, 0]
    first_of_sample_1, first_of_sample_2 = 7 + 8, 7 + 16
    assert allowed[first_of_sample_1 + 2, :7].all()
    assert not allowed[first_of_sample_2, first_of_sample_1 : first_of_sample_2].any()


def test_no_packing_where_it_would_not_pay_or_the_mask_would_mean_something_else(model):
    model, tokenizer = model
    distinct = _rollout([[1, 10 + k, 11] for k in range(6)], group=1, t=4, eos=2, vocab=40)
    assert plan_packing(distinct.prompt_ids, distinct.prompt_mask, distinct.completion_ids, distinct.completion_mask) is None
    assert packing_supported(model)
    model.config._attn_implementation = "flash_attention_2"  # takes 2-D masks only
    assert not packing_supported(model)
    model.config._attn_implementation = "sdpa"
    model.config.layer_types = ["full_attention", "sliding_attention"]  # a 4-D mask would lose the window
    assert not packing_supported(model)


def test_a_prompt_drawn_twice_is_packed_as_two_groups_not_one_long_row():
    """8 prompts of which two are the same letter: 7 distinct prompts, 16 rows for one of them. Packed as one row it
    would be twice as long as the rest (and all rows are padded to the longest); in chunks of 8 it is not."""
    prompts = [[1, 40 + k, 41] for k in range(7)] + [[1, 40, 41]]
    rollout = _rollout(prompts, group=8, t=8, eos=2, vocab=60)
    plan = plan_packing(rollout.prompt_ids, rollout.prompt_mask, rollout.completion_ids, rollout.completion_mask)
    assert plan is not None
    assert plan.input_ids.shape == (8, 3 + 8 * 8)
