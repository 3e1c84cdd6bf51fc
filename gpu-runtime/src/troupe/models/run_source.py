"""Actors that start from another run's checkpoint: `model: {source: "run", runId, step, actor?}`.

A run's folder is `<runs root>/<run id>/` (the runner's layout: apps/runner/src/run/materialise.ts), its
checkpoints `checkpoints/step-<N>/<actor>/` (checkpointing.py). The runs root is `TROUPE_RUNS_ROOT`, else the
folder this run's work folder sits in, so a run finds the runs that ran beside it on the same host.

Full weights load with `from_pretrained`. A LoRA adapter is loaded onto the base that run trained it on
(read from that run's spec.json, recursively when that base is itself a run) and merged into it, so this run
starts from plain weights: its own `training.lora`, if any, is a fresh adapter on top.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import torch

from ..spec import SpecError
from .loaded import LoadedModel, _eos_from_generation_config
from .lora import apply_lora
from .saved_weights import _load_adapter
from .tokenizer import load_tokenizer

ADAPTER_FILE = "adapter_model.safetensors"
ACTOR_SPEC_FILE = "troupe_actor.json"  # checkpointing.py writes it beside an adapter


def runs_root(work_dir: Path) -> Path:
    return Path(os.environ.get("TROUPE_RUNS_ROOT") or work_dir.resolve().parent)


def checkpoint_part(source: dict[str, Any], actor_name: str, index: int, work_dir: Path) -> tuple[Path, Path, str]:
    """(the actor's checkpoint folder, the origin run's folder, the origin actor's name); field-named refusals."""
    p = f"actors.{index}.model"
    root = runs_root(work_dir)
    origin = root / source["runId"]
    if not origin.is_dir():
        raise SpecError.at(f"{p}.runId", f'no run "{source["runId"]}" on this host (looked for {origin}; the runs root is TROUPE_RUNS_ROOT or the folder beside this run\'s)')
    folder = origin / "checkpoints" / f"step-{source['step']}"
    if not folder.is_dir():
        steps = sorted(int(f.name.split("-", 1)[1]) for f in (origin / "checkpoints").glob("step-*") if f.name.split("-", 1)[1].isdigit())
        have = f"it has steps {', '.join(map(str, steps))}" if steps else "it has no checkpoint"
        raise SpecError.at(f"{p}.step", f'run "{source["runId"]}" has no checkpoint at step {source["step"]} ({have})')
    actor = source.get("actor") or actor_name
    part = folder / actor
    if not part.is_dir():
        held = sorted(f.name for f in folder.iterdir() if f.is_dir())
        field = f"{p}.actor" if source.get("actor") else f"{p}.runId"
        raise SpecError.at(field, f'checkpoint step-{source["step"]} of run "{source["runId"]}" holds no actor "{actor}" (it holds {", ".join(held) or "none"}); set model.actor')
    return part, origin, actor


def origin_actor(origin: Path, actor: str, field: str) -> tuple[dict[str, Any], int]:
    spec_path = origin / "spec.json"
    try:
        spec = json.loads(spec_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise SpecError.at(field, f"cannot read that run's spec ({spec_path}): {e}") from e
    for i, a in enumerate(spec.get("actors", [])):
        if a.get("name") == actor:
            return a, i
    raise SpecError.at(field, f'that run\'s spec has no actor "{actor}"')


def load_from_run(actor_spec: dict[str, Any], index: int, work_dir: Path, load_base: Callable[..., LoadedModel]) -> Any:
    """The LoadedModel of another run's checkpoint (models.LoadedModel); `load_base` loads an adapter's base model
    (loading.load_actor_model, which called this: that base may itself be a run's)."""
    from transformers import AutoModelForCausalLM

    source = actor_spec["model"]
    part, origin, name = checkpoint_part(source, actor_spec["name"], index, work_dir)
    described = f'run {source["runId"]} step {source["step"]} ({name})'
    if not (part / ADAPTER_FILE).is_file():
        model = AutoModelForCausalLM.from_pretrained(str(part), dtype=torch.float32)
        tokenizer = load_tokenizer(str(part), extra_eos_ids=_eos_from_generation_config(model))
        return LoadedModel(model, tokenizer, f"{described}, full weights")
    saved = part / ACTOR_SPEC_FILE
    if saved.is_file():
        base_spec, base_index = json.loads(saved.read_text(encoding="utf-8")), index
    else:
        base_spec, base_index = origin_actor(origin, name, f"actors.{index}.model.runId")
    if base_spec["model"]["source"] == "tiny":
        raise SpecError.at(
            f"actors.{index}.model.runId",
            f"{described} is a LoRA adapter on a tiny preset, whose randomly initialised base weights are not saved: start from a run that trained full weights",
        )
    lora = base_spec.get("training", {}).get("lora")
    if lora is None:
        raise SpecError.at(f"actors.{index}.model.runId", f"{described} holds an adapter, but that run's actor has no training.lora")
    loaded = load_base(base_spec, base_index, origin)
    merge_adapter(loaded.model, lora, part, index)
    return LoadedModel(loaded.model, loaded.tokenizer, f"{described}, LoRA adapter merged into {loaded.description}")


def merge_adapter(model: torch.nn.Module, lora: dict[str, Any], folder: Path, index: int) -> None:
    """Inject the adapter, load its weights, fold them into the base layers and drop the LoRA modules."""
    from peft.tuners.tuners_utils import BaseTunerLayer

    apply_lora(model, lora, index)
    _load_adapter(model, folder)
    for name, module in list(model.named_modules()):
        if isinstance(module, BaseTunerLayer):
            module.merge()
            parent_name, _, child = name.rpartition(".")
            parent = model.get_submodule(parent_name) if parent_name else model
            setattr(parent, child, module.get_base_layer())
    del model._troupe_lora_config  # type: ignore[attr-defined]
    model.requires_grad_(True)
