"""Rollout engines against the vLLM stand-in (tests/vllm_standin.py; vLLM is on no machine here).

- the sampler's log-probs equal the trainer's recomputation (fp32) to 1e-5;
- one weight sync is wake weights -> push -> reset prefix cache -> wake KV cache, with sleep around training;
- in a run with a LoRA actor and a full-weight actor (both `backend: "vllm"`), the weights every rollout
  samples with equal the trainer's after the previous step (read back from that step's checkpoint);
- a level-2 sleep leaves the engine unusable until every parameter is pushed;
- `backend: "vllm"` is refused on a host without vLLM, naming the package and the field.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch
import vllm_standin
from runtime_helpers import small_spec

from troupe import EventWriter, run_spec
from troupe.models.loading import build_tiny, load_actor_model, save_checkpoint
from troupe.engines.train.policy import completion_logprobs
from troupe.engines.rollout.sampling import sample
from troupe.engines.rollout import EnginePrompt, EngineStateError, HFEngine
from troupe.engines.rollout import vllm_engine
from troupe.engines.rollout.sync import merged_weights, push
from troupe.engines.rollout.vllm_engine import VllmEngine, VllmSettings
from troupe.spec import vllm_rules

SAMPLING = {"temperature": 0.7, "topK": 0, "topP": 1.0, "maxNewTokens": 10}
LORA = {"rank": 4, "alpha": 8, "targetModules": ["q_proj", "v_proj"]}


def tiny_folder(folder: Path, seed: int = 0) -> Path:
    """A tiny preset saved as a model folder (vLLM loads folders; the trainer loads the same one)."""
    torch.manual_seed(seed)
    save_checkpoint(build_tiny("tiny-char-2l"), folder)
    return folder


def use_standin(monkeypatch, engines: list | None = None) -> None:
    """The run's vLLM is the stand-in, and this host counts as able to run it (tests only: no spec can ask)."""

    class Recording(vllm_standin.LLM):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.sampled_with: list[dict[str, torch.Tensor]] = []
            if engines is not None:
                engines.append(self)

        def generate(self, *args, **kwargs):
            self.sampled_with.append({n: p.detach().clone() for n, p in self.model.params.items()})
            return super().generate(*args, **kwargs)

    module = type(vllm_standin)("vllm_standin_recording")
    module.LLM, module.SamplingParams, module.LoRARequest = Recording, vllm_standin.SamplingParams, vllm_standin.LoRARequest
    module.config = vllm_standin.config
    monkeypatch.setattr(vllm_engine, "import_vllm", lambda: module)
    monkeypatch.setattr(vllm_rules, "vllm_host_issue", lambda cuda_available: None)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tiny_folder(tmp_path_factory.mktemp("tiny-vllm"))


def _engine(folder: Path, level: int = 1) -> tuple[VllmEngine, object]:
    loaded = load_actor_model({"model": {"source": "local", "path": str(folder)}}, 0, folder)
    return VllmEngine(str(folder), loaded.tokenizer, VllmSettings(sleep_level=level), seed=7, dtype="float32", vllm=vllm_standin), loaded


def test_sampler_logprobs_equal_the_trainers_recomputation(folder):
    engine, loaded = _engine(folder)
    tok = loaded.tokenizer
    prompts = [EnginePrompt(tok.encode(f"say {c}:", False)) for c in "abcdabcd"]
    rollout = engine.generate(prompts, SAMPLING)
    assert rollout.completion_mask.sum() > len(prompts)  # something was sampled
    trainer, _ = completion_logprobs(loaded.model, rollout, SAMPLING["temperature"])
    gap = ((trainer - rollout.sampler_logprobs).abs() * rollout.completion_mask).max()
    assert gap < 1e-5, gap
    # Ended rows end in EOS, inside the mask; cut-off rows are full length.
    for i in range(len(prompts)):
        n = int(rollout.completion_mask[i].sum())
        assert bool(rollout.ended[i]) == (rollout.completion_ids[i, n - 1].item() in tok.eos_token_ids)
        assert bool(rollout.ended[i]) or n == SAMPLING["maxNewTokens"]


