"""LoRA via peft: only adapter weights train, the KL reference is the base (adapters off), adapter checkpoints."""

import json

import pytest
import torch
from runtime_helpers import check_protocol, small_spec

from troupe import EventWriter, run_spec

pytest.importorskip("peft", reason="LoRA needs peft (pip install peft)")

LORA = {"rank": 4, "alpha": 8, "targetModules": ["q_proj", "v_proj"]}


def _spy_models(monkeypatch):
    from troupe import actors as train_module  # where actors are loaded

    seen = {}
    original = train_module.load_actor_model

    def spy(actor, index, work_dir):
        loaded = original(actor, index, work_dir)
        seen[actor["name"]] = (loaded, {k: v.clone() for k, v in loaded.model.state_dict().items()})
        return loaded

    monkeypatch.setattr(train_module, "load_actor_model", spy)
    return seen


def test_only_adapter_weights_change_and_kl_starts_at_zero(tmp_path, monkeypatch, events_validator):
    seen = _spy_models(monkeypatch)
    spec = small_spec(steps=3, checkpointEvery=3)
    spec["actors"][0]["training"].update(lora=LORA, klBeta=0.1, learningRate=0.01)
    # A reward that varies within every group, so advantages are non-zero from step 1.
    spec["rewards"][0] = {"name": "letter_match", "source": {"kind": "python", "code": "def reward(prompt, completion, **row):\n    return len(set(completion)) / 8"}}
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    loaded, initial = seen["student"]
    state = loaded.model.state_dict()
    # The spy saw the weights before injection: every base weight is unchanged ...
    base = {k.replace(".base_layer", ""): v for k, v in state.items() if "lora_" not in k}
    assert set(initial) == set(base) and all(torch.equal(base[k], initial[k]) for k in initial)
    # ... and the adapters moved (lora_B starts at zero).
    lora_b = [v for k, v in state.items() if "lora_B" in k]
    assert lora_b and all(v.abs().sum() > 0 for v in lora_b)
    kl = result.metrics("kl")
    assert kl[0] == pytest.approx(0.0, abs=1e-9)  # LoRA's B starts at 0: the adapter is the identity at step 1
    assert max(kl) > 0  # after updates the policy has moved away from the base
    folder = tmp_path / "checkpoints" / "step-3" / "student"
    assert (folder / "adapter_model.safetensors").is_file()
    assert json.loads((folder / "adapter_config.json").read_text())["r"] == 4
    assert not (folder / "model.safetensors").exists()


def test_a_target_module_the_model_lacks_is_a_spec_error(tmp_path):
    spec = small_spec(steps=1)
    spec["actors"][0]["training"]["lora"] = {**LORA, "targetModules": ["q_proj", "wq"]}
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.exit_code == 2
    error = next(e for e in result.events if e["type"] == "error")
    assert error["field"] == "actors.0.training.lora.targetModules" and "wq" in error["message"]
