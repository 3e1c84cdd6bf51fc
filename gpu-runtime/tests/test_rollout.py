import pytest
import torch

from troupe.envs.data import reverse_word_rows
from troupe.models.loading import build_tiny
from troupe.engines.train.policy import completion_logprobs
from troupe.engines.rollout.sampling import completion_mask, concat_rollouts, left_pad, sample

SAMPLING = {"temperature": 1.0, "topP": 1.0, "topK": 0, "maxNewTokens": 6}


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    return build_tiny("tiny-char-2l")


def _prompts(tokenizer, n=6):
    # Different lengths, so left padding and position ids are exercised.
    return [tokenizer.encode(r["prompt"]) for r in reverse_word_rows(n, 1)]


def test_completion_mask_stops_after_first_eos():
    ids = torch.tensor([[5, 2, 7, 2], [5, 6, 7, 8], [2, 2, 2, 2]])
    assert completion_mask(ids, [2]).tolist() == [[1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0]]


def test_left_pad():
    ids, mask = left_pad([[7, 8, 9], [4]], pad_id=0)
    assert ids.tolist() == [[7, 8, 9], [0, 0, 4]]
    assert mask.tolist() == [[1, 1, 1], [0, 0, 1]]


@pytest.mark.parametrize(
    "sampling",
    [SAMPLING, {**SAMPLING, "temperature": 0.7, "topK": 5, "topP": 0.9}, {**SAMPLING, "temperature": 0.0}],
    ids=["plain", "warped", "greedy"],
)
def test_sampler_logprobs_match_the_trainer(tiny, sampling):
    torch.manual_seed(1)
    rollout = sample(tiny.model, tiny.tokenizer, _prompts(tiny.tokenizer), sampling, torch.device("cpu"))
    assert rollout.completion_ids.shape == rollout.sampler_logprobs.shape
    with torch.no_grad():
        logp, entropy = completion_logprobs(tiny.model, rollout, sampling["temperature"], with_entropy=True)
    mask = rollout.completion_mask.bool()
    gap = (rollout.sampler_logprobs - logp).abs()[mask]
    assert gap.max() < 1e-4, gap.max()
    assert (entropy[mask] > 0).all()
    if sampling["temperature"] == 0:
        assert (_ranks(tiny, rollout)[mask] == 0).all()  # greedy: always the argmax


def _ranks(tiny, rollout):
    """For each sampled token, how many tokens had a higher logit (0 = the argmax)."""
    ids = torch.cat([rollout.prompt_ids, rollout.completion_ids], 1)
    attn = torch.cat([rollout.prompt_mask, rollout.completion_mask], 1)
    with torch.no_grad():
        logits = tiny.model(ids, attention_mask=attn, position_ids=(attn.cumsum(1) - 1).clamp(min=0)).logits
    p = rollout.prompt_ids.shape[1]
    step_logits = logits[:, p - 1 : -1]
    chosen = step_logits.gather(-1, rollout.completion_ids.unsqueeze(-1))
    return (step_logits > chosen).sum(-1)


def test_top_k_limits_what_is_sampled(tiny):
    torch.manual_seed(2)
    sampling = {**SAMPLING, "topK": 3, "maxNewTokens": 8}
    rollout = sample(tiny.model, tiny.tokenizer, _prompts(tiny.tokenizer, 8), sampling, torch.device("cpu"))
    assert (_ranks(tiny, rollout)[rollout.completion_mask.bool()] < 3).all()


def test_sampling_is_reproducible_with_the_seed(tiny):
    prompts = _prompts(tiny.tokenizer)
    torch.manual_seed(5)
    a = sample(tiny.model, tiny.tokenizer, prompts, SAMPLING, torch.device("cpu"))
    torch.manual_seed(5)
    b = sample(tiny.model, tiny.tokenizer, prompts, SAMPLING, torch.device("cpu"))
    assert a.texts == b.texts and torch.equal(a.completion_ids, b.completion_ids)


def test_texts_are_decoded_from_the_sampled_ids(tiny):
    torch.manual_seed(3)
    rollout = sample(tiny.model, tiny.tokenizer, _prompts(tiny.tokenizer), SAMPLING, torch.device("cpu"))
    for ids, m, text in zip(rollout.completion_ids.tolist(), rollout.completion_mask.tolist(), rollout.texts):
        kept = [t for t, keep in zip(ids, m) if keep]
        assert tiny.tokenizer.decode(kept) == text


def test_concat_rollouts_repads(tiny):
    torch.manual_seed(4)
    a = sample(tiny.model, tiny.tokenizer, [tiny.tokenizer.encode("say a:")] * 2, SAMPLING, torch.device("cpu"))
    b = sample(tiny.model, tiny.tokenizer, [tiny.tokenizer.encode("reverse abcde:")] * 3, {**SAMPLING, "maxNewTokens": 3}, torch.device("cpu"))
    both = concat_rollouts([a, b], tiny.tokenizer.pad_token_id)
    assert both.prompt_ids.shape == (5, len("reverse abcde:"))
    assert both.completion_ids.shape[1] == max(a.completion_ids.shape[1], b.completion_ids.shape[1])
    assert both.texts == a.texts + b.texts
    with torch.no_grad():
        logp, _ = completion_logprobs(tiny.model, both, 1.0)
    gap = (both.sampler_logprobs - logp).abs()[both.completion_mask.bool()]
    assert gap.max() < 1e-4
