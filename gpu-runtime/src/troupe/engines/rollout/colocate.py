"""The loop's side of the engines: which engine samples each actor, and keeping colocated engines in step
with the trainer (a weight push after every update, sleep while the actors train).

    setup          attach_engines: a vLLM engine for every `backend: "vllm"` actor
    before rollout wake_for_rollout: trainable actors' engines get the trainer's weights (sync.push);
                   frozen ones just wake
    after rollout  sleep_for_training: every colocated engine sleeps at its `vllm.sleepLevel` (0: stays awake)

With asynchronous rollouts the producer thread drives the engines it samples with (rollout/async_rollout.py
`lent_engines`): it pushes the schedule's weights itself, and the loop's wake/sleep leave those engines alone
outside evaluation (where the trainer's latest weights are pushed under `quiesce`, and the producer pushes its
own version back before it samples again).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import torch

from .api_actor import ApiActor
from ...host.data_roots import checked_path
from .api import ApiEngine
from .base import RolloutEngine
from .hf import HFEngine
from .sampling_copy import sampling_dtype_for
from .sync import SyncReport, lora_scale, merged_weights, push
from ...spec.runspec_types import Actor as ActorSection, ActorModelHuggingface, ActorModelLocal, RunSpec

if TYPE_CHECKING:
    from ...actors import Actor


def engine_of(actor: Actor) -> RolloutEngine:
    """The actor's engine: its own (vLLM), else transformers `generate` on the trainer's module."""
    if actor.engine is not None:
        return actor.engine
    return HFEngine(actor.loaded.model, actor.loaded.tokenizer, actor.device, sampling_dtype_for(actor))


def as_engine(model: Any, tokenizer: Any, device: torch.device) -> RolloutEngine:
    """An engine for what callers of `run_turns` hand in: an engine as it is, an `ApiActor`, or a model."""
    if isinstance(model, RolloutEngine):
        return model
    if isinstance(model, ApiActor):
        return ApiEngine(model)
    return HFEngine(model, tokenizer, device)


def model_path(actor: ActorSection, work_dir: Path) -> tuple[str, str | None]:
    """What vLLM loads at start-up: a folder or a Hugging Face id (and revision)."""
    source = actor.model
    if isinstance(source, ActorModelLocal):
        return str(checked_path(source.path, work_dir, f"actors.{actor.name}.model.path", "a local model")), None
    if isinstance(source, ActorModelHuggingface):
        return source.id, source.revision
    raise ValueError(f'actor "{actor.name}": vLLM loads a model folder or a Hugging Face id, not a {source.source} preset')


def attach_engines(run: RunSpec, actors: dict[str, Actor], work_dir: Path, distributed: bool, log: Callable[[str, str], Any], vllm: Any = None) -> None:
    """A colocated vLLM engine for each `backend: "vllm"` actor; every other actor keeps HF `generate`.
    `vllm` is the package (None: import it); tests pass the stand-in here, a spec never can."""
    from .vllm_engine import VllmEngine, VllmSettings  # optional engine: vLLM is imported only when an actor uses it

    for name, actor in actors.items():
        if actor.section.backend != "vllm":
            continue
        settings = VllmSettings.from_section(actor.section.vllm)
        path, revision = model_path(actor.section, work_dir)
        training = actor.section.training
        lora = training.lora if actor.trainable else None
        dtype = "bfloat16" if training.precision == "bf16" else "float32"
        actor.engine = VllmEngine(path, actor.loaded.tokenizer, settings, int(run.seed), dtype=dtype, distributed=distributed, vllm=vllm)
        actor.engine_stale = actor.backend is not None  # the first rollout pushes the trainer's weights
        log(
            "info",
            f'actor "{name}": samples with vLLM ({path}{"@" + revision if revision else ""}, {dtype}, tensor parallel {settings.tensor_parallel}, '
            f"gpu memory {settings.gpu_memory_utilization:.0%}, sleep level {settings.sleep_level}"
            + (f", LoRA rank {lora.rank} merged into the pushed weights" if lora else "")
            + ("; stays awake" if settings.sleep_level == 0 else "")
            + "); weights reach it in memory after every update",
        )


def trainer_weights(actor: Actor) -> Iterator[tuple[str, torch.Tensor]]:
    """The trainer's full parameters one at a time, Hugging Face names, LoRA merged."""
    assert actor.backend is not None
    model = actor.backend.module
    config = getattr(model, "_troupe_lora_config", None)
    adapter = getattr(model, "_troupe_adapter", "default") if config is not None else None
    scale = lora_scale(config, adapter) if config is not None and adapter is not None else 1.0
    return merged_weights(actor.backend.full_parameters(), adapter, scale)


def colocated(actors: dict[str, Actor]) -> list[Actor]:
    """The actors whose engine holds its own copy of the weights (vLLM)."""
    return [a for a in actors.values() if a.engine is not None and a.engine.holds_own_weights]


def wake_for_rollout(actors: dict[str, Actor]) -> dict[str, SyncReport]:
    """Before a rollout: the engine of each trainable actor gets the trainer's weights (wake weights ->
    push -> reset prefix cache -> wake KV cache); a frozen actor's engine just wakes."""
    reports: dict[str, SyncReport] = {}
    for actor in colocated(actors):
        engine = actor.engine
        assert engine is not None
        if actor.backend is not None and actor.engine_stale:
            reports[actor.name] = push(engine, trainer_weights(actor))
            actor.engine_stale = False
        else:
            engine.wake(["weights"])
            engine.reset_prefix_cache()
            engine.wake(["kv_cache"])
    return reports


def sleep_for_training(actors: dict[str, Actor]) -> None:
    """After a rollout: colocated engines free their device memory while the actors train; a trainable
    actor's engine is stale from here (its update follows) until the next push."""
    for actor in colocated(actors):
        engine = actor.engine
        assert engine is not None
        # A frozen actor has no trainer to push its weights back: it keeps them on the host (level 1). Level 0:
        # the engine keeps its memory and stays awake (asynchronous rollouts sample with it meanwhile).
        level = getattr(engine, "settings").sleep_level
        level = level if actor.backend is not None else min(level, 1)
        if level > 0:
            engine.sleep(level)
        if actor.backend is not None:
            actor.engine_stale = True


def close_engines(actors: dict[str, Actor]) -> None:
    for actor in colocated(actors):
        assert actor.engine is not None
        actor.engine.close()
