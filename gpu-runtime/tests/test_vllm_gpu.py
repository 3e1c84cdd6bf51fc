"""The real vLLM path (marker `gpu`; scripts/gpu-check.sh runs it). Skipped with the reason where CUDA or
vLLM is absent, which is every machine of this workplace: this has never run here (see the README).

On a host with both: the engine samples with log-probs close to the trainer's (bf16 sampling, so a loose
bound); a level-2 sleep frees device memory; after wake weights -> push -> reset prefix cache -> wake KV
cache the engine samples with the pushed weights; and a 3-step run with `backend: "vllm"` succeeds."""

import importlib.util

import pytest
import torch
from runtime_helpers import small_spec
from test_rollout_engines_standin import tiny_folder

from troupe import EventWriter, run_spec
from troupe.models.loading import load_actor_model
from troupe.engines.train.policy import completion_logprobs
from troupe.engines.rollout import EnginePrompt
from troupe.engines.rollout.sync import push
from troupe.engines.rollout.vllm_engine import VllmEngine, VllmSettings
from troupe.train import to_device

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: torch.cuda.is_available() is false"),
    pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="needs vLLM (pip install 'troupe[gpu]'): not installed here"),
]
SAMPLING = {"temperature": 1.0, "topK": 0, "topP": 1.0, "maxNewTokens": 16}


def test_real_vllm_sleep_push_and_logprobs(tmp_path):
    folder = tiny_folder(tmp_path / "model")
    loaded = load_actor_model({"model": {"source": "local", "path": str(folder)}}, 0, folder)
    model = loaded.model.cuda()
    engine = VllmEngine(str(folder), loaded.tokenizer, VllmSettings(gpu_memory_utilization=0.3, sleep_level=2, enforce_eager=True), seed=0, dtype="float32")
    prompts = [EnginePrompt(loaded.tokenizer.encode(f"say {c}:", False)) for c in "abcdefgh"]
    rollout = engine.generate(prompts, SAMPLING)
    trainer, _ = completion_logprobs(model, to_device(rollout, torch.device("cuda")), 1.0)
    gap = ((trainer.cpu() - rollout.sampler_logprobs).abs() * rollout.completion_mask).sum() / rollout.completion_mask.sum()
    assert gap < 1e-3, gap
    free_before = torch.cuda.mem_get_info()[0]
    engine.sleep(2)
    assert torch.cuda.mem_get_info()[0] > free_before  # the engine released device memory
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(0.5)  # a different policy, so sampling with stale weights would show
    push(engine, ((n, p.detach()) for n, p in model.named_parameters()))
    rollout = engine.generate(prompts, SAMPLING)
    trainer, _ = completion_logprobs(model, to_device(rollout, torch.device("cuda")), 1.0)
    gap = ((trainer.cpu() - rollout.sampler_logprobs).abs() * rollout.completion_mask).sum() / rollout.completion_mask.sum()
    assert gap < 1e-3, gap


def test_a_run_with_the_vllm_backend(tmp_path):
    spec = small_spec(steps=3, device="cuda")
    spec["actors"][0].update(model={"source": "local", "path": str(tiny_folder(tmp_path / "model"))}, backend="vllm",
                             vllm={"gpuMemoryUtilization": 0.3, "sleepLevel": 2, "enforceEager": True})
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path / "run")
    assert result.state == "succeeded", result.message
    assert max(result.metrics("logprob_gap")) < 1e-2
