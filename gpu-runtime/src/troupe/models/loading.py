"""Actor models: tiny presets built in-process, or any Hugging Face causal LM (id or folder)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, GenerationConfig, Qwen2Config, Qwen2ForCausalLM

from ..host.data_roots import checked_path
from ..spec import SpecError
from .loaded import LoadedModel, _eos_from_generation_config
from .run_source import load_from_run
from .tokenizer import CharTokenizer, Tokenizer, load_tokenizer

# Qwen2-style decoders (RoPE, RMSNorm, SwiGLU, tied embeddings) small enough to learn on a laptop CPU.
TINY_PRESETS: dict[str, dict[str, int]] = {
    "tiny-char-2l": {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 256},
    "tiny-char-4l": {"num_hidden_layers": 4, "hidden_size": 128, "num_attention_heads": 4, "intermediate_size": 512},
}
TINY_MAX_POSITIONS = 1024
# HF's default init std (0.02) is sized for 768+ wide models; at width 64 it leaves the tied
# embeddings' copy prior so faint that the echo demo spends ~100 steps before the reward moves.
# 0.05 (still below 1/sqrt(64)) lets it climb within the demo's 120 steps (measured, see README).
TINY_INIT_STD = 0.05


class ModelLoadError(RuntimeError):
    """A model that exists in the spec but cannot be loaded here (exit 1, not a spec error)."""


def build_tiny(preset: str) -> LoadedModel:
    """A freshly initialised tiny model (initialisation follows torch's global seed)."""
    tokenizer = CharTokenizer()
    shape = TINY_PRESETS[preset]
    config = Qwen2Config(
        vocab_size=tokenizer.vocab_size,
        num_key_value_heads=shape["num_attention_heads"],
        max_position_embeddings=TINY_MAX_POSITIONS,
        tie_word_embeddings=True,
        initializer_range=TINY_INIT_STD,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        **shape,
    )
    model = Qwen2ForCausalLM(config)
    return LoadedModel(model, tokenizer, f"tiny preset {preset}")


def neutral_generation_config(tokenizer: Tokenizer) -> GenerationConfig:
    """A generation config that adds no processors of its own.

    A checkpoint's generation_config.json often carries sampling defaults (repetition_penalty,
    top_k…) that `generate` would apply behind our back, making the sampled distribution differ
    from the one the trainer scores. Sampling settings come from the spec only.
    """
    return GenerationConfig(eos_token_id=list(tokenizer.eos_token_ids), pad_token_id=tokenizer.pad_token_id)


def load_actor_model(actor: dict[str, Any], actor_index: int, work_dir: Path) -> LoadedModel:
    source = actor["model"]
    if source["source"] == "tiny":
        loaded = build_tiny(source["preset"])
    elif source["source"] == "run":
        # another run's checkpoint (run_source.py), whose base model is read with load_actor_model in turn
        loaded = load_from_run(actor, actor_index, work_dir, load_actor_model)
    else:
        if source["source"] == "local":
            folder = checked_path(source["path"], work_dir, f"actors.{actor_index}.model.path", "a local model")  # data_roots.py
            if not folder.is_dir():
                raise SpecError.at(f"actors.{actor_index}.model.path", f"{folder} is not a folder on this host")
            name, revision, description = str(folder), None, f"local model {folder}"
        else:
            name, revision = source["id"], source.get("revision")
            description = f"Hugging Face model {name}" + (f"@{revision}" if revision else "")
        try:
            model = AutoModelForCausalLM.from_pretrained(name, revision=revision, dtype=torch.float32)
            tokenizer = load_tokenizer(name, revision=revision, extra_eos_ids=_eos_from_generation_config(model))
        except Exception as e:
            offline = " (HF_HUB_OFFLINE is set: only the local cache is searched)" if os.environ.get("HF_HUB_OFFLINE") else ""
            raise ModelLoadError(f"actors.{actor_index}.model: could not load {description}{offline}: {e}") from e
        loaded = LoadedModel(model, tokenizer, description)
    loaded.model.generation_config = neutral_generation_config(loaded.tokenizer)
    return loaded


def save_checkpoint(loaded: LoadedModel, folder: Path, full_state: dict[str, torch.Tensor] | None = None) -> None:
    """`save_pretrained` of the model; `full_state` is its gathered state dict when its parameters are sharded."""
    folder.mkdir(parents=True, exist_ok=True)
    if full_state is not None:
        loaded.model.save_pretrained(str(folder), safe_serialization=True, state_dict=full_state)
    else:
        loaded.model.save_pretrained(str(folder), safe_serialization=True)
    loaded.tokenizer.save_pretrained(folder)
