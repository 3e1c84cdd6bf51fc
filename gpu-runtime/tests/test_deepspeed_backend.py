"""The DeepSpeed ZeRO-3 train backend (troupe/backends/deepspeed.py) and its config.

DeepSpeed is not installed on any machine of this workplace (and cannot be), so the backend runs here
against a STAND-IN engine (tests/deepspeed_standin.py, named so in every test that uses it) that
implements the engine calls the backend makes, with DeepSpeed's parameter names, and enforces their
contract. Accelerate IS installed: its DeepSpeedPlugin config handling and every Accelerate signature
the backend calls are checked against the real package. The tests against real DeepSpeed skip here
and say so.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from deepspeed_standin import (
    StandInDeepSpeedEngine,
    StandInGatheredParameters,
    StandInOffloadDeviceEnum,
    StandInOffloadStateTypeEnum,
    StandInZeroOptimizer,
    standin_engine_factory,
)
from troupe.engines.train import BackendSettings
from troupe.engines.train import deepspeed as ds_backend
from troupe.engines.train.deepspeed import DeepSpeedBackend, DeepSpeedUnavailable, deepspeed_available
from troupe.engines.train.deepspeed_config import deepspeed_actor_issues, deepspeed_config, deepspeed_training_issues
from troupe.engines.train.torch import TorchBackend
from troupe.launch.distributed import SINGLE
from troupe.models.loading import build_tiny
from troupe.residency.manager import Resident, ResidencyManager
from troupe.engines.rollout.sampling import Rollout
from troupe.algorithms.update import update_actor
from troupe.algorithms.update_loss import LossOptions

NO_DEEPSPEED = "DeepSpeed is not installed on this machine"
CPU = torch.device("cpu")


def training(**over: Any) -> dict[str, Any]:
    t = {
        "learningRate": 3e-3, "optimizer": "adamw", "weightDecay": 0.01, "betas": [0.9, 0.95], "maxGradNorm": 0.05,
        "offload": {"params": False, "optimizer": False}, "precision": "fp32", "backend": "deepspeed",
        "gradientCheckpointing": False,
    }
    t.update(over)
    return t


def keys_anywhere(obj: Any) -> set[str]:
    if isinstance(obj, dict):
        return set(obj) | {k for v in obj.values() for k in keys_anywhere(v)}
    if isinstance(obj, list):
        return {k for v in obj for k in keys_anywhere(v)}
    return set()


# ---------------------------------------------------------------------------------------- config
def test_config_is_zero3_with_offload_bf16_and_clipping_at_max_grad_norm():
    cfg = deepspeed_config(
        training(maxGradNorm=0.37, precision="bf16", offload={"params": True, "optimizer": True}), 4, 2, "cuda:0",
        accumulation_steps=3,
    )
    zero = cfg["zero_optimization"]
    assert zero["stage"] == 3
    assert zero["offload_param"] == {"device": "cpu", "pin_memory": True}
    assert zero["offload_optimizer"] == {"device": "cpu", "pin_memory": True}
    assert zero["stage3_gather_16bit_weights_on_model_save"] is True
    # The reference library's bug: `max_grad_norm` is not a DeepSpeed key, clipping stayed at 1.0.
    assert cfg["gradient_clipping"] == 0.37
    assert "max_grad_norm" not in keys_anywhere(cfg)
    assert cfg["bf16"] == {"enabled": True} and cfg["fp16"] == {"enabled": False}
    assert (cfg["train_micro_batch_size_per_gpu"], cfg["gradient_accumulation_steps"], cfg["train_batch_size"]) == (4, 3, 24)
    assert cfg["optimizer"] == {
        "type": "AdamW", "params": {"lr": 3e-3, "betas": [0.9, 0.95], "eps": 1e-8, "weight_decay": 0.01},
    }


def test_config_without_offload_has_no_offload_blocks_and_fp32():
    cfg = deepspeed_config(training(), None, 1, "cpu")
    assert "offload_param" not in cfg["zero_optimization"] and "offload_optimizer" not in cfg["zero_optimization"]
    assert cfg["bf16"] == {"enabled": False}
    assert cfg["gradient_clipping"] == 0.05
    assert cfg["train_micro_batch_size_per_gpu"] == 1  # never "auto": Accelerate fills that only from a DataLoader
    # pinning needs CUDA: a CPU device config asks for none
    cpu_offload = deepspeed_config(training(offload={"params": True, "optimizer": False}), 2, 1, "cpu")
    assert cpu_offload["zero_optimization"]["offload_param"] == {"device": "cpu", "pin_memory": False}


def test_config_refuses_sgd_and_lora_by_field():
    assert deepspeed_training_issues(training()) == []
    [(path, message)] = deepspeed_training_issues(training(optimizer="sgd"))
    assert path == "training.optimizer" and "sgd" in message
    with pytest.raises(ValueError, match="training.optimizer"):
        deepspeed_config(training(optimizer="sgd"), None, 1, "cpu")
    [(path, _)] = deepspeed_training_issues(training(lora={"rank": 8}))
    assert path == "training.lora"


def test_actor_issues_name_the_field_for_each_refusal():
    ok = dict(deepspeed_installed=True, cuda_available=True, offload_between_phases=True)
    assert deepspeed_actor_issues(training(), **ok) == []
    paths = lambda t, **kw: [p for p, _ in deepspeed_actor_issues(t, **{**ok, **kw})]
    assert paths(training(), deepspeed_installed=False) == ["training.backend"]
    assert "pip install deepspeed" in deepspeed_actor_issues(training(), **{**ok, "deepspeed_installed": False})[0][1]
    assert paths(training(), cuda_available=False) == ["training.backend"]
    assert paths(training(offload={"params": True, "optimizer": True})) == ["training.offload.params", "training.offload.optimizer"]
    assert paths(training(offload={"params": True, "optimizer": True}), offload_between_phases=False) == []
    assert paths(training(optimizer="sgd")) == ["training.optimizer"]


# Keys DeepSpeed 0.19.6 reads (runtime/constants.py, runtime/precision_config.py, runtime/zero/config.py,
# runtime/zero/offload_config.py; FusedAdam / DeepSpeedCPUAdam constructor arguments for the AdamW params).
DEEPSPEED_TOP_LEVEL = {
    "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "gradient_clipping", "bf16",
    "fp16", "zero_optimization", "optimizer", "steps_per_print", "wall_clock_breakdown",
}
DEEPSPEED_ZERO = {"stage", "offload_param", "offload_optimizer", "stage3_gather_16bit_weights_on_model_save"}
DEEPSPEED_OFFLOAD = {"device", "pin_memory"}
DEEPSPEED_ADAMW_PARAMS = {"lr", "betas", "eps", "weight_decay"}


@pytest.mark.parametrize("offload", [(False, False), (True, False), (False, True), (True, True)])
def test_config_uses_only_deepspeed_keys(offload):
    cfg = deepspeed_config(training(offload={"params": offload[0], "optimizer": offload[1]}, precision="bf16"), 2, 2, "cuda")
    assert set(cfg) <= DEEPSPEED_TOP_LEVEL, set(cfg) - DEEPSPEED_TOP_LEVEL
    assert set(cfg["zero_optimization"]) <= DEEPSPEED_ZERO
    for block in ("offload_param", "offload_optimizer"):
        assert set(cfg["zero_optimization"].get(block, {})) <= DEEPSPEED_OFFLOAD
    assert set(cfg["optimizer"]) == {"type", "params"} and set(cfg["optimizer"]["params"]) <= DEEPSPEED_ADAMW_PARAMS
    assert set(cfg["bf16"]) == {"enabled"}


def test_accelerate_plugin_keeps_our_clipping_and_precision():
    """Real Accelerate: the DeepSpeedPlugin built from our config, then the same fill `_prepare_deepspeed`
    does (its defaults: gradient_clipping 1.0, no 16-bit gather), keeps the spec's values."""
    from accelerate.utils import DeepSpeedPlugin

    cfg = deepspeed_config(training(maxGradNorm=0.37, precision="bf16", offload={"params": False, "optimizer": True}), 2, 1, "cuda")
    plugin = DeepSpeedPlugin(hf_ds_config=copy.deepcopy(cfg))
    plugin.set_mixed_precision("no")
    plugin.deepspeed_config_process(
        must_match=False,
        **{"gradient_clipping": 1.0, "zero_optimization.stage3_gather_16bit_weights_on_model_save": False,
           "train_micro_batch_size_per_gpu": 2, "train_batch_size": 2},
    )
    effective = plugin.deepspeed_config
    assert effective["gradient_clipping"] == 0.37 and plugin.gradient_clipping == 0.37
    assert effective["zero_optimization"]["stage3_gather_16bit_weights_on_model_save"] is True
    assert effective["bf16"] == {"enabled": True}
    assert plugin.zero_stage == 3 and plugin.hf_ds_config.is_zero3()
    assert plugin.offload_optimizer_device == "cpu" and plugin.offload_param_device == "none"
    # What the issue describes: a config that leaves gradient_clipping to Accelerate ("auto") gets 1.0.
    loose = copy.deepcopy(cfg)
    loose["gradient_clipping"] = "auto"
    loose["max_grad_norm"] = 0.37
    other = DeepSpeedPlugin(hf_ds_config=loose)
    other.deepspeed_config_process(must_match=False, gradient_clipping=1.0)
    assert other.deepspeed_config["gradient_clipping"] == 1.0


