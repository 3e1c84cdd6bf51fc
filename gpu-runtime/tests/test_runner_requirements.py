"""Drift test: the contracts' table of what a spec asks of a runner (runner-requirements.v1.json, generated
from packages/contracts/src/runners.ts) against the runtime's own refusals (spec/support.py) and what the
runtime reports about a host (capabilities.py).

For every requirement, a spec that asks for it is checked on simulated hosts (no CUDA, CUDA without each
engine, without bf16, with too few GPUs, with everything): the fields support.py refuses for want of
something (refused on that host, not on the host with everything) must be exactly the fields the table
says that host's capabilities cannot meet. A rule added on one side only fails here."""

from __future__ import annotations

import copy
import importlib.util
import json
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import pytest
from runtime_helpers import demo_input

import troupe.host.capabilities as capabilities_module
import troupe.sandbox as sandbox_module
from troupe import validate_spec
from troupe.sandbox.availability import SandboxStatus
from troupe.spec import sandbox_rules
from troupe.spec import support
from troupe.spec.runner_requirements import has_capability, requirements, spec_requirements, unmet_requirements

EXTRAS = ("vllm", "deepspeed", "peft", "ray", "pettingzoo", "grpcio", "protobuf", "tensorboard", "wandb", "mcp", "chess.js")


@dataclass(frozen=True)
class Host:
    name: str
    cuda: bool
    gpu_count: int = 0
    bf16: bool = True
    installed: frozenset[str] = field(default_factory=frozenset)
    sandbox: bool = True  # bubblewrap works (or the operator set TROUPE_SANDBOX=off)


FULL = Host("everything", cuda=True, gpu_count=8, installed=frozenset(EXTRAS))
HOSTS = [
    FULL,
    Host("bare CPU", cuda=False),
    Host("CPU with every extra", cuda=False, installed=frozenset(EXTRAS)),
    replace(FULL, name="one GPU", gpu_count=1),
    replace(FULL, name="no bf16", bf16=False),
    *[replace(FULL, name=f"CUDA without {extra}", installed=frozenset(EXTRAS) - {extra}) for extra in EXTRAS],
    replace(FULL, name="no sandbox", sandbox=False),
]


def _hf(actor: dict[str, Any]) -> None:
    actor["model"] = {"source": "huggingface", "id": "Qwen/Qwen2.5-0.5B-Instruct"}


def _vllm(d: dict[str, Any]) -> None:
    _hf(d["actors"][0])
    d["actors"][0]["backend"] = "vllm"


def _deepspeed(d: dict[str, Any]) -> None:
    d["actors"][0]["training"]["backend"] = "deepspeed"


def _lora(d: dict[str, Any]) -> None:
    d["actors"][0]["training"]["lora"] = {"rank": 4}


def _gpus(d: dict[str, Any]) -> None:
    d["actors"][0]["placement"] = {"gpus": [0, 1]}


def _bf16(d: dict[str, Any]) -> None:
    d["actors"][0]["training"]["precision"] = "bf16"


def _ray(d: dict[str, Any]) -> None:
    d["cluster"] = {"kind": "ray"}


def _cuda_device(d: dict[str, Any]) -> None:
    d["trainer"]["device"] = "cuda"


def _game(d: dict[str, Any]) -> None:
    # Until the `game` kind (#17) is in the schema the example cannot validate: see _spec's skip.
    d["environments"][0]["kind"] = "game"


def _grpc(d: dict[str, Any]) -> None:
    env = d["environments"][0]
    env.update({"kind": "remote", "url": "grpc://envhost:8101", "rewards": []})


def _python_reward(d: dict[str, Any]) -> None:
    d["rewards"][0]["source"] = {"kind": "python", "code": "def reward(prompt, completion, **row):\n    return 1.0\n"}


def _code(d: dict[str, Any]) -> None:
    env = {**copy.deepcopy(d["environments"][0]), "name": "code", "kind": "code", "rewards": []}
    env.pop("url", None)
    d["environments"].append(env)


def _tools(d: dict[str, Any]) -> None:
    env = {**copy.deepcopy(d["environments"][0]), "name": "tools", "kind": "tools", "rewards": [{"reward": d["rewards"][0]["name"]}]}
    env.pop("url", None)
    d["environments"].append(env)


def _tensorboard(d: dict[str, Any]) -> None:
    d["trainer"].setdefault("trackers", []).append({"kind": "tensorboard"})


def _wandb(d: dict[str, Any]) -> None:
    d["trainer"].setdefault("trackers", []).append({"kind": "wandb", "project": "troupe"})


def _chess(d: dict[str, Any]) -> None:
    env = {**copy.deepcopy(d["environments"][0]), "name": "chess", "kind": "game", "game": {"name": "chess"}, "rewards": []}
    env.pop("url", None)
    d["environments"].append(env)


def _mcp(d: dict[str, Any]) -> None:
    env = {**copy.deepcopy(d["environments"][0]), "name": "mcp-tools", "kind": "tools", "rewards": [{"reward": d["rewards"][0]["name"]}]}
    env.pop("url", None)
    env["tools"] = {"builtin": [], "mcp": [{"kind": "mcp", "url": "http://127.0.0.1:9000/mcp"}]}
    d["environments"].append(env)


# One spec per requirement of the table (a requirement without an example fails test_every_requirement_has_an_example).
EXAMPLES: dict[str, Callable[[dict[str, Any]], None]] = {
    "vllm": _vllm,
    "deepspeed": _deepspeed,
    "lora": _lora,
    "gpus": _gpus,
    "bf16": _bf16,
    "ray": _ray,
    "cudaDevice": _cuda_device,
    "pettingzoo": _game,
    "grpc": _grpc,
    "pythonReward": _python_reward,
    "codeEnvironment": _code,
    "toolsEnvironment": _tools,
    "tensorboard": _tensorboard,
    "wandb": _wandb,
    "mcp": _mcp,
    "chess": _chess,
}


