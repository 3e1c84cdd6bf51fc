"""`python -m troupe capabilities --json`: what this runtime can run on this host, for the runner to publish.

Everything is probed, nothing assumed: GPUs with their memory, the engines installed with their versions
(an engine is listed only if it imports; every engine the runners page and the launch checks name
is in ENGINES: torch, vLLM, DeepSpeed, Liger, flash-attn, PEFT, Ray, Triton, PettingZoo, grpcio and protobuf
for gRPC remote environments, and CUDA is `cuda`), the train backends and cluster kinds that would be accepted
here, and whether user code can be sandboxed. Heavy engines are found with importlib.metadata (no
import of vLLM or DeepSpeed just to list them)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import platform
from typing import Any

from .. import sandbox as sandboxing
from ..envs.games.chess import chess_js_version
from .host_policy import host_policy
from .proc import proc_kb_bytes

ENGINES = (
    "torch", "transformers", "accelerate", "peft", "vllm", "deepspeed", "liger-kernel", "flash-attn", "ray", "triton", "pettingzoo",
    "grpcio", "protobuf", "tensorboard", "wandb", "mcp",
)
_MODULES = {"liger-kernel": "liger_kernel", "flash-attn": "flash_attn", "grpcio": "grpc", "protobuf": "google.protobuf"}


def engine_versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in ENGINES:
        module = _MODULES.get(name, name)
        try:
            found_spec = importlib.util.find_spec(module)
        except ImportError:  # a dotted module whose parent package is absent (google.protobuf without google)
            found_spec = None
        if found_spec is None:
            found[name] = None
            continue
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "unknown"

    found["chess.js"] = chess_js_version()  # the chess server's chess.js (Node), not a Python package
    return found


def gpus() -> list[dict[str, Any]]:
    import torch

    if not torch.cuda.is_available():
        return []
    out = []
    for i in range(torch.cuda.device_count()):
        free, total = torch.cuda.mem_get_info(i)
        props = torch.cuda.get_device_properties(i)
        out.append({"index": i, "name": props.name, "totalBytes": int(total), "freeBytes": int(free), "bf16": torch.cuda.is_bf16_supported()})
    return out


def host_memory_bytes() -> int | None:
    return proc_kb_bytes("/proc/meminfo", "MemTotal")


def capabilities() -> dict[str, Any]:
    import torch

    engines = engine_versions()
    cuda = torch.cuda.is_available()
    sandbox = sandboxing.sandbox_status()  # the package's attribute: the runner-requirements tests stand in for the probe
    devices = gpus()
    backends = ["torch", "fsdp2"] + (["deepspeed"] if engines["deepspeed"] and cuda else [])
    # What spec/support.py accepts here: bf16 everywhere on CPU, on CUDA only where every GPU has it.
    bf16 = not cuda or all(g["bf16"] for g in devices)
    return {
        "runtimeVersion": importlib.metadata.version("troupe"),
        "hostname": platform.node(),
        "python": platform.python_version(),
        "cuda": torch.version.cuda if cuda else None,
        "gpus": devices,
        "cpuCount": os.cpu_count(),
        "memoryBytes": host_memory_bytes(),
        "engines": engines,
        "trainBackends": backends,
        "rolloutBackends": ["hf", "openai"] + (["vllm"] if engines["vllm"] and cuda else []),
        "clusterKinds": ["local"] + (["ray"] if engines["ray"] else []),
        "precisions": ["fp32"] + (["bf16"] if bf16 else []),
        "sandbox": {"usable": sandbox.usable, "mode": sandbox.mode, "detail": sandbox.reason},
        "hostPolicy": host_policy(),
    }
