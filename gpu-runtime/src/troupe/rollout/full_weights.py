"""What an asynchronous producer samples with, whatever the actor's training backend does with its parameters.

A plain backend ("torch", one replica per rank) trains the module itself: its trained parameters are handed over
as they are. A sharded backend (`TrainBackend.shards`: fsdp2's DTensors, DeepSpeed ZeRO-3's partitions) holds
only a slice of each parameter per rank: the producer's copy is a plain module of the same architecture, rebuilt
from the actor's spec as build_actors built it, loaded with the full parameters the backend gathers
(`full_parameters`), and each publish gathers them again. Gathering is a collective: every rank calls these
functions at the same point of its loop (each rank runs its own producer, so each has a copy to fill).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import torch

from ..models.loading import load_actor_model
from ..models.lora import apply_lora

if TYPE_CHECKING:
    from ..actors import Actor


def shards(actor: "Actor") -> bool:
    """Whether the actor's parameters are split over ranks (its module cannot be copied as it is)."""
    return actor.backend is not None and actor.backend.shards


def trained_tensors(actor: "Actor") -> dict[str, torch.Tensor]:
    """The full values of the parameters an update changes (all of a full-weight actor; a LoRA actor's adapter),
    by the module's parameter names. A sharded actor's are gathered: a collective every rank joins."""
    model = actor.loaded.model
    trained = {n for n, p in model.named_parameters() if p.requires_grad}
    if not shards(actor):
        return {n: p.detach() for n, p in model.named_parameters() if n in trained}
    assert actor.backend is not None
    return {n: t for n, t in actor.backend.full_parameters() if n in trained}


def plain_copy(actor: "Actor", work_dir: Path) -> torch.nn.Module:
    """A sharded actor's sampling copy: its architecture rebuilt from its spec (initialised under a forked RNG, so
    the run's draws are the synchronous loop's), every parameter set to the gathered full value (a collective),
    on the actor's device, `requires_grad` as the trainer's (CPU kernels differ for parameters without it)."""
    assert actor.backend is not None
    with torch.random.fork_rng(devices=[]):
        module = load_actor_model(actor.spec, actor.index, work_dir).model
        if actor.section.training.lora is not None:
            apply_lora(module, actor.section.training.lora, actor.index)
    trained = {n: p.requires_grad for n, p in actor.loaded.model.named_parameters()}
    full = dict(actor.backend.full_parameters())
    params = dict(module.named_parameters())
    if set(full) != set(params):
        raise RuntimeError(
            f'actor "{actor.name}": the rebuilt sampling copy has other parameters than the sharded trainer '
            f"(only in the copy: {sorted(set(params) - set(full))[:3]}, only in the trainer: {sorted(set(full) - set(params))[:3]})"
        )
    with torch.no_grad():
        for name, param in params.items():
            param.copy_(full[name].to(param.dtype))
            param.requires_grad_(trained[name])
    return module.to(actor.device)