def test_hf_engine_is_todays_sampler(folder):
    _, loaded = _engine(folder)
    tok = loaded.tokenizer
    ids = [tok.encode("say q:", False)] * 4
    torch.manual_seed(3)
    direct = sample(loaded.model, tok, ids, SAMPLING, torch.device("cpu"))
    torch.manual_seed(3)
    through = HFEngine(loaded.model, tok, torch.device("cpu")).generate([EnginePrompt(i) for i in ids], SAMPLING)
    assert torch.equal(direct.completion_ids, through.completion_ids) and direct.texts == through.texts


def test_sync_order_and_level_2_sleep(folder):
    engine, loaded = _engine(folder, level=2)
    llm = engine.llm
    prompts = [EnginePrompt(loaded.tokenizer.encode("say z:", False))] * 2
    engine.generate(prompts, SAMPLING)
    engine.sleep(2)
    with pytest.raises(EngineStateError):
        engine.generate(prompts, SAMPLING)
    with pytest.raises(vllm_standin.StandinStateError):  # the stand-in itself refuses, too
        llm.generate([{"prompt_token_ids": [1, 2]}], vllm_standin.SamplingParams(max_tokens=2))
    with pytest.raises(EngineStateError):
        engine.push_weights(loaded.model.named_parameters())
    # Woken without a push, level-2 weights are garbage: generating must fail, not sample noise.
    engine.wake(["weights", "kv_cache"])
    with pytest.raises(vllm_standin.StandinStateError, match="never loaded again"):
        engine.generate(prompts, SAMPLING)
    engine.sleep(2)
    del llm.calls[:]
    report = push(engine, loaded.model.named_parameters())
    assert [c[0] for c in llm.calls] == [
        "wake_up", "start_weight_update", "update_weights", "load_weights", "finish_weight_update", "reset_prefix_cache", "wake_up",
    ]
    assert llm.calls[0] == ("wake_up", ("weights",)) and llm.calls[-1] == ("wake_up", ("kv_cache",))
    assert report.tensors == len(dict(loaded.model.named_parameters())) and report.bytes > 0
    for name, p in loaded.model.named_parameters():
        assert torch.equal(llm.model.params[name], p), name
    engine.generate(prompts, SAMPLING)


def test_level_1_sleep_keeps_the_weights(folder):
    engine, loaded = _engine(folder, level=1)
    before = {n: p.clone() for n, p in engine.llm.model.params.items()}
    engine.sleep(1)
    engine.wake(["weights"])
    engine.wake(["kv_cache"])
    assert all(torch.equal(before[n], p) for n, p in engine.llm.model.params.items())


def test_lora_merge_equals_peft(folder):
    from peft import LoraConfig, inject_adapter_in_model

    loaded = load_actor_model({"model": {"source": "local", "path": str(folder)}}, 0, folder)
    model = loaded.model
    inject_adapter_in_model(LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]), model)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.1)  # peft starts B at zero; a merge of zeros would prove nothing
    ids = torch.tensor([loaded.tokenizer.encode("say m: mmm", False)])
    expected = model(input_ids=ids).logits
    plain = load_actor_model({"model": {"source": "local", "path": str(folder)}}, 0, folder).model
    merged = dict(merged_weights(model.named_parameters(), "default", 8 / 4))
    assert not any("lora" in n or "base_layer" in n for n in merged)
    plain.load_state_dict(merged, strict=False)
    assert torch.allclose(plain(input_ids=ids).logits, expected, atol=1e-5)


def _two_actor_spec(folder: Path, steps: int) -> dict:
    spec = small_spec(steps=steps, checkpointEvery=1, keepCheckpoints=steps)
    # A reward that varies within every group, so every step really updates both actors.
    spec["rewards"][0] = {"name": "letter_match", "source": {"kind": "python", "code": "def reward(prompt, completion, **row):\n    return len(set(completion)) / 8"}}
    full = spec["actors"][0]
    full.update(model={"source": "local", "path": str(folder)}, backend="vllm", vllm={"sleepLevel": 2, "gpuMemoryUtilization": 0.4})
    lora = copy.deepcopy(full)
    lora["name"] = "adapted"
    lora["training"] = {**lora["training"], "lora": LORA, "learningRate": 0.01}
    lora["vllm"] = {"sleepLevel": 1}
    spec["actors"].append(lora)
    env = copy.deepcopy(spec["environments"][0])
    env.update(name="echo2", actors=["adapted"])
    spec["environments"].append(env)
    return spec


