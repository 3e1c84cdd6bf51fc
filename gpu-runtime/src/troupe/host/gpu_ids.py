"""GPU numbering: the runner's own indices in the spec, CUDA's renumbered ones in the process (issue #25).

A runner grants a run some of its GPUs and starts the runtime with CUDA_VISIBLE_DEVICES set to them, so
CUDA numbers them 0, 1, ... in the process; it also sets TROUPE_GPU_IDS to the same host indices, in the
same order. `placement.gpus` is in the host's numbering (what /runners and nvidia-smi show), so
`placement.gpus: [1]` on a 2-GPU runner runs on cuda:0 of a process that sees only GPU 1. Without
TROUPE_GPU_IDS (a researcher's own `python -m troupe run`), placement indices are CUDA's own, as before.

Without any placement, on a GPU, the local models are spread over the visible GPUs, one each in the order
of the spec (a LoRA actor on a base another one loaded goes where that base is): the runner claims one GPU
per such model by default (packages/contracts/src/gpuClaim.ts), and with fewer GPUs they share them.
"""

from __future__ import annotations

import os
from typing import Any

from ..models.shared_lora import base_key

ENV = "TROUPE_GPU_IDS"


def host_gpu_ids(environ: dict[str, str] | None = None) -> list[int] | None:
    """The host indices of the visible GPUs, in CUDA's order; None when not told (CUDA's own numbering)."""
    raw = (os.environ if environ is None else environ).get(ENV)
    if raw is None:
        return None
    try:
        return [int(part) for part in raw.split(",") if part.strip() != ""]
    except ValueError:
        raise ValueError(f"{ENV}={raw!r}: expected comma-separated GPU indices, as the runner sets it") from None


def local_index(host_id: int, environ: dict[str, str] | None = None) -> int:
    """CUDA's index in this process of the host's GPU `host_id` (the spec check refuses ungranted ones first)."""
    ids = host_gpu_ids(environ)
    if ids is None:
        return host_id
    if host_id not in ids:
        raise ValueError(f"GPU {host_id} was not granted to this run (it holds {ids or 'none'})")
    return ids.index(host_id)


def ungranted_gpus(gpus: list[int], environ: dict[str, str] | None = None) -> list[int]:
    """The placement's GPUs the runner did not grant this run (none when no runner said: CUDA's numbering)."""
    ids = host_gpu_ids(environ)
    return [] if ids is None else [g for g in gpus if g not in ids]


def granted_gpus_text(environ: dict[str, str] | None = None) -> str:
    ids = host_gpu_ids(environ)
    return ", ".join(map(str, ids)) if ids else "none"


def spread_index(spec: dict[str, Any], actor_name: str, device_count: int) -> int | None:
    """CUDA index for an unplaced actor when no local actor has a placement (None: use the run's device)."""
    local = [a for a in spec["actors"] if a["backend"] != "openai"]
    if device_count <= 1 or any(a["placement"]["gpus"] or a["placement"].get("processes") is not None for a in local):
        return None
    seen: set[str] = set()
    ordinal = 0
    for a in local:
        key = base_key(a)
        if key is not None and key in seen:
            if a["name"] == actor_name:
                return None  # on its base's device (build_actors puts it there)
            continue
        if key is not None:
            seen.add(key)
        if a["name"] == actor_name:
            return ordinal % device_count
        ordinal += 1
    return None
