"""Several LoRA actors on one base in memory: training one adapter never touches another's."""

import copy

import pytest
import torch

pytest.importorskip("peft", reason="LoRA needs peft: pip install -e 'gpu-runtime[lora]'")

from runtime_helpers import small_spec  # noqa: E402

from troupe import run_spec  # noqa: E402
from troupe.models.lora import adapters_disabled, apply_lora  # noqa: E402
from troupe.models.loading import build_tiny  # noqa: E402
from troupe.engines.train.policy import completion_logprobs  # noqa: E402
from troupe.engines.rollout.sampling import sample  # noqa: E402
from troupe.models.shared_lora import AdapterBound, add_adapter  # noqa: E402

LORA = {"rank": 4, "alpha": 8, "dropout": 0.0, "targetModules": ["q_proj", "v_proj"]}
SAMPLING = {"temperature": 1.0, "topP": 1.0, "topK": 0, "maxNewTokens": 4}


def _snapshot(model):
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def _changed(before, model):
    return {n for n, p in model.named_parameters() if not torch.equal(before[n], p.detach())}


def test_an_update_through_one_adapter_leaves_the_other_and_the_base_alone():
    torch.manual_seed(0)
    tiny = build_tiny("tiny-char-2l")
    raw = tiny.model
    apply_lora(raw, LORA, 0)
    a = AdapterBound(raw, "default", raw._troupe_lora_config)
    add_adapter(raw, LORA, "B")
    b = AdapterBound(raw, "B", raw._troupe_lora_configs["B"])
    prompts = [tiny.tokenizer.encode("say a:") for _ in range(4)]
    rollout = sample(a, tiny.tokenizer, prompts, SAMPLING, torch.device("cpu"))

    for trained, other, name, other_name in ((a, b, "default", "B"), (b, a, "B", "default")):
        optimizer = torch.optim.SGD(list(trained.parameters()), lr=0.5)
        before = _snapshot(raw)
        trained.train()
        logp, _ = completion_logprobs(trained, rollout, 1.0)
        (-(logp * rollout.completion_mask).sum()).backward()
        optimizer.step()
        changed = _changed(before, raw)
        # Only this adapter's lora_B moved on the first step (lora_A gets no gradient while lora_B is 0).
        assert changed and all(f".{name}." in n for n in changed), changed
        assert not any(f".{other_name}." in n for n in changed)
        assert all(p.grad is None for p in other.parameters())
        optimizer.zero_grad(set_to_none=True)

    with torch.no_grad():
        out_a, _ = completion_logprobs(a, rollout, 1.0)
        out_b, _ = completion_logprobs(b, rollout, 1.0)
        with adapters_disabled(a):
            base_a, _ = completion_logprobs(a, rollout, 1.0)
        with adapters_disabled(b):
            base_b, _ = completion_logprobs(b, rollout, 1.0)
    assert not torch.allclose(out_a, out_b)  # each handle really runs its own adapter
    torch.testing.assert_close(base_a, base_b)  # the reference is the one shared base
    assert not torch.allclose(out_a, base_a)


def _two_actor_spec(train_b: bool) -> dict:
    spec = small_spec(steps=2, checkpointEvery=2)
    student = spec["actors"][0]
    student["training"].update(lora=LORA, learningRate=0.02, klBeta=0.05)
    # A reward that differs between samples from the start (their lengths), so both adapters get a gradient.
    spec["rewards"].append({"name": "short", "source": {"kind": "builtin", "name": "length_penalty", "params": {"scale": 0.1}}})
    spec["environments"][0]["rewards"].append({"reward": "short", "weight": 1})
    other = copy.deepcopy(student)
    other["name"] = "other"
    spec["actors"].append(other)
    if train_b:
        env = copy.deepcopy(spec["environments"][0])
        env.update(name="echo2", actors=["other"])
        spec["environments"].append(env)
    return spec


def test_a_lora_actor_in_no_environment_keeps_its_adapter_untouched(tmp_path):
    from safetensors.torch import load_file

    result = run_spec(_two_actor_spec(train_b=False), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    logs = [e["message"] for e in result.events if e["type"] == "log"]
    assert any('on the base of "student" (one copy in memory)' in m for m in logs), logs
    saved = {e["actor"]: e["path"] for e in result.events if e["type"] == "checkpoint" and e.get("actor")}
    student = load_file(f"{saved['student']}/adapter_model.safetensors")
    other = load_file(f"{saved['other']}/adapter_model.safetensors")
    assert student.keys() == other.keys()
    lora_b = [k for k in student if "lora_B" in k]
    assert lora_b and all(student[k].abs().sum() > 0 for k in lora_b)  # trained: moved from zero
    assert all(other[k].abs().sum() == 0 for k in lora_b)  # never trained: still peft's zero init


def test_two_lora_actors_on_one_base_both_train(tmp_path):
    result = run_spec(_two_actor_spec(train_b=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    for actor in ("student", "other"):
        kl = [e["values"]["kl"] for e in result.events if e["type"] == "metric" and e.get("actor") == actor]
        assert len(kl) == 2
        assert kl[0] == pytest.approx(0.0, abs=1e-7)  # the reference is the base with adapters off
        assert kl[1] > 0
