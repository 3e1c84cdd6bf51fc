"""`python -m troupe capabilities --json`: what a runner publishes about its host, probed, not assumed."""

import importlib.util
import json
import subprocess
import sys


def test_capabilities_report_what_this_host_has():
    out = subprocess.run([sys.executable, "-m", "troupe", "capabilities", "--json"], capture_output=True, text=True, timeout=300, check=True)
    found = json.loads(out.stdout)
    import torch

    assert found["engines"]["torch"] == torch.__version__
    assert (found["engines"]["deepspeed"] is None) == (importlib.util.find_spec("deepspeed") is None)
    assert (found["engines"]["vllm"] is None) == (importlib.util.find_spec("vllm") is None)
    assert ("deepspeed" in found["trainBackends"]) == (found["engines"]["deepspeed"] is not None and torch.cuda.is_available())
    assert ("ray" in found["clusterKinds"]) == (importlib.util.find_spec("ray") is not None)
    assert len(found["gpus"]) == (torch.cuda.device_count() if torch.cuda.is_available() else 0)
    assert found["cpuCount"] >= 1 and found["memoryBytes"] > 0
    assert set(found["sandbox"]) == {"usable", "mode", "detail"}


def test_capabilities_name_every_engine_the_runners_page_shows():
    from troupe.host.capabilities import capabilities

    found = capabilities()
    # torch, vLLM, DeepSpeed, Liger, flash-attn, PEFT, Ray, Triton (CUDA is `cuda`): listed installed or not.
    assert {"torch", "vllm", "deepspeed", "liger-kernel", "flash-attn", "peft", "ray", "triton"} <= set(found["engines"])
    assert found["hostname"]
    import torch

    # What support.py accepts here: bf16 on CPU always, on CUDA where the GPUs have it.
    assert ("bf16" in found["precisions"]) == (not torch.cuda.is_available() or all(g["bf16"] for g in found["gpus"]))
    assert ("vllm" in found["rolloutBackends"]) == (found["engines"]["vllm"] is not None and torch.cuda.is_available())
