"""The lean decode loop (lean_sampling.py) draws what `generate` draws, bit for bit, and leaves the RNG where
`generate` leaves it; models it cannot serve the same way sample through `generate`."""

from __future__ import annotations

import pytest
import torch

import troupe.engines.rollout.sampling as rollout_module
from troupe.models.loading import build_tiny, neutral_generation_config
from troupe.engines.rollout.sampling import sample
from troupe.host.system import seed_everything

CPU = torch.device("cpu")


@pytest.fixture
def tiny():
    seed_everything(11)
    loaded = build_tiny("tiny-char-2l")
    loaded.model.generation_config = neutral_generation_config(loaded.tokenizer)
    return loaded.model, loaded.tokenizer


def _prompts(tokenizer) -> list[list[int]]:
    # Different lengths: left padding in the batch.
    return [tokenizer.encode(text) for text in ["say d:", "say a:", "now say q:", "b"] for _ in range(4)]


def _both(model, tokenizer, sampling, monkeypatch):
    """(lean, generate) rollouts and the torch RNG state after each, from the same RNG state."""
    assert rollout_module.lean_sampling_refusal(model, False) is None
    torch.manual_seed(123)
    lean = sample(model, tokenizer, _prompts(tokenizer), sampling, CPU)
    lean_rng = torch.get_rng_state()
    with monkeypatch.context() as patch:
        patch.setattr(rollout_module, "lean_sampling_refusal", lambda m, s: "forced by the test")
        torch.manual_seed(123)
        generated = sample(model, tokenizer, _prompts(tokenizer), sampling, CPU)
    return lean, generated, lean_rng, torch.get_rng_state()


def _assert_same(lean, generated, lean_rng, generated_rng):
    assert torch.equal(lean.completion_ids, generated.completion_ids)
    assert torch.equal(lean.completion_mask, generated.completion_mask)
    assert torch.equal(lean.sampler_logprobs, generated.sampler_logprobs)
    assert torch.equal(lean.ended, generated.ended)
    assert lean.texts == generated.texts
    assert torch.equal(lean_rng, generated_rng)  # the rest of the run draws the same numbers


@pytest.mark.parametrize(
    "sampling",
    [
        {"temperature": 1.0, "topK": 0, "topP": 1.0, "maxNewTokens": 8},
        {"temperature": 0.7, "topK": 5, "topP": 0.9, "maxNewTokens": 6},
        {"temperature": 0.0, "topK": 0, "topP": 1.0, "maxNewTokens": 5},
    ],
    ids=["plain", "warped", "greedy"],
)
def test_the_lean_loop_draws_what_generate_draws(tiny, sampling, monkeypatch):
    model, tokenizer = tiny
    _assert_same(*_both(model, tokenizer, sampling, monkeypatch))


def test_rows_that_end_early_are_padded_and_the_loop_stops_when_all_have_ended(tiny, monkeypatch):
    """End-of-sequence made likely (a hook on the head, in both paths): rows end at different steps, finished rows
    are padded, and sampling stops before maxNewTokens once every row has ended."""
    model, tokenizer = tiny
    eos = tokenizer.eos_token_id

    def likely_eos(module, inputs, output):
        output[..., eos] += 4.0
        return output

    model.get_output_embeddings().register_forward_hook(likely_eos)
    sampling = {"temperature": 1.0, "topK": 0, "topP": 1.0, "maxNewTokens": 40}
    lean, generated, lean_rng, generated_rng = _both(model, tokenizer, sampling, monkeypatch)
    _assert_same(lean, generated, lean_rng, generated_rng)
    lengths = lean.completion_mask.sum(dim=1)
    assert bool(lean.ended.all()) and lean.completion_ids.shape[1] < 40
    assert len(set(lengths.tolist())) > 1  # ended at different steps


def test_models_the_lean_loop_cannot_serve_the_same_way_go_through_generate(tiny):
    model, tokenizer = tiny
    assert rollout_module.lean_sampling_refusal(model, synced=True) is not None  # sharded ranks: generate's synced loop
    model.generation_config.repetition_penalty = 1.2  # a processor generate would add
    assert "repetition_penalty" in rollout_module.lean_sampling_refusal(model, False)
    model.generation_config = neutral_generation_config(tokenizer)
    model.config.model_type = "gpt2"  # not a model whose generate calls the loop was checked against
    assert rollout_module.lean_sampling_refusal(model, False) is not None
