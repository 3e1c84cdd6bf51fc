"""The run's actors: each local model loaded once, on its device, at its precision, with its train backend.

`Actor` lives here (not in train.py) so that checkpointing, evaluation, rollouts and the update can
name it without importing the training loop. Each actor holds its typed section of the RunSpec (`section`:
model, training, sampling, placement) and its device; `spec` is the same section as its JSON document, for
the parts that still read a dict.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from .engines.rollout.api_actor import ApiActor, build_api_actor
from .engines.train import BackendSettings, TrainBackend, build_backend
from .launch.distributed import RankContext
from .algorithms.grpo import effective_loss_type
from .algorithms.micro_batch import fixed_size
from .models.lora import apply_lora, has_lora
from .models.loading import LoadedModel, load_actor_model
from .models.shared_lora import FIRST_ADAPTER, AdapterBound, add_adapter, base_key
from .engines.rollout.base import RolloutEngine
from .host.device_choice import assert_on_device
from .host.gpu_ids import local_index, spread_index
from .spec.runspec_types import Actor as ActorSection, RunSpec, to_dict


@dataclass
class Actor:
    index: int
    spec: dict[str, Any]
    loaded: LoadedModel
    backend: TrainBackend | None  # None for a frozen actor: it samples, it is never updated
    reference: torch.nn.Module | None
    loss_type: str
    device: torch.device
    # The engine that samples this actor when it holds its own weights (vLLM, rollout_engines/); None:
    # transformers `generate` on the trainer's module. `engine_stale`: the trainer changed since the last push.
    engine: RolloutEngine | None = None
    engine_stale: bool = True
    # The typed section; read from `spec` when not given (the producer process rebuilds its actors from documents).
    section: ActorSection = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.section is None:
            self.section = ActorSection.from_dict(self.spec)

    @property
    def name(self) -> str:
        return self.section.name

    @property
    def temperature(self) -> float:
        return float(self.section.sampling.temperature)

    @property
    def trainable(self) -> bool:
        return self.section.trainable

    @property
    def optimizer(self) -> torch.optim.Optimizer | None:
        return self.backend.optimizer if self.backend is not None else None

    @property
    def shares_base(self) -> bool:
        return isinstance(self.loaded.model, AdapterBound)


def actor_device(actor: ActorSection, run_device: torch.device, ctx: RankContext, spec: Mapping[str, Any] | None = None) -> torch.device:
    """`placement.gpus[rank]` on a GPU host (the runner's numbering, gpu_ids.py); without placements one GPU
    per local model when one process sees several; else the run's device (this rank's GPU, or the CPU).
    `spec` (the run's document, which gpu_ids.spread_index reads) lets unplaced actors spread over the GPUs one
    process sees."""
    gpus = actor.placement.gpus
    if gpus and run_device.type == "cuda":
        return torch.device("cuda", local_index(gpus[ctx.rank] if ctx.rank < len(gpus) else gpus[0]))
    if run_device.type == "cuda" and spec is not None and not ctx.distributed:
        index = spread_index(dict(spec), actor.name, torch.cuda.device_count())
        if index is not None:
            return torch.device("cuda", index)
    return run_device


def build_actors(
    run: RunSpec, work_dir: Path, run_device: torch.device, ctx: RankContext, log: Callable[[str, str], Any], document: Mapping[str, Any] | None = None
) -> tuple[dict[str, Actor], dict[str, ApiActor]]:
    """Every actor of the run from its typed section: API actors as clients, local ones loaded on their device
    with their backend (LoRA actors on one base share it). `document` is the run's JSON document (the GPU
    spread reads it, and each actor keeps its section of it as `spec`); without it, the typed spec's."""
    document = document if document is not None else to_dict(run)
    actors: dict[str, Actor] = {}
    shared_bases: dict[str, str] = {}  # base_key -> the LoRA actor that loaded that base
    api_actors: dict[str, ApiActor] = {}
    micro = fixed_size(run.trainer.micro_batch_size)  # "auto" is chosen per update (algorithms/micro_batch.py)
    for i, section in enumerate(run.actors):
        name, as_document = section.name, document["actors"][i]
        if section.backend == "openai":
            assert section.api is not None  # the schema requires api for openai actors
            api_actors[name] = build_api_actor(section, i)
            log("info", f'actor "{name}": {section.api.model} at {section.api.base_url} (OpenAI-compatible API, frozen)')
            continue
        training = section.training
        device = actor_device(section, run_device, ctx, document)
        settings = BackendSettings(name, training, device, ctx, micro)
        loss_type = effective_loss_type(run.algorithm.name, training.loss_type)
        engine = f"backend {training.backend}, {training.precision}, world size {ctx.world_size}"
        key = base_key(section)
        if key is not None and key in shared_bases:
            # Same base as an earlier LoRA actor: add this actor's adapter to it (shared_lora.py).
            assert training.lora is not None  # base_key is None without LoRA
            owner = actors[shared_bases[key]]
            if not isinstance(owner.loaded.model, AdapterBound):
                raw = owner.loaded.model
                bound_owner = AdapterBound(raw, FIRST_ADAPTER, raw._troupe_lora_config)
                owner.loaded = LoadedModel(bound_owner, owner.loaded.tokenizer, owner.loaded.description)  # type: ignore[arg-type]
                assert owner.backend is not None
                owner.backend.module = bound_owner
            raw = object.__getattribute__(owner.loaded.model, "_shared")
            n = add_adapter(raw, training.lora, name)
            bound = AdapterBound(raw, name, raw._troupe_lora_configs[name])
            loaded = LoadedModel(bound, owner.loaded.tokenizer, f"{owner.loaded.description}, base shared with \"{owner.name}\"")  # type: ignore[arg-type]
            actors[name] = Actor(i, as_document, loaded, build_backend(bound, settings), None, loss_type, owner.device, section=section)  # type: ignore[arg-type]
            log(
                "info",
                f'actor "{name}": {engine}; LoRA adapter rank {training.lora.rank} ({n:,} trainable) on the base of "{owner.name}" '
                f"(one copy in memory), loss {loss_type}, optimizer {training.optimizer}",
            )
            continue
        loaded = load_actor_model(as_document, i, work_dir)
        loaded.model.to(device)
        if not section.trainable:
            if training.precision == "bf16":
                loaded.model.to(torch.bfloat16)  # frozen: no master weights needed
            loaded.model.eval().requires_grad_(False)
            actors[name] = Actor(i, as_document, loaded, None, None, loss_type, device, section=section)
            log("info", f'actor "{name}": {loaded.description}, {loaded.num_params:,} parameters, frozen (no optimizer), {training.precision}, on {device}')
            continue
        lora_note = ""
        if training.lora is not None:
            n = apply_lora(loaded.model, training.lora, i)
            lora_note = f', LoRA rank {training.lora.rank} on {", ".join(training.lora.target_modules)} ({n:,} trainable)'
        if training.gradient_checkpointing:
            loaded.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            lora_note += ", gradient checkpointing"
        reference = None
        # A frozen copy for the KL term, and for DPO (its implicit reward is measured against it); LoRA uses its base.
        if (training.kl_beta > 0 or run.algorithm.name == "dpo") and not has_lora(loaded.model):
            reference = copy.deepcopy(loaded.model).eval().requires_grad_(False)
            if training.precision == "bf16":
                reference.to(torch.bfloat16)
            if training.backend == "fsdp2" and ctx.distributed:
                from .engines.train.fsdp2 import shard_model  # optional engine: FSDP2 is imported only when an actor uses it

                reference = shard_model(reference, settings, trainable=False)
        num_params = loaded.num_params
        backend = build_backend(loaded.model, settings)
        # What samples and is saved: the Hugging Face model (fsdp2 shards it in place; a DeepSpeed engine
        # wraps it, and its ZeRO-3 hooks on the model's own modules gather parameters for `generate`).
        loaded.model = getattr(backend, "model", backend.module)  # type: ignore[assignment]
        if not (training.offload.params and training.backend != "torch"):  # host-resident by design
            assert_on_device(backend.module, device, f'actor "{name}"')
        actors[name] = Actor(i, as_document, loaded, backend, reference, loss_type, device, section=section)
        if key is not None:
            shared_bases[key] = name
        log(
            "info",
            f'actor "{name}": {engine}; {loaded.description}, {num_params:,} parameters on {device}, '
            f"vocabulary {loaded.tokenizer.vocab_size}, loss {loss_type}, optimizer {training.optimizer}{lora_note}",
        )
    return actors, api_actors