def _checkpoint_model(work_dir: Path, step: int, actor: str, folder: Path) -> torch.nn.Module:
    """The trainer's model after `step`, as saved: full weights, or the base with the saved adapter
    injected by peft (not merged: the engine's merge is what is being checked)."""
    from transformers import AutoModelForCausalLM

    saved = work_dir / "checkpoints" / f"step-{step}" / actor
    if not (saved / "adapter_config.json").is_file():
        return AutoModelForCausalLM.from_pretrained(str(saved), dtype=torch.float32)
    from peft import LoraConfig, inject_adapter_in_model, set_peft_model_state_dict
    from safetensors.torch import load_file

    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32)
    inject_adapter_in_model(LoraConfig.from_pretrained(str(saved)), model)
    result = set_peft_model_state_dict(model, load_file(str(saved / "adapter_model.safetensors")))
    assert not [k for k in result.missing_keys if "lora_" in k] and not result.unexpected_keys, result
    return model


def _same_policy(weights: dict[str, torch.Tensor], trainer: torch.nn.Module, folder: Path) -> None:
    """The engine's weights (a plain model) and the trainer's model give the same logits."""
    from transformers import AutoModelForCausalLM

    engine = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32)
    engine.load_state_dict(weights, strict=False)
    ids = torch.arange(3, 40).reshape(1, -1)
    with torch.no_grad():
        assert torch.allclose(engine(input_ids=ids).logits, trainer(input_ids=ids).logits, atol=1e-5)


def test_lora_and_full_actor_sample_with_the_trainers_weights_every_step(folder, tmp_path, monkeypatch):
    pytest.importorskip("peft")
    engines: list = []
    use_standin(monkeypatch, engines)
    steps = 3
    result = run_spec(_two_actor_spec(folder, steps), events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    assert len(engines) == 2
    by_actor = {"student": engines[0], "adapted": engines[1]}
    initial = {n: p.detach() for n, p in load_actor_model({"model": {"source": "local", "path": str(folder)}}, 0, folder).model.named_parameters()}
    for actor, llm in by_actor.items():
        assert len(llm.sampled_with) == steps
        for step, weights in enumerate(llm.sampled_with, start=1):
            if step == 1:  # a fresh adapter (B = 0) is the base
                assert all(torch.equal(weights[n], p) for n, p in initial.items()), actor
                continue
            trainer = _checkpoint_model(tmp_path, step - 1, actor, folder)
            if actor == "student":
                assert all(torch.equal(weights[n], p) for n, p in trainer.named_parameters()), step
            _same_policy(weights, trainer, folder)
        # The weights really moved, so equality above is not the initial weights twice.
        assert not torch.equal(llm.sampled_with[-1]["model.layers.0.self_attn.q_proj.weight"], initial["model.layers.0.self_attn.q_proj.weight"])
        # Per step: sleep(level) after the rollout, then wake weights -> push -> reset -> wake KV before the next.
        names = [c[0] for c in llm.calls]
        first_sleep = names.index("sleep")
        assert names[first_sleep : first_sleep + 9] == [
            "sleep", "reset_prefix_cache", "wake_up", "start_weight_update", "update_weights", "load_weights", "finish_weight_update",
            "reset_prefix_cache", "wake_up",
        ]
        assert llm.calls[first_sleep][1] == (2 if actor == "student" else 1)
    gaps = result.metrics("logprob_gap")
    assert gaps and max(gaps) < 1e-5, gaps


def test_vllm_is_refused_without_the_package(folder, tmp_path, monkeypatch):
    monkeypatch.setattr(vllm_rules, "vllm_available", lambda: False)
    spec = small_spec(steps=1)
    spec["actors"][0].update(model={"source": "local", "path": str(folder)}, backend="vllm")
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "failed"
    errors = [e for e in result.events if e["type"] == "error"]
    assert errors and errors[0]["field"] == "actors.0.backend"
    assert "vllm package" in errors[0]["message"] and "not installed" in errors[0]["message"]


def test_vllm_rules_mirror_the_contracts(folder):
    spec = small_spec(steps=1)
    actor = spec["actors"][0]
    actor.update(vllm={"tensorParallel": 2, "sleepLevel": 2}, trainable=False)
    paths = {i.path for i in vllm_rules.vllm_actor_issues({**actor, "placement": {"gpus": []}}, "actors.0")}
    assert paths == {"actors.0.vllm"}  # settings on an hf actor
    actor.update(backend="vllm", model={"source": "local", "path": str(folder)}, placement={"gpus": [0]})
    paths = {i.path for i in vllm_rules.vllm_actor_issues(actor, "actors.0")}
    assert paths == {"actors.0.vllm.tensorParallel", "actors.0.vllm.sleepLevel"}


def test_residency_sends_a_vllm_actors_trainer_weights_to_the_host_while_its_engine_samples(folder, tmp_path, monkeypatch):
    """With offload between phases, each vLLM actor's trainer parameters are on the device for the push, then
    go to the host while its engine samples (the engine has its own copy); HF actors keep theirs for sampling."""
    pytest.importorskip("peft")
    use_standin(monkeypatch)
    spec = _two_actor_spec(folder, steps=2)
    spec["trainer"]["offloadBetweenPhases"] = True
    spec["actors"][1]["backend"] = "hf"  # the LoRA actor samples with HF generate: its parameters must stay
    del spec["actors"][1]["vllm"]
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    params_out = [(e["actor"], e["phase"]) for e in result.events if e["type"] == "offload" and e["direction"] == "offload" and "params" in e["parts"]]
    assert ("student", "rollout") in params_out
    assert ("adapted", "rollout") not in params_out


def test_set_adapter_serves_a_saved_lora_folder_with_a_new_request_each_time(folder, tmp_path):
    """`set_adapter(name, path)`: a `LoRARequest` for an adapter folder (peft's files, as checkpoints write them);
    each call a new id, so a changed adapter is reloaded rather than served from vLLM's adapter cache."""
    from peft import LoraConfig, inject_adapter_in_model

    from troupe.models.lora import save_adapter

    loaded = load_actor_model({"model": {"source": "local", "path": str(folder)}}, 0, folder)
    model = loaded.model
    config = LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"])
    inject_adapter_in_model(config, model)
    model._troupe_lora_config = config
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.2)
    save_adapter(model, tmp_path / "adapter")
    engine = VllmEngine(str(folder), loaded.tokenizer, VllmSettings(), seed=3, dtype="float32", lora_rank=4, vllm=vllm_standin)
    engine.set_adapter("alice", str(tmp_path / "adapter"))
    first = engine.lora_request
    prompts = [EnginePrompt(loaded.tokenizer.encode(f"say {c}:", False)) for c in "abcd"]
    rollout = engine.generate(prompts, SAMPLING)
    trainer, _ = completion_logprobs(model, rollout, SAMPLING["temperature"])
    assert ((trainer - rollout.sampler_logprobs).abs() * rollout.completion_mask).max() < 1e-5
    engine.set_adapter("alice", str(tmp_path / "adapter"))
    assert engine.lora_request.lora_int_id != first.lora_int_id
    engine.set_adapter(None)
    base = engine.generate(prompts, SAMPLING)
    with torch.no_grad():
        from troupe.models.lora import adapters_disabled

        with adapters_disabled(model):
            plain, _ = completion_logprobs(model, base, SAMPLING["temperature"])
    assert ((plain - base.sampler_logprobs).abs() * base.completion_mask).max() < 1e-5