def _kind_exists(kind: str) -> bool:
    from troupe.spec import runspec_schema

    return f'"{kind}"' in json.dumps(runspec_schema())


def _spec(*mutations: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    if _game in mutations and not _kind_exists("game"):
        pytest.skip('environment kind "game" is not in the RunSpec yet (#17): its PettingZoo requirement is checked once it is')
    doc = demo_input()
    for mutate in mutations:
        mutate(doc)
    return validate_spec(doc)


def _host_caps(host: Host, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What capabilities.py reports on this host: its probes answer as the host would."""
    import torch

    real = capabilities_module.engine_versions()
    engines = {name: (real.get(name) or "1.0") if name in host.installed else None for name in real}
    for name in ("torch", "transformers", "accelerate", "triton"):
        engines[name] = real[name]
    devices = [{"index": i, "name": "Standin GPU", "totalBytes": 80 << 30, "freeBytes": 80 << 30, "bf16": host.bf16} for i in range(host.gpu_count)]
    with monkeypatch.context() as m:
        m.setattr(capabilities_module, "engine_versions", lambda: engines)
        m.setattr(capabilities_module, "gpus", lambda: devices)
        m.setattr(torch.cuda, "is_available", lambda: host.cuda)
        m.setattr(torch.version, "cuda", "12.8")
        m.setattr(sandbox_module, "sandbox_status", lambda: _sandbox(host))
        return capabilities_module.capabilities()


def _refused(spec: dict[str, Any], host: Host, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, *args: Any, **kwargs: Any) -> Any:
        root = name.split(".")[0]
        if root in EXTRAS:
            return real_find_spec("json") if root in host.installed else None
        return real_find_spec(name, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(importlib.util, "find_spec", find_spec)
        m.setattr(support, "ray_available", lambda: "ray" in host.installed)
        m.setattr(support, "deepspeed_available", lambda: "deepspeed" in host.installed)
        m.setattr(support, "peft_available", lambda: "peft" in host.installed)
        m.setattr(support, "vllm_available", lambda: "vllm" in host.installed, raising=False)
        m.setattr(support, "pettingzoo_available", lambda: "pettingzoo" in host.installed, raising=False)
        m.setattr(support, "chess_available", lambda: "chess.js" in host.installed)
        m.setattr(support, "grpc_available", lambda: {"grpcio", "protobuf"} <= host.installed)
        m.setattr(sandbox_rules, "sandbox_status", lambda: _sandbox(host))
        issues = support.support_issues(spec, cuda_available=host.cuda, gpu_count=host.gpu_count, bf16_supported=host.bf16)
        issues += sandbox_rules.sandbox_issues(spec)
    return {i.path for i in issues}


def _sandbox(host: Host) -> SandboxStatus:
    return SandboxStatus("bwrap", True, "bubblewrap") if host.sandbox else SandboxStatus("bwrap", False, "bubblewrap is not installed")


def test_every_requirement_has_an_example_and_known_capability_keys():
    real = capabilities_module.capabilities()
    assert {r.id for r in requirements()} == set(EXAMPLES)
    for req in requirements():
        for key in req.needs:
            has_capability(real, key)  # raises on a key the runtime does not report
            group, _, name = key.partition(".")
            if group == "engines":
                assert name in real["engines"], f"{req.id} needs {key}, which capabilities.py never reports"


@pytest.mark.parametrize("requirement", sorted(EXAMPLES))
@pytest.mark.parametrize("host", HOSTS, ids=lambda h: h.name)
def test_support_refuses_exactly_what_the_table_says(requirement: str, host: Host, monkeypatch: pytest.MonkeyPatch):
    spec = _spec(EXAMPLES[requirement])
    assert requirement in {n.requirement.id for n in spec_requirements(spec)}
    everywhere = _refused(spec, FULL, monkeypatch)
    for_want = _refused(spec, host, monkeypatch) - everywhere
    table = {n.path for n in unmet_requirements(spec, _host_caps(host, monkeypatch))}
    assert for_want == table, (
        f"on a host with {host.name}: support.py refuses {sorted(for_want)} for want of something, "
        f"the contracts' table says {sorted(table)} (packages/contracts/src/runners.ts RUNNER_REQUIREMENTS)"
    )


def test_the_host_with_everything_accepts_every_requirement(monkeypatch: pytest.MonkeyPatch):
    # DeepSpeed with LoRA is refused on any host (deepspeed_config.py), so DeepSpeed is checked on its own above.
    spec = _spec(*(mutate for name, mutate in EXAMPLES.items() if name not in ("deepspeed", "pettingzoo")))
    needs = {n.path for n in spec_requirements(spec)}
    assert needs, "the combined spec asks for nothing"
    assert unmet_requirements(spec, _host_caps(FULL, monkeypatch)) == []
    assert not needs & _refused(spec, FULL, monkeypatch), "support.py refuses a requirement on the host that has everything"


def test_a_bare_host_misses_what_the_combined_spec_needs(monkeypatch: pytest.MonkeyPatch):
    spec = _spec(*(mutate for name, mutate in EXAMPLES.items() if name != "pettingzoo"))
    bare = Host("bare", cuda=False)
    unmet = {n.path for n in unmet_requirements(spec, _host_caps(bare, monkeypatch))}
    assert {"actors.0.backend", "actors.0.training.backend", "actors.0.placement.gpus", "trainer.device"} <= unmet
    assert "actors.0.training.precision" not in unmet  # bf16 trains on CPU
    assert copy.deepcopy(unmet) <= _refused(spec, bare, monkeypatch)
