"""The CUDA decode path (static KV cache, compiled step; static_decode.py) and the bf16 sampling copy
(sampling_copy.py), checked on CPU.

On CPU the static path runs un-compiled: compiling a tiny Qwen2's decode step with inductor took
~90 s on these 2-core machines, too slow for a test. So here: the static-cache loop against the
eager lean loop (the same greedy tokens; log-probs within 1e-5 in float32), today's sampler checks
rerun through the static path, the shape buckets and their compile records. Compiled against eager
runs in the GPU-marked test at the end."""

from __future__ import annotations

import pytest
import torch

import test_rollout as sampler_checks
from troupe.models.loading import build_tiny, neutral_generation_config
from troupe.engines.rollout.sampling import sample
from troupe.engines.rollout import static_decode
from troupe.engines.rollout.hf import HFEngine
from troupe.engines.rollout.base import EnginePrompt
from troupe.engines.rollout.sampling_copy import SamplingCopy, sampling_module, wants_bf16_copy
from troupe.host.system import seed_everything

CPU = torch.device("cpu")


@pytest.fixture
def tiny_model():
    seed_everything(11)
    loaded = build_tiny("tiny-char-2l")
    loaded.model.generation_config = neutral_generation_config(loaded.tokenizer)
    return loaded.model, loaded.tokenizer


def _prompts(tokenizer) -> list[list[int]]:
    return [tokenizer.encode(text) for text in ["say d:", "say a:", "now say q:", "b"] for _ in range(3)]


def _with(decoder: str, monkeypatch, fn):
    with monkeypatch.context() as patch:
        patch.setattr(static_decode, "decoder_for", lambda device: decoder)
        return fn()


@pytest.mark.parametrize(
    "sampling",
    [
        {"temperature": 0.0, "topK": 0, "topP": 1.0, "maxNewTokens": 12},
        {"temperature": 1.0, "topK": 0, "topP": 1.0, "maxNewTokens": 8},
        {"temperature": 0.7, "topK": 5, "topP": 0.9, "maxNewTokens": 6},
    ],
    ids=["greedy", "plain", "warped"],
)
def test_static_cache_path_gives_the_lean_loops_tokens(tiny_model, sampling, monkeypatch):
    model, tokenizer = tiny_model

    def run():
        torch.manual_seed(7)
        return sample(model, tokenizer, _prompts(tokenizer), sampling, CPU)

    lean = _with("lean", monkeypatch, run)
    static = _with("static", monkeypatch, run)
    # Greedy: the same tokens by construction. Sampled: the same RNG draws over softmaxes equal to
    # 1e-5, so the same tokens at this seed (a draw on a boundary could differ; none here).
    assert torch.equal(static.completion_ids, lean.completion_ids)
    assert torch.equal(static.completion_mask, lean.completion_mask)
    assert torch.equal(static.ended, lean.ended)
    assert static.texts == lean.texts
    torch.testing.assert_close(static.sampler_logprobs, lean.sampler_logprobs, rtol=1e-5, atol=1e-5)
    assert torch.equal(static.prompt_ids, lean.prompt_ids)  # the bucket's extra padding is dropped again


def test_prompt_lengths_share_a_bucket_and_each_bucket_is_recorded_once(tiny_model):
    model, tokenizer = tiny_model
    seen = []
    remove = static_decode.on_compile(seen.append)
    try:
        sampling = {"temperature": 0.0, "topK": 0, "topP": 1.0, "maxNewTokens": 4}
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(static_decode, "decoder_for", lambda device: "static")
            sample(model, tokenizer, [tokenizer.encode("ab")] * 4, sampling, CPU)
            sample(model, tokenizer, [tokenizer.encode("abcdefgh")] * 4, sampling, CPU)  # same 64 bucket
            assert len(seen) == 1
            sample(model, tokenizer, [tokenizer.encode("a" * 70)] * 4, sampling, CPU)  # 128 bucket
    finally:
        remove()
    assert [r.bucket.prompt_len for r in seen] == [64, 128]
    assert [r.bucket.cache_len for r in seen] == [68, 132]
    assert all(r.seconds > 0 and not r.compiled for r in seen)  # CPU: not compiled
    assert "cache length 68" in static_decode.describe(seen[0]) and "s (first call" in static_decode.describe(seen[0])


def test_cuda_decodes_static_and_cpu_keeps_the_lean_loop():
    assert static_decode.decoder_for(torch.device("cuda", 0)) == "static"
    assert static_decode.decoder_for(CPU) == "lean"
    assert static_decode.bucket_length(1) == 64 and static_decode.bucket_length(64) == 64 and static_decode.bucket_length(65) == 128


# Today's sampler checks (test_rollout.py), rerun with every sample() going through the static path.
tiny = sampler_checks.tiny


@pytest.fixture
def static_decoder(monkeypatch):
    monkeypatch.setattr(static_decode, "decoder_for", lambda device: "static")