def test_dynamic_sampling_draws_through_the_awake_engine(folder, tmp_path, monkeypatch):
    """DAPO's dynamic sampling draws more groups after scoring: the engine sleeps only after those draws."""
    engines: list = []
    use_standin(monkeypatch, engines)
    spec = small_spec(steps=2)
    spec["actors"][0].update(model={"source": "local", "path": str(folder)}, backend="vllm", vllm={"sleepLevel": 2})
    spec["algorithm"]["dynamicSampling"] = {"enabled": True, "maxRounds": 2}
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    assert sum(result.metrics("dynamic_sampling/rounds")) > 0  # it really drew again (random weights: equal rewards)
    names = [c[0] for c in engines[0].calls]
    assert names.count("generate") > 2 and names.count("sleep") == 2


def test_resume_with_the_vllm_backend_reproduces_the_straight_run_bitwise(folder, tmp_path, monkeypatch):
    """The engine's per-request seeds come from torch's generator, which checkpoints save and restore, and a resumed
    run pushes the checkpoint's weights before its first rollout: the resumed run equals the straight one."""
    from test_control_and_resume import _StopAfterStep, episodes, per_step

    from troupe.checkpointing import list_checkpoints

    use_standin(monkeypatch)

    def spec():
        s = small_spec(steps=4, checkpointEvery=2)
        s["rewards"][0] = {"name": "letter_match", "source": {"kind": "python", "code": "def reward(prompt, completion, **row):\n    return len(set(completion)) / 8"}}
        s["actors"][0].update(model={"source": "local", "path": str(folder)}, backend="vllm", vllm={"sleepLevel": 2})
        return s

    for folder_name in ("straight", "resumed"):
        (tmp_path / folder_name).mkdir()  # the Python reward's sandbox binds the run folder: it must exist
    straight = run_spec(spec(), work_dir=tmp_path / "straight")
    assert straight.state == "succeeded", straight.message
    assert not [e for e in straight.events if e["type"] == "log" and e["level"] == "error"]
    assert len(set(straight.metrics("loss"))) > 1  # real updates, so equal runs mean something
    kept = EventWriter(keep=True)
    first = run_spec(spec(), events=kept, work_dir=tmp_path / "resumed", stop=_StopAfterStep(kept, 2))
    assert first.state == "cancelled" and first.steps_completed == 2, first.message
    assert [s for s, _ in list_checkpoints(tmp_path / "resumed" / "checkpoints")] == [2]
    second = run_spec(spec(), work_dir=tmp_path / "resumed", resume="latest")
    assert second.state == "succeeded", second.message
    want = per_step(straight.events)
    got = {**{k: v for k, v in per_step(first.events).items() if k[0] <= 2}, **per_step(second.events)}
    assert sorted(got) == sorted(want) and len(want) == 4
    for key in want:
        assert got[key] == want[key], (key, got[key], want[key])
    assert episodes(second.events) == [e for e in episodes(straight.events) if e[0] > 2]