# ---------------------------------------------------------------------------------------- the loop
B, P, T = 6, 3, 5
VOCAB = 40  # below the tiny character tokenizer's vocabulary


def tiny_model(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return build_tiny("tiny-char-2l").model.float()


def rollout_batch(vocab: int, seed: int = 1) -> tuple[Rollout, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    lengths = torch.tensor([5, 2, 4, 5, 1, 3])
    mask = (torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)).long()
    batch = Rollout(
        torch.randint(4, vocab, (B, P), generator=g), torch.ones(B, P, dtype=torch.long),
        torch.randint(4, vocab, (B, T), generator=g), mask, -2.0 + 0.1 * torch.randn(B, T, generator=g), [],
    )
    advantages = torch.tensor([1.0, -0.5, 0.7, -1.2, 0.3, -0.3])
    return batch, mask, advantages


OPTIONS = LossOptions(loss_type="grpo", clip_eps_low=0.2, clip_eps_high=0.2, max_completion_len=None, kl_beta=0.0, temperature=1.0)


def run_update(backend, micro: int | None, iterations: int = 1, seed: int = 1) -> dict[str, float]:
    batch, mask, advantages = rollout_batch(VOCAB, seed)
    return update_actor(backend, batch, mask, advantages, OPTIONS, iterations, backend.settings.training["maxGradNorm"],
                        SINGLE, micro, reference=lambda b: None)


def settings_for(name: str, t: dict[str, Any], micro: int | None = 2) -> BackendSettings:
    return BackendSettings(name, t, CPU, SINGLE, micro)


def standin_backend(name: str = "a", t: dict[str, Any] | None = None, micro: int | None = 2, seed: int = 0,
                    factory=standin_engine_factory) -> DeepSpeedBackend:
    return DeepSpeedBackend(tiny_model(seed), settings_for(name, t or training(), micro), engine_factory=factory)


def test_standin_call_order_over_one_step_with_two_micro_batches():
    """Stand-in engine: the calls one optimizer step makes, in order (6 rows, micro-batches of 3)."""
    backend = standin_backend(micro=3)
    engine: StandInDeepSpeedEngine = backend.engine
    run_update(backend, micro=3)
    calls = [(n, d) for n, d in engine.calls if n != "optimizer.state_dict"]
    assert [n for n, _ in calls] == [
        "zero_grad",
        "set_gradient_accumulation_boundary", "forward", "backward",
        "set_gradient_accumulation_boundary", "forward", "backward",
        "step",
    ]
    assert [d["is_boundary"] for n, d in calls if n == "set_gradient_accumulation_boundary"] == [False, True]
    assert all(d["scale_wrt_gas"] is False for n, d in calls if n == "backward")
    assert [d["boundary"] for n, d in calls if n == "backward"] == [False, True]


def test_standin_one_rank_step_equals_torch_backend():
    """Stand-in engine: one optimizer step (3 micro-batches, clipping active) through DeepSpeedBackend
    equals the lead's TorchBackend on the same tiny Qwen2 to 1e-6: loss, grad norm, parameters and Adam
    moments. The stand-in's config says 4 accumulation steps: a backend that let DeepSpeed divide by
    them would be 4x off. Both models take the full forward (the DeepSpeed backend must; the torch
    backend's fused log-prob path differs in float rounding, which Adam's first step amplifies on
    near-zero gradients such as k_proj's bias)."""

    def factory(actor, model, config, settings):
        config = dict(config, gradient_accumulation_steps=4, train_batch_size=4 * config["train_micro_batch_size_per_gpu"])
        return standin_engine_factory(actor, model, config, settings)

    t = training()
    model = tiny_model(0)
    model._troupe_full_forward = True
    reference = TorchBackend(model, settings_for("a", t))
    backend = standin_backend(t=t, factory=factory)
    want = run_update(reference, micro=2)
    got = run_update(backend, micro=2)
    assert want["grad_norm"] > t["maxGradNorm"] * 10  # clipping is doing something
    for key in ("loss", "grad_norm", "entropy", "logprob_gap"):
        assert got[key] == pytest.approx(want[key], rel=1e-6, abs=1e-9), key
    ref_params = dict(reference.full_parameters())
    got_params = dict(backend.full_parameters())
    assert ref_params.keys() == got_params.keys()
    for name, value in ref_params.items():
        torch.testing.assert_close(got_params[name], value, rtol=1e-6, atol=1e-6, msg=name)
    initial = dict(tiny_model(0).named_parameters())
    assert max(float((v - initial[k].detach()).abs().max()) for k, v in ref_params.items()) > 1e-3  # the step moved them
    ref_state = [reference.optimizer.state[p] for p in reference.module.parameters()]
    inner = backend.engine.optimizer
    got_state = [inner.state[m] for m in inner.fp32_partitioned_groups_flat]
    for want_s, got_s in zip(ref_state, got_state):
        for key in ("exp_avg", "exp_avg_sq"):
            torch.testing.assert_close(got_s[key], want_s[key], rtol=1e-6, atol=1e-9)


def test_standin_bf16_holds_bf16_parameters_and_fp32_masters():
    """Stand-in engine with the bf16 config: bf16 parameters (half the device bytes), fp32 master weights
    and moments in the ZeRO optimizer, no autocast from the backend; the step runs and is near fp32's."""
    fp32 = standin_backend(t=training())
    bf16 = standin_backend(t=training(precision="bf16"))
    assert bf16.forward_context().__class__.__name__ == "nullcontext"
    assert {p.dtype for p in bf16.model.parameters()} == {torch.bfloat16}
    assert {m.dtype for m in bf16.engine.optimizer.fp32_partitioned_groups_flat} == {torch.float32}
    assert bf16.part_bytes("params") * 2 == fp32.part_bytes("params")
    want, got = run_update(fp32, micro=2), run_update(bf16, micro=2)
    assert got["grad_norm"] == pytest.approx(want["grad_norm"], rel=1e-2)
    assert bf16.part_bytes("optimizer") == 6 * bf16.part_bytes("params")  # fp32 master + 2 fp32 moments


def test_standin_clip_is_the_step_and_refuses_another_max_norm():
    backend = standin_backend()
    backend.zero_grad()
    with pytest.raises(RuntimeError, match="without clip"):
        backend.step()
    with pytest.raises(ValueError, match="training.maxGradNorm"):
        backend.clip(1.0)


def test_standin_enforces_forward_through_engine_and_boundary():
    """The stand-in's own contract checks, so the tests above could fail."""
    engine = StandInDeepSpeedEngine(tiny_model(), deepspeed_config(training(), 2, 1, "cpu"))
    ids = torch.randint(4, VOCAB, (2, 4))
    loss = engine.module(input_ids=ids).logits.mean()
    engine.set_gradient_accumulation_boundary(True)
    with pytest.raises(RuntimeError, match="through the engine"):
        engine.backward(loss, scale_wrt_gas=False)
    engine.zero_grad()
    engine.set_gradient_accumulation_boundary(False)
    engine.backward(engine(input_ids=ids).logits.mean(), scale_wrt_gas=False)
    with pytest.raises(RuntimeError, match="boundary"):
        engine.step()


# ---------------------------------------------------------------------------------------- state
def test_standin_full_parameters_gathers_one_at_a_time():
    backend = standin_backend()
    engine = backend.engine
    engine.calls.clear()
    params = list(backend.full_parameters())
    names = [n for n, _ in backend.model.named_parameters()]
    assert [n for n, _ in params] == names
    gathers = [(n, d) for n, d in engine.calls if n in ("gather", "release")]
    assert [n for n, _ in gathers] == ["gather", "release"] * len(names)
    assert [d["params"] for n, d in gathers if n == "gather"] == [[name] for name in names]
    for (name, value), p in zip(params, backend.model.parameters()):
        assert torch.equal(value, p) and value.data_ptr() != p.data_ptr()  # a copy, valid after the gather


def test_standin_checkpoint_round_trip_resumes_exactly(tmp_path: Path):
    """Full HF weights + every rank's optimizer partition, loaded into a freshly initialised backend,
    continue exactly like the straight run; the weights load with from_pretrained."""
    from transformers import Qwen2ForCausalLM

    straight = standin_backend(seed=0)
    run_update(straight, micro=2, seed=1)
    full = straight.full_state_dict()
    optimizer_state = straight.optimizer_state()
    assert optimizer_state["world_size"] == 1 and len(optimizer_state["deepspeed_zero3_shards"]) == 1
    straight.model.save_pretrained(str(tmp_path), safe_serialization=True, state_dict=dict(full))  # it pops entries
    reloaded = Qwen2ForCausalLM.from_pretrained(str(tmp_path))
    for name, value in reloaded.state_dict().items():
        torch.testing.assert_close(value, full[name], rtol=0, atol=0, msg=name)

    resumed = standin_backend(seed=7)  # different initial weights: everything must come from the checkpoint
    resumed.load_full_state_dict(full)
    resumed.load_optimizer_state(optimizer_state)
    assert "refresh_fp32_params" in resumed.engine.call_names()
    run_update(straight, micro=2, seed=2)
    run_update(resumed, micro=2, seed=2)
    for (name, a), (_, b) in zip(straight.full_parameters(), resumed.full_parameters()):
        assert torch.equal(a, b), name


def test_standin_loaded_weights_survive_the_next_step():
    """Without refresh_fp32_params the ZeRO optimizer's masters would bring the old weights back."""
    backend = standin_backend(seed=0)
    target = {k: v.clone() for k, v in tiny_model(5).state_dict().items()}
    backend.load_full_state_dict(target)
    gathers = [d for n, d in backend.engine.calls if n == "gather"]
    assert gathers and all(d["modifier_rank"] == 0 for d in gathers)
    lr_zero = backend.optimizer.param_groups
    for group in lr_zero:
        group["lr"] = 0.0  # a step that changes nothing but weight decay * 0
    run_update(backend, micro=2)
    for name, value in backend.full_parameters():
        torch.testing.assert_close(value, target[name], rtol=0, atol=0, msg=name)


def test_optimizer_state_refuses_another_world_size():
    backend = standin_backend()
    with pytest.raises(ValueError, match="same world size"):
        backend.load_optimizer_state({"deepspeed_zero3_shards": [{}, {}], "world_size": 2})


# ---------------------------------------------------------------------------------------- residency
def storage(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def test_standin_offload_and_reload_around_phases_train_like_no_offload():
    """Stand-in engines: two DeepSpeed actors taking turns on one device under the lead's residency
    manager with between-phase offload: offload_states/reload_states in the right order, old storages
    replaced, partial reloads keep the other part away, and training equals the same run without offload."""
    t = training()
    moving = {"a": standin_backend("a", t, seed=0), "b": standin_backend("b", t, seed=3)}
    still = {"a": standin_backend("a", t, seed=0), "b": standin_backend("b", t, seed=3)}
    events: list[dict[str, Any]] = []
    manager = ResidencyManager(between_phases=True, report=lambda **e: events.append(e))
    for name, backend in moving.items():
        manager.add(Resident(name, CPU, backend=backend))

    for step, seed in enumerate((1, 2)):
        manager.step = step
        manager.for_rollout(["a", "b"])
        for name in ("a", "b"):
            other = "b" if name == "a" else "a"
            before = [p.ds_tensor for p in moving[other].model.parameters()]  # held: no address reuse
            manager.for_update(name)
            # the other actor's parameter partitions left the device: every one has a new storage
            assert not set(map(storage, before)) & set(map(storage, (p.ds_tensor for p in moving[other].model.parameters())))
            assert moving[other].offloaded == {"params", "optimizer"} and moving[name].offloaded == set()
            run_update(moving[name], micro=2, seed=seed)
            run_update(still[name], micro=2, seed=seed)

    calls_a = [(n, d) for n, d in moving["a"].engine.calls if n in ("offload_states", "reload_states")]
    peak = manager.resident_peak
    whole = {name: b.part_bytes("params") + b.part_bytes("optimizer") for name, b in moving.items()}
    manager.for_everything("check")  # gathering needs the parameters back
    for name in ("a", "b"):
        for (pname, x), (_, y) in zip(moving[name].full_parameters(), still[name].full_parameters()):
            assert torch.equal(x, y), (name, pname)

    # step 0: rollout (optimizer away), a's update (optimizer back), b's update (a entirely away);
    # step 1: rollout (a's params back, its optimizer state stays away), a's update (optimizer back), b's update.
    assert calls_a == [
        ("offload_states", {"include": ["contiguous_grad_buffer", "hp_params", "lp_grads", "optim_states"], "device": "cpu", "pin_memory": False}),
        ("reload_states", {"reloaded": ["contiguous_grad_buffer", "hp_params", "lp_grads", "optim_states"]}),
        ("offload_states", {"include": ["lp_params"], "device": "cpu", "pin_memory": False}),
        ("offload_states", {"include": ["contiguous_grad_buffer", "hp_params", "lp_grads", "optim_states"], "device": "cpu", "pin_memory": False}),
        ("reload_states", {"reloaded": ["lp_params"]}),
        ("reload_states", {"reloaded": ["contiguous_grad_buffer", "hp_params", "lp_grads", "optim_states"]}),
        ("offload_states", {"include": ["lp_params"], "device": "cpu", "pin_memory": False}),
        ("offload_states", {"include": ["contiguous_grad_buffer", "hp_params", "lp_grads", "optim_states"], "device": "cpu", "pin_memory": False}),
    ]
    offload_events = [e for e in events if e["actor"] == "a"]
    assert all(e["bytes"] > 0 for e in offload_events)
    assert peak == max(whole.values()) < sum(whole.values())  # the largest single actor's, not the sum


def test_backward_after_offload_without_reload_raises():
    backend = standin_backend()
    run_update(backend, micro=2)
    assert backend.move_part("optimizer", CPU, pin=False) > 0
    with pytest.raises(RuntimeError, match="reload it first"):
        run_update(backend, micro=2)
    # and the stand-in itself refuses, whoever calls it
    with pytest.raises(RuntimeError, match="offloaded"):
        backend.engine.step()


@pytest.mark.parametrize("offload, moving, message", [
    ({"params": True, "optimizer": False}, "optimizer", "offload.params"),
    ({"params": False, "optimizer": True}, "params", "6596"),
])
def test_parts_deepspeed_keeps_on_the_host_do_not_move_and_the_others_refuse(offload, moving, message):
    backend = standin_backend(t=training(offload=offload))
    kept = "params" if offload["params"] else "optimizer"
    backend.engine.calls.clear()
    assert backend.part_bytes(kept) == 0 and backend.move_part(kept, CPU, pin=False) == 0
    with pytest.raises(RuntimeError, match=message):
        backend.move_part(moving, CPU, pin=False)
    assert [n for n, _ in backend.engine.calls if n in ("offload_states", "reload_states")] == []


# ---------------------------------------------------------------------------------------- the real packages
# Every DeepSpeed / Accelerate / transformers call the backend makes, with the parameter names it passes.
# (where, dotted path in the real package, stand-in object or None, parameter names used)
SIGNATURES: list[tuple[str, str, Any, tuple[str, ...]]] = [
    ("accelerate", "accelerate:Accelerator.__init__", None, ("deepspeed_plugins", "mixed_precision")),
    ("accelerate", "accelerate:Accelerator.prepare", None, ("args",)),
    ("accelerate", "accelerate.utils:DeepSpeedPlugin.__init__", None, ("hf_ds_config",)),
    ("accelerate", "accelerate.utils:DeepSpeedPlugin.set_mixed_precision", None, ("mixed_precision",)),
    ("accelerate", "accelerate.state:AcceleratorState.select_deepspeed_plugin", None, ("name",)),
    ("accelerate", "accelerate.utils.deepspeed:DummyOptim.__init__", None, ("params", "lr", "weight_decay")),
    ("transformers", "transformers.integrations:unset_hf_deepspeed_config", None, ()),
    ("deepspeed", "deepspeed.runtime.engine:DeepSpeedEngine.zero_grad", StandInDeepSpeedEngine.zero_grad, ()),
    ("deepspeed", "deepspeed.runtime.engine:DeepSpeedEngine.set_gradient_accumulation_boundary",
     StandInDeepSpeedEngine.set_gradient_accumulation_boundary, ("is_boundary",)),
    ("deepspeed", "deepspeed.runtime.engine:DeepSpeedEngine.backward", StandInDeepSpeedEngine.backward, ("loss", "scale_wrt_gas")),
    ("deepspeed", "deepspeed.runtime.engine:DeepSpeedEngine.step", StandInDeepSpeedEngine.step, ()),
    ("deepspeed", "deepspeed.runtime.engine:DeepSpeedEngine.was_step_applied", StandInDeepSpeedEngine.was_step_applied, ()),
    ("deepspeed", "deepspeed.runtime.engine:DeepSpeedEngine.get_global_grad_norm", StandInDeepSpeedEngine.get_global_grad_norm, ()),
    ("deepspeed", "deepspeed.runtime.engine:DeepSpeedEngine._zero3_consolidated_16bit_state_dict",
     StandInDeepSpeedEngine._zero3_consolidated_16bit_state_dict, ()),
    ("deepspeed", "deepspeed.runtime.engine:DeepSpeedEngine.offload_states", StandInDeepSpeedEngine.offload_states,
     ("include", "device", "pin_memory")),
    ("deepspeed", "deepspeed.runtime.engine:DeepSpeedEngine.reload_states", StandInDeepSpeedEngine.reload_states, ()),
    ("deepspeed", "deepspeed.zero:GatheredParameters.__init__", StandInGatheredParameters.__init__, ("params", "modifier_rank")),
    ("deepspeed", "deepspeed.runtime.zero.stage3:DeepSpeedZeroOptimizer_Stage3.state_dict", StandInZeroOptimizer.state_dict, ()),
    ("deepspeed", "deepspeed.runtime.zero.stage3:DeepSpeedZeroOptimizer_Stage3.load_state_dict",
     StandInZeroOptimizer.load_state_dict, ("state_dict_list", "load_optimizer_states")),
    ("deepspeed", "deepspeed.runtime.zero.stage3:DeepSpeedZeroOptimizer_Stage3.refresh_fp32_params",
     StandInZeroOptimizer.refresh_fp32_params, ()),
]
# DeepSpeed 0.19.6's parameter lists for the same calls, read from its source (github deepspeedai/DeepSpeed
# at 0.19.6: runtime/engine.py, runtime/zero/stage3.py, runtime/zero/partition_parameters.py) with `ast`,
# since the package cannot be imported here. The stand-in must have exactly these.
DEEPSPEED_0_19_6_PARAMETERS = {
    "DeepSpeedEngine.zero_grad": ["self"],
    "DeepSpeedEngine.set_gradient_accumulation_boundary": ["self", "is_boundary"],
    "DeepSpeedEngine.backward": ["self", "loss", "retain_graph", "scale_wrt_gas"],
    "DeepSpeedEngine.step": ["self", "lr_kwargs"],
    "DeepSpeedEngine.was_step_applied": ["self"],
    "DeepSpeedEngine.get_global_grad_norm": ["self"],
    "DeepSpeedEngine._zero3_consolidated_16bit_state_dict": ["self", "exclude_frozen_parameters"],
    "DeepSpeedEngine.offload_states": ["self", "include", "device", "pin_memory", "non_blocking"],
    "DeepSpeedEngine.reload_states": ["self", "non_blocking"],
    "GatheredParameters.__init__": ["self", "params", "modifier_rank", "fwd_module", "enabled"],
    "DeepSpeedZeroOptimizer_Stage3.state_dict": ["self"],
    "DeepSpeedZeroOptimizer_Stage3.load_state_dict": [
        "self", "state_dict_list", "load_optimizer_states", "load_from_fp32_weights", "checkpoint_folder", "load_serial",
        "param_shapes"],
    "DeepSpeedZeroOptimizer_Stage3.refresh_fp32_params": ["self"],
}


def test_standin_has_deepspeeds_parameter_lists():
    for _, path, standin, _ in SIGNATURES:
        if standin is None:
            continue
        key = path.split(":")[1]
        assert list(inspect.signature(standin).parameters) == DEEPSPEED_0_19_6_PARAMETERS[key], key


# Names the backend reads (not calls) on DeepSpeed objects. Enum members are checked below. Attributes of
# the ZeRO-3 optimizer (stage3.py 0.19.6: `offloaded_states` line 521, `fp32_partitioned_groups_flat` 409,
# `grad_partitions_flat_buffer` 737, the `state` and `param_groups` properties) and each parameter's
# `ds_tensor` exist only on live objects, so only the stand-in (which has them) exercises them here.
ENUM_MEMBERS = {
    "deepspeed.runtime.zero.offload_config:OffloadDeviceEnum": (StandInOffloadDeviceEnum, ("cpu",)),
    "deepspeed.runtime.zero.offload_config:OffloadStateTypeEnum": (
        StandInOffloadStateTypeEnum, ("optim_states", "hp_params", "lp_params", "lp_grads", "contiguous_grad_buffer")),
}


def resolve(path: str) -> Any:
    module, _, attr = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def accepts(fn: Any, names: tuple[str, ...]) -> list[str]:
    sig = inspect.signature(fn)
    kinds = {p.name: p.kind for p in sig.parameters.values()}
    return [n for n in names if n not in kinds]


@pytest.mark.parametrize("package, path, standin, names", SIGNATURES, ids=[s[1].split(":")[1] for s in SIGNATURES])
def test_signature_contract(package, path, standin, names):
    """The parameter names the backend passes exist on the real package where it is installed (Accelerate
    and transformers here), and on the stand-in otherwise, which must then mirror DeepSpeed's names."""
    if package == "deepspeed" and not deepspeed_available():
        assert standin is not None
        assert accepts(standin, names) == [], f"stand-in {standin.__qualname__} lacks {accepts(standin, names)}"
        return
    real = resolve(path)
    assert accepts(real, names) == [], f"{path} lacks {accepts(real, names)}"
    if standin is not None:  # where both exist, the stand-in's parameter names are DeepSpeed's
        assert list(inspect.signature(standin).parameters) == list(inspect.signature(real).parameters)


def test_signature_table_covers_every_call_the_backend_makes():
    """Each `self.engine.X(` / `engine.optimizer.X(` / Accelerate call in deepspeed.py is in the table."""
    source = Path(ds_backend.__file__).read_text()
    tree = ast.parse(source)
    called: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            chain = ast.unparse(node.func)
            if chain.startswith(("self.engine.", "_accelerator.")) or chain in ("self.runtime.gathered_parameters",):
                called.add(node.func.attr)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                "DeepSpeedPlugin", "Accelerator", "DummyOptim", "unset_hf_deepspeed_config"):
            called.add(node.func.id)
    listed = {p.split(":")[1].split(".")[-1] for _, p, _, _ in SIGNATURES}
    listed |= {p.split(":")[1].split(".")[0] for _, p, _, _ in SIGNATURES if p.endswith("__init__")}
    listed |= {"gathered_parameters"}  # deepspeed.zero.GatheredParameters, through the runtime
    listed |= {"select_deepspeed_plugin"}
    assert called - listed == set(), f"calls missing from SIGNATURES: {called - listed}"
    assert {"step", "backward", "offload_states", "reload_states", "set_gradient_accumulation_boundary"} <= called


def test_standin_enums_mirror_deepspeed_members():
    for path, (standin, members) in ENUM_MEMBERS.items():
        target = resolve(path) if deepspeed_available() else standin
        for member in members:
            assert getattr(target, member).value == member


def test_default_factory_names_pip_install_deepspeed_when_missing():
    if deepspeed_available():
        pytest.skip("DeepSpeed is installed here: the missing-package path cannot be shown")
    with pytest.raises(DeepSpeedUnavailable, match="pip install deepspeed"):
        DeepSpeedBackend(tiny_model(), settings_for("a", training()))


def test_single_process_gets_a_one_rank_environment_and_launchers_keep_theirs(monkeypatch):
    """Outside a launcher DeepSpeed's init_distributed would look for MPI: the default factory sets rank 0 of 1."""
    for var in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(var, raising=False)
    ds_backend._one_rank_environment()
    import os

    assert [os.environ[v] for v in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR")] == ["0", "0", "1", "127.0.0.1"]
    assert int(os.environ["MASTER_PORT"]) > 0
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("RANK", "3")
    ds_backend._one_rank_environment()
    assert (os.environ["LOCAL_RANK"], os.environ["RANK"]) == ("1", "3")


def test_real_deepspeed_one_rank_step_equals_torch_backend(monkeypatch):
    """Real DeepSpeed ZeRO-3 through Accelerate on one GPU: one step equals TorchBackend's."""
    pytest.importorskip("deepspeed", reason=NO_DEEPSPEED)
    if not torch.cuda.is_available():
        pytest.skip("DeepSpeed ZeRO-3 through Accelerate needs a CUDA device")
    from deepspeed.runtime.zero.config import DeepSpeedZeroConfig

    for var, value in {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29533"}.items():
        monkeypatch.setenv(var, value)
    cuda = torch.device("cuda", 0)
    t = training()
    cfg = deepspeed_config(t, 2, 1, cuda)
    DeepSpeedZeroConfig(**cfg["zero_optimization"])  # DeepSpeed's own validation of the zero block
    reference = TorchBackend(tiny_model(0).to(cuda), BackendSettings("ref", t, cuda, SINGLE, 2))
    backend = DeepSpeedBackend(tiny_model(0), BackendSettings("a", t, cuda, SINGLE, 2))
    batch, mask, advantages = rollout_batch(VOCAB)
    to = lambda r: Rollout(*(x.to(cuda) for x in (r.prompt_ids, r.prompt_mask, r.completion_ids, r.completion_mask, r.sampler_logprobs)), [])
    want = update_actor(reference, to(batch), mask.to(cuda), advantages.to(cuda), OPTIONS, 1, t["maxGradNorm"], SINGLE, 2, lambda b: None)
    got = update_actor(backend, to(batch), mask.to(cuda), advantages.to(cuda), OPTIONS, 1, t["maxGradNorm"], SINGLE, 2, lambda b: None)
    assert got["grad_norm"] == pytest.approx(want["grad_norm"], rel=1e-4)
    for (name, a), (_, b) in zip(reference.full_parameters(), backend.full_parameters()):
        torch.testing.assert_close(b.float(), a.float(), rtol=1e-4, atol=1e-5, msg=name)
    before = torch.cuda.memory_allocated(cuda)
    backend.move_part("optimizer", torch.device("cpu"), pin=True)
    backend.move_part("params", torch.device("cpu"), pin=True)
    assert torch.cuda.memory_allocated(cuda) < before
    backend.move_part("params", cuda, pin=True)
    backend.move_part("optimizer", cuda, pin=True)


# ---------------------------------------------------------------------------------------- two ranks
def _two_rank_worker(out: str) -> None:
    """One rank of `test_standin_two_ranks_equal_one_process` (run under torch.distributed.run)."""
    from troupe.launch.distributed import destroy_process_group, init_process_group, rank_context_from_env

    torch.set_num_threads(1)
    ctx = rank_context_from_env()
    init_process_group(ctx, CPU)
    t = training()
    backend = DeepSpeedBackend(tiny_model(0), BackendSettings("a", t, CPU, ctx, 2), engine_factory=standin_engine_factory)
    batch, mask, advantages = rollout_batch(VOCAB, 1)
    metrics = update_actor(backend, batch, mask, advantages, OPTIONS, 1, t["maxGradNorm"], ctx, 2, lambda b: None)
    params = {name: value for name, value in backend.full_parameters()}
    state = ctx.broadcast_object(backend.optimizer_state())  # collective; rank 0's is what a checkpoint writes
    backend.load_optimizer_state(state)  # each rank takes its own partition back
    after = {name: value for name, value in backend.full_parameters()}
    if ctx.is_main:
        torch.save({"metrics": metrics, "params": params, "after": after, "shards": len(state["deepspeed_zero3_shards"]),
                    "world_size": state["world_size"], "loss_scale": backend.loss_scale()}, out)
    destroy_process_group()


@pytest.mark.slow
def test_standin_two_ranks_equal_one_process(tmp_path: Path):
    """Stand-in engines on 2 gloo ranks (each a full replica whose gradients the stand-in AVERAGES, as
    ZeRO-3 does): the backend's loss scale (the world size) makes the step equal one process on the whole
    batch; the optimizer state of both ranks reaches rank 0 and loads back on each rank."""
    import os
    import signal
    import subprocess
    import sys

    out = tmp_path / "rank0.pt"
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", __file__, "--two-rank-worker", str(out)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the launcher's session: its ranks too
        output, _ = proc.communicate()
    assert proc.returncode == 0, output.decode(errors="replace")[-4000:]
    got = torch.load(out)
    assert got["loss_scale"] == 2.0 and got["shards"] == 2 and got["world_size"] == 2

    t = training()
    model = tiny_model(0)
    model._troupe_full_forward = True
    reference = TorchBackend(model, settings_for("a", t))
    want = run_update(reference, micro=2)
    # ranks add fp32 gradients in another order than one process: ~1e-6 relative (ENVIRONMENT.md)
    assert got["metrics"]["grad_norm"] == pytest.approx(want["grad_norm"], rel=1e-5)
    for name, value in reference.full_parameters():
        torch.testing.assert_close(got["params"][name], value, rtol=1e-5, atol=1e-5, msg=name)
        assert torch.equal(got["after"][name], got["params"][name]), name


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--two-rank-worker":
    _two_rank_worker(sys.argv[2])
