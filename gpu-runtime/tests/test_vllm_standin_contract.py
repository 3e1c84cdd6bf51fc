"""The signature contract of every vLLM call the engine makes (vllm_engine.VLLM_CALLS): each parameter name we
pass exists on the real package where vLLM is installed, and on the stand-in otherwise (which must then
carry the same names, or the stand-in tests would prove nothing about the real calls).

The engine's calls are also checked against VLLM_CALLS itself: a call site with a name missing from the
list fails here, so the list cannot fall behind the code."""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import inspect
from pathlib import Path
from typing import Any

import pytest
import vllm_standin

from troupe.engines.rollout import vllm_engine
from troupe.engines.rollout.vllm_engine import VLLM_CALLS

REAL = importlib.util.find_spec("vllm") is not None


def _target(module: Any, call: str) -> Any:
    obj = module
    for part in call.split("."):  # "LLM.generate", "config.WeightTransferConfig"
        obj = getattr(obj, part)
    return obj


def _accepted(module: Any, call: str) -> set[str]:
    target = _target(module, call)
    fn = target.__init__ if inspect.isclass(target) and not dataclasses.is_dataclass(target) else target
    params = inspect.signature(fn).parameters
    names = {n for n, p in params.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    if call == "LLM" and any(p.kind == p.VAR_KEYWORD for p in params.values()):
        # LLM(**kwargs) forwards the rest to EngineArgs: its fields are accepted names too.
        names |= {f.name for f in dataclasses.fields(module.EngineArgs)}
    if call == "SamplingParams" and not names - {"self"}:
        # msgspec structs: their fields are the constructor's keywords.
        names = set(getattr(target, "__struct_fields__", ()))
    return names


def _check(module: Any) -> None:
    for call, used in VLLM_CALLS.items():
        missing = set(used) - _accepted(module, call)
        assert not missing, f"{getattr(module, '__name__', module)}.{call} has no parameter(s) {sorted(missing)}"


@pytest.mark.skipif(not REAL, reason="vLLM is not installed here: the stand-in's names are checked instead (next test)")
def test_every_vllm_call_matches_the_installed_package():
    import vllm

    import vllm.config

    _check(vllm)
    # The IPC backend's update_info carries the keys the engine sends (is_checkpoint_format aside).
    from vllm.distributed.weight_transfer.ipc_engine import IPCWeightTransferUpdateInfo

    fields = {f.name for f in dataclasses.fields(IPCWeightTransferUpdateInfo)}
    assert set(vllm_engine.IPC_UPDATE_KEYS) <= fields, set(vllm_engine.IPC_UPDATE_KEYS) - fields


def test_every_vllm_call_matches_the_standin():
    _check(vllm_standin)
    assert set(vllm_engine.IPC_UPDATE_KEYS) == vllm_standin.IPC_UPDATE_KEYS


def test_the_call_list_covers_every_call_site():
    """Keyword names at each vLLM call in vllm_engine.py are in VLLM_CALLS (positional arguments are not used)."""
    tree = ast.parse(Path(vllm_engine.__file__).read_text())
    sites = {
        "LLM": "LLM", "SamplingParams": "SamplingParams", "LoRARequest": "LoRARequest",
        "generate": "LLM.generate", "sleep": "LLM.sleep", "wake_up": "LLM.wake_up",
        "reset_prefix_cache": "LLM.reset_prefix_cache",
        "init_weight_transfer_engine": "LLM.init_weight_transfer_engine", "start_weight_update": "LLM.start_weight_update",
        "update_weights": "LLM.update_weights", "finish_weight_update": "LLM.finish_weight_update",
        "WeightTransferConfig": "config.WeightTransferConfig",
    }
    seen = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner = node.func.value
        on_vllm = isinstance(owner, ast.Attribute) and owner.attr in ("vllm", "llm", "config")
        if not on_vllm or node.func.attr not in sites:
            continue
        call = sites[node.func.attr]
        seen.add(call)
        names = {k.arg for k in node.keywords if k.arg is not None}
        if any(k.arg is None for k in node.keywords):  # LLM(**kwargs): the dict's keys are checked below
            continue
        assert names <= set(VLLM_CALLS[call]), (call, names - set(VLLM_CALLS[call]))
        if call != "LLM.generate":
            assert not node.args, f"{call}: pass arguments by name, so the contract can check them"
    assert seen == set(sites.values())


def test_the_engine_constructs_llm_with_listed_names(tmp_path, monkeypatch):
    """The keyword dict given to LLM(**kwargs), with every option on, uses only listed names."""
    seen: dict[str, Any] = {}

    class Spy:
        def __init__(self, **kwargs: Any) -> None:
            seen.update(kwargs)

        def init_weight_transfer_engine(self, request: Any) -> None:
            seen["init_info"] = request["init_info"]

    module = type(vllm_standin)("spy")
    module.LLM, module.config = Spy, vllm_standin.config
    from troupe.engines.rollout.vllm_engine import VllmEngine, VllmSettings

    VllmEngine(str(tmp_path), None, VllmSettings(tensor_parallel=2, max_model_len=64), seed=1, lora_rank=8, distributed=True, vllm=module)
    init_info = seen.pop("init_info")
    assert set(seen) <= set(VLLM_CALLS["LLM"]), set(seen) - set(VLLM_CALLS["LLM"])
    assert seen["weight_transfer_config"].backend == "ipc" and init_info == {}
    assert seen["enable_sleep_mode"] is True and seen["tensor_parallel_size"] == 2 and seen["max_model_len"] == 64


def test_engine_defaults_equal_the_contracts():
    """An actor without `vllm` gets VllmSettings' defaults: they must be the schema's (zod's) defaults."""
    import json

    from troupe.engines.rollout.vllm_engine import VllmSettings

    schema = json.loads((Path(vllm_engine.__file__).parents[2] / "schema" / "runspec.v1.schema.json").read_text())
    props = schema["properties"]["actors"]["items"]["properties"]["vllm"]["properties"]
    defaults = {k: v["default"] for k, v in props.items() if "default" in v}
    assert VllmSettings.from_spec({}) == VllmSettings.from_spec({"vllm": defaults})
    assert set(props) == {"gpuMemoryUtilization", "tensorParallel", "sleepLevel", "maxModelLen", "enforceEager"}