def test_the_run_closes_its_engines(folder, tmp_path, monkeypatch):
    engines: list = []
    use_standin(monkeypatch, engines)
    closed = []
    monkeypatch.setattr(VllmEngine, "close", lambda self: closed.append(self))
    spec = small_spec(steps=1)
    spec["actors"][0].update(model={"source": "local", "path": str(folder)}, backend="vllm")
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    assert len(closed) == 1 and closed[0].llm is engines[0]


def _evaluated_spec(folder: Path, multi_turn: bool, tmp_path: Path) -> dict:
    """A vLLM actor that trains 2 steps and is evaluated after each (held-out rows)."""
    if multi_turn:
        from collab_helpers import secret_digit_spec

        spec = secret_digit_spec(tmp_path, steps=2)
        spec["actors"] = spec["actors"][:1] + [{**spec["actors"][1], "trainable": False}]
        spec["datasets"][0]["evalFraction"] = 0.25
        spec["trainer"].update(promptsPerStep=2, evalEvery=1, checkpointEvery=1, keepCheckpoints=2)
        spec["algorithm"]["groupSize"] = 2
    else:
        spec = small_spec(steps=2, evalEvery=1, checkpointEvery=1, keepCheckpoints=2)
        spec["datasets"][0]["evalFraction"] = 0.25
    for actor in spec["actors"]:
        # A frozen actor's engine keeps its weights on the host (level 1): nothing could push them back.
        actor.update(model={"source": "local", "path": str(folder)}, backend="vllm", vllm={"sleepLevel": 2 if actor.get("trainable", True) else 1})
    return spec


@pytest.mark.parametrize("multi_turn", [False, True], ids=["single-turn", "multi-turn"])
def test_evaluation_samples_with_the_vllm_engine_holding_the_trainers_weights(folder, tmp_path, monkeypatch, multi_turn):
    """Eval runs after the update, while colocated engines sleep (level 2: no usable weights): it wakes them,
    pushes the updated weights and samples through the engine, as the rollout does (the stand-in raises when
    asked to generate while asleep, and an engine holding stale weights would evaluate the old policy)."""
    engines: list = []
    use_standin(monkeypatch, engines)
    result = run_spec(_evaluated_spec(folder, multi_turn, tmp_path), events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    evals = [e for e in result.events if e["type"] == "metric" and any(k.startswith("eval/") for k in e["values"])]
    assert {e["step"] for e in evals} == {1, 2}
    trainer_engine = engines[0]
    # Each step: one rollout and one evaluation, both through the engine.
    assert len(trainer_engine.sampled_with) == 4
    actor = "Alice" if multi_turn else "student"
    for step, weights in ((1, trainer_engine.sampled_with[1]), (2, trainer_engine.sampled_with[3])):
        _same_policy(weights, _checkpoint_model(tmp_path, step, actor, folder), folder)
