"""Checkpoints that a run can resume from and produce the same steps it would have produced.

Layout of one checkpoint, `<work dir>/checkpoints/step-<N>/`:
  `<actor>/`            each trainable actor: HF weights (`save_pretrained`) or LoRA adapter, its
                        tokenizer, and `optimizer.pt` (the optimizer's state_dict)
  `trainer_state.json`  step, Python and numpy RNG states, each environment's data position
                        (rest of the epoch's row order + its shuffle RNG), the spec's hash
  `rng_torch.pt`        torch's CPU (and CUDA) RNG states
The learning-rate schedule is a pure function of the step (`lr_schedule.lr_at`), and round-spec
schedules are seeded per (run seed, environment, step, group, sample), so neither needs state.
A checkpoint is written to a hidden `.step-<N>.partial` folder and renamed when complete: a crash
while saving never leaves a half checkpoint that `--resume latest` would pick.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np
import torch

from .models.lora import has_lora, save_adapter
from .models.loading import save_checkpoint
from .models.saved_weights import CheckpointError, _device_of, _load_adapter

if TYPE_CHECKING:
    from .actors import Actor
    from .launch.distributed import RankContext

FORMAT_VERSION = 1
STATE_FILE = "trainer_state.json"
TORCH_RNG_FILE = "rng_torch.pt"
OPTIMIZER_FILE = "optimizer.pt"
ACTOR_SPEC_FILE = "troupe_actor.json"
_STEP_DIR = re.compile(r"^step-(\d+)$")


@dataclass
class SavedActor:
    actor: str
    path: Path
    size_bytes: int


def checkpoints_root(work_dir: Path) -> Path:
    return work_dir / "checkpoints"


def spec_hash(spec: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def folder_size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def save_training_checkpoint(
    root: Path, step: int, spec: dict[str, Any], actors: dict[str, "Actor"], environments: Iterable[Any], ctx: "RankContext | None" = None
) -> tuple[Path, list[SavedActor]]:
    """Everything needed to continue after `step`. Returns the folder and each actor's part.

    Every rank calls this (a sharded actor's full weights and optimizer state are gathered from all
    ranks); only rank 0 writes. Weights are full Hugging Face weights whatever the backend, so a
    checkpoint loads with `from_pretrained`."""
    main = ctx is None or ctx.is_main
    final = root / f"step-{step}"
    partial = root / f".step-{step}.partial"
    if main:
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
    names = []
    for name, actor in actors.items():
        if not actor.trainable:
            continue
        assert actor.backend is not None
        folder = partial / name
        sharded = actor.backend.name != "torch"
        full = actor.backend.full_state_dict() if sharded else None  # a collective: every rank
        optimizer_state = actor.backend.optimizer_state()  # a collective for sharded backends
        names.append(name)
        if not main:
            continue
        if has_lora(actor.loaded.model):
            save_adapter(actor.loaded.model, folder, full)
            actor.loaded.tokenizer.save_pretrained(folder)
            # What the adapter was trained on, so a run can start from it (run_source.py) without this run's spec.
            (folder / ACTOR_SPEC_FILE).write_text(json.dumps(actor.spec), encoding="utf-8")
        else:
            save_checkpoint(actor.loaded, folder, full)
        torch.save(optimizer_state, folder / OPTIMIZER_FILE)
    if not main:
        if ctx is not None:
            ctx.barrier()  # the files exist once rank 0 passes the barrier below
        return final, [SavedActor(name, final / name, 0) for name in names]
    np_state = np.random.get_state()
    state = {
        "formatVersion": FORMAT_VERSION,
        "step": step,
        "actors": names,
        "specHash": spec_hash(spec),
        "pythonRng": _jsonable(random.getstate()),
        "numpyRng": [np_state[0], np_state[1].tolist(), *np_state[2:]],
        "environments": [env.sampler.state() for env in environments],
    }
    (partial / STATE_FILE).write_text(json.dumps(state), encoding="utf-8")
    torch_rng = {"cpu": torch.get_rng_state(), "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []}
    torch.save(torch_rng, partial / TORCH_RNG_FILE)
    if final.exists():  # a resumed run that saves the same step again: the new one wins
        shutil.rmtree(final)
    partial.rename(final)
    if ctx is not None:
        ctx.barrier()
    return final, [SavedActor(name, final / name, folder_size(final / name)) for name in names]


def list_checkpoints(root: Path) -> list[tuple[int, Path]]:
    """Complete checkpoints under `root`, oldest first."""
    if not root.is_dir():
        return []
    found = []
    for child in root.iterdir():
        match = _STEP_DIR.match(child.name)
        if match and (child / STATE_FILE).is_file():
            found.append((int(match.group(1)), child))
    return sorted(found)


@dataclass
class PrunedCheckpoint:
    step: int
    path: Path


def prune_checkpoints(root: Path, keep: int) -> list[PrunedCheckpoint]:
    """Deletes all but the newest `keep` checkpoints (keep 0 = keep all). Returns what it removed,
    oldest first, so the caller can report each deletion (the `checkpoint_pruned` event)."""
    if keep <= 0:
        return []
    doomed = [PrunedCheckpoint(step, path) for step, path in list_checkpoints(root)[:-keep]]
    for checkpoint in doomed:
        shutil.rmtree(checkpoint.path)
    return doomed


def resolve_resume(work_dir: Path, value: str) -> Path:
    """`latest` (the newest complete checkpoint of this work dir) or a checkpoint folder."""
    if value == "latest":
        found = list_checkpoints(checkpoints_root(work_dir))
        if not found:
            raise CheckpointError(f"--resume latest: no checkpoint in {checkpoints_root(work_dir)}")
        return found[-1][1]
    folder = Path(value)
    if not folder.is_absolute() and not folder.exists():
        folder = work_dir / folder
    if not (folder / STATE_FILE).is_file():
        raise CheckpointError(f"--resume {value}: {folder} is not a checkpoint (no {STATE_FILE})")
    return folder


def load_training_checkpoint(
    folder: Path, spec: dict[str, Any], actors: dict[str, "Actor"], environments: list[Any]
) -> tuple[int, list[str]]:
    """Restores weights, optimizers, RNGs and data positions, each actor's onto its own device. Returns (step, warnings).
    `spec` is the run's JSON document (its hash is compared with the one the checkpoint was saved with)."""
    state = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
    if state.get("formatVersion") != FORMAT_VERSION:
        raise CheckpointError(f"{folder / STATE_FILE}: formatVersion {state.get('formatVersion')!r}, expected {FORMAT_VERSION}")
    warnings = []
    if state["specHash"] != spec_hash(spec):
        warnings.append(f"resuming {folder.name} with a spec that differs from the one it was saved with: steps may differ")
    trainable = [name for name, a in actors.items() if a.trainable]
    if sorted(trainable) != sorted(state["actors"]):
        raise CheckpointError(f"{folder}: holds actors {state['actors']}, the spec trains {trainable}")
    if len(state["environments"]) != len(environments):
        raise CheckpointError(f"{folder}: holds {len(state['environments'])} environments' data positions, the spec has {len(environments)}")
    for name in trainable:
        actor = actors[name]
        assert actor.backend is not None
        part = folder / name
        if actor.backend.name != "torch":
            # Sharded: every rank reads the full weights and keeps its shard (the backend's loader).
            actor.backend.load_full_state_dict(_read_full_weights(actor.loaded.model, part))
        elif has_lora(actor.loaded.model):
            _load_adapter(actor.loaded.model, part, actor.device)
        else:
            _load_weights(actor.loaded.model, part, actor.device)
        actor.backend.load_optimizer_state(torch.load(part / OPTIMIZER_FILE, map_location=actor.device, weights_only=True))
    for env, position in zip(environments, state["environments"]):
        env.sampler.load_state(position)
    random.setstate(_tupled(state["pythonRng"]))
    kind, keys, *rest = state["numpyRng"]
    np.random.set_state((kind, np.array(keys, dtype=np.uint32), *rest))
    torch_rng = torch.load(folder / TORCH_RNG_FILE, weights_only=True)
    torch.set_rng_state(torch_rng["cpu"])
    if torch_rng["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(torch_rng["cuda"])
    return int(state["step"]), warnings


def _read_full_weights(model: torch.nn.Module, folder: Path) -> dict[str, torch.Tensor]:
    """A checkpoint's full weights as a state dict on the CPU (an adapter's under the model's own key names)."""
    from safetensors.torch import load_file

    if has_lora(model):
        path = folder / "adapter_model.safetensors"
        if not path.is_file():
            raise CheckpointError(f"{folder}: no adapter_model.safetensors")
        adapter = getattr(model, "_troupe_adapter", "default")
        saved = load_file(str(path))
        # peft saves `...lora_A.weight`; the model names it `...lora_A.<adapter>.weight`.
        return {k.replace(".lora_A.weight", f".lora_A.{adapter}.weight").replace(".lora_B.weight", f".lora_B.{adapter}.weight"): v for k, v in saved.items()}
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise CheckpointError(f"{folder}: no *.safetensors weights")
    state: dict[str, torch.Tensor] = {}
    for f in files:
        state.update(load_file(str(f)))
    return state


def _load_weights(model: torch.nn.Module, folder: Path, device: torch.device | None = None) -> None:
    from safetensors.torch import load_file

    device = device or _device_of(model)
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise CheckpointError(f"{folder}: no *.safetensors weights")
    state: dict[str, torch.Tensor] = {}
    for f in files:
        state.update(load_file(str(f), device=str(device)))
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected:
        raise CheckpointError(f"{folder}: weights the model does not have: {', '.join(unexpected[:5])}")
    # save_pretrained leaves out tied weights (lm_head = embeddings); anything else missing is an error.
    params = dict(model.named_parameters(remove_duplicate=False))
    loaded_ptrs = {params[k].data_ptr() for k in state if k in params}
    untied = [k for k in missing if k not in params or params[k].data_ptr() not in loaded_ptrs]
    if untied:
        raise CheckpointError(f"{folder}: weights missing from the checkpoint: {', '.join(untied[:5])}")


def _jsonable(value: Any) -> Any:
    return [_jsonable(v) for v in value] if isinstance(value, (tuple, list)) else value


def _tupled(value: Any) -> Any:
    return tuple(_tupled(v) for v in value) if isinstance(value, list) else value