@pytest.mark.parametrize(
    "sampling",
    [sampler_checks.SAMPLING, {**sampler_checks.SAMPLING, "temperature": 0.7, "topK": 5, "topP": 0.9}, {**sampler_checks.SAMPLING, "temperature": 0.0}],
    ids=["plain", "warped", "greedy"],
)
def test_static_sampler_logprobs_match_the_trainer(tiny, sampling, static_decoder):
    sampler_checks.test_sampler_logprobs_match_the_trainer(tiny, sampling)


def test_static_top_k_limits_what_is_sampled(tiny, static_decoder):
    sampler_checks.test_top_k_limits_what_is_sampled(tiny)


def test_static_sampling_is_reproducible_with_the_seed(tiny, static_decoder):
    sampler_checks.test_sampling_is_reproducible_with_the_seed(tiny)


def test_static_texts_are_decoded_from_the_sampled_ids(tiny, static_decoder):
    sampler_checks.test_texts_are_decoded_from_the_sampled_ids(tiny)


# The bf16 sampling copy.


def test_the_sampling_copy_equals_the_trainers_weights_cast_after_every_update(tiny_model):
    model, tokenizer = tiny_model
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    engine = HFEngine(model, tokenizer, CPU, sampling_dtype=torch.bfloat16)
    prompts = [EnginePrompt(ids) for ids in _prompts(tokenizer)]
    sampling = {"temperature": 1.0, "topK": 0, "topP": 1.0, "maxNewTokens": 4}
    ptrs = None
    for step in range(3):
        engine.generate(prompts, sampling)
        held = sampling_module.__globals__["_COPIES"][model]
        names = dict(model.named_parameters())
        for name, p in held.module.named_parameters():
            assert p.dtype == torch.bfloat16 and not p.requires_grad
            assert torch.equal(p, names[name].detach().to(torch.bfloat16)), (step, name)
        # Refreshed in place: the same storages every time (fixed addresses for a compiled step).
        now = [p.untyped_storage().data_ptr() for p in held.module.parameters()]
        assert ptrs is None or now == ptrs
        ptrs = now
        assert held.refreshes == step + 1
        # An update of the trainer's float32 master weights.
        opt.zero_grad()
        model(torch.tensor([prompts[0].token_ids]), labels=torch.tensor([prompts[0].token_ids])).loss.backward()
        opt.step()
    assert all(p.dtype == torch.float32 for p in model.parameters())  # the trainer's own stay float32


def test_the_copy_shares_buffers_and_leaves_the_source_alone(tiny_model):
    model, _ = tiny_model
    held = SamplingCopy(model)
    for (name, b), (_, b2) in zip(model.named_buffers(), held.module.named_buffers()):
        assert b is b2, name  # e.g. rotary inv_freq: float32, shared
    before = [p.detach().clone() for p in model.parameters()]
    held.refresh()
    assert all(torch.equal(a, p) for a, p in zip(before, model.parameters()))


@pytest.mark.parametrize(
    ("device", "trainable", "precision", "autocast", "lora", "fp32", "want"),
    [
        ("cuda", True, "bf16", True, False, True, True),
        ("cpu", True, "bf16", True, False, True, False),  # CPU: the lean loop on the trainer's module
        ("cuda", False, "bf16", True, False, True, False),  # frozen: already cast to bf16 at load
        ("cuda", True, "fp32", True, False, True, False),  # fp32 training: sample what it trains
        ("cuda", True, "bf16", False, False, True, False),  # fsdp2/deepspeed cast parameters themselves
        ("cuda", True, "bf16", True, True, True, False),  # LoRA: not a second copy of the base
        ("cuda", True, "bf16", True, False, False, False),  # parameters not float32: nothing to gain
    ],
)
def test_which_actors_sample_with_a_bf16_copy(device, trainable, precision, autocast, lora, fp32, want):
    assert wants_bf16_copy(device, trainable, precision, autocast, lora, fp32) is want


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: torch.cuda.is_available() is false")
def test_compiled_static_step_matches_eager_on_cuda(tiny_model):
    model, tokenizer = tiny_model
    model.to("cuda")
    sampling = {"temperature": 0.0, "topK": 0, "topP": 1.0, "maxNewTokens": 16}
    seen = []
    remove = static_decode.on_compile(seen.append)
    try:
        compiled = sample(model, tokenizer, _prompts(tokenizer), sampling, torch.device("cuda"))
        again = sample(model, tokenizer, _prompts(tokenizer), sampling, torch.device("cuda"))
    finally:
        remove()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(static_decode, "decoder_for", lambda device: "lean")
        eager = sample(model, tokenizer, _prompts(tokenizer), sampling, torch.device("cuda"))
    assert len(seen) == 1 and seen[0].compiled  # compiled once for the bucket
    assert torch.equal(compiled.completion_ids, eager.completion_ids)
    assert torch.equal(again.completion_ids, eager.completion_ids)
    torch.testing.assert_close(compiled.sampler_logprobs, eager.sampler_logprobs, rtol=1e-5, atol=1e-5)
